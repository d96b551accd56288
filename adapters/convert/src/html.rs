//! HTML → Markdown with htmd; script, style, head and navigation chrome are
//! skipped (htmd would keep their text otherwise); `<title>` is the metadata title.

use minirag_core::location::{Mark, Place};
use minirag_core::markdown::{atx_heading, code_lines};
use minirag_core::ports::{ConvertError, Converted};

use crate::{html_depth, html_pieces};

use std::borrow::Cow;
use std::rc::Rc;

use htmd::element_handler::Handlers;
use htmd::Element;
use markup5ever_rcdom::{Node, NodeData};

/// `id`/`class` tokens of site chrome that htmd cannot tell from content:
/// DocBook navigation bars (PostgreSQL, Debian manuals), mdBook's menu,
/// theme picker and sidebar, breadcrumbs and skip links.
const CHROME: &[&str] = &[
    "navheader",
    "navfooter",
    "menu-bar",
    "theme-popup",
    "theme-list",
    "sidebar",
    "breadcrumb",
    "breadcrumbs",
    "skip-link",
    "nav-chapters",
    "nav-wrapper",
    "mobile-nav-chapters",
];

fn attr<'a>(attrs: &'a [html5ever::Attribute], name: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|a| &*a.name.local == name)
        .map(|a| &*a.value)
}

fn is_chrome(attrs: &[html5ever::Attribute]) -> bool {
    ["id", "class"]
        .iter()
        .any(|k| attr(attrs, k).is_some_and(|v| v.split_whitespace().any(|t| CHROME.contains(&t))))
        || attr(attrs, "role").is_some_and(|r| matches!(r, "navigation" | "banner" | "search"))
}

/// All text under a node, tags dropped (a `<pre>` keeps its characters only).
fn text_of(node: &Rc<Node>, out: &mut String) {
    match &node.data {
        NodeData::Text { contents } => out.push_str(&contents.borrow()),
        _ => node.children.borrow().iter().for_each(|c| text_of(c, out)),
    }
}

/// `language-x` / `lang-x` class on the `<pre>` or its `<code>` child.
fn code_language(pre: &Element) -> String {
    let from = |attrs: &[html5ever::Attribute]| {
        attr(attrs, "class").and_then(|c| {
            c.split_whitespace().find_map(|t| {
                t.strip_prefix("language-")
                    .or_else(|| t.strip_prefix("lang-"))
                    .map(str::to_string)
            })
        })
    };
    from(pre.attrs)
        .or_else(|| {
            pre.node
                .children
                .borrow()
                .iter()
                .find_map(|c| match &c.data {
                    NodeData::Element { name, attrs, .. } if &*name.local == "code" => {
                        from(&attrs.borrow())
                    }
                    _ => None,
                })
        })
        .unwrap_or_default()
}

/// Every `<pre>` is a fenced block of its plain text, whether or not it
/// wraps a `<code>` (DocBook synopses do not), with inline markup inside
/// it dropped instead of turned into `*emphasis*`.
fn fenced_pre(_: &dyn Handlers, pre: Element) -> Option<htmd::element_handler::HandlerResult> {
    let mut text = String::new();
    text_of(pre.node, &mut text);
    let body = text.trim_matches('\n').trim_end();
    if body.trim().is_empty() {
        return None;
    }
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(3.max(longest + 1));
    let lang = code_language(&pre);
    Some(format!("\n\n{fence}{lang}\n{body}\n{fence}\n\n").into())
}

/// A page of many MB is converted piece by piece ([`html_pieces`]), each
/// piece's tree freed before the next is built.
pub fn convert(html: &str) -> Result<Converted, ConvertError> {
    convert_in_pieces(html, html_pieces::PIECE)
}

fn convert_in_pieces(html: &str, piece: usize) -> Result<Converted, ConvertError> {
    let converter = converter();
    let mut markdown = String::new();
    for range in html_pieces::pieces(html, piece) {
        let page = html_depth::shallow(&html[range], html_depth::MAX_TAG_DEPTH);
        let tree = converter
            .html_to_tree(&promote_header_rows(&page))
            .map_err(|e| ConvertError::Malformed {
                cause: None,
                name: "HTML".into(),
                reason: e.to_string(),
            })?;
        html_depth::cap_depth(&tree, html_depth::MAX_DEPTH);
        let md = converter.tree_to_markdown(&tree);
        if !md.is_empty() && !markdown.is_empty() {
            markdown.push_str("\n\n");
        }
        markdown.push_str(&md);
    }
    let mut places = heading_anchors(html, &markdown);
    places.extend(crate::source_lines::marks(html, &markdown));
    places.sort_by_key(|p| p.line);
    Ok(Converted {
        markdown,
        metadata_title: title(html),
        page_chars: Vec::new(),
        places,
        meta: crate::html_meta::fields(html)
            .into_iter()
            .map(|(name, content)| (name, decode_references(&content)))
            .collect(),
    })
}

/// Every `<h1>`…`<h6>` in document order: its text's words (see
/// [`word_key`]) and its `id`. A scan of the bytes: a large page is not
/// copied.
fn heading_ids(html: &str) -> Vec<(String, Option<String>)> {
    let bytes = html.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = bytes[from..].iter().position(|b| *b == b'<') {
        let start = from + at;
        from = start + 1;
        let name = bytes.get(start + 1..start + 4).unwrap_or(&[]);
        let level = match name {
            [b'h' | b'H', l @ b'1'..=b'6', next] if *next == b'>' || next.is_ascii_whitespace() => {
                *l
            }
            _ => continue,
        };
        let Some(end) = html[start..].find('>') else {
            break;
        };
        let id = attribute(&html[start..start + end], "id");
        let body = start + end + 1;
        let close = [b'<', b'/', b'h', level];
        let close_upper = [b'<', b'/', b'H', level];
        let stop = bytes[body..]
            .windows(4)
            .position(|w| w == close || w == close_upper)
            .map_or(bytes.len(), |p| body + p);
        out.push((word_key(&strip_tags(&html[body..stop])), id));
        from = stop;
    }
    out
}

/// Text without its tags, the common entities read.
fn strip_tags(fragment: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in fragment.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// A heading compared by its words only (Markdown adds backticks and
/// escapes, HTML tags and entities).
fn word_key(text: &str) -> String {
    text.chars()
        .filter(|c| minirag_core::markdown::is_word_char(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// A tag's attribute value, quoted with `"` or `'`.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find(name) {
        let i = from + at;
        from = i + name.len();
        let before = lower[..i].chars().next_back();
        if !before.is_some_and(char::is_whitespace) {
            continue;
        }
        let rest = tag[i + name.len()..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        let rest = rest.trim_start();
        let quote = rest.chars().next()?;
        if quote != '"' && quote != '\'' {
            continue;
        }
        let value = &rest[1..];
        let value = &value[..value.find(quote)?];
        return Some(value.trim().to_string()).filter(|v| !v.is_empty());
    }
    None
}

/// A place at every Markdown heading with the `id` its HTML heading has
/// (empty without one): headings are paired by their words, in order, so a
/// heading the converter leaves out (a menu's) is passed over. None when
/// the page gives no heading an id: the headings' slugs stand.
fn heading_anchors(html: &str, markdown: &str) -> Vec<Place> {
    let ids = heading_ids(html);
    if ids.iter().all(|(_, id)| id.is_none()) {
        return Vec::new();
    }
    let lines: Vec<&str> = markdown.split('\n').collect();
    let code = code_lines(&lines);
    let mut next = 0;
    let mut out = Vec::new();
    for (i, (line, in_code)) in lines.iter().zip(&code).enumerate() {
        let Some((_, text)) = atx_heading(line).filter(|_| !in_code) else {
            continue;
        };
        let key = word_key(text);
        let Some(k) = ids[next..].iter().position(|(k, _)| *k == key) else {
            // A heading the page does not have as such: its slug stands.
            out.push(Place {
                line: i as u32,
                word: 0,
                mark: Mark::Anchor(String::new()),
            });
            continue;
        };
        let id = ids[next + k].1.clone().unwrap_or_default();
        next += k + 1;
        out.push(Place {
            line: i as u32,
            word: 0,
            mark: Mark::Anchor(id),
        });
    }
    out
}

fn converter() -> htmd::HtmlToMarkdown {
    htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "head", "nav", "noscript", "template", "iframe", "svg", "footer",
            "button", "form", "input", "select", "aside",
        ])
        .add_handler(vec!["pre"], fenced_pre)
        // Site chrome marked by id, class or role.
        .add_handler(
            vec!["div", "ul", "ol", "header", "section", "table", "p", "span"],
            |h: &dyn Handlers, el: Element| {
                if is_chrome(el.attrs) {
                    None
                } else {
                    h.fallback(el)
                }
            },
        )
        // A link to an anchor in the same page (heading permalinks) is its text.
        .add_handler(vec!["a"], |h: &dyn Handlers, el: Element| {
            if attr(el.attrs, "href").is_some_and(|href| href.starts_with('#')) {
                Some(h.walk_children(el.node))
            } else {
                h.fallback(el)
            }
        })
        // Images are reduced to their alt text: a link to a picture the
        // index cannot show is noise in a chunk.
        .add_handler(vec!["img"], |_: &dyn Handlers, img: Element| {
            attr(img.attrs, "alt")
                .map(|alt| alt.trim().to_string())
                .filter(|alt| !alt.is_empty())
                .map(Into::into)
        })
        .build()
}

/// htmd writes a pipe table only when the table has `<th>` cells; office
/// exports (LibreOffice's EPUB and HTML among them) mark none. As the sheet
/// converters do, the first row of such a table becomes its header.
fn promote_header_rows(html: &str) -> Cow<'_, str> {
    if find_tag(html, 0, "<table").is_none() {
        return Cow::Borrowed(html);
    }
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len());
    let mut done = 0;
    let mut from = 0;
    while let Some(open) = lower[from..].find("<table").map(|i| i + from) {
        let Some(end) = lower[open + 6..].find("</table").map(|i| i + open + 6) else {
            break;
        };
        from = end;
        let table = &lower[open..end];
        if table.contains("<th") || table[6..].contains("<table") {
            continue;
        }
        let Some(row) = table.find("<tr") else {
            continue;
        };
        let row_end = table[row..].find("</tr").map_or(table.len(), |i| i + row);
        let (row, row_end) = (open + row, open + row_end);
        out.push_str(&html[done..row]);
        let mut i = row;
        while i < row_end {
            let rest = &lower[i..row_end];
            if rest.starts_with("<td") || rest.starts_with("</td") {
                let slash = usize::from(rest.starts_with("</"));
                out.push_str(&html[i..i + 1 + slash]);
                out.push_str("th");
                i += 3 + slash;
            } else {
                let ch = html[i..].chars().next().unwrap_or(' ');
                out.push(ch);
                i += ch.len_utf8();
            }
        }
        done = row_end;
    }
    if done == 0 {
        // No table needed a header: the page itself, not a copy.
        return Cow::Borrowed(html);
    }
    out.push_str(&html[done..]);
    Cow::Owned(out)
}

/// Where `tag` (ASCII, lower case) first starts at or after `from`, in any
/// case; found without lower-casing a copy of a page of tens of MB.
fn find_tag(html: &str, from: usize, tag: &str) -> Option<usize> {
    let bytes = html.as_bytes();
    html[from..]
        .match_indices('<')
        .map(|(i, _)| from + i)
        .find(|&i| {
            bytes
                .get(i..i + tag.len())
                .is_some_and(|b| b.eq_ignore_ascii_case(tag.as_bytes()))
        })
}

/// Text of the first `<title>` element, its character references decoded.
fn title(html: &str) -> Option<String> {
    let open = find_tag(html, 0, "<title")?;
    let start = open + html[open..].find('>')? + 1;
    let end = find_tag(html, start, "</title")?;
    let text = decode_references(&html[start..end])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (!text.is_empty()).then_some(text)
}

/// `&mdash;`, `&#8212;`, `&#x2014;` and every other HTML5 character
/// reference (html5ever's own table) as the characters they name; anything
/// else after a `&` stays as written.
fn decode_references(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let decoded = rest[1..]
            .find(';')
            .filter(|&end| end <= 32)
            .and_then(|end| Some((reference(&rest[1..end + 2])?, end + 2)));
        match decoded {
            Some((chars, len)) => {
                out.push_str(&chars);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The characters of one reference, `name;` without its `&`.
fn reference(name: &str) -> Option<String> {
    let char_of = |n: u32| char::from_u32(n).filter(|c| *c != '\0');
    if let Some(number) = name.strip_prefix('#').and_then(|n| n.strip_suffix(';')) {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        return char_of(code).map(String::from);
    }
    let &(first, second) = markup5ever::data::NAMED_ENTITIES.get(name)?;
    let mut out: String = char_of(first)?.into();
    out.extend(char_of(second));
    Some(out)
}

#[cfg(test)]
mod tests {
    use minirag_core::location::Mark;

    #[test]
    fn headings_keep_the_ids_the_page_gives_them() {
        let html = "<html><body><h1 id=\"start-here\">Install</h1><p>Get it.</p>\
            <H2 class=x ID='os-list'>Systems</H2><p>Linux.</p><h2>Notes</h2><p>None.</p></body></html>";
        let c = super::convert(html).unwrap();
        let anchors: Vec<(u32, Mark)> = c
            .places
            .into_iter()
            .filter(|p| matches!(p.mark, Mark::Anchor(_)))
            .map(|p| (p.line, p.mark))
            .collect();
        let lines: Vec<&str> = c.markdown.lines().collect();
        assert_eq!(anchors.len(), 3, "{anchors:?}");
        assert_eq!(anchors[0].1, Mark::Anchor("start-here".into()));
        assert_eq!(anchors[1].1, Mark::Anchor("os-list".into()));
        assert_eq!(anchors[2].1, Mark::Anchor(String::new()));
        assert!(
            lines[anchors[1].0 as usize].contains("Systems"),
            "{lines:?}"
        );
        // Without a single id, no anchors: the slugs stand.
        let bare = super::convert("<h1>A</h1><p>b</p>").unwrap();
        assert!(!bare
            .places
            .iter()
            .any(|p| matches!(p.mark, Mark::Anchor(_))));
    }

    use super::*;

    #[test]
    fn docbook_and_mdbook_pages_lose_their_chrome_and_keep_code() {
        let html = "<div class=\"navheader\"><table><tr><td><a href=\"prev.html\">Prev</a></td></tr></table></div>\
            <div id=\"menu-bar\"><h1 class=\"menu-title\">The Book</h1><button>Print</button></div>\
            <h2><a class=\"header\" href=\"#select\">SELECT</a></h2>\
            <pre class=\"synopsis\">SELECT <em class=\"replaceable\"><code>expression</code></em>\n    [ FOR UPDATE ]</pre>\
            <pre><code class=\"language-rust\">let a = `b`;</code></pre>\
            <div class=\"navfooter\">Next</div>";
        let md = convert(html).unwrap().markdown;
        assert_eq!(
            md,
            "## SELECT\n\n```\nSELECT expression\n    [ FOR UPDATE ]\n```\n\n```rust\nlet a = `b`;\n```",
            "{md}"
        );
    }

    #[test]
    fn a_table_without_header_cells_gets_its_first_row_as_header() {
        let html = "<table><tbody><tr><td><p class=\"p\"><span>Документ</span></p></td><td><p>Срок</p></td></tr>\
                    <tr><td><p>ТОРГ-12</p></td><td><p>5</p></td></tr></tbody></table><p>after</p>";
        let md = convert(html).unwrap().markdown;
        assert_eq!(
            md, "| Документ | Срок |\n| -------- | ---- |\n| ТОРГ-12  | 5    |\n\nafter",
            "{md}"
        );
    }

    #[test]
    fn headings_tables_and_title_survive_chrome_does_not() {
        let html = "<html><head><title>Guide &amp; Notes</title><style>p{}</style></head><body>\
            <nav>Home | About</nav><h1>Install</h1><p>Run it.</p><script>evil()</script>\
            <table><tr><th>os</th><th>cmd</th></tr><tr><td>debian</td><td>apt</td></tr></table></body></html>";
        let c = convert(html).unwrap();
        assert_eq!(c.metadata_title.as_deref(), Some("Guide & Notes"));
        let page =
            "<title>QEMU disk image utility &mdash; QEMU &#x2014; v&#57; &bogus; AT&T</title>";
        assert_eq!(
            super::title(page).as_deref(),
            Some("QEMU disk image utility — QEMU — v9 &bogus; AT&T")
        );
        assert!(c.markdown.contains("# Install"), "{}", c.markdown);
        let table: Vec<&str> = c.markdown.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(table.len(), 3, "{}", c.markdown);
        assert!(table[0].contains("os") && table[0].contains("cmd") && table[2].contains("debian"));
        assert!(
            !c.markdown.contains("evil")
                && !c.markdown.contains("Home | About")
                && !c.markdown.contains("p{}")
        );
    }

    #[test]
    fn a_page_in_pieces_converts_as_it_does_whole() {
        let mut html = String::from("<html><head><title>Big</title></head><body><p>intro</p>");
        for k in 0..30 {
            html.push_str(&format!(
                "<h2>Section {k}</h2><p>Text of <b>section</b> {k}.</p>\
                 <table><tr><td>unit</td><td>hours</td></tr><tr><td>crane-{k}</td><td>{k}</td></tr></table>\
                 <ul><li>one {k}</li><li>two</li></ul><pre><code>let k = {k};</code></pre>"
            ));
        }
        html.push_str("</body></html>");
        let whole = convert_in_pieces(&html, usize::MAX).unwrap();
        let cut = convert_in_pieces(&html, 200).unwrap();
        assert!(html_pieces::pieces(&html, 200).len() > 10);
        assert_eq!(cut.markdown, whole.markdown);
        assert_eq!(cut.metadata_title.as_deref(), Some("Big"));
    }

    #[test]
    fn the_title_is_found_in_any_case_and_a_page_needing_no_header_is_not_copied() {
        let page = "<HTML><Head><TITLE>Big &amp; small</Title></head><body>\
            <table><tr><th>a</th></tr><tr><td>1</td></tr></table></body></HTML>";
        assert_eq!(title(page).as_deref(), Some("Big & small"));
        assert!(matches!(promote_header_rows(page), Cow::Borrowed(_)));
        let plain = "<table><TR><TD>h</TD></TR><tr><td>1</td></tr></table>";
        assert_eq!(
            promote_header_rows(plain),
            "<table><TR><th>h</th></TR><tr><td>1</td></tr></table>"
        );
    }
}
