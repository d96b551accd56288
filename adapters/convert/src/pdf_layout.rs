//! Page text to paragraphs, from the lines alone (lopdf gives no positions
//! here): running headers and footers that repeat across pages are dropped,
//! and lines wrapped inside a paragraph are joined again.

use std::collections::HashMap;

/// Lines at the top and at the bottom of a page that may be running.
const EDGE_LINES: usize = 3;
/// A line is running when its shape is on at least this share of pages.
const RUNNING_SHARE: f64 = 0.6;
/// A line this much shorter than the page's full lines ends its paragraph.
const FULL_LINE_SHARE: f64 = 0.75;

/// A line's shape: digits folded (page numbers differ), spaces collapsed.
fn shape(line: &str) -> String {
    line.split_whitespace()
        .map(|w| {
            w.chars()
                .map(|c| if c.is_ascii_digit() { '#' } else { c })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Indices of a page's first and last [`EDGE_LINES`] lines, each once.
fn edges(n: usize) -> impl Iterator<Item = usize> {
    (0..n.min(EDGE_LINES)).chain(n.saturating_sub(EDGE_LINES).max(EDGE_LINES.min(n))..n)
}

/// Removes header and footer lines that repeat, up to their digits, at the
/// top or bottom of most pages (three pages at least).
pub fn drop_running_lines(pages: &mut [Vec<&str>]) {
    if pages.len() < 3 {
        return;
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    for page in pages.iter() {
        let mut shapes: Vec<String> = edges(page.len()).map(|i| shape(page[i])).collect();
        shapes.sort();
        shapes.dedup();
        for s in shapes {
            *seen.entry(s).or_default() += 1;
        }
    }
    let needed = ((pages.len() as f64) * RUNNING_SHARE).ceil() as usize;
    for page in pages.iter_mut() {
        let running: Vec<usize> = edges(page.len())
            .filter(|&i| seen.get(&shape(page[i])).is_some_and(|&n| n >= needed))
            .collect();
        for i in running.into_iter().rev() {
            page.remove(i);
        }
    }
}

/// Joins wrapped lines into paragraphs: a line as long as the page's full
/// lines that does not end a sentence continues on the next line; a short
/// line (a heading, a table row, a paragraph's last line) ends its block,
/// and blocks are separated by a blank line, as Markdown paragraphs.
pub fn paragraphs(lines: &[&str]) -> String {
    let lengths: Vec<usize> = lines.iter().map(|l| l.chars().count()).collect();
    let mut sorted = lengths.clone();
    sorted.sort_unstable();
    // The page's full line length: its longer lines' typical length.
    let full = sorted.get(sorted.len() * 4 / 5).copied().unwrap_or(0);
    let mut out = String::with_capacity(lines.iter().map(|l| l.len() + 2).sum());
    for (i, line) in lines.iter().enumerate() {
        out.push_str(line);
        let Some(next) = lines.get(i + 1) else { break };
        let long = full >= 40 && lengths[i] as f64 >= FULL_LINE_SHARE * full as f64;
        let ends_sentence = line.ends_with(['.', '!', '?', ':', ';']);
        let next_opens = next
            .chars()
            .next()
            .is_some_and(|c| c.is_lowercase() || c.is_ascii_digit());
        out.push_str(if long && (!ends_sentence || next_opens) {
            " "
        } else {
            "\n\n"
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page<'a>(lines: &[&'a str]) -> Vec<&'a str> {
        lines.to_vec()
    }

    #[test]
    fn headers_and_page_numbers_on_most_pages_go() {
        let bodies = [
            "Body text about cranes",
            "Body text about bollards",
            "Body text about fenders",
            "Body text about gates",
        ];
        let numbers = ["1", "2", "3", "4"];
        let mut pages: Vec<Vec<&str>> = (0..4)
            .map(|n| page(&["Harbour Report", bodies[n], "Page", numbers[n]]))
            .collect();
        drop_running_lines(&mut pages);
        assert_eq!(pages[2], page(&["Body text about fenders"]));
    }

    #[test]
    fn two_pages_keep_everything() {
        let mut pages = vec![page(&["Title", "a"]), page(&["Title", "b"])];
        drop_running_lines(&mut pages);
        assert_eq!(pages[1], page(&["Title", "b"]));
    }

    #[test]
    fn wrapped_lines_join_and_short_lines_end_blocks() {
        let lines = page(&[
            "Section 1: Cranes",
            "The cranes crew inspected unit 0 this quarter and logged its condition, the",
            "parts replaced and the hours spent, so that the next crew can plan the",
            "cranes work for the coming season without repeating the survey.",
            "The cranes crew inspected unit 1 this quarter and logged its condition, the",
            "parts replaced.",
        ]);
        assert_eq!(
            paragraphs(&lines),
            "Section 1: Cranes\n\nThe cranes crew inspected unit 0 this quarter and logged its condition, the parts replaced and the hours spent, so that the next crew can plan the cranes work for the coming season without repeating the survey.\n\nThe cranes crew inspected unit 1 this quarter and logged its condition, the parts replaced."
        );
    }
}
