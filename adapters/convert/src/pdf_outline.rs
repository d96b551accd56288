//! Headings from the PDF's outline (its bookmarks): each entry's title is
//! looked for among the Markdown lines from its page on, and the line that
//! reads as the title becomes an ATX heading of the entry's level. The
//! outline is the author's own list of sections, so no guess from font
//! sizes is needed where it exists. Lines are replaced in place, so page
//! marks stay where they are.

use minirag_core::location::{Mark, Place};

/// Deepest outline level that becomes a heading (ATX has six).
const MAX_LEVEL: usize = 6;
/// Lines past an entry's page start looked through for its title.
const SEARCH_LINES: usize = 400;

/// One outline entry: its depth (1 outermost), title and 1-based page.
pub(crate) struct Entry {
    pub level: usize,
    pub title: String,
    pub page: usize,
}

/// The outline's entries in document order; empty when the file has none
/// or it cannot be read (the text is converted all the same).
pub(crate) fn entries(doc: &lopdf::Document) -> Vec<Entry> {
    match doc.get_toc() {
        Ok(toc) => toc
            .toc
            .into_iter()
            .filter(|e| e.level >= 1 && !e.title.trim().is_empty())
            .map(|e| Entry {
                level: e.level,
                title: e.title,
                page: e.page,
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Words of a line for comparison: Markdown escapes gone, lower case,
/// anything but letters and digits a separator.
fn key(text: &str) -> Vec<String> {
    text.replace('\\', "")
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether a line reads as the title: the same letters and digits, perhaps
/// after a section number the outline leaves out (`3.3.6.
/// BZ2_bzDecompressEnd`); punctuation aside, as outlines drop hyphens
/// (`Nonregular files` for `2.13. Non-regular files`).
fn reads_as(line: &[String], title: &[String]) -> bool {
    let (line, title) = (line.concat(), title.concat());
    if title.is_empty() {
        return false;
    }
    line.strip_suffix(title.as_str())
        .is_some_and(|number| number.chars().all(|c| c.is_ascii_digit()))
}

/// Turns the lines the outline names into headings. Entries are matched in
/// order, each after the one before, starting at its page's first line.
pub(crate) fn apply(markdown: &str, places: &[Place], outline: &[Entry]) -> String {
    if outline.is_empty() {
        return markdown.to_string();
    }
    let page_line = |page: usize| {
        places
            .iter()
            .find(|p| p.mark == Mark::Page(page as u32))
            .map_or(0, |p| p.line as usize)
    };
    let mut lines: Vec<String> = markdown.split('\n').map(str::to_string).collect();
    let mut after = 0usize;
    for entry in outline {
        let title = key(&entry.title);
        let from = page_line(entry.page).max(after);
        let found = (from..lines.len().min(from + SEARCH_LINES)).find(|&i| {
            let line = lines[i].trim();
            !line.starts_with('#') && !line.starts_with('|') && reads_as(&key(line), &title)
        });
        if let Some(i) = found {
            let level = entry.level.min(MAX_LEVEL);
            let text = lines[i].trim().replace('\\', "");
            lines[i] = format!("{} {text}", "#".repeat(level));
            after = i + 1;
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(level: usize, title: &str, page: usize) -> Entry {
        Entry {
            level,
            title: title.into(),
            page,
        }
    }

    #[test]
    fn outline_titles_become_headings_of_their_level() {
        let md = "Intro text.\n\n1\\. Introduction\n\nBody one.\n\n1.1. Scope\n\nBody two.";
        let places = [Place {
            line: 0,
            word: 0,
            mark: Mark::Page(1),
        }];
        let outline = [entry(1, "Introduction", 1), entry(2, "Scope", 1)];
        assert_eq!(
            apply(md, &places, &outline),
            "Intro text.\n\n# 1. Introduction\n\nBody one.\n\n## 1.1. Scope\n\nBody two."
        );
    }

    #[test]
    fn a_title_in_a_sentence_or_missing_changes_nothing() {
        let md = "See the Introduction for more.\n\nText.";
        let outline = [entry(1, "Introduction", 1), entry(1, "Nowhere", 1)];
        assert_eq!(apply(md, &[], &outline), md);
    }

    #[test]
    fn a_title_matches_whatever_its_hyphens() {
        let md = "2.13. Non-regular files\n\nSockets and devices.";
        let outline = [entry(2, "Nonregular files", 1)];
        assert!(apply(md, &[], &outline).starts_with("## 2.13. Non-regular files\n"));
        let md = "Profiles\n\nx";
        assert_eq!(apply(md, &[], &[entry(1, "files", 1)]), md);
    }
}
