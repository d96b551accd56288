//! The 4,000-character section cap: long sections are split into
//! several parents by paragraphs, then table rows (header repeated), then
//! sentences, so a parent returned to the client stays readable.

use super::blocks::closing_fence;
use super::Section;
use crate::markdown::{fence_run, is_delimiter_row, is_table_row};

/// Characters from which a section is cut into pieces before packing, so packing stays linear on huge sections.
pub(crate) const SECTION_CAP: usize = 4000;

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// Splits a section whose body exceeds the cap; pieces after the first are
/// marked as continuing it.
pub fn apply(section: Section) -> Vec<Section> {
    if chars(&section.body) <= SECTION_CAP {
        return vec![section];
    }
    // The body is moved out, not cloned per piece: a clone per piece made
    // one huge section (a 16 MB CSV) quadratic in its size.
    let Section {
        ladder,
        body,
        headings,
        heading_is_body,
        ..
    } = section;
    split_body(&body)
        .into_iter()
        .enumerate()
        .map(|(k, piece)| Section {
            ladder: ladder.clone(),
            body: piece,
            headings: headings.clone(),
            heading_is_body,
            continues: k > 0,
            line_map: Vec::new(),
            word_offsets: Vec::new(),
        })
        .collect()
}

/// Paragraphs of a body, split at runs of blank lines outside fenced code;
/// a closed fenced block is one paragraph (flag `true`) and is never split.
fn paragraphs(body: &str) -> Vec<(String, bool)> {
    let lines: Vec<&str> = body.split('\n').collect();
    let mut out = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(close) = fence_run(line).and_then(|(ch, len)| closing_fence(&lines, i, ch, len))
        {
            if !cur.is_empty() {
                out.push((cur.join("\n"), false));
                cur.clear();
            }
            out.push((lines[i..=close].join("\n"), true));
            i = close + 1;
            continue;
        }
        if line.trim().is_empty() {
            if !cur.is_empty() {
                out.push((cur.join("\n"), false));
                cur.clear();
            }
        } else {
            cur.push(line);
        }
        i += 1;
    }
    if !cur.is_empty() {
        out.push((cur.join("\n"), false));
    }
    out
}

/// Greedy packing of pieces joined by `sep` up to `max` characters.
fn pack(pieces: impl IntoIterator<Item = String>, sep: &str, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut cur_len = 0;
    for piece in pieces {
        let len = chars(&piece);
        if !cur.is_empty() && cur_len + chars(sep) + len > max {
            out.push(std::mem::take(&mut cur));
            cur_len = 0;
        }
        if !cur.is_empty() {
            cur.push_str(sep);
            cur_len += chars(sep);
        }
        cur.push_str(&piece);
        cur_len += len;
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn split_body(body: &str) -> Vec<String> {
    let paras = paragraphs(body);
    let code: Vec<String> = paras
        .iter()
        .filter(|(_, c)| *c)
        .map(|(p, _)| p.clone())
        .collect();
    let mut out = Vec::new();
    for piece in pack(paras.into_iter().map(|(p, _)| p), "\n\n", SECTION_CAP) {
        if chars(&piece) <= SECTION_CAP || code.contains(&piece) {
            out.push(piece);
        } else if is_table(&piece) {
            out.extend(split_table(&piece));
        } else {
            out.extend(split_sentences(&piece));
        }
    }
    out
}

/// More than half of the non-blank lines are table rows.
fn is_table(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let rows = lines.iter().filter(|l| is_table_row(l)).count();
    rows * 2 > lines.len()
}

fn split_table(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    if lines.len() > 2 && is_delimiter_row(lines[1]) {
        let header = format!("{}\n{}", lines[0], lines[1]);
        let room = SECTION_CAP.saturating_sub(chars(&header) + 1).max(1);
        let rows = lines[2..].iter().map(|l| l.to_string());
        return pack(rows, "\n", room)
            .into_iter()
            .map(|rows| format!("{header}\n{rows}"))
            .collect();
    }
    pack(lines.iter().map(|l| l.to_string()), "\n", SECTION_CAP)
}

/// Splits after sentence ends, keeping the original whitespace between
/// sentences; a single over-long multi-line sentence is packed by lines.
fn split_sentences(text: &str) -> Vec<String> {
    let mut pieces: Vec<&str> = Vec::new();
    let mut start = 0;
    let mut prev: Option<char> = None;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() && matches!(prev, Some('.' | '!' | '?' | '…')) {
            pieces.push(&text[start..i]);
            start = i;
        }
        prev = Some(c);
    }
    pieces.push(&text[start..]);

    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for piece in pieces {
        if !cur.is_empty() && chars(format!("{cur}{piece}").trim()) > SECTION_CAP {
            out.push(cur.trim().to_string());
            cur.clear();
        }
        cur.push_str(piece);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out.into_iter()
        .flat_map(|p| {
            if chars(&p) > SECTION_CAP && p.contains('\n') {
                pack(p.split('\n').map(str::to_string), "\n", SECTION_CAP)
            } else {
                vec![p]
            }
        })
        .filter(|p| !p.trim().is_empty())
        .collect()
}
