//! PDF → text with lopdf: pages in order, each page a paragraph boundary,
//! hyphenated line ends rejoined, wrapped lines joined into paragraphs and
//! running headers and footers dropped ([`crate::pdf_layout`]). A PDF without a text layer is a clear
//! "scanned, needs OCR" error, never an empty document.

use minirag_core::ports::{ConvertError, Converted};

use crate::office::malformed;
use crate::pdf_layout::{drop_running_lines, paragraphs};

/// Decompressed bytes one page's streams may expand to (a stream bomb guard).
const MAX_PAGE_STREAM: usize = 64 << 20;

pub fn convert(name: &str, bytes: &[u8]) -> Result<Converted, ConvertError> {
    let doc = lopdf::Document::load_mem(bytes)
        .map_err(|e| malformed(name, format!("not a readable PDF ({e})")))?;
    if doc.is_encrypted() {
        return Err(malformed(
            name,
            "the PDF is encrypted; save an unprotected copy to index it",
        ));
    }
    let mut texts: Vec<String> = Vec::new();
    let mut page_chars = Vec::new();
    for number in doc.get_pages().keys() {
        let text = doc
            .extract_text_with_limit(&[*number], MAX_PAGE_STREAM)
            .unwrap_or_default();
        let text = rejoin(&text);
        page_chars.push(text.chars().filter(|c| !c.is_whitespace()).count() as u32);
        texts.push(text);
    }
    let mut lines: Vec<Vec<&str>> = texts
        .iter()
        .map(|t| t.lines().map(str::trim).filter(|l| !l.is_empty()).collect())
        .collect();
    drop_running_lines(&mut lines);
    let pages: Vec<String> = lines
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| paragraphs(l))
        .collect();
    if pages.is_empty() {
        return Err(ConvertError::NeedsOcr {
            name: name.into(),
            pages: page_chars.len() as u32,
        });
    }
    Ok(Converted {
        markdown: pages.join("\n\n"),
        metadata_title: None,
        page_chars,
    })
}

/// Joins `exam-\nple` into `example` and collapses runs of spaces per line.
fn rejoin(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .peekable();
    while let Some(line) = lines.next() {
        let next_starts_lower = lines
            .peek()
            .and_then(|n| n.chars().next())
            .is_some_and(char::is_lowercase);
        if line.ends_with('-') && line.len() > 1 && next_starts_lower {
            out.push_str(&line[..line.len() - 1]);
        } else {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hyphenated_line_ends_rejoin() {
        assert_eq!(
            rejoin("an exam-\nple of  text\nA-\nB"),
            "an example of text\nA-\nB\n"
        );
    }
}
