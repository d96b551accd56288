//! PDF → Markdown with lopdf. Each page's content stream is replayed for
//! positioned text ([`crate::pdf_spans`]), grouped into lines and segments
//! ([`crate::pdf_lines`]); aligned segments become pipe tables
//! ([`crate::pdf_table`]), two-column pages read left column first
//! ([`crate::pdf_columns`]), running headers and footers are dropped and
//! wrapped lines joined into paragraphs, across columns and pages
//! ([`crate::pdf_layout`]); the outline's entries become headings
//! ([`crate::pdf_outline`]). A PDF without a text layer is a clear "scanned,
//! needs OCR" error, never an empty document.

use minirag_core::location::{word_count, Mark, Place};
use minirag_core::ports::{ConvertError, Converted};

use crate::office::{malformed, malformed_by};
use crate::pdf_columns::reading_order;
use crate::pdf_info;
use crate::pdf_layout::{EdgeKey, Paragraphs, RunningLines};
use crate::pdf_lines::{lines, Line};
use crate::pdf_outline;
use crate::pdf_spans::{page_spans, FontCache};
use crate::pdf_table::{self, Block};
use crate::pdf_typography::{TypeCount, Typography};

/// Decompressed bytes one page's streams may expand to (a stream bomb guard).
const MAX_PAGE_STREAM: usize = 64 << 20;

/// Text a first pass over the pages keeps for the second: a longer PDF's
/// pages are read again instead of held (a 90 MB PDF has ~120 MB of text,
/// several times that as positioned lines).
const KEEP_LINES_BYTES: usize = 32 << 20;

/// The most one object or cross-reference stream may inflate to while the
/// file loads (lopdf reads them all up front, holding about three copies):
/// real ones are kilobytes, and this bounds what a crafted one costs.
const MAX_OBJECT_STREAM: usize = 64 << 20;

/// Converts a PDF's text layer: lines rebuilt from glyph positions, pages marked.
pub fn convert(name: &str, bytes: &[u8]) -> Result<Converted, ConvertError> {
    convert_keeping(name, bytes, KEEP_LINES_BYTES)
}

fn convert_keeping(name: &str, bytes: &[u8], keep: usize) -> Result<Converted, ConvertError> {
    let options = lopdf::LoadOptions {
        max_decompressed_size: Some(MAX_OBJECT_STREAM),
        ..lopdf::LoadOptions::default()
    };
    let doc = lopdf::Document::load_mem_with_options(bytes, options).map_err(|e| match e {
        lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. }) => {
            malformed_by(
                name,
                format!(
                    "a compressed object stream inflates past {} MiB: refusing a possible \
                     decompression bomb",
                    MAX_OBJECT_STREAM >> 20
                ),
                e,
            )
        }
        e => malformed_by(name, format!("not a readable PDF ({e})"), e),
    })?;
    if doc.is_encrypted() {
        return Err(malformed(
            name,
            "the PDF is encrypted; save an unprotected copy to index it",
        ));
    }
    let ids: Vec<lopdf::ObjectId> = doc.get_pages().into_values().collect();
    let mut fonts = FontCache::default();
    // A page's lines, and its characters other than whitespace (a scan has none).
    let mut page_lines = |id| {
        let spans = page_spans(&doc, id, MAX_PAGE_STREAM, &mut fonts);
        let chars = spans
            .iter()
            .map(|s| s.text.chars().filter(|c| !c.is_whitespace()).count())
            .sum::<usize>();
        (lines(spans), chars as u32)
    };
    // Pass 1: running headers and footers and the body text's size are
    // found over all pages; the pages' lines are kept only while they are few.
    let mut running = RunningLines::default();
    let mut type_count = TypeCount::default();
    let mut page_chars = Vec::with_capacity(ids.len());
    let mut kept: Option<Vec<Vec<Line>>> = Some(Vec::new());
    let mut kept_bytes = 0;
    for &id in &ids {
        let (page, chars) = page_lines(id);
        page_chars.push(chars);
        running.count(&page, line_key);
        type_count.count(&page);
        kept_bytes += page.iter().map(line_bytes).sum::<usize>();
        match &mut kept {
            Some(pages) if kept_bytes <= keep => pages.push(page),
            _ => kept = None,
        }
    }
    // Headings come from the outline where there is one, else from type.
    let outline = pdf_outline::entries(&doc);
    // Pass 2: each page laid out and written as it comes. Text runs on
    // across pages, so a paragraph cut by a page break is joined.
    let mut out = Writer::new(type_count.finish(outline.is_empty()));
    let mut lay_out = |mut page: Vec<Line>| {
        running.drop_from(&mut page, line_key);
        out.page(pdf_table::blocks(page));
    };
    match kept {
        Some(pages) => pages.into_iter().for_each(&mut lay_out),
        None => ids.iter().for_each(|&id| lay_out(page_lines(id).0)),
    }
    let Some((markdown, places)) = out.finish() else {
        return Err(ConvertError::NeedsOcr {
            name: name.into(),
            pages: page_chars.len() as u32,
        });
    };
    // Words some PDFs print with a filler around every letter come back
    // as their letters; line for line, so the places hold.
    let markdown: String = markdown
        .split_inclusive('\n')
        .map(minirag_core::unreadable::repair_interleaved)
        .collect();
    let markdown = pdf_outline::apply(&markdown, &places, &outline);
    let meta = pdf_info::fields(&doc);
    let metadata_title = meta
        .pairs()
        .iter()
        .find(|(field, _)| field == "title")
        .map(|(_, title)| title.clone());
    Ok(Converted {
        markdown,
        metadata_title,
        page_chars,
        places,
        meta,
    })
}

fn line_key(l: &Line) -> EdgeKey {
    let x0 = l
        .segments
        .iter()
        .map(|s| s.x0)
        .fold(f32::INFINITY, f32::min);
    let x1 = l
        .segments
        .iter()
        .map(|s| s.x1)
        .fold(f32::NEG_INFINITY, f32::max);
    EdgeKey {
        text: l.text(),
        y: l.y,
        size: l.size,
        width: (x1 - x0).max(0.0),
    }
}

fn line_bytes(l: &Line) -> usize {
    std::mem::size_of::<Line>()
        + l.segments
            .iter()
            .map(|s| std::mem::size_of_val(s) + s.text.len())
            .sum::<usize>()
}

/// The document's Markdown, written part by part: a run of text (joined
/// across pages) or a table, parts separated by a blank line.
struct Writer {
    markdown: String,
    /// The kind of the last part begun; `None` before the first.
    last: Option<Part>,
    text: Paragraphs,
    /// Where each page starts in the Markdown.
    places: Vec<Place>,
    /// Lines of `markdown[..counted]`.
    lines: u32,
    counted: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Part {
    Text,
    Table,
}

impl Writer {
    fn new(typography: Typography) -> Self {
        Writer {
            markdown: String::new(),
            last: None,
            text: Paragraphs::new(typography),
            places: Vec::new(),
            lines: 0,
            counted: 0,
        }
    }

    fn begin(&mut self, part: Part) {
        if self.last == Some(part) && part == Part::Text {
            return;
        }
        if self.last == Some(Part::Text) {
            self.text.finish(&mut self.markdown);
        }
        if self.last.is_some() {
            self.markdown.push_str("\n\n");
        }
        self.last = Some(part);
    }

    fn page(&mut self, blocks: Vec<Block>) {
        self.lines += self.markdown[self.counted..].matches('\n').count() as u32;
        self.counted = self.markdown.len();
        // The page starts after the words written on the last line and the
        // line held back from the page before: in the middle of that line
        // when a paragraph runs on, at the start of a later one otherwise.
        let last_line = &self.markdown[self.markdown.rfind('\n').map_or(0, |i| i + 1)..];
        let held = self.text.waiting_text().map_or(0, word_count);
        self.places.push(Place {
            line: self.lines,
            word: word_count(last_line) + held,
            mark: Mark::Page(self.places.len() as u32 + 1),
        });
        let text: Vec<&Line> = blocks
            .iter()
            .flat_map(|b| match b {
                Block::Lines(lines) => lines.iter().collect(),
                Block::Table(_) => Vec::new(),
            })
            .collect();
        for block in &blocks {
            match block {
                Block::Lines(lines) => {
                    self.begin(Part::Text);
                    for line in reading_order(lines, &text) {
                        self.text.push(line, &mut self.markdown);
                    }
                }
                Block::Table(rows) => {
                    self.begin(Part::Table);
                    self.markdown.push_str(&pdf_table::markdown(rows));
                }
            }
        }
    }

    /// The Markdown and where its pages start; `None` when no page had text.
    fn finish(mut self) -> Option<(String, Vec<Place>)> {
        self.last?;
        self.text.finish(&mut self.markdown);
        Some((self.markdown, self.places))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages read again in the second pass give the Markdown that pages
    /// kept from the first give, on every real PDF of the fixtures.
    #[test]
    fn a_pdf_read_twice_converts_as_one_read_once() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "pdf") || path.ends_with("encrypted.pdf") {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let name = path.display().to_string();
            let once = convert_keeping(&name, &bytes, usize::MAX).unwrap();
            let twice = convert_keeping(&name, &bytes, 0).unwrap();
            assert_eq!(twice.markdown, once.markdown, "{name}");
            assert_eq!(twice.page_chars, once.page_chars, "{name}");
            seen += 1;
        }
        assert!(seen >= 6, "{seen} PDFs");
    }
}
