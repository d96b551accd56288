//! Structural block splitter: paragraphs, fenced code blocks, and
//! headings glued to what follows them.

use crate::markdown::{fence_run, starts_heading};

/// One structural block of a section's body: a paragraph, list, table or fenced code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The block's Markdown.
    pub text: String,
    /// Whether it is fenced code, never split inside a line.
    pub code: bool,
    /// For code: the closing fence was found (an unclosed fence runs to the end).
    pub closed: bool,
}

/// Index of the line closing a fence opened at `open` with `(ch, len)`.
pub(crate) fn closing_fence(lines: &[&str], open: usize, ch: char, len: usize) -> Option<usize> {
    (open + 1..lines.len()).find(|&j| fence_run(lines[j]).is_some_and(|(c, l)| c == ch && l >= len))
}

/// Splits Markdown into blocks. `max_chars` optionally caps paragraphs (split
/// at single spaces, words kept); code is never split.
pub fn split(markdown: &str, max_chars: Option<usize>) -> Vec<Block> {
    let lines: Vec<&str> = markdown.split('\n').collect();
    let mut out = Vec::new();
    let mut para: Vec<&str> = Vec::new();
    let mut pending: Vec<&str> = Vec::new();

    let glue = |pending: &mut Vec<&str>, text: String| -> String {
        if pending.is_empty() {
            text
        } else {
            let head = pending.join("\n\n");
            pending.clear();
            format!("{head}\n\n{text}")
        }
    };
    let flush = |para: &mut Vec<&str>, pending: &mut Vec<&str>, out: &mut Vec<Block>| {
        let text = para.join("\n").trim().to_string();
        para.clear();
        if text.is_empty() {
            return;
        }
        let pieces = match max_chars {
            Some(max) => cap_at_spaces(&text, max),
            None => vec![text],
        };
        for (k, piece) in pieces.into_iter().enumerate() {
            let text = if k == 0 { glue(pending, piece) } else { piece };
            out.push(Block {
                text,
                code: false,
                closed: false,
            });
        }
    };

    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some((ch, len)) = fence_run(line) {
            flush(&mut para, &mut pending, &mut out);
            let close = closing_fence(&lines, i, ch, len);
            let end = close.unwrap_or(lines.len() - 1);
            let text = glue(&mut pending, lines[i..=end].join("\n"));
            out.push(Block {
                text,
                code: true,
                closed: close.is_some(),
            });
            i = end + 1;
            continue;
        }
        if line.trim().is_empty() {
            flush(&mut para, &mut pending, &mut out);
        } else if starts_heading(line) {
            flush(&mut para, &mut pending, &mut out);
            pending.push(line.trim());
        } else {
            para.push(line);
        }
        i += 1;
    }
    flush(&mut para, &mut pending, &mut out);
    if !pending.is_empty() {
        out.push(Block {
            text: pending.join("\n\n"),
            code: false,
            closed: false,
        });
    }
    out
}

/// Greedy split at single spaces into pieces of at most `max` characters; a
/// single longer word stays whole.
fn cap_at_spaces(text: &str, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > max {
            out.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(md: &str) -> Vec<String> {
        split(md, None).into_iter().map(|b| b.text).collect()
    }

    #[test]
    fn empty_and_whitespace_give_no_blocks() {
        assert!(split("", None).is_empty());
        assert!(split("  \n\n \t", None).is_empty());
    }

    #[test]
    fn heading_glued_to_next_paragraph() {
        assert_eq!(
            texts("# Title\n\nIntro text.\n\n## Section\n\nBody."),
            ["# Title\n\nIntro text.", "## Section\n\nBody."]
        );
    }

    #[test]
    fn consecutive_headings_join() {
        assert_eq!(
            texts("# A\n## B\n### C\nBody text."),
            ["# A\n\n## B\n\n### C\n\nBody text."]
        );
    }

    #[test]
    fn trailing_headings_form_their_own_block() {
        assert_eq!(texts("Text.\n\n# A\n\n## B"), ["Text.", "# A\n\n## B"]);
    }

    #[test]
    fn fence_with_blank_lines_is_atomic() {
        let blocks = split("Before.\n\n```python\na = 1\n\nb = 2\n```\n\nAfter.", None);
        assert_eq!(blocks.len(), 3);
        assert!(blocks[1].code && blocks[1].closed);
        assert!(blocks[1].text.starts_with("```python") && blocks[1].text.ends_with("```"));
        assert!(!blocks[0].code && !blocks[2].code);
    }

    #[test]
    fn tilde_fence_kept_exactly() {
        let md = "~~~\nx\n\ny\n~~~";
        assert_eq!(texts(md), [md]);
    }

    #[test]
    fn unterminated_fence_runs_to_end() {
        let blocks = split("```\ncode\n\nmore", None);
        assert_eq!(blocks.len(), 1);
        assert!(blocks[0].code && !blocks[0].closed);
    }

    #[test]
    fn four_backtick_fence_not_closed_by_three() {
        let blocks = split("````\n```\ninner\n```\n````\nafter", None);
        assert_eq!(blocks[0].text, "````\n```\ninner\n```\n````");
        assert!(blocks[0].closed);
        assert_eq!(blocks[1].text, "after");
    }

    #[test]
    fn long_fence_never_split_by_char_cap() {
        let body: Vec<String> = (0..500).map(|i| format!("line {i}")).collect();
        let md = format!("```\n{}\n```", body.join("\n"));
        let blocks = split(&md, Some(100));
        assert_eq!(blocks.len(), 1);
        assert!(blocks[0].code);
    }

    #[test]
    fn char_cap_keeps_words() {
        let para: Vec<String> = (0..200).map(|i| format!("word{i}")).collect();
        let md = para.join(" ");
        let blocks = split(&md, Some(200));
        assert!(blocks.len() > 1);
        assert!(blocks.iter().all(|b| b.text.chars().count() <= 200));
        let rejoined: Vec<String> = blocks.iter().map(|b| b.text.clone()).collect();
        assert_eq!(rejoined.join(" "), md);
    }
}
