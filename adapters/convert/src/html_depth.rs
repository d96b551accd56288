//! A cap on how deep a parsed HTML tree may nest. htmd walks the tree by
//! recursion, one stack frame per level, so a page of a few thousand nested
//! `<div>`s would overflow the stack and abort the process. Below the cap the
//! structure is flattened and the text kept, in order.

use std::cell::RefCell;
use std::rc::Rc;

use markup5ever_rcdom::{Node, NodeData};

/// Deeper than any page a person wrote (real pages stay under a hundred), and
/// shallow enough for htmd's recursion on any thread's stack.
pub(crate) const MAX_DEPTH: usize = 256;

/// How deep [`shallow`] lets tags nest before the parser sees them (counted
/// over tags with end tags; the tree's own depth is capped at [`MAX_DEPTH`]).
pub(crate) const MAX_TAG_DEPTH: usize = 1024;

/// Replaces the children of every element at `max` levels below `root` by the
/// text nodes under it, separated by line breaks. Returns how many subtrees
/// were flattened. Iterative: the input's depth never reaches the stack.
pub(crate) fn cap_depth(root: &Rc<Node>, max: usize) -> usize {
    let mut flattened = 0;
    let mut stack = vec![(root.clone(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth >= max && matches!(node.data, NodeData::Element { .. }) {
            let texts = texts_under(&node);
            for t in &texts {
                t.parent.set(Some(Rc::downgrade(&node)));
            }
            *node.children.borrow_mut() = texts;
            flattened += 1;
            continue;
        }
        for child in node.children.borrow().iter() {
            stack.push((child.clone(), depth + 1));
        }
    }
    flattened
}

/// The text nodes under `node` in document order, a line break between two.
fn texts_under(node: &Rc<Node>) -> Vec<Rc<Node>> {
    let mut out: Vec<Rc<Node>> = Vec::new();
    let mut stack: Vec<Rc<Node>> = node.children.borrow().iter().rev().cloned().collect();
    while let Some(n) = stack.pop() {
        match &n.data {
            NodeData::Text { .. } => {
                if !out.is_empty() {
                    out.push(Node::new(NodeData::Text {
                        contents: RefCell::new("\n".into()),
                    }));
                }
                out.push(n);
            }
            _ => stack.extend(n.children.borrow().iter().rev().cloned()),
        }
    }
    out
}

/// Tags that never nest content (void elements) or whose end tag is
/// optional and implied by the next sibling, so they do not deepen a page.
const FLAT: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "tbody",
    "thead", "tfoot", "colgroup", "rb", "rt", "rp", "html", "head", "body",
];

/// Elements whose content is raw text up to their end tag.
const RAW: &[&str] = &[
    "script",
    "style",
    "textarea",
    "title",
    "xmp",
    "iframe",
    "noembed",
    "noframes",
    "plaintext",
];

/// The page with every tag that would open deeper than `max` levels left
/// out, and its end tag with it; the text stays. HTML's tree builder
/// checks the stack of open elements for each tag, so a page of 100,000
/// nested `<div>`s costs it quadratic time (25 s for 1 MB); this linear
/// scan keeps its stack short. Borrowed when nothing is that deep.
pub(crate) fn shallow(html: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let b = html.as_bytes();
    let mut out: Option<String> = None;
    let mut depth = 0usize;
    // Open tags left out, by depth: their end tags are left out too.
    let mut kept_from = 0usize;
    let mut i = 0usize;
    while let Some(off) = memchr_lt(&b[i..]) {
        let at = i + off;
        let rest = &b[at..];
        if rest.starts_with(b"<!--") {
            i = find(b, at + 4, b"-->").map_or(b.len(), |e| e + 3);
            continue;
        }
        let closing = rest.get(1) == Some(&b'/');
        let name_at = at + 1 + usize::from(closing);
        let name_len = b[name_at.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'-' || **c == b':')
            .count();
        if name_len == 0 || !b[name_at].is_ascii_alphabetic() {
            i = at + 1;
            continue;
        }
        let name = html[name_at..name_at + name_len].to_ascii_lowercase();
        let end = tag_end(b, name_at + name_len);
        let self_closing = end >= 2 && b[end - 2] == b'/';
        let flat = FLAT.contains(&name.as_str()) || self_closing;
        let mut drop_tag = false;
        if closing {
            if !flat && depth > 0 {
                drop_tag = depth > max;
                depth -= 1;
            }
        } else if !flat {
            depth += 1;
            drop_tag = depth > max;
        }
        if drop_tag {
            let o = out.get_or_insert_with(|| String::with_capacity(html.len()));
            o.push_str(&html[kept_from..at]);
            kept_from = end;
        }
        i = end;
        if !closing && RAW.contains(&name.as_str()) {
            // Skip the raw text to its end tag (left to the parser as is).
            let close = format!("</{name}");
            i = find_ascii_ci(b, i, close.as_bytes()).unwrap_or(b.len());
        }
    }
    match out {
        None => std::borrow::Cow::Borrowed(html),
        Some(mut o) => {
            o.push_str(&html[kept_from..]);
            std::borrow::Cow::Owned(o)
        }
    }
}

fn memchr_lt(b: &[u8]) -> Option<usize> {
    b.iter().position(|c| *c == b'<')
}

/// Past the `>` that ends a tag begun before `from`, quotes respected.
fn tag_end(b: &[u8], mut from: usize) -> usize {
    let mut quote = None;
    while from < b.len() {
        let c = b[from];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'"' || c == b'\'' => quote = Some(c),
            None if c == b'>' => return from + 1,
            None => {}
        }
        from += 1;
    }
    b.len()
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

fn find_ascii_ci(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
        .map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(node: &Rc<Node>) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(node.clone(), 0)];
        while let Some((n, d)) = stack.pop() {
            deepest = deepest.max(d);
            stack.extend(n.children.borrow().iter().map(|c| (c.clone(), d + 1)));
        }
        deepest
    }

    #[test]
    fn a_tree_deeper_than_the_cap_keeps_its_text_and_loses_its_depth() {
        let html = format!(
            "{}alpha<p>beta</p>{}",
            "<div>".repeat(5000),
            "</div>".repeat(5000)
        );
        let tree = htmd::HtmlToMarkdown::new().html_to_tree(&html).unwrap();
        assert!(depth(&tree) > 5000);
        assert_eq!(cap_depth(&tree, 100), 1);
        assert!(depth(&tree) <= 101);
        let md = htmd::HtmlToMarkdown::new().tree_to_markdown(&tree);
        assert!(md.contains("alpha") && md.contains("beta"), "{md}");
    }

    #[test]
    fn a_shallow_tree_is_left_alone() {
        let tree = htmd::HtmlToMarkdown::new()
            .html_to_tree("<div><p>one</p><p>two</p></div>")
            .unwrap();
        assert_eq!(cap_depth(&tree, MAX_DEPTH), 0);
    }

    #[test]
    fn a_deep_page_is_made_shallow_and_keeps_its_text() {
        let n = 200_000;
        let page = format!(
            "<body>{}<p>deep text</p>{}</body>",
            "<div>".repeat(n),
            "</div>".repeat(n)
        );
        let shallow = shallow(&page, 512);
        assert_eq!(shallow.matches("<div>").count(), 512);
        assert_eq!(shallow.matches("</div>").count(), 512);
        assert!(shallow.contains("<p>deep text</p>"));
    }

    #[test]
    fn ordinary_pages_are_borrowed_untouched() {
        let page = "<html><body><p>one<p>two<ul><li>a<li>b</ul><br><img src='x>y'>\
                    <script>if (a < b) { document.write('<div>') }</script><!-- <div> --></body></html>";
        let paragraphs: String = (0..5_000).map(|i| format!("<p>paragraph {i}")).collect();
        for page in [page.to_string(), paragraphs] {
            assert!(matches!(shallow(&page, 4), std::borrow::Cow::Borrowed(_)));
        }
    }
}
