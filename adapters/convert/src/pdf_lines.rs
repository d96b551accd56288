//! Spans → lines: spans on one baseline form a line, whatever their order in
//! the stream (a table's wrapped cell is drawn before the rest of its row),
//! and a line's spans form segments where they are far apart (table cells,
//! the two halves of a two-column page).

use crate::pdf_spans::{Span, Style};

/// Baselines closer than this share of the text size are one line.
const SAME_LINE: f32 = 0.3;
/// A gap wider than this share of the text size starts a new segment.
const SEGMENT_GAP: f32 = 0.9;
/// A gap wider than this share of the text size is a space between words.
const WORD_GAP: f32 = 0.15;

/// A run of text on a line with no wide gap inside.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Segment {
    pub x0: f32,
    pub x1: f32,
    /// The largest text size in it.
    pub size: f32,
    /// What all its spans share.
    pub style: Style,
    pub text: String,
}

impl Segment {
    pub(crate) fn chars(&self) -> usize {
        self.text.chars().count()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line {
    /// Baseline; larger is higher on the page.
    pub y: f32,
    pub size: f32,
    /// Left to right.
    pub segments: Vec<Segment>,
}

impl Line {
    /// The line's text: segments joined by a space.
    pub(crate) fn text(&self) -> String {
        let parts: Vec<&str> = self.segments.iter().map(|s| s.text.as_str()).collect();
        parts.join(" ")
    }
}

/// The page's lines, top to bottom.
pub(crate) fn lines(mut spans: Vec<Span>) -> Vec<Line> {
    spans.retain(|s| s.y.is_finite() && s.x0.is_finite() && s.x1.is_finite());
    // Top to bottom; the sort is stable, so one baseline keeps stream order.
    spans.sort_by(|a, b| b.y.total_cmp(&a.y));
    let mut groups: Vec<Vec<Span>> = Vec::new();
    for span in spans {
        match groups.last_mut() {
            Some(g) if (g[0].y - span.y).abs() <= SAME_LINE * g[0].size.min(span.size) => {
                g.push(span)
            }
            _ => groups.push(vec![span]),
        }
    }
    groups
        .into_iter()
        .map(line)
        .filter(|l| !l.segments.is_empty())
        .collect()
}

fn line(mut spans: Vec<Span>) -> Line {
    spans.sort_by(|a, b| a.x0.total_cmp(&b.x0));
    let y = spans[0].y;
    let size = spans.iter().map(|s| s.size).fold(0.0, f32::max);
    let mut segments: Vec<Segment> = Vec::new();
    // The last span ended in whitespace: the next one on its segment is a new word.
    let mut trailing = false;
    for s in spans {
        let text = s.text.split_whitespace().collect::<Vec<_>>().join(" ");
        match segments.last_mut() {
            Some(seg) if s.x0 - seg.x1 <= SEGMENT_GAP * size => {
                let leading = s.text.starts_with(char::is_whitespace);
                if leading || trailing || s.x0 - seg.x1 > WORD_GAP * size {
                    seg.text.push(' ');
                }
                seg.text.push_str(&text);
                seg.x1 = seg.x1.max(s.x1);
                seg.size = seg.size.max(s.size);
                seg.style = seg.style.common(s.style);
            }
            _ => segments.push(Segment {
                x0: s.x0,
                x1: s.x1,
                size: s.size,
                style: s.style,
                text,
            }),
        }
        trailing = s.text.ends_with(char::is_whitespace);
    }
    segments.retain(|s| !s.text.is_empty());
    // Held for every page of the document until layout: no spare room.
    segments.iter_mut().for_each(|s| s.text.shrink_to_fit());
    segments.shrink_to_fit();
    Line { y, size, segments }
}

/// A line of size-10 segments `(x0, x1, text)` at baseline `y`, for tests.
#[cfg(test)]
pub(crate) fn test_line(y: f32, segs: &[(f32, f32, &str)]) -> Line {
    Line {
        y,
        size: 10.0,
        segments: segs
            .iter()
            .map(|&(x0, x1, t)| Segment {
                x0,
                x1,
                size: 10.0,
                style: Style::default(),
                text: t.into(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(x0: f32, x1: f32, y: f32, text: &str) -> Span {
        Span {
            x0,
            x1,
            y,
            size: 10.0,
            style: Style::default(),
            text: text.into(),
        }
    }

    #[test]
    fn baselines_group_across_the_stream_and_gaps_make_segments() {
        let lines = lines(vec![
            span(10.0, 40.0, 100.0, "Pump"),
            span(10.0, 40.0, 88.0, "wrapped"),
            span(42.0, 60.0, 100.0, "X2"),
            span(120.0, 140.0, 100.2, "7"),
        ]);
        assert_eq!(lines.len(), 2);
        let texts: Vec<&str> = lines[0].segments.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts, ["Pump X2", "7"]);
        assert_eq!(lines[1].text(), "wrapped");
    }

    #[test]
    fn touching_spans_join_without_a_space() {
        let lines = lines(vec![
            span(10.0, 20.0, 50.0, "Sp"),
            span(20.0, 30.0, 50.0, "are "),
            span(30.0, 40.0, 50.0, "parts"),
        ]);
        assert_eq!(lines[0].text(), "Spare parts");
    }
}
