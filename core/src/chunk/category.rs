//! Document shape detection, read off the Markdown, never the extension.

use crate::markdown::{atx_heading, code_lines, slide_marker, timestamp_seconds};

/// What shape a document has, which decides how it is cut into sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// Meeting transcript: cut into two-minute windows.
    Transcript,
    /// Presentation with `<!-- Slide number: N -->` markers.
    Slides,
    /// Headed document: one section per heading.
    Headings,
    /// Anything else: one section per structural block.
    Generic,
}

/// Minimum number of timestamp lines, and their minimum share of non-blank
/// lines, for a transcript.
const MIN_STAMPS: usize = 5;
const MIN_STAMP_SHARE: f64 = 0.15;

/// The document's shape, read off its Markdown.
pub fn detect(markdown: &str) -> Category {
    let lines: Vec<&str> = markdown.split('\n').collect();
    let non_blank = lines.iter().filter(|l| !l.trim().is_empty()).count();
    let stamps = lines
        .iter()
        .filter(|l| !l.trim().is_empty() && timestamp_seconds(l).is_some())
        .count();
    if stamps >= MIN_STAMPS && stamps as f64 / non_blank as f64 >= MIN_STAMP_SHARE {
        return Category::Transcript;
    }
    if lines.iter().filter(|l| slide_marker(l).is_some()).count() >= 2 {
        return Category::Slides;
    }
    let code = code_lines(&lines);
    let headings = lines
        .iter()
        .zip(&code)
        .filter(|(l, in_code)| !**in_code && atx_heading(l).is_some())
        .count();
    if headings >= 2 {
        Category::Headings
    } else {
        Category::Generic
    }
}
