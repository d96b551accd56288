//! Headings from type, for PDFs without an outline: the body text's size is
//! the size most characters are set in, and a line of its own set larger
//! (or bold at the body's size) reads as a heading. Larger sizes are outer
//! levels. Monospaced lines are code only where the body is not set in a
//! monospaced face itself (a typewritten page). A PDF with an outline takes its headings from there instead
//! ([`crate::pdf_outline`]): the author's own list beats a guess.

use std::collections::BTreeMap;

use crate::pdf_columns::{same_size, TextLine};
use crate::pdf_lines::Line;

/// A line this much larger than the body text is a heading's size.
const HEADING_SCALE: f32 = 1.15;
/// Sizes are compared in steps of half a point.
const STEP: f32 = 0.5;
/// Longer lines are text, whatever their size (a pull quote, a banner).
const MAX_HEADING_CHARS: usize = 120;
const MAX_HEADING_WORDS: usize = 16;
/// ATX has six levels.
const MAX_LEVEL: usize = 6;

fn step(size: f32) -> u32 {
    (size / STEP).round().max(0.0) as u32
}

/// Characters per size step, counted page by page in the first pass.
#[derive(Default)]
pub(crate) struct TypeCount {
    chars: BTreeMap<u32, usize>,
    mono_chars: usize,
}

impl TypeCount {
    pub(crate) fn count(&mut self, page: &[Line]) {
        for seg in page.iter().flat_map(|l| &l.segments) {
            *self.chars.entry(step(seg.size)).or_default() += seg.chars();
            if seg.style.mono {
                self.mono_chars += seg.chars();
            }
        }
    }

    /// The document's typography; `headings` off leaves every line text.
    pub(crate) fn finish(self, headings: bool) -> Typography {
        let Some((&body, _)) = self.chars.iter().max_by_key(|(_, &n)| n) else {
            return Typography::default();
        };
        let all: usize = self.chars.values().sum();
        let body = body as f32 * STEP;
        // Larger sizes first: the largest is level 1.
        let larger = self
            .chars
            .keys()
            .rev()
            .map(|&s| s as f32 * STEP)
            .filter(|&s| s >= HEADING_SCALE * body)
            .collect();
        Typography {
            headings,
            code: self.mono_chars * 2 < all,
            body,
            larger,
        }
    }
}

/// The body size and the heading sizes above it.
#[derive(Debug, Default)]
pub(crate) struct Typography {
    headings: bool,
    /// Monospaced lines are code: the body is set in another face.
    code: bool,
    body: f32,
    /// Sizes of heading scale, largest first.
    larger: Vec<f32>,
}

impl Typography {
    /// Whether `line` belongs in a code block.
    pub(crate) fn is_code(&self, line: &TextLine) -> bool {
        self.code && line.style.mono
    }

    /// The heading level of a line that stands as a block of its own, or
    /// `None` for text: code, a sentence, a contents line, a lone number.
    pub(crate) fn heading_level(&self, line: &TextLine) -> Option<usize> {
        if !self.headings || self.is_code(line) {
            return None;
        }
        let text = line.text.trim();
        let words = text.split_whitespace().count();
        let sentence = text.ends_with(['.', ',', ';', ':']) && words > 6;
        if text.chars().count() > MAX_HEADING_CHARS
            || words > MAX_HEADING_WORDS
            || sentence
            || text.ends_with([',', ';', ':'])
            || !text.chars().any(char::is_alphabetic)
            || text.contains(". . .")
            || text.contains("....")
        {
            return None;
        }
        let level = if line.size >= HEADING_SCALE * self.body {
            1 + self
                .larger
                .iter()
                .filter(|&&s| step(s) > step(line.size))
                .count()
        } else if line.style.bold && same_size(line.size, self.body) {
            self.larger.len() + 1
        } else {
            return None;
        };
        Some(level.min(MAX_LEVEL))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdf_spans::Style;

    fn text_line(text: &str, size: f32, bold: bool, mono: bool) -> TextLine {
        TextLine {
            text: text.into(),
            full: false,
            size,
            style: Style { bold, mono },
            x0: 0.0,
        }
    }

    fn typography() -> Typography {
        Typography {
            headings: true,
            code: true,
            body: 10.0,
            larger: vec![18.0, 14.0],
        }
    }

    #[test]
    fn larger_sizes_are_outer_levels_and_bold_body_the_innermost() {
        let t = typography();
        assert_eq!(
            t.heading_level(&text_line("Usage", 18.0, true, false)),
            Some(1)
        );
        assert_eq!(
            t.heading_level(&text_line("3.1 Options", 14.0, false, false)),
            Some(2)
        );
        assert_eq!(
            t.heading_level(&text_line("Exit codes", 10.0, true, false)),
            Some(3)
        );
        assert_eq!(
            t.heading_level(&text_line("Plain words", 10.0, false, false)),
            None
        );
    }

    #[test]
    fn code_sentences_and_contents_lines_are_text() {
        let t = typography();
        for line in [
            text_line("# generated file", 18.0, false, true),
            text_line(
                "This bold sentence runs on for more than six words.",
                10.0,
                true,
                false,
            ),
            text_line("Note:", 10.0, true, false),
            text_line("Introduction . . . . . 3", 14.0, false, false),
            text_line("42", 18.0, false, false),
        ] {
            assert_eq!(t.heading_level(&line), None, "{}", line.text);
        }
        let off = Typography {
            headings: false,
            ..typography()
        };
        assert_eq!(
            off.heading_level(&text_line("Usage", 18.0, true, false)),
            None
        );
    }

    #[test]
    fn the_body_is_the_size_most_characters_are_set_in() {
        let mut count = TypeCount::default();
        let line = |size: f32, text: &str| {
            let mut l = crate::pdf_lines::test_line(0.0, &[(0.0, 10.0, text)]);
            l.segments[0].size = size;
            l
        };
        count.count(&[
            line(24.0, "Title"),
            line(11.0, "a long line of body text set at eleven points"),
            line(16.0, "Section"),
            line(9.0, "a footnote"),
        ]);
        let t = count.finish(true);
        assert_eq!(
            (t.body, t.larger.as_slice()),
            (11.0, [24.0, 16.0].as_slice())
        );
        assert!(
            t.code,
            "a body in a proportional face leaves code to monospace"
        );
        let mut typewritten = TypeCount::default();
        let mut page = [line(11.0, "every line of this page is set in Courier")];
        page[0].segments[0].style.mono = true;
        typewritten.count(&page);
        assert!(!typewritten.finish(true).code, "a typewritten body is text");
    }
}
