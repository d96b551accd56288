//! Reading order of running text: a page set in two columns reads down the
//! left column, then the right, found from positions alone (a gutter that
//! no text crosses, with prose on both sides). Lines that cross the gutter
//! (a title over both columns) separate bands, each read left then right.

use crate::pdf_lines::{Line, Segment};
use crate::pdf_spans::Style;

/// The gutter is searched in the middle of the text's width, this share
/// away from either edge.
const GUTTER_MARGIN: f32 = 0.3;
/// Each column needs at least this many lines…
const MIN_COLUMN_LINES: usize = 3;
/// …of prose: their median length in characters.
const MIN_COLUMN_CHARS: usize = 15;

/// A line's share of its column's width from which it counts as full.
const FULL_SHARE: f32 = 0.8;
/// Columns narrower than this many characters never join lines (lists,
/// short labels): a full line there says nothing about a paragraph.
const MIN_FULL_CHARS: usize = 25;

/// Sizes within 10 % of each other: one paragraph's text.
pub(crate) fn same_size(a: f32, b: f32) -> bool {
    (a - b).abs() <= 0.1 * a.max(b)
}

/// A line of running text in reading order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TextLine {
    pub text: String,
    /// It reaches (nearly) its column's right edge: a paragraph wrapped here.
    pub full: bool,
    /// Text size: a change of size (a heading) ends a paragraph.
    pub size: f32,
    /// What all of the line shares: bold or monospaced throughout.
    pub style: Style,
    /// Where it starts on the page: a code line's indentation.
    pub x0: f32,
}

/// One line's part on one side of the gutter.
struct Piece {
    x0: f32,
    x1: f32,
    size: f32,
    style: Style,
    text: String,
}

impl Piece {
    fn of(segs: &[&Segment]) -> Option<Piece> {
        Some(Piece {
            size: segs.iter().map(|s| s.size).fold(0.0, f32::max),
            style: segs.iter().map(|s| s.style).reduce(Style::common)?,
            x0: segs.first()?.x0,
            x1: segs.last()?.x1,
            text: segs
                .iter()
                .map(|s| s.text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        })
    }
}

/// `lines` (top to bottom) in reading order. `page` is all running text of
/// their page: a single column's right edge is measured over it, so a short
/// paragraph between two tables still knows its full lines.
pub(crate) fn reading_order(lines: &[Line], page: &[&Line]) -> Vec<TextLine> {
    let whole = |l: &Line| Piece::of(&l.segments.iter().collect::<Vec<_>>());
    let Some(gutter) = gutter(lines) else {
        let edge = Edge::of(&page.iter().filter_map(|l| whole(l)).collect::<Vec<_>>());
        return mark(lines.iter().filter_map(whole).collect(), edge);
    };
    let mut out = Vec::new();
    let (mut left, mut right, mut across): (Vec<Piece>, Vec<Piece>, Vec<Piece>) =
        (Vec::new(), Vec::new(), Vec::new());
    for line in lines {
        let crossing = line.segments.iter().any(|s| s.x0 < gutter && s.x1 > gutter);
        if crossing {
            out.extend(column(std::mem::take(&mut left)));
            out.extend(column(std::mem::take(&mut right)));
            across.extend(whole(line));
            continue;
        }
        out.extend(column(std::mem::take(&mut across)));
        let (l, r): (Vec<&Segment>, Vec<&Segment>) =
            line.segments.iter().partition(|s| s.x1 <= gutter);
        left.extend(Piece::of(&l));
        right.extend(Piece::of(&r));
    }
    out.extend(column(across));
    out.extend(column(left));
    out.extend(column(right));
    out
}

/// A column's lines, each marked full when it reaches the column's right
/// edge (the 80th percentile of the lines' right ends); a column of fewer
/// than three lines has no measurable edge, so none of its lines is full.
fn column(pieces: Vec<Piece>) -> Vec<TextLine> {
    let edge = Edge::of(&pieces);
    mark(pieces, edge)
}

/// Where a column's lines start and where its full lines end.
struct Edge {
    x0: f32,
    right: f32,
    /// The column is wide and long enough to tell full lines from short.
    measurable: bool,
}

impl Edge {
    fn of(pieces: &[Piece]) -> Edge {
        let x0 = pieces.iter().map(|p| p.x0).fold(f32::INFINITY, f32::min);
        let mut ends: Vec<f32> = pieces.iter().map(|p| p.x1).collect();
        ends.sort_by(f32::total_cmp);
        let right = ends.get(ends.len() * 4 / 5).copied().unwrap_or(x0);
        let mut chars: Vec<usize> = pieces.iter().map(|p| p.text.chars().count()).collect();
        chars.sort_unstable();
        // Fewer than three lines show no right edge to measure against.
        let measurable = pieces.len() >= 3
            && chars
                .get(chars.len() * 4 / 5)
                .is_some_and(|&c| c >= MIN_FULL_CHARS);
        Edge {
            x0,
            right,
            measurable,
        }
    }
}

fn mark(pieces: Vec<Piece>, edge: Edge) -> Vec<TextLine> {
    pieces
        .into_iter()
        .map(|p| TextLine {
            full: edge.measurable && p.x1 - edge.x0 >= FULL_SHARE * (edge.right - edge.x0),
            size: p.size,
            style: p.style,
            x0: p.x0,
            text: p.text,
        })
        .collect()
}

/// The x of a gutter between two columns of prose, if the page has one.
fn gutter(lines: &[Line]) -> Option<f32> {
    let segs: Vec<&Segment> = lines.iter().flat_map(|l| &l.segments).collect();
    let x_min = segs.iter().map(|s| s.x0).fold(f32::INFINITY, f32::min);
    let x_max = segs.iter().map(|s| s.x1).fold(f32::NEG_INFINITY, f32::max);
    let width = x_max - x_min;
    if !(width.is_finite() && width > 0.0) {
        return None;
    }
    let (from, to) = (x_min + GUTTER_MARGIN * width, x_max - GUTTER_MARGIN * width);
    // How many segments cross each probe x, by a difference array: a
    // segment crosses the probes strictly inside its extent.
    const STEPS: usize = 200;
    let probe = |k: usize| from + (to - from) * k as f32 / STEPS as f32;
    let index = |x: f32| ((x - from) / (to - from) * STEPS as f32).clamp(-1.0, STEPS as f32 + 1.0);
    let mut diff = vec![0i64; STEPS + 2];
    for s in &segs {
        let first = index(s.x0).floor() as i64 + 1;
        let last = index(s.x1).ceil() as i64 - 1;
        let (first, last) = (first.max(0), last.min(STEPS as i64));
        if first <= last {
            diff[first as usize] += 1;
            diff[last as usize + 1] -= 1;
        }
    }
    let mut counts = Vec::with_capacity(STEPS + 1);
    let mut running = 0;
    for d in &diff[..=STEPS] {
        running += d;
        counts.push(running as usize);
    }
    let n = *counts.iter().min()?;
    // The gutter is the middle of the first widest run of probes at that minimum.
    let (mut best, mut run) = ((0, 0), None::<usize>);
    for (k, &c) in counts.iter().enumerate() {
        match (c == n, run) {
            (true, None) => run = Some(k),
            (false, Some(start)) => {
                if k - start > best.1 - best.0 {
                    best = (start, k);
                }
                run = None;
            }
            _ => {}
        }
    }
    if let Some(start) = run {
        if STEPS + 1 - start > best.1 - best.0 {
            best = (start, STEPS + 1);
        }
    }
    let x = probe((best.0 + best.1 - 1) / 2);
    if n * 5 > segs.len() {
        return None;
    }
    let side = |left: bool| -> Vec<usize> {
        let mut lens: Vec<usize> = segs
            .iter()
            .filter(|s| if left { s.x1 <= x } else { s.x0 >= x })
            .map(|s| s.chars())
            .collect();
        lens.sort_unstable();
        lens
    };
    let prose =
        |lens: &[usize]| lens.len() >= MIN_COLUMN_LINES && lens[lens.len() / 2] >= MIN_COLUMN_CHARS;
    (prose(&side(true)) && prose(&side(false))).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdf_lines::test_line as line;

    #[test]
    fn two_columns_read_left_then_right_under_a_spanning_title() {
        let mut lines = vec![line(
            300.0,
            &[(10.0, 400.0, "A title across both columns of the page")],
        )];
        for k in 0..4 {
            let y = 280.0 - 12.0 * k as f32;
            lines.push(line(
                y,
                &[
                    (
                        10.0,
                        190.0,
                        &format!("left column line number {k} of prose"),
                    ),
                    (
                        220.0,
                        400.0,
                        &format!("right column line number {k} of prose"),
                    ),
                ],
            ));
        }
        let order: Vec<String> = reading_order(&lines, &lines.iter().collect::<Vec<_>>())
            .into_iter()
            .map(|l| l.text)
            .collect();
        assert_eq!(order[0], "A title across both columns of the page");
        assert_eq!(order[1], "left column line number 0 of prose");
        assert_eq!(order[4], "left column line number 3 of prose");
        assert_eq!(order[5], "right column line number 0 of prose");
    }

    #[test]
    fn a_single_column_keeps_its_order() {
        let lines: Vec<Line> = (0..5)
            .map(|k| {
                line(
                    300.0 - 12.0 * k as f32,
                    &[(10.0, 400.0, "one long line of text across the page")],
                )
            })
            .collect();
        assert_eq!(reading_order(&lines, &[]).len(), 5);
    }
}
