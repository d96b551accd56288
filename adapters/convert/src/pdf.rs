//! PDF → Markdown with lopdf. Each page's content stream is replayed for
//! positioned text ([`crate::pdf_spans`]), grouped into lines and segments
//! ([`crate::pdf_lines`]); aligned segments become pipe tables
//! ([`crate::pdf_table`]), two-column pages read left column first
//! ([`crate::pdf_columns`]), running headers and footers are dropped and
//! wrapped lines joined into paragraphs, across columns and pages
//! ([`crate::pdf_layout`]). A PDF without a text layer is a clear "scanned,
//! needs OCR" error, never an empty document.

use minirag_core::ports::{ConvertError, Converted};

use crate::office::malformed;
use crate::pdf_columns::{reading_order, TextLine};
use crate::pdf_layout::{drop_running_lines, paragraphs};
use crate::pdf_lines::{lines, Line};
use crate::pdf_spans::{page_spans, FontCache};
use crate::pdf_table::{self, Block};

/// Decompressed bytes one page's streams may expand to (a stream bomb guard).
const MAX_PAGE_STREAM: usize = 64 << 20;

/// A part of the document in reading order.
enum Part {
    Text(Vec<TextLine>),
    Table(String),
}

pub fn convert(name: &str, bytes: &[u8]) -> Result<Converted, ConvertError> {
    let doc = lopdf::Document::load_mem(bytes)
        .map_err(|e| malformed(name, format!("not a readable PDF ({e})")))?;
    if doc.is_encrypted() {
        return Err(malformed(
            name,
            "the PDF is encrypted; save an unprotected copy to index it",
        ));
    }
    let mut pages: Vec<Vec<Line>> = Vec::new();
    let mut page_chars = Vec::new();
    let mut fonts = FontCache::default();
    for id in doc.get_pages().values() {
        let spans = page_spans(&doc, *id, MAX_PAGE_STREAM, &mut fonts);
        let chars = spans
            .iter()
            .map(|s| s.text.chars().filter(|c| !c.is_whitespace()).count())
            .sum::<usize>();
        page_chars.push(chars as u32);
        pages.push(lines(spans));
    }
    // Layout needs only the lines: the parsed document (several times the
    // file) goes first.
    drop(fonts);
    drop(doc);
    drop_running_lines(&mut pages, |l: &Line| (l.text(), l.y));
    // Text runs on across pages, so a paragraph cut by a page break is joined.
    let mut parts: Vec<Part> = Vec::new();
    for page in pages {
        let blocks = pdf_table::blocks(page);
        let text: Vec<&Line> = blocks
            .iter()
            .flat_map(|b| match b {
                Block::Lines(lines) => lines.iter().collect(),
                Block::Table(_) => Vec::new(),
            })
            .collect();
        for block in &blocks {
            match (block, parts.last_mut()) {
                (Block::Lines(lines), Some(Part::Text(prev))) => {
                    prev.extend(reading_order(lines, &text))
                }
                (Block::Lines(lines), _) => parts.push(Part::Text(reading_order(lines, &text))),
                (Block::Table(rows), _) => parts.push(Part::Table(pdf_table::markdown(rows))),
            }
        }
    }
    if parts.is_empty() {
        return Err(ConvertError::NeedsOcr {
            name: name.into(),
            pages: page_chars.len() as u32,
        });
    }
    // One string, each part freed once written (not a list, then a join).
    let mut markdown = String::new();
    for (k, part) in parts.into_iter().enumerate() {
        if k > 0 {
            markdown.push_str("\n\n");
        }
        match part {
            Part::Text(lines) => markdown.push_str(&paragraphs(&lines)),
            Part::Table(md) => markdown.push_str(&md),
        }
    }
    Ok(Converted {
        markdown,
        metadata_title: None,
        page_chars,
    })
}
