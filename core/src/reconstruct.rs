//! Units back into parent sections and whole documents.
//!
//! The tests' `join_parent` rebuilds one section from its units exactly as
//! the reference does: lines a unit shares with its predecessor (breadcrumb,
//! repeated table header, split note) appear once. [`document`] goes further
//! than the reference: it strips breadcrumbs and emits each section's
//! headings as real ATX lines, so `read_file` returns the document's own
//! Markdown rather than a list of breadcrumbs.

use std::ops::Range;

use crate::chunk::{Chunk, UnitKind, CODE_SPLIT_NOTE};
use crate::markdown::{is_delimiter_row, is_table_row, timestamp_seconds};

/// Most leading lines two consecutive units may share.
#[cfg(test)]
const MAX_SHARED_LINES: usize = 4;

/// Joins the units of one parent section, as the reference does: the
/// chunker's tests hold packing to it.
#[cfg(test)]
pub fn join_parent<S: AsRef<str>>(units: &[S]) -> String {
    let mut out = String::new();
    let mut prev: Option<Vec<&str>> = None;
    for unit in units
        .iter()
        .map(AsRef::as_ref)
        .filter(|u| !u.trim().is_empty())
    {
        let lines: Vec<&str> = unit.split('\n').collect();
        let Some(prev_lines) = prev.replace(lines.clone()) else {
            out.push_str(unit);
            continue;
        };
        let max = prev_lines.len().min(lines.len() - 1).min(MAX_SHARED_LINES);
        let shared = prev_lines
            .iter()
            .zip(&lines)
            .take(max)
            .take_while(|(a, b)| a == b)
            .count();
        let rest: Vec<&str> = lines[shared..]
            .iter()
            .copied()
            .skip_while(|l| l.trim().is_empty())
            .collect();
        if rest.is_empty() {
            continue;
        }
        let last = out.rsplit('\n').next().unwrap_or("");
        let tight =
            (is_table_row(last) && is_table_row(rest[0])) || timestamp_seconds(last).is_some();
        out.push_str(if tight { "\n" } else { "\n\n" });
        out.push_str(&rest.join("\n"));
    }
    out
}

/// What `unit` adds after `prev` in the same parent: the breadcrumb, a
/// repeated table header and the split note are the chunker's, not the
/// document's, and are dropped. Unlike the tests' `join_parent`, which drops any
/// shared leading lines, this never drops a document line (two code blocks
/// opening with the same fence line both survive).
fn fresh_part<'a>(unit: &'a Chunk, prev: &Chunk) -> &'a str {
    let same_prefix = unit.text[..unit.layout.prefix_len as usize]
        == prev.text[..prev.layout.prefix_len as usize];
    let mut part = if same_prefix {
        unit.body()
    } else {
        unit.text.as_str()
    };
    match (unit.layout.kind, prev.layout.kind) {
        (UnitKind::Rows, UnitKind::Rows) => {
            let mut lines = part.splitn(3, '\n');
            if let (Some(h), Some(d), Some(rest)) = (lines.next(), lines.next(), lines.next()) {
                let header = format!("{h}\n{d}\n");
                if is_delimiter_row(d) && prev.body().starts_with(&header) {
                    part = rest;
                }
            }
        }
        (UnitKind::CodePiece, UnitKind::CodePiece) => part = without_note(part),
        _ => {}
    }
    part
}

fn without_note(text: &str) -> &str {
    text.strip_prefix(CODE_SPLIT_NOTE)
        .map_or(text, |r| r.strip_prefix('\n').unwrap_or(r))
}

/// Joins the chunks of one parent (ordered by index) using their layout:
/// the breadcrumb and a repeated header appear once, split code is glued
/// back line by line under a single note.
pub fn join_chunks(chunks: &[&Chunk]) -> String {
    join_layout(chunks, false, None)
}

fn join_layout(chunks: &[&Chunk], bare: bool, seeded_title: Option<&str>) -> String {
    let mut out = String::new();
    let mut prev: Option<&Chunk> = None;
    for &chunk in chunks {
        let mut part: &str = match prev {
            Some(p) => fresh_part(chunk, p),
            None if bare => without_note(chunk.body()),
            None => chunk.text.as_str(),
        };
        let seed = seeded_title.map(|t| format!("# {}", t.trim()));
        let mut owned = None;
        if let (0, Some(seed)) = (chunk.index, seed) {
            let body = chunk.body();
            if let Some(rest) = body.strip_prefix(&seed) {
                let rest = rest.trim_start_matches('\n');
                owned = Some(if bare || prev.is_some() {
                    rest.to_string()
                } else {
                    format!("{}{rest}", &chunk.text[..chunk.layout.prefix_len as usize])
                });
            }
        }
        if let Some(o) = owned.as_deref() {
            part = o;
        }
        let code_glue = prev.is_some_and(|p| p.layout.kind == UnitKind::CodePiece)
            && chunk.layout.kind == UnitKind::CodePiece;
        prev = Some(chunk);
        if part.trim().is_empty() {
            continue;
        }
        if !out.is_empty() {
            let last = out.rsplit('\n').next().unwrap_or("");
            let first = part.split('\n').next().unwrap_or("");
            let tight = code_glue
                || (is_table_row(last) && is_table_row(first))
                || timestamp_seconds(last).is_some();
            out.push_str(if tight { "\n" } else { "\n\n" });
        }
        out.push_str(part);
    }
    out
}

/// Rebuilds a whole document from its chunks (any order).
///
/// Sections of headed documents lose their breadcrumbs and get their heading
/// lines back, each once, in document order. `seeded_title` is the title the
/// chunker seeded into chunk 0, if any; it is removed again because the
/// document never contained it.
pub fn document(chunks: &[Chunk], seeded_title: Option<&str>) -> String {
    let mut sorted: Vec<&Chunk> = chunks.iter().collect();
    sorted.sort_by_key(|c| c.index);

    let mut parts: Vec<String> = Vec::new();
    let mut emitted: Vec<&str> = Vec::new();
    let mut start = 0;
    while start < sorted.len() {
        let parent = sorted[start].parent;
        let end = sorted[start..]
            .iter()
            .position(|c| c.parent != parent)
            .map_or(sorted.len(), |n| start + n);
        let group = &sorted[start..end];
        start = end;

        let layout = &group[0].layout;
        if layout.headings.is_empty() {
            emitted.clear();
            parts.push(join_layout(group, false, seeded_title));
            continue;
        }
        // Emit the headings this section adds to those already open. A new
        // section re-emits at least its own heading (siblings may share a
        // name); a capped continuation emits none.
        let chain: Vec<&str> = layout.headings.iter().map(|h| h.line.as_str()).collect();
        if !layout.continues_section {
            let common = emitted
                .iter()
                .zip(&chain)
                .take_while(|(a, b)| a == b)
                .count();
            let from = common.min(chain.len() - 1);
            parts.extend(chain[from..].iter().map(|l| l.to_string()));
            emitted = chain;
        }
        if !layout.heading_is_body {
            parts.push(join_layout(group, true, seeded_title));
        }
    }
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Where `chunk`'s own text lies in `document` (as [`document`] rebuilt
/// it), as a byte range over whole lines: from the first of its lines found
/// with the rest following close behind, to its last line. A breadcrumb or
/// repeated table header that lies far above is passed over. `None` when
/// no line of the unit can be placed.
pub fn passage(document: &str, chunk: &Chunk) -> Option<Range<usize>> {
    let mut at = 0;
    let lines: Vec<(Range<usize>, &str)> = document
        .split('\n')
        .map(|l| {
            let r = at..at + l.len();
            at += l.len() + 1;
            (r, l.trim())
        })
        .collect();
    let body: Vec<&str> = without_note(chunk.body())
        .split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let last = *body.last()?;
    // The unit's text can sit no further than this from its first line.
    let reach = chunk.body().len() * 3 / 2 + 200;
    for first in &body {
        for (i, (r, line)) in lines.iter().enumerate() {
            if line != first {
                continue;
            }
            let end = lines[i..]
                .iter()
                .find(|(_, l)| *l == last)
                .map(|(e, _)| e.end);
            if let Some(end) = end.filter(|e| e - r.start <= reach) {
                return Some(r.start..end);
            }
        }
    }
    None
}
