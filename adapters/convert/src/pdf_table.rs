//! Tables from aligned segments: consecutive lines of two or more segments
//! whose segments fall into the same columns are a table, ruled or not
//! (ruling lines are not needed, only the text's positions). A single-segment
//! line just below a row, inside one column, is that cell wrapped.

use crate::pdf_columns::same_size;
use crate::pdf_lines::{Line, Segment};

/// A wrapped cell's next line sits at most this many text sizes lower.
const WRAP_GAP: f32 = 1.4;
/// A cell wrapped when its next word would have ended within this many
/// text sizes of the next column.
const WRAP_SLACK: f32 = 2.0;
/// Two columns whose cells are this long (median characters) are prose set
/// in two columns, not a table.
const PROSE_CELL: usize = 25;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    /// Running text, top to bottom.
    Lines(Vec<Line>),
    /// Rows of cells, the header row first.
    Table(Vec<Vec<String>>),
}

/// Pages with more lines than this (no real page has them; a crafted one
/// could) are read as text: finding tables costs more than linear time.
const MAX_LINES: usize = 2_000;

/// Splits a page's lines into text and tables, in page order.
pub(crate) fn blocks(lines: Vec<Line>) -> Vec<Block> {
    if lines.len() > MAX_LINES {
        return vec![Block::Lines(lines)];
    }
    let mut out = Vec::new();
    let mut text: Vec<Line> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some((rows, end)) = table_at(&lines, i) {
            if !text.is_empty() {
                out.push(Block::Lines(std::mem::take(&mut text)));
            }
            out.push(Block::Table(rows));
            i = end;
        } else {
            text.push(lines[i].clone());
            i += 1;
        }
    }
    if !text.is_empty() {
        out.push(Block::Lines(text));
    }
    out
}

/// A table starting at line `start`: its rows and the index after it.
fn table_at(lines: &[Line], start: usize) -> Option<(Vec<Vec<String>>, usize)> {
    if lines[start].segments.len() < 2 || has_leader(&lines[start]) {
        return None;
    }
    // The run: rows (multi-segment lines) and the wrapped lines below them.
    let mut end = start + 1;
    let mut last_row = start;
    while end < lines.len() {
        let line = &lines[end];
        if has_leader(line) {
            break;
        }
        if line.segments.len() >= 2 {
            last_row = end;
        } else if !is_wrap(&lines[end - 1], line, &lines[start..=last_row]) {
            break;
        }
        end += 1;
    }
    let run = &lines[start..end];
    let rows = run.iter().filter(|l| l.segments.len() >= 2).count();
    if rows < 2 {
        return None;
    }
    let columns = columns(run);
    if columns.len() < 2 {
        return None;
    }
    let mut cells: Vec<Vec<String>> = Vec::new();
    for line in run {
        let mut row = vec![String::new(); columns.len()];
        let mut used = vec![false; columns.len()];
        for seg in &line.segments {
            let c = column_of(&columns, seg)?;
            if used[c] {
                return None; // two segments in one column: not aligned
            }
            used[c] = true;
            row[c] = seg.text.clone();
        }
        if line.segments.len() >= 2 || cells.is_empty() {
            cells.push(row);
        } else if let Some(prev) = cells.last_mut() {
            for (cell, more) in prev.iter_mut().zip(row) {
                if !more.is_empty() {
                    if !cell.is_empty() {
                        cell.push(' ');
                    }
                    cell.push_str(&more);
                }
            }
        }
    }
    if columns.len() == 2 && looks_like_prose(&cells) {
        return None;
    }
    Some((cells, end))
}

/// A single-segment line that continues a cell of the line above: close
/// below it, in the same size, inside one column, and its first word would
/// not have fitted after that cell's text (so the cell wrapped there).
fn is_wrap(above: &Line, line: &Line, rows: &[Line]) -> bool {
    let gap = above.y - line.y;
    if gap > WRAP_GAP * above.size || !same_size(line.size, above.size) {
        return false;
    }
    let seg = &line.segments[0];
    let cols = columns(rows);
    let Some(c) = column_of(&cols, seg) else {
        return false;
    };
    let next = cols.get(c + 1).map_or(cols[c].1, |n| n.0);
    if seg.x1 >= next {
        return false;
    }
    let Some(cell) = above
        .segments
        .iter()
        .find(|s| column_of(&cols, s) == Some(c))
    else {
        return false;
    };
    // The first word's width, at the segment's average width per character.
    let per_char = (seg.x1 - seg.x0) / seg.chars().max(1) as f32;
    let word = seg.text.split(' ').next().unwrap_or("").chars().count() as f32 * per_char;
    // Cell padding and column rules are not known: two text sizes of slack.
    cell.x1 + per_char + word > next - WRAP_SLACK * line.size
}

/// Dot leaders (`Title . . . . 12`): a table of contents, read as text.
fn has_leader(line: &Line) -> bool {
    line.segments
        .iter()
        .any(|s| s.text.contains(". . . .") || s.text.contains("....."))
}

/// Column extents: the segments' x-ranges merged where they overlap.
fn columns(run: &[Line]) -> Vec<(f32, f32)> {
    let mut ranges: Vec<(f32, f32)> = run
        .iter()
        .flat_map(|l| l.segments.iter().map(|s| (s.x0, s.x1)))
        .collect();
    ranges.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f32, f32)> = Vec::new();
    for (x0, x1) in ranges {
        match out.last_mut() {
            Some(last) if x0 <= last.1 => last.1 = last.1.max(x1),
            _ => out.push((x0, x1)),
        }
    }
    out
}

fn column_of(columns: &[(f32, f32)], seg: &Segment) -> Option<usize> {
    columns
        .iter()
        .position(|&(x0, x1)| seg.x0 >= x0 && seg.x0 <= x1)
}

/// Both columns hold long runs of words: two columns of text.
fn looks_like_prose(cells: &[Vec<String>]) -> bool {
    (0..2).all(|c| {
        let mut lens: Vec<usize> = cells.iter().map(|r| r[c].chars().count()).collect();
        lens.sort_unstable();
        lens[lens.len() / 2] >= PROSE_CELL
    })
}

/// A pipe table, header row first; `|` inside cells escaped.
pub(crate) fn markdown(rows: &[Vec<String>]) -> String {
    let row = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        format!("| {} |", cells.join(" | "))
    };
    let mut out = vec![row(&rows[0])];
    out.push(format!("|{}", " --- |".repeat(rows[0].len())));
    out.extend(rows[1..].iter().map(|r| row(r)));
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdf_lines::test_line as line;

    #[test]
    fn aligned_rows_with_a_wrapped_cell_are_one_table() {
        let lines = vec![
            line(200.0, &[(10.0, 60.0, "Spare parts")]),
            line(180.0, &[(10.0, 30.0, "Part"), (100.0, 130.0, "Supplier")]),
            line(
                160.0,
                &[(10.0, 40.0, "PUMP-X2"), (100.0, 140.0, "Tidewater")],
            ),
            line(148.0, &[(100.0, 135.0, "Pumps Ltd")]),
            line(128.0, &[(10.0, 40.0, "RADIO-V"), (100.0, 150.0, "Harbour")]),
            line(
                100.0,
                &[(10.0, 300.0, "Prices are in euros and exclude delivery.")],
            ),
        ];
        let blocks = blocks(lines);
        assert_eq!(blocks.len(), 3);
        let Block::Table(rows) = &blocks[1] else {
            panic!("{blocks:?}")
        };
        assert_eq!(
            markdown(rows),
            "| Part | Supplier |\n| --- | --- |\n| PUMP-X2 | Tidewater Pumps Ltd |\n| RADIO-V | Harbour |"
        );
    }

    #[test]
    fn a_page_of_too_many_lines_is_read_as_text() {
        let lines: Vec<Line> = (0..=MAX_LINES)
            .map(|k| line(-(k as f32), &[(10.0, 30.0, "a"), (100.0, 130.0, "b")]))
            .collect();
        assert!(matches!(&blocks(lines)[..], [Block::Lines(_)]));
    }

    #[test]
    fn prose_in_two_columns_is_not_a_table() {
        let left = "the anemones in pool one were counted";
        let right = "at low water on a calm morning and checked";
        let lines: Vec<Line> = (0..6)
            .map(|k| {
                line(
                    200.0 - 12.0 * k as f32,
                    &[(10.0, 200.0, left), (220.0, 420.0, right)],
                )
            })
            .collect();
        assert!(blocks(lines).iter().all(|b| matches!(b, Block::Lines(_))));
    }
}
