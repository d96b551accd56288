//! Document titles: metadata, then a usable H1, then an informative
//! file name, then any H1, then the file name as it is.

use crate::markdown::code_lines;

const GENERIC_WORDS: &[&str] = &[
    "untitled",
    "document",
    "documents",
    "doc",
    "docs",
    "docx",
    "index",
    "readme",
    "new",
    "copy",
    "of",
    "scan",
    "image",
    "img",
    "file",
    "dsc",
    "screenshot",
    "report",
    "book",
    "workbook",
    "presentation",
    "slide",
    "title",
    "снимок",
    "документ",
    "документа",
    "документов",
    "копия",
    "копии",
    "безымянный",
];

const BOILERPLATE_HEADINGS: &[&str] = &[
    "общие положения",
    "назначение",
    "введение",
    "назначение и область применения",
    "лист изменений",
    "история изменений",
    "содержание",
    "оглавление",
    "термины и определения",
    "список сокращений",
    "general provisions",
    "introduction",
    "overview",
    "purpose",
    "scope",
    "table of contents",
    "contents",
    "revision history",
    "change log",
    "definitions",
    "abbreviations",
];

/// The first `# ` heading outside fenced code, trimmed.
pub(crate) fn first_h1(markdown: &str) -> Option<String> {
    let lines: Vec<&str> = markdown.split('\n').collect();
    let code = code_lines(&lines);
    lines
        .iter()
        .zip(&code)
        .filter(|(_, c)| !**c)
        .find_map(|(line, _)| {
            let rest = line.strip_prefix('#')?;
            if !rest.starts_with(char::is_whitespace) {
                return None;
            }
            let text = rest.trim();
            (!text.is_empty()).then(|| text.to_string())
        })
}

/// The file name without its directory and extension (like Python's
/// `Path.stem`), then without one more trailing known extension
/// (`report.txt.txt` → `report`, `v1.2 plan` unchanged).
pub fn stem(file_name: &str) -> &str {
    let name = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
    let base = match name.rsplit_once('.') {
        Some((base, _)) if !base.is_empty() => base,
        _ => name,
    };
    strip_known_extension(base)
}

/// Removes one trailing extension the product knows (documents or images).
pub(crate) fn strip_known_extension(stem: &str) -> &str {
    match stem.rsplit_once('.') {
        Some((base, ext)) if !base.is_empty() && crate::formats::is_known_extension(ext) => base,
        _ => stem,
    }
}

/// A stem as shown to people: `_` → space, whitespace collapsed.
pub(crate) fn display_stem(stem: &str) -> String {
    stem.replace('_', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs of letters or runs of digits, lower-cased.
fn tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut cur_digit = false;
    for c in text.chars() {
        let (letter, digit) = (c.is_alphabetic(), c.is_numeric());
        if (!(letter || digit) || digit != cur_digit) && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        if letter || digit {
            cur_digit = digit;
            cur.extend(c.to_lowercase());
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Whether a file stem says something about the document (not `scan_001`,
/// `Document1`, `2026-08-07`, `Копия документа (2)`, …).
pub(crate) fn is_informative_stem(stem: &str) -> bool {
    let meaningful = stem
        .chars()
        .filter(|c| !(c.is_whitespace() || matches!(c, '_' | '-' | '.')))
        .count();
    if meaningful < 4 {
        return false;
    }
    says_something(stem)
}

/// Whether a heading is document boilerplate (`1.2 Общие положения`,
/// `**Лист изменений**`, `III. Revision history`, …), compared whole.
pub(crate) fn is_boilerplate_heading(heading: &str) -> bool {
    const EDGE: &[char] = &[
        '*', '_', '`', '~', '#', '[', ']', '(', ')', ' ', '\t', '.', ':', ';', ',', '!', '-', '–',
        '—',
    ];
    let folded = heading
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut text = folded.trim_matches(EDGE).to_string();
    while let Some(rest) = strip_section_number(&text) {
        text = rest.trim_matches(EDGE).to_string();
    }
    BOILERPLATE_HEADINGS.contains(&text.as_str())
}

/// Removes one leading section number (`12`, `iv`) followed by `.`, `)` or
/// whitespace.
fn strip_section_number(text: &str) -> Option<&str> {
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    let roman = text.chars().take_while(|c| "ivxlcdm".contains(*c)).count();
    let len = if digits > 0 { digits } else { roman };
    if len == 0 {
        return None;
    }
    let rest = &text[len..];
    let next = rest.chars().next()?;
    if next == '.' || next == ')' {
        Some(rest[1..].trim_start())
    } else if next.is_whitespace() {
        Some(rest.trim_start())
    } else {
        None
    }
}

/// A heading that can serve as a title: not boilerplate, and with a letter or
/// digit left once inline images are removed.
pub(crate) fn is_usable_h1(heading: &str) -> bool {
    !is_boilerplate_heading(heading) && without_images(heading).chars().any(char::is_alphanumeric)
}

fn without_images(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("![") {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        match after
            .find("](")
            .and_then(|m| after[m..].find(')').map(|e| m + e + 1))
        {
            Some(end) => rest = &after[end..],
            None => {
                out.push_str(after);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Title of an image read by OCR: its displayed stem, never a
/// heading (`Договор_поставки_2026.png` → `Договор поставки 2026`).
pub(crate) fn image_title(file_name: &str) -> String {
    let stem = stem(file_name);
    let shown = display_stem(stem);
    if shown.is_empty() {
        stem.to_string()
    } else {
        shown
    }
}

/// Whether a title a file declares names the document, and is not what
/// the saving program left there: a file name (`Microsoft Word -
/// report.docx`, `C:\\tmp\\x.doc`), or `Untitled`, `Document1`, `Slide 1`.
pub(crate) fn is_usable_metadata_title(title: &str) -> bool {
    let title = title.trim();
    let names_a_file = title.starts_with('/')
        || title.contains('\\')
        || title.starts_with("Microsoft ")
        || title
            .rsplit_once('.')
            .is_some_and(|(_, ext)| crate::formats::is_known_extension(ext));
    !names_a_file && says_something(title)
}

/// Whether some word of `text` is neither a number nor generic.
fn says_something(text: &str) -> bool {
    tokens(text)
        .iter()
        .filter(|t| !t.chars().all(char::is_numeric))
        .any(|t| !GENERIC_WORDS.contains(&t.as_str()))
}

/// Title of a file.
pub(crate) fn file_title(file_name: &str, metadata_title: Option<&str>, markdown: &str) -> String {
    if let Some(meta) = metadata_title.filter(|t| is_usable_metadata_title(t)) {
        return meta.trim().to_string();
    }
    let h1 = first_h1(markdown);
    if let Some(h) = h1.as_deref().filter(|h| is_usable_h1(h)) {
        return h.to_string();
    }
    let stem = stem(file_name);
    let shown = display_stem(stem);
    if is_informative_stem(stem) && !shown.is_empty() {
        return shown;
    }
    if let Some(h) = h1 {
        return h;
    }
    if shown.is_empty() {
        stem.to_string()
    } else {
        shown
    }
}

/// Title of `ingest_data` / `ingest_url` content: explicit, then (HTML or
/// URL) the converter's metadata, then the first H1. `None` means the
/// caller stores the id as title and seeds nothing.
pub(crate) fn content_title(
    explicit: Option<&str>,
    metadata_title: Option<&str>,
    markdown: &str,
) -> Option<String> {
    explicit
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .or(metadata_title.map(str::trim).filter(|t| !t.is_empty()))
        .map(str::to_string)
        .or_else(|| first_h1(markdown))
}

#[cfg(test)]
mod tests;
