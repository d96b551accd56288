//! Sections (parent units) and their breadcrumb ladders.

use super::blocks;
use super::cap::SECTION_CAP;
use super::category::{detect, Category};
use super::{Heading, Section};
use crate::markdown::{atx_heading, code_lines, slide_marker, starts_heading, timestamp_seconds};

/// Transcript windows are this many seconds long.
pub const WINDOW_SECONDS: u64 = 120;

/// Detects the category and cuts the document into sections. Falls back to
/// generic blocks when the category's sections all come out blank.
pub fn build(markdown: &str, title: &str) -> (Category, Vec<Section>) {
    let category = detect(markdown);
    let sections = match category {
        Category::Transcript => transcript(markdown, title),
        Category::Slides => slides(markdown),
        Category::Headings => headings(markdown),
        Category::Generic => generic(markdown),
    };
    let sections: Vec<Section> = sections
        .into_iter()
        .map(without_contents_lines)
        .filter(|s| !s.body.trim().is_empty())
        .collect();
    if sections.is_empty() && !markdown.trim().is_empty() && category != Category::Generic {
        return (Category::Generic, generic(markdown));
    }
    (category, sections)
}

/// A section without its table-of-contents lines: the headings they list
/// are the document's own, and leader dots are no passage anyone searches
/// for.
fn without_contents_lines(mut section: Section) -> Section {
    if section.body.lines().any(is_contents_line) {
        let kept: Vec<&str> = section
            .body
            .split('\n')
            .filter(|l| !is_contents_line(l))
            .collect();
        section.body = body_of(&kept);
    }
    section
}

/// A line of a table of contents: runs of leader dots or colons (`. . .`,
/// `: : :`, `.....`, `…`) make up a good part of it, and it has a page
/// number.
pub(crate) fn is_contents_line(line: &str) -> bool {
    let leader = |w: &str| !w.is_empty() && w.chars().all(|c| matches!(c, '.' | ':' | '·' | '…'));
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut leader_chars = 0;
    let mut run = 0;
    for (k, w) in words.iter().enumerate() {
        if leader(w) {
            run += 1;
            let next_leader = words.get(k + 1).is_some_and(|n| leader(n));
            if !next_leader {
                let run_words = &words[k + 1 - run..=k];
                let chars: usize = run_words.iter().map(|w| w.chars().count()).sum();
                if run >= 3 || chars >= 4 {
                    leader_chars += chars;
                }
                run = 0;
            }
        }
    }
    let all: usize = words.iter().map(|w| w.chars().count()).sum();
    leader_chars >= 4
        && leader_chars * 10 >= all * 3
        && line
            .chars()
            .any(|c| c.is_ascii_digit() || matches!(c, 'i' | 'v' | 'x'))
}

/// Joins lines, dropping blank lines at both ends and trailing whitespace.
pub(crate) fn body_of(lines: &[&str]) -> String {
    let start = lines.iter().position(|l| !l.trim().is_empty());
    let end = lines.iter().rposition(|l| !l.trim().is_empty());
    match (start, end) {
        (Some(s), Some(e)) => lines[s..=e].join("\n").trim_end().to_string(),
        _ => String::new(),
    }
}

/// Breadcrumb ladder for a heading chain: full chain, then shorter forms with
/// the middle elided (U+2026), then the innermost heading, then "".
pub(crate) fn ladder(chain: &[&str]) -> Vec<String> {
    let mut rungs: Vec<String> = Vec::new();
    if let Some(last) = chain.last() {
        rungs.push(chain.join(" > "));
        let n = chain.len();
        for keep in (1..n.saturating_sub(1)).rev() {
            let tail = chain[n - keep..].join(" > ");
            rungs.push(format!("{} > … > {tail}", chain[0]));
        }
        rungs.push((*last).to_string());
    }
    rungs.push(String::new());
    let mut seen = Vec::new();
    rungs.retain(|r| {
        if seen.contains(r) {
            false
        } else {
            seen.push(r.clone());
            true
        }
    });
    rungs
}

/// Heading text for breadcrumbs: `**`/`__` become spaces, whitespace is
/// collapsed and edge markup stripped; falls back to the raw line when
/// nothing is left.
pub(crate) fn clean_heading(text: &str, raw_line: &str) -> String {
    let replaced = text.replace("**", " ").replace("__", " ");
    let collapsed = replaced.split_whitespace().collect::<Vec<_>>().join(" ");
    let cleaned = collapsed.trim_matches(|c: char| matches!(c, '*' | '_' | '`' | '~' | ' ' | '\t'));
    if cleaned.is_empty() {
        raw_line.trim().to_string()
    } else {
        cleaned.to_string()
    }
}

fn headings(markdown: &str) -> Vec<Section> {
    let lines: Vec<&str> = markdown.split('\n').collect();
    let code = code_lines(&lines);
    let mut stack: Vec<Heading> = Vec::new();
    let mut raw: Vec<(Vec<Heading>, String)> = Vec::new();
    let mut body: Vec<&str> = Vec::new();
    for (line, in_code) in lines.iter().zip(&code) {
        match atx_heading(line).filter(|_| !in_code) {
            Some((level, text)) => {
                raw.push((stack.clone(), body_of(&body)));
                body.clear();
                while stack.last().is_some_and(|h| h.level >= level) {
                    stack.pop();
                }
                stack.push(Heading {
                    level,
                    text: clean_heading(text, line),
                    line: line.trim_end().to_string(),
                });
            }
            None => body.push(line),
        }
    }
    raw.push((stack, body_of(&body)));

    let mut out = Vec::new();
    for (k, (chain, body)) in raw.iter().enumerate() {
        let texts: Vec<&str> = chain.iter().map(|h| h.text.as_str()).collect();
        if !body.trim().is_empty() {
            out.push(Section {
                ladder: ladder(&texts),
                body: body.clone(),
                headings: chain.clone(),
                heading_is_body: false,
                continues: false,
                line_map: Vec::new(),
                word_offsets: Vec::new(),
            });
            continue;
        }
        let Some(own) = chain.last() else { continue };
        let child_follows = raw
            .get(k + 1)
            .is_some_and(|(next, _)| next.len() > chain.len() && next[..chain.len()] == chain[..]);
        if child_follows {
            // Its words live on in the child's breadcrumb.
            continue;
        }
        out.push(Section {
            ladder: ladder(&texts[..texts.len() - 1]),
            body: own.text.clone(),
            headings: chain.clone(),
            heading_is_body: true,
            continues: false,
            line_map: Vec::new(),
            word_offsets: Vec::new(),
        });
    }
    out
}

/// `MM:SS` under one hour, `H:MM:SS` from one hour.
pub fn format_timestamp(seconds: u64) -> String {
    let (h, m, s) = (seconds / 3600, seconds % 3600 / 60, seconds % 60);
    if h == 0 {
        format!("{m:02}:{s:02}")
    } else {
        format!("{h}:{m:02}:{s:02}")
    }
}

/// `[<start>–<end>]` with an EN DASH.
pub(crate) fn window_label(start: u64) -> String {
    format!(
        "[{}–{}]",
        format_timestamp(start),
        format_timestamp(start + WINDOW_SECONDS)
    )
}

fn transcript(markdown: &str, title: &str) -> Vec<Section> {
    let mut preamble: Vec<&str> = Vec::new();
    let mut windows: Vec<(u64, Vec<&str>)> = Vec::new();
    let mut current: Option<usize> = None;
    for line in markdown.split('\n') {
        if let Some(seconds) = (!line.trim().is_empty())
            .then(|| timestamp_seconds(line))
            .flatten()
        {
            let start = seconds / WINDOW_SECONDS * WINDOW_SECONDS;
            let at = windows
                .iter()
                .position(|(s, _)| *s == start)
                .unwrap_or_else(|| {
                    windows.push((start, Vec::new()));
                    windows.len() - 1
                });
            current = Some(at);
        }
        match current {
            Some(at) => windows[at].1.push(line),
            None => preamble.push(line),
        }
    }
    let mut out = vec![Section::plain(body_of(&preamble))];
    for (start, lines) in windows {
        let label = window_label(start);
        let mut ladder = vec![
            format!("{label} {title}").trim().to_string(),
            label,
            String::new(),
        ];
        ladder.dedup();
        out.push(Section {
            ladder,
            ..Section::plain(body_of(&lines))
        });
    }
    out
}

fn slides(markdown: &str) -> Vec<Section> {
    let mut out = Vec::new();
    let mut ladder = vec![String::new()];
    let mut body: Vec<&str> = Vec::new();
    for line in markdown.split('\n') {
        match slide_marker(line) {
            Some(n) => {
                out.push(Section {
                    ladder: ladder.clone(),
                    ..Section::plain(body_of(&body))
                });
                body.clear();
                ladder = vec![format!("[Slide {n}]"), String::new()];
            }
            None => body.push(line),
        }
    }
    out.push(Section {
        ladder,
        ..Section::plain(body_of(&body))
    });
    out
}

/// Consecutive blocks of a document without headings, grouped into
/// sections of up to the cap, so the packer can fill units from several
/// short paragraphs (one section per block gave a PDF manual a median of 9
/// words a unit). A block that opens with a heading starts a new section:
/// units never run across a heading.
fn generic(markdown: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut body = String::new();
    let mut body_chars = 0;
    for block in blocks::split(markdown, None) {
        let opens_heading = block.text.lines().next().is_some_and(starts_heading);
        let len = block.text.chars().count();
        if !body.is_empty() && (opens_heading || body_chars + 2 + len > SECTION_CAP) {
            out.push(Section::plain(std::mem::take(&mut body)));
            body_chars = 0;
        }
        if !body.is_empty() {
            body.push_str("\n\n");
            body_chars += 2;
        }
        body.push_str(&block.text);
        body_chars += len;
    }
    if !body.is_empty() {
        out.push(Section::plain(body));
    }
    out
}

#[cfg(test)]
mod contents_tests {
    use super::is_contents_line;

    #[test]
    fn leader_lines_are_contents() {
        for line in [
            "2.1. NAME : : : : : : : : : : : : : : : : : : 2",
            "Introduction .................... 7",
            "3.4. Handling data . . . . . . . . . . . . 24",
            "| 2.8. CAVEATS | : : : : : : : : : : : : : : : : : : : : 7 |",
            "Preface ……………………… iii",
        ] {
            assert!(is_contents_line(line), "{line}");
        }
    }

    #[test]
    fn prose_and_code_are_not() {
        for line in [
            "See section 2.1 for details.",
            "for (i = 0; i < n; i++) { ... }",
            "Wait... what? It took 3 days.",
            "a ::= b | c : d",
            "",
        ] {
            assert!(!is_contents_line(line), "{line}");
        }
    }
}
