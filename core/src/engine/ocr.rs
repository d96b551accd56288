//! OCR routing: which PDF pages are read from pixels, how their
//! text joins the converted Markdown, and what a scan without an OCR
//! engine becomes. The [`crate::ports::Ocr`] adapter only reads pixels.

use std::sync::atomic::Ordering;

use super::Engine;
use crate::error::EngineError;
use crate::location::{Mark, Place};
use crate::ports::{ConvertError, ConvertRequest, Converted};
use crate::progress::SyncControl;
use crate::progress::{Phase, Step};

/// 1-based numbers of the pages whose text layer is thinner than
/// `threshold` non-whitespace characters; none when `threshold` is 0.
pub(crate) fn pages_needing_ocr(page_chars: &[u32], threshold: u32) -> Vec<u32> {
    if threshold == 0 {
        return Vec::new();
    }
    page_chars
        .iter()
        .enumerate()
        .filter(|(_, &n)| n < threshold)
        .map(|(i, _)| i as u32 + 1)
        .collect()
}

/// Recognised page texts appended after the converted text, blank pages
/// skipped, in page order; `pages[i]` is the number of `recognised[i]`.
/// Also where each appended page starts.
pub(crate) fn append_recognised(
    markdown: &str,
    pages: &[u32],
    recognised: &[String],
) -> (String, Vec<Place>) {
    let mut out = markdown.trim_end().to_string();
    let mut places = Vec::new();
    for (page, text) in pages.iter().zip(recognised) {
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        if !out.trim().is_empty() {
            out.push_str("\n\n");
        } else {
            out.clear();
        }
        places.push(Place {
            line: out.matches('\n').count() as u32,
            word: 0,
            mark: Mark::Page(*page),
        });
        out.push_str(text);
    }
    if out.trim().is_empty() {
        out.clear();
    }
    (out, places)
}

impl Engine {
    /// Whether scans count as documents: an OCR engine is available.
    pub(crate) fn reads_images(&self) -> bool {
        self.ports.ocr.engine().is_ok()
    }

    /// The OCR engine's name, or why there is none (for `status`).
    pub fn ocr_engine(&self) -> Result<String, crate::ports::OcrUnavailable> {
        self.ports.ocr.engine()
    }

    /// An image file's text (every frame, blank frames skipped), and the
    /// engine that read it.
    pub(super) fn recognise_image(
        &self,
        path: &str,
        bytes: &[u8],
    ) -> Result<(Converted, String), EngineError> {
        let engine = self.ports.ocr.engine().map_err(|why| EngineError::Image {
            path: path.into(),
            why: Box::new(why),
        })?;
        let frames = self
            .ports
            .ocr
            .image(path, bytes)
            .map_err(EngineError::Ocr)?;
        let numbers: Vec<u32> = (1..=frames.len() as u32).collect();
        let (text, mut places) = append_recognised("", &numbers, &frames);
        if text.is_empty() {
            return Err(EngineError::OcrEmpty { path: path.into() });
        }
        // Pages only where the image has several (a multi-page TIFF).
        if frames.len() < 2 {
            places.clear();
        }
        Ok((
            Converted {
                markdown: text,
                places,
                ..Converted::default()
            },
            engine,
        ))
    }

    /// Converts a document; a PDF's pages without a usable text layer are
    /// recognised and their text appended. The name
    /// is the engine's when recognition added text, else empty.
    pub(super) fn convert_with_ocr(
        &self,
        path: &str,
        format: &str,
        bytes: &[u8],
        control: Option<SyncControl<'_>>,
    ) -> Result<(Converted, String), EngineError> {
        let request = ConvertRequest {
            name: path,
            format,
            bytes,
        };
        let (converted, all_pages) = match self.ports.converter.convert(request) {
            Ok(c) => (c, None),
            Err(ConvertError::NeedsOcr { pages, .. }) => (Converted::default(), Some(pages)),
            Err(e) => return Err(e.into()),
        };
        let threshold = self.settings.ocr_min_chars_per_page;
        let needed = match all_pages {
            Some(n) if threshold > 0 => (1..=n).collect(),
            _ => pages_needing_ocr(&converted.page_chars, threshold),
        };
        if needed.is_empty() {
            return match all_pages {
                // OCR routing is off: a PDF with no text layer stays unreadable.
                Some(_) => Err(EngineError::ScannedPdf {
                    path: path.into(),
                    why: Box::new(crate::ports::OcrUnavailable::Off {
                        setting: "RAG_OCR_MIN_CHARS_PER_PAGE",
                    }),
                }),
                None => Ok((converted, String::new())),
            };
        }
        let every_page = all_pages.is_some() || needed.len() == converted.page_chars.len();
        let blank = converted.markdown.trim().is_empty();
        let engine = match self.ports.ocr.engine() {
            Ok(engine) => engine,
            Err(why) if every_page && blank => {
                return Err(EngineError::ScannedPdf {
                    path: path.into(),
                    why: Box::new(why),
                })
            }
            Err(_) => return Ok((converted, String::new())),
        };
        // Each page reported as it is read; a cancelled sync stops between
        // pages (nothing of this file is written then).
        let go_on = |done: u32, total: u32| match control {
            Some(w) => {
                let line = format!("recognised page {done} of {total} of {path}");
                (w.progress)(Step {
                    phase: Phase::Recognising,
                    done: done.into(),
                    total: total.into(),
                    line: &line,
                });
                !w.cancel.load(Ordering::Relaxed)
            }
            None => true,
        };
        let recognised = self
            .ports
            .ocr
            .pdf_pages(path, bytes, &needed, &go_on)
            .map_err(EngineError::Ocr)?;
        let (markdown, recognised_pages) =
            append_recognised(&converted.markdown, &needed, &recognised);
        if markdown.is_empty() {
            return Err(EngineError::OcrEmpty { path: path.into() });
        }
        let added = recognised.iter().any(|t| !t.trim().is_empty());
        let engine = if added { engine } else { String::new() };
        let mut places = converted.places;
        places.extend(recognised_pages);
        Ok((
            Converted {
                markdown,
                places,
                ..converted
            },
            engine,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thin_pages_are_routed_and_zero_turns_routing_off() {
        assert_eq!(pages_needing_ocr(&[400, 0, 17, 25], 25), vec![2, 3]);
        assert!(pages_needing_ocr(&[0, 0], 0).is_empty());
    }

    #[test]
    fn recognised_text_follows_the_text_layer_in_page_order() {
        let (out, places) = append_recognised(
            "Layer text\n",
            &[2, 3, 4],
            &["  Page two ".into(), "".into(), "Page four".into()],
        );
        assert_eq!(out, "Layer text\n\nPage two\n\nPage four");
        let at: Vec<(u32, Mark)> = places.into_iter().map(|p| (p.line, p.mark)).collect();
        assert_eq!(at, [(2, Mark::Page(2)), (4, Mark::Page(4))]);
        assert_eq!(append_recognised("  ", &[1], &["".into()]).0, "");
        let (scan, places) = append_recognised("", &[1], &["Scanned words".into()]);
        assert_eq!((scan.as_str(), places[0].line), ("Scanned words", 0));
    }
}
