//! The lines of the original file that a converted page's Markdown lines
//! came from (HTML, WebVTT): each Markdown line's first words are found,
//! in order, among the file's words outside tags, comments, scripts and
//! character references. Nothing is held but a window of words ahead, so a
//! large page is not copied; a line whose words are not found in the
//! window gets no mark, and is never guessed.

use std::collections::VecDeque;

use minirag_core::location::{Mark, Place};
use minirag_core::markdown::is_word_char;

/// Words of the file looked at ahead of the last one matched.
const WINDOW: usize = 4096;
/// Words a Markdown line is recognised by.
const KEY: usize = 3;

fn hash(word: &str) -> u64 {
    word.chars()
        .flat_map(char::to_lowercase)
        .fold(0xcbf2_9ce4_8422_2325u64, |h, c| {
            (h ^ c as u64).wrapping_mul(0x100_0000_01b3)
        })
}

/// The words of a file's text with their lines (1-based), markup skipped.
struct SourceWords<'a> {
    text: &'a str,
    at: usize,
    line: u32,
}

impl<'a> SourceWords<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            at: 0,
            line: 1,
        }
    }

    /// Moves to `to`, counting the lines passed.
    fn skip_to(&mut self, to: usize) {
        let to = to.min(self.text.len());
        self.line += self.text[self.at..to].matches('\n').count() as u32;
        self.at = to;
    }

    /// Past the markup that starts at `self.at`, if any.
    fn skip_markup(&mut self) -> bool {
        let rest = &self.text[self.at..];
        let end = if rest.starts_with("<!--") {
            rest.find("-->").map_or(rest.len(), |e| e + 3)
        } else if starts_with_ci(rest, "<script") || starts_with_ci(rest, "<style") {
            let close = if starts_with_ci(rest, "<script") {
                "</script"
            } else {
                "</style"
            };
            find_ci(rest, close).map_or(rest.len(), |e| {
                rest[e..].find('>').map_or(rest.len(), |g| e + g + 1)
            })
        } else if rest.starts_with('<') {
            rest.find('>').map_or(rest.len(), |e| e + 1)
        } else if let Some(entity) = rest.strip_prefix('&') {
            match entity.find(';') {
                Some(e) if e <= 10 && !entity[..e].contains(char::is_whitespace) => e + 2,
                _ => return false,
            }
        } else {
            return false;
        };
        self.skip_to(self.at + end);
        true
    }
}

fn starts_with_ci(text: &str, prefix: &str) -> bool {
    text.len() >= prefix.len()
        && text.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

fn find_ci(text: &str, needle: &str) -> Option<usize> {
    let n = needle.as_bytes();
    text.as_bytes()
        .windows(n.len())
        .position(|w| w.eq_ignore_ascii_case(n))
}

impl Iterator for SourceWords<'_> {
    type Item = (u64, u32);

    fn next(&mut self) -> Option<(u64, u32)> {
        loop {
            let rest = &self.text[self.at..];
            let c = rest.chars().next()?;
            if (c == '<' || c == '&') && self.skip_markup() {
                continue;
            }
            if !is_word_char(c) {
                self.skip_to(self.at + c.len_utf8());
                continue;
            }
            let len = rest
                .char_indices()
                .find(|(_, c)| !is_word_char(*c))
                .map_or(rest.len(), |(i, _)| i);
            let word = &rest[..len];
            let line = self.line;
            self.skip_to(self.at + len);
            return Some((hash(word), line));
        }
    }
}

/// A Markdown line's words, link and image targets left out (`[text](url)`
/// shows only `text` in the page).
fn markdown_words(line: &str) -> Vec<u64> {
    let mut text = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        text.push_str(&rest[..at + 1]);
        rest = rest[at + 2..]
            .find(')')
            .map_or("", |e| &rest[at + 2 + e + 1..]);
    }
    text.push_str(rest);
    text.split(|c: char| !is_word_char(c))
        .filter(|w| !w.is_empty())
        .take(KEY)
        .map(hash)
        .collect()
}

/// A [`Mark::Lines`] at every Markdown line whose first words are found in
/// `source`: the file line they are on.
pub(crate) fn marks(source: &str, markdown: &str) -> Vec<Place> {
    let mut words = SourceWords::new(source);
    let mut ahead: VecDeque<(u64, u32)> = VecDeque::new();
    let mut out = Vec::new();
    for (i, line) in markdown.split('\n').enumerate() {
        let key = markdown_words(line);
        if key.is_empty() {
            continue;
        }
        while ahead.len() < WINDOW {
            match words.next() {
                Some(w) => ahead.push_back(w),
                None => break,
            }
        }
        let found = (0..ahead.len()).find(|&s| {
            key.iter()
                .enumerate()
                .all(|(k, h)| ahead.get(s + k).is_some_and(|w| w.0 == *h))
        });
        if let Some(s) = found {
            out.push(Place {
                line: i as u32,
                word: 0,
                mark: Mark::Lines(ahead[s].1),
            });
            ahead.drain(..s + 1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(places: &[Place]) -> Vec<(u32, u32)> {
        places
            .iter()
            .map(|p| match p.mark {
                Mark::Lines(l) => (p.line, l),
                _ => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn markdown_lines_find_the_page_lines_they_came_from() {
        let html = "<html><head><style>p { x: 1 }</style>\n<script>var a = 'Intro';</script></head>\n<body>\n<h1 id=\"a\">Intro &amp; setup</h1>\n<!-- Intro words hidden -->\n<p>Install the\n<a href=\"https://x.org/pkg\">package</a> first.</p>\n\n<p>Then run it.</p>\n</body></html>\n";
        let md =
            "# Intro & setup\n\nInstall the [package](https://x.org/pkg) first.\n\nThen run it.";
        assert_eq!(lines_of(&marks(html, md)), [(0, 4), (2, 6), (4, 9)]);
    }

    #[test]
    fn a_line_not_on_the_page_gets_no_mark_and_moves_nothing() {
        let md = "Alpha beta gamma.\n\nNot on the page at all.\n\nDelta epsilon.";
        let src = "Alpha beta gamma.\nDelta epsilon.\n";
        assert_eq!(lines_of(&marks(src, md)), [(0, 1), (4, 2)]);
    }
}
