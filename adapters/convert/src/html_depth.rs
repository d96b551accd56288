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
}
