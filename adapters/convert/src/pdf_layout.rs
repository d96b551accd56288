//! Lines to paragraphs: running headers and footers that repeat across
//! pages are dropped, and lines wrapped inside a paragraph (within a column,
//! across columns and across pages) are joined again.

use std::collections::HashMap;

use crate::pdf_columns::{same_size, TextLine};
use crate::pdf_typography::Typography;

/// Lines at the top and at the bottom of a page that may be running.
const EDGE_LINES: usize = 3;
/// A line is running when its shape is on at least this many pages: a
/// book's running heads change with each chapter, and alternate.
const RUNNING_PAGES: usize = 3;
/// A header or footer stands apart from the body: the gap to the next line
/// is wider than this many text sizes (a paragraph's lines are closer).
const APART: f32 = 1.45;
/// A running line is short: a body line reaches the column's edge.
const SHORT_SHARE: f32 = 0.8;

/// What the running-line rule reads of a line.
pub(crate) struct EdgeKey {
    pub text: String,
    /// Baseline; larger is higher on the page.
    pub y: f32,
    pub size: f32,
    /// Its extent across the page.
    pub width: f32,
}

/// A line's shape: each run of digits folded to one `#` (page numbers
/// differ, in value and in length: `9`, `10`), spaces collapsed.
fn shape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for word in line.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        let mut in_number = false;
        for c in word.chars() {
            match (c.is_ascii_digit(), in_number) {
                (true, true) => {}
                (true, false) => out.push('#'),
                (false, _) => out.push(c),
            }
            in_number = c.is_ascii_digit();
        }
    }
    out
}

/// The lines of a page that may be running: at the top and at the bottom,
/// the block of up to [`EDGE_LINES`] short lines set apart from the body by
/// a gap. A paragraph that merely opens every page is not one: its lines
/// follow each other closely, or reach the column's edge.
fn edge_lines(keys: &[EdgeKey]) -> Vec<usize> {
    let widest = keys.iter().map(|k| k.width).fold(0.0, f32::max);
    let short = |i: usize| keys[i].width < SHORT_SHARE * widest;
    let block = |order: Vec<usize>| -> Vec<usize> {
        for (taken, pair) in order.windows(2).enumerate().take(EDGE_LINES) {
            let (a, b) = (&keys[pair[0]], &keys[pair[1]]);
            if (a.y - b.y).abs() > APART * a.size.max(b.size) {
                let block = &order[..=taken];
                return match block.iter().all(|&i| short(i)) {
                    true => block.to_vec(),
                    false => Vec::new(),
                };
            }
        }
        Vec::new()
    };
    let mut edges = block((0..keys.len()).collect());
    edges.extend(block((0..keys.len()).rev().collect()));
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// Header and footer lines that repeat, up to their digits, in one place
/// at the top or bottom of three pages or more. Pages are
/// counted one by one ([`RunningLines::count`]), so a long PDF's pages
/// need not all be held at once; lines are then dropped page by page.
#[derive(Default)]
pub(crate) struct RunningLines {
    /// Edge-line shapes (with their height) and the pages they are on.
    seen: HashMap<String, usize>,
}

/// A line's shape keyed with its baseline: running lines sit at one height
/// on every page, so a body line that merely repeats is kept.
fn keyed(key: &EdgeKey) -> String {
    format!("{}@{}", shape(&key.text), (key.y / 4.0).round())
}

impl RunningLines {
    /// Counts one page's edge lines (top to bottom).
    pub(crate) fn count<T>(&mut self, page: &[T], key: impl Fn(&T) -> EdgeKey) {
        let keys: Vec<EdgeKey> = page.iter().map(key).collect();
        let mut shapes: Vec<String> = edge_lines(&keys)
            .into_iter()
            .map(|i| keyed(&keys[i]))
            .collect();
        shapes.sort();
        shapes.dedup();
        for s in shapes {
            *self.seen.entry(s).or_default() += 1;
        }
    }

    fn is_running(&self, shape: &str) -> bool {
        self.seen.get(shape).is_some_and(|&n| n >= RUNNING_PAGES)
    }

    /// Removes the running lines from a page counted before.
    pub(crate) fn drop_from<T>(&self, page: &mut Vec<T>, key: impl Fn(&T) -> EdgeKey) {
        let keys: Vec<EdgeKey> = page.iter().map(key).collect();
        let running: Vec<usize> = edge_lines(&keys)
            .into_iter()
            .filter(|&i| self.is_running(&keyed(&keys[i])))
            .collect();
        for i in running.into_iter().rev() {
            page.remove(i);
        }
    }
}

/// [`Paragraphs`] over lines all in memory (the tests' form).
#[cfg(test)]
pub(crate) fn paragraphs(lines: &[TextLine]) -> String {
    let mut out = String::new();
    let mut writer = Paragraphs::default();
    for line in lines {
        writer.push(line.clone(), &mut out);
    }
    writer.finish(&mut out);
    out
}

/// Joins wrapped lines into paragraphs, one line at a time: a full line
/// that does not end a sentence continues on the next line (a hyphenated
/// word is rejoined); a short line (a heading, a paragraph's last line) ends
/// its block, and blocks are separated by a blank line, as Markdown
/// paragraphs. A line that stands alone and reads as a heading by its type
/// ([`Typography`]) becomes an ATX heading; a run of monospaced lines is a
/// fenced code block, its lines kept as set. How a line ends depends only
/// on the line after it, so one line waits and the rest is written at once.
#[derive(Default)]
pub(crate) struct Paragraphs {
    waiting: Option<TextLine>,
    typography: Typography,
    /// The left edge of the open code block's first line.
    fence: Option<f32>,
}

/// A line that opens a list item (`3.`, `2.1)`, a bullet) starts a block
/// of its own, even after a full line: the item before has ended.
fn opens_item(line: &str) -> bool {
    let first = line.split_whitespace().next().unwrap_or("");
    matches!(first, "•" | "◦" | "▪" | "‣" | "–")
        || (first.starts_with(|c: char| c.is_ascii_digit())
            && minirag_core::markdown::is_list_marker(first))
}

/// Monospaced glyphs are about this share of the text size wide.
const MONO_ADVANCE: f32 = 0.6;

impl Paragraphs {
    pub(crate) fn new(typography: Typography) -> Self {
        Self {
            typography,
            ..Self::default()
        }
    }

    pub(crate) fn push(&mut self, next: TextLine, out: &mut String) {
        if let Some(this) = self.waiting.take() {
            self.write_line(&this, Some(&next), out);
        }
        self.waiting = Some(next);
    }

    /// The line held back until the next shows whether they join.
    pub(crate) fn waiting_text(&self) -> Option<&str> {
        self.waiting.as_ref().map(|l| l.text.as_str())
    }

    /// Writes the last line, which ends the text.
    pub(crate) fn finish(&mut self, out: &mut String) {
        if let Some(this) = self.waiting.take() {
            self.write_line(&this, None, out);
        }
    }

    fn write_line(&mut self, this: &TextLine, next: Option<&TextLine>, out: &mut String) {
        if self.typography.is_code(this) {
            return self.write_code(this, next, out);
        }
        // A line that starts a block is text, whatever it starts with.
        let at_start = out.is_empty() || out.ends_with('\n');
        let line: &str = &if at_start {
            crate::plain_text::escape_line_start(&this.text)
        } else {
            std::borrow::Cow::Borrowed(this.text.as_str())
        };
        let Some(next) = next else {
            self.write_heading_or(this, at_start, line, out);
            return;
        };
        // A table-of-contents entry (dot leaders) is a line of its own.
        let leader = line.contains(". . . .") || line.contains(".....");
        let long = this.full
            && !leader
            && !opens_item(&next.text)
            && !self.typography.is_code(next)
            && same_size(this.size, next.size)
            && this.style.bold == next.style.bold;
        let ends_sentence = line.ends_with(['.', '!', '?', ':', ';']);
        let next_lower = next.text.chars().next().is_some_and(char::is_lowercase);
        let next_opens = next_lower || next.text.starts_with(|c: char| c.is_ascii_digit());
        if long && line.len() > 1 && line.ends_with('-') && next_lower {
            out.push_str(&line[..line.len() - 1]);
            return;
        }
        if long && (!ends_sentence || next_opens) {
            out.push_str(line);
            out.push(' ');
        } else {
            self.write_heading_or(this, at_start, line, out);
            out.push_str("\n\n");
        }
    }

    /// A line that ends its block: a heading when it is a block of its own
    /// set apart by its type, else `text` as it is.
    fn write_heading_or(&self, this: &TextLine, at_start: bool, text: &str, out: &mut String) {
        match self.typography.heading_level(this).filter(|_| at_start) {
            Some(level) => {
                out.push_str(&"#".repeat(level));
                out.push(' ');
                out.push_str(this.text.trim());
            }
            None => out.push_str(text),
        }
    }

    /// A monospaced line inside a fence, opened before the first and closed
    /// after the last; indentation comes back from the line's left edge.
    fn write_code(&mut self, this: &TextLine, next: Option<&TextLine>, out: &mut String) {
        let left = *self.fence.get_or_insert_with(|| {
            // A paragraph that ran on into the code ends before it.
            if out.ends_with(' ') {
                out.truncate(out.trim_end_matches(' ').len());
            }
            if !out.is_empty() && !out.ends_with('\n') {
                out.push_str("\n\n");
            }
            out.push_str("```\n");
            this.x0
        });
        let indent = ((this.x0 - left) / (MONO_ADVANCE * this.size)).round();
        let indent = if indent.is_finite() {
            indent.clamp(0.0, 80.0) as usize
        } else {
            0
        };
        out.push_str(&" ".repeat(indent));
        if indent == 0 && this.text.starts_with("```") {
            out.push(' ');
        }
        out.push_str(&this.text);
        out.push('\n');
        if !next.is_some_and(|n| self.typography.is_code(n)) {
            out.push_str("```");
            if next.is_some() {
                out.push_str("\n\n");
            }
            self.fence = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    /// Lines set as a page sets them: a header and a footer apart from the
    /// body, the body's lines 14 points apart at size 11; a line's width is
    /// its length.
    fn key(page: &[String], i: usize) -> EdgeKey {
        let last = page.len() - 1;
        let y = match i {
            0 => 800.0,
            i if i == last => 40.0,
            i => 760.0 - 14.0 * i as f32,
        };
        EdgeKey {
            text: page[i].clone(),
            y,
            size: 11.0,
            width: 6.0 * page[i].len() as f32,
        }
    }

    fn drop(pages: &mut [Vec<String>]) {
        let keyed: Vec<Vec<EdgeKey>> = pages
            .iter()
            .map(|p| (0..p.len()).map(|i| key(p, i)).collect())
            .collect();
        let mut running = RunningLines::default();
        for page in &keyed {
            running.count(page, |k| EdgeKey {
                text: k.text.clone(),
                ..*k
            });
        }
        for (page, keys) in pages.iter_mut().zip(keyed) {
            let mut indexed: Vec<usize> = (0..page.len()).collect();
            running.drop_from(&mut indexed, |&i| EdgeKey {
                text: keys[i].text.clone(),
                ..keys[i]
            });
            *page = indexed.into_iter().map(|i| page[i].clone()).collect();
        }
    }

    const BODY: &str = "Body text that runs to the right edge of the column, as a paragraph";

    #[test]
    fn headers_and_page_numbers_on_most_pages_go() {
        let numbers = ["1", "2", "3", "4"];
        let mut pages: Vec<Vec<String>> = (0..4)
            .map(|n| {
                page(&[
                    "Harbour Report",
                    BODY,
                    BODY,
                    &format!("unit {n}"),
                    numbers[n],
                ])
            })
            .collect();
        drop(&mut pages);
        assert_eq!(pages[2], page(&[BODY, BODY, "unit 2"]));
    }

    #[test]
    fn a_paragraph_that_opens_every_page_stays() {
        let mut pages: Vec<Vec<String>> = (0..4)
            .map(|n| page(&[BODY, BODY, BODY, &format!("fact {n}"), "Footer"]))
            .collect();
        drop(&mut pages);
        assert_eq!(pages[1], page(&[BODY, BODY, BODY, "fact 1"]));
    }

    #[test]
    fn a_chapters_running_head_goes() {
        let mut pages: Vec<Vec<String>> = (0..8)
            .map(|n| {
                let header = if n < 4 {
                    "How to use it"
                } else {
                    "Programming with it"
                };
                page(&[header, BODY, &format!("unit {n}"), "x"])
            })
            .collect();
        drop(&mut pages);
        assert_eq!(pages[2], page(&[BODY, "unit 2"]));
        assert_eq!(pages[6], page(&[BODY, "unit 6"]));
    }

    #[test]
    fn alternating_headers_go() {
        let mut pages: Vec<Vec<String>> = (0..6)
            .map(|n| {
                let header = if n % 2 == 0 {
                    "Chapter one"
                } else {
                    "The manual"
                };
                page(&[header, BODY, &format!("unit {n}"), "x"])
            })
            .collect();
        drop(&mut pages);
        assert_eq!(pages[3], page(&[BODY, "unit 3"]));
    }

    #[test]
    fn page_numbers_of_any_length_are_one_shape() {
        assert_eq!(shape("9"), shape("10"));
        assert_eq!(shape("Page 9 of  120"), "Page # of #");
    }

    #[test]
    fn two_pages_keep_everything() {
        let mut pages = vec![page(&["Title", "a", "z"]), page(&["Title", "b", "z"])];
        drop(&mut pages);
        assert_eq!(pages[1], page(&["Title", "b", "z"]));
    }

    #[test]
    fn wrapped_lines_join_and_short_lines_end_blocks() {
        let line = |text: &str, full: bool| TextLine {
            text: text.into(),
            full,
            size: 11.0,
            style: Default::default(),
            x0: 0.0,
        };
        let lines = [
            line("Section 1: Cranes", false),
            line(
                "The cranes crew inspected unit 0 this quarter and logged its condition, the",
                true,
            ),
            line(
                "parts replaced and the hours spent, so that the next crew can plan the",
                true,
            ),
            line(
                "cranes work for the coming season without repeating the survey.",
                true,
            ),
            line(
                "The cranes crew inspected unit 1 this quarter and logged its condition, the",
                true,
            ),
            line("parts replaced.", false),
        ];
        assert_eq!(
            paragraphs(&lines),
            "Section 1: Cranes\n\nThe cranes crew inspected unit 0 this quarter and logged its condition, the parts replaced and the hours spent, so that the next crew can plan the cranes work for the coming season without repeating the survey.\n\nThe cranes crew inspected unit 1 this quarter and logged its condition, the parts replaced."
        );
        assert_eq!(
            paragraphs(&[
                line("the crew wrote it down as an exam-", true),
                line("ple", false)
            ]),
            "the crew wrote it down as an example",
            "a hyphenated line end is rejoined"
        );
        assert_eq!(
            paragraphs(&[
                line("2. Pack the archive with the largest block size and the", true),
                line("fastest setting.", true),
                line("3. Check the packed archive before deleting the original.", false),
            ]),
            "2\\. Pack the archive with the largest block size and the fastest setting.\n\n3\\. Check the packed archive before deleting the original.",
            "a numbered item after a full line starts its own block"
        );
    }
}
