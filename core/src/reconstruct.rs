//! Units back into parent sections and whole documents (§4.9).
//!
//! [`join_parent`] rebuilds one section from its units exactly as the
//! reference does: lines a unit shares with its predecessor (breadcrumb,
//! repeated table header, split note) appear once. [`document`] goes further
//! than the reference: it strips breadcrumbs and emits each section's
//! headings as real ATX lines, so `read_file` returns the document's own
//! Markdown rather than a list of breadcrumbs.

use crate::chunk::{Chunk, UnitKind, CODE_SPLIT_NOTE};
use crate::markdown::{is_table_row, timestamp_seconds};

/// Most leading lines two consecutive units may share.
const MAX_SHARED_LINES: usize = 4;

/// Joins the units of one parent section.
pub fn join_parent<S: AsRef<str>>(units: &[S]) -> String {
    let mut out = String::new();
    let mut prev: Option<Vec<&str>> = None;
    for unit in units.iter().map(AsRef::as_ref).filter(|u| !u.trim().is_empty()) {
        let lines: Vec<&str> = unit.split('\n').collect();
        let Some(prev_lines) = prev.replace(lines.clone()) else {
            out.push_str(unit);
            continue;
        };
        let max = prev_lines.len().min(lines.len() - 1).min(MAX_SHARED_LINES);
        let shared = prev_lines.iter().zip(&lines).take(max).take_while(|(a, b)| a == b).count();
        let rest: Vec<&str> = lines[shared..].iter().copied().skip_while(|l| l.trim().is_empty()).collect();
        if rest.is_empty() {
            continue;
        }
        let last = out.rsplit('\n').next().unwrap_or("");
        let tight = (is_table_row(last) && is_table_row(rest[0])) || timestamp_seconds(last).is_some();
        out.push_str(if tight { "\n" } else { "\n\n" });
        out.push_str(&rest.join("\n"));
    }
    out
}

/// Rebuilds a whole document from its chunks (any order).
///
/// `seeded_title` is the title the chunker seeded into chunk 0, if any; it is
/// removed again because the document never contained it.
pub fn document(chunks: &[Chunk], seeded_title: Option<&str>) -> String {
    let mut sorted: Vec<&Chunk> = chunks.iter().collect();
    sorted.sort_by_key(|c| c.index);

    let mut parts: Vec<String> = Vec::new();
    let mut emitted: Vec<&str> = Vec::new();
    let mut start = 0;
    while start < sorted.len() {
        let parent = sorted[start].parent;
        let end = sorted[start..].iter().position(|c| c.parent != parent).map_or(sorted.len(), |n| start + n);
        let group = &sorted[start..end];
        start = end;

        let layout = &group[0].layout;
        if layout.headings.is_empty() {
            emitted.clear();
            parts.push(join_parent(&unit_texts(group, false, seeded_title)));
            continue;
        }
        // Emit the headings this section adds to what is already open. A new
        // section always re-emits at least its own heading (siblings may share
        // a name); a capped continuation emits nothing.
        let chain: Vec<&str> = layout.headings.iter().map(|h| h.line.as_str()).collect();
        if !layout.continues_section {
            let common = emitted.iter().zip(&chain).take_while(|(a, b)| a == b).count();
            let from = common.min(chain.len() - 1);
            parts.extend(chain[from..].iter().map(|l| l.to_string()));
            emitted = chain;
        }
        if !layout.heading_is_body {
            parts.push(join_parent(&unit_texts(group, true, seeded_title)));
        }
    }

    parts.into_iter().filter(|p| !p.trim().is_empty()).collect::<Vec<_>>().join("\n\n")
}

/// Unit texts of one group, breadcrumbs stripped when `strip_prefix`, with
/// consecutive code pieces glued back into one fenced block without notes.
/// The seed is removed from chunk 0.
fn unit_texts(group: &[&Chunk], strip_prefix: bool, seeded_title: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_pieces = false;
    for chunk in group {
        let head = &chunk.text[..chunk.layout.prefix_len as usize];
        let mut body = chunk.body();
        if let (0, Some(title)) = (chunk.index, seeded_title) {
            let seed = format!("# {}", title.trim());
            if let Some(rest) = body.strip_prefix(&seed) {
                body = rest.trim_start_matches('\n');
            }
        }
        let text = if strip_prefix { body.to_string() } else { format!("{head}{body}") };
        if chunk.layout.kind == UnitKind::CodePiece {
            let code = body.strip_prefix(CODE_SPLIT_NOTE).map(|r| r.strip_prefix('\n').unwrap_or(r)).unwrap_or(body);
            match out.last_mut() {
                Some(last) if in_pieces => {
                    last.push('\n');
                    last.push_str(code);
                }
                _ => {
                    let head = if strip_prefix { "" } else { head };
                    out.push(format!("{head}{code}"));
                }
            }
            in_pieces = true;
        } else {
            out.push(text);
            in_pieces = false;
        }
    }
    out
}
