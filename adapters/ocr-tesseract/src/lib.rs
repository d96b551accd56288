//! The [`Ocr`] port on Tesseract 5 (`tesseract`) and poppler's `pdftoppm`,
//! both run as child processes under a time and memory limit per page
//! ([`child`]). Why processes, not linked libraries: a hostile image can
//! then hang, crash or bloat only its child, and a machine without the
//! tools still builds and runs everything else.
//!
//! Pages are read with `--psm 1` (automatic layout with orientation and
//! script detection), so a page scanned sideways still reads. PDF pages are
//! rendered at 300 dpi. Image dimensions are checked from the header before
//! any decoder runs. A page that reads as next to nothing is cleaned
//! ([`clean`]) and read again.

mod child;
mod clean;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use minirag_core::ports::{Ocr, OcrError, OcrUnavailable};

pub use child::Limits;

/// What to install, for messages.
pub const INSTALL_HINT: &str = "install Tesseract 5 and poppler (Debian/Ubuntu: apt install tesseract-ocr tesseract-ocr-eng tesseract-ocr-rus poppler-utils; macOS: brew install tesseract tesseract-lang poppler), then restart";

/// Largest image accepted, in pixels (a 600 dpi A3 page is ~70 MP).
pub const MAX_PIXELS: u64 = 100_000_000;
/// A first read with fewer visible characters is retried on a cleaned page.
const RETRY_BELOW_CHARS: usize = 25;

fn visible_chars(text: &str) -> usize {
    text.chars().filter(|c| c.is_alphanumeric()).count()
}

/// Render resolution for PDF pages.
const DPI: &str = "300";

/// The [`Ocr`] port by the Tesseract program, with poppler's pdftoppm for scanned pages.
pub struct Tesseract {
    tesseract: PathBuf,
    pdftoppm: PathBuf,
    lang: String,
    limits: Limits,
    probed: OnceLock<Result<String, OcrUnavailable>>,
}

impl Tesseract {
    /// `lang`: Tesseract languages joined by `+` (RAG_OCR_LANG).
    pub fn new(lang: &str) -> Self {
        Self {
            tesseract: tool("MINIRAG_TESSERACT", "tesseract"),
            pdftoppm: tool("MINIRAG_PDFTOPPM", "pdftoppm"),
            lang: lang.to_string(),
            limits: Limits {
                time: Duration::from_secs(120),
                memory: 2 << 30,
            },
            probed: OnceLock::new(),
        }
    }

    /// `tesseract --version` and `--list-langs`, once.
    fn probe(&self) -> Result<String, OcrUnavailable> {
        let quick = Limits {
            time: Duration::from_secs(20),
            memory: self.limits.memory,
        };
        let mut version = Command::new(&self.tesseract);
        version.arg("--version");
        let not_running = |step: &'static str| {
            move |reason: String| OcrUnavailable::NotRunning {
                program: "Tesseract".into(),
                step,
                reason,
                install: INSTALL_HINT.into(),
            }
        };
        let out = child::run(version, None, quick).map_err(not_running("is not available"))?;
        let text = String::from_utf8_lossy(&out);
        let name = text
            .lines()
            .next()
            .unwrap_or("tesseract")
            .trim()
            .to_string();
        let mut langs = Command::new(&self.tesseract);
        langs.arg("--list-langs");
        let out =
            child::run(langs, None, quick).map_err(not_running("cannot list its languages"))?;
        let installed: Vec<String> = String::from_utf8_lossy(&out)
            .lines()
            .skip(1)
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        let missing: Vec<&str> = self
            .lang
            .split('+')
            .filter(|l| !installed.iter().any(|i| i == l))
            .collect();
        if !missing.is_empty() {
            return Err(OcrUnavailable::MissingLanguages {
                setting: "RAG_OCR_LANG",
                configured: self.lang.clone(),
                missing: missing.iter().map(|m| m.to_string()).collect(),
                installed,
            });
        }
        Ok(format!("{name} ({})", self.lang))
    }

    /// Renders one PDF page at 300 dpi into its own scratch file and reads it.
    fn read_page(&self, name: &str, pdf: &std::path::Path, page: u32) -> Result<String, OcrError> {
        let number = page.to_string();
        let png = pdf.with_file_name(format!("page-{page}"));
        let mut render = Command::new(&self.pdftoppm);
        render
            // Uncompressed grey (PGM): the cleaner reads it back at once.
            .args(["-r", DPI, "-gray", "-singlefile"])
            .args(["-f", &number, "-l", &number])
            .arg(pdf)
            .arg(&png);
        child::run(render, None, self.limits).map_err(|reason| OcrError {
            cause: None,
            name: name.into(),
            reason: format!("page {page} cannot be rendered: {reason}"),
        })?;
        let image = png.with_extension("pgm");
        let text = self.recognise_cleaned(name, &image);
        let _ = std::fs::remove_file(&image);
        text
    }

    /// Reads an image as it is; when that finds next to nothing and the
    /// image is a single frame, cleans it ([`clean`]) and reads it again,
    /// keeping the longer text. Clean pages pay nothing for the cleaner
    /// (it costs about a second per 300 dpi page).
    fn recognise_cleaned(&self, name: &str, image: &std::path::Path) -> Result<String, OcrError> {
        let raw = self.recognise(name, image)?;
        if visible_chars(&raw) >= RETRY_BELOW_CHARS || !clean::is_single_frame(image) {
            return Ok(raw);
        }
        let cleaned = image.with_extension("clean.pgm");
        let second = match clean::clean_file(image, &cleaned) {
            Ok(()) => self.recognise(name, &cleaned),
            Err(_) => return Ok(raw),
        };
        let _ = std::fs::remove_file(&cleaned);
        let second = second?;
        Ok(if visible_chars(&second) > visible_chars(&raw) {
            second
        } else {
            raw
        })
    }

    /// Text of one image held in a file.
    fn recognise(&self, name: &str, image: &std::path::Path) -> Result<String, OcrError> {
        let mut cmd = Command::new(&self.tesseract);
        cmd.arg(image)
            .arg("stdout")
            .args(["-l", &self.lang, "--psm", "1"]);
        let out = child::run(cmd, None, self.limits).map_err(|reason| OcrError {
            cause: None,
            name: name.into(),
            reason: format!("could not read or decode image: {reason}"),
        })?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

/// A tool's path: an override (tests point it at nothing) or its name.
fn tool(variable: &str, name: &str) -> PathBuf {
    std::env::var_os(variable).map_or_else(|| PathBuf::from(name), PathBuf::from)
}

/// Refuses an image whose header is unreadable or claims too many pixels.
fn check_dimensions(name: &str, bytes: &[u8]) -> Result<(), OcrError> {
    let size = imagesize::blob_size(bytes).map_err(|e| OcrError {
        name: name.into(),
        reason: format!("could not decode image ({e})"),
        cause: Some(minirag_core::cause::Cause::new(e)),
    })?;
    let pixels = size.width as u64 * size.height as u64;
    if pixels > MAX_PIXELS {
        return Err(OcrError { cause: None,
            name: name.into(),
            reason: format!(
                "the image claims {} × {} pixels, over the limit of {MAX_PIXELS} (a decompression bomb, or a scan at an absurd resolution)",
                size.width, size.height
            ),
        });
    }
    Ok(())
}

fn scratch(name: &str) -> Result<tempfile::TempDir, OcrError> {
    tempfile::tempdir().map_err(|e| OcrError {
        name: name.into(),
        reason: format!("no scratch folder for OCR: {e}"),
        cause: Some(minirag_core::cause::Cause::new(e)),
    })
}

impl Ocr for Tesseract {
    fn engine(&self) -> Result<String, OcrUnavailable> {
        self.probed.get_or_init(|| self.probe()).clone()
    }

    fn image(&self, name: &str, bytes: &[u8]) -> Result<Vec<String>, OcrError> {
        check_dimensions(name, bytes)?;
        let dir = scratch(name)?;
        let path = dir.path().join("image");
        std::fs::write(&path, bytes).map_err(|e| OcrError {
            name: name.into(),
            reason: format!("cannot write a scratch copy: {e}"),
            cause: Some(minirag_core::cause::Cause::new(e)),
        })?;
        let text = self.recognise_cleaned(name, &path)?;
        // Tesseract ends every page of a multi-page image with a form feed.
        Ok(text.split('\u{c}').map(str::to_string).collect())
    }

    fn pdf_pages(
        &self,
        name: &str,
        bytes: &[u8],
        pages: &[u32],
        go_on: &dyn Fn(u32, u32) -> bool,
    ) -> Result<Vec<String>, OcrError> {
        let dir = scratch(name)?;
        let pdf = dir.path().join("in.pdf");
        std::fs::write(&pdf, bytes).map_err(|e| OcrError {
            name: name.into(),
            reason: format!("cannot write a scratch copy: {e}"),
            cause: Some(minirag_core::cause::Cause::new(e)),
        })?;
        let total = pages.len() as u32;
        let mut out = Vec::with_capacity(pages.len());
        // Pages are independent: one child pair per core, a batch at a
        // time, so memory stays at `workers` pages whatever the length.
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        for batch in pages.chunks(workers) {
            let texts: Vec<Result<String, OcrError>> = std::thread::scope(|s| {
                let handles: Vec<_> = batch
                    .iter()
                    .map(|&page| {
                        let pdf = pdf.as_path();
                        s.spawn(move || self.read_page(name, pdf, page))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(OcrError {
                                cause: None,
                                name: name.into(),
                                reason: "an OCR worker thread panicked".into(),
                            })
                        })
                    })
                    .collect()
            });
            for text in texts {
                out.push(text?);
            }
            let done = out.len() as u32;
            if !go_on(done, total) && done < total {
                return Err(OcrError {
                    cause: None,
                    name: name.into(),
                    reason: format!("stopped after page {done} of {total}"),
                });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_is_unavailable_with_the_install_hint() {
        let t = Tesseract {
            tesseract: PathBuf::from("/nonexistent/tesseract"),
            ..Tesseract::new("eng")
        };
        let e = t.engine().unwrap_err();
        assert!(
            matches!(
                &e,
                OcrUnavailable::NotRunning {
                    step: "is not available",
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("apt install tesseract-ocr"), "{e}");
    }

    #[test]
    fn a_bomb_is_refused_from_its_header() {
        // A valid PNG signature and IHDR claiming 100,000 × 100,000 pixels.
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&100_000u32.to_be_bytes());
        png.extend_from_slice(&100_000u32.to_be_bytes());
        png.extend_from_slice(&[8, 0, 0, 0, 0, 0, 0, 0, 0]);
        let e = check_dimensions("bomb.png", &png).unwrap_err();
        assert!(e.reason.contains("100000 × 100000"), "{e}");
    }
}

/// With the real tools (`.ci/run` installs them).
#[cfg(test)]
mod with_tesseract {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn six_pages() -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/ocr/six-pages.pdf");
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn a_stop_is_honoured_between_pages() {
        let t = Tesseract::new("eng");
        assert!(t.engine().is_ok(), "{:?}", t.engine());
        let asked = AtomicU32::new(0);
        let e = t
            .pdf_pages(
                "six-pages.pdf",
                &six_pages(),
                &[1, 2, 3, 4, 5, 6],
                &|done, total| {
                    asked.fetch_add(1, Ordering::SeqCst);
                    assert_eq!(total, 6);
                    done < 2
                },
            )
            .unwrap_err();
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        // Asked after each batch: it went on after the batch that reached
        // page 2 only if that batch ended before it.
        assert!(asked.load(Ordering::SeqCst) <= 2, "{e}");
        assert!(e.reason.contains("stopped after page"), "{e}");
        assert!(!e.reason.contains("page 6 of 6"), "{e} ({workers} workers)");
    }

    #[test]
    fn an_unknown_language_lists_the_installed_ones() {
        let t = Tesseract::new("rus+xyz");
        let hint = t.engine().unwrap_err();
        assert!(
            matches!(&hint, OcrUnavailable::MissingLanguages { missing, .. } if missing == &["xyz"]),
            "{hint:?}"
        );
        let hint = hint.to_string();
        assert!(hint.contains("'xyz'") && hint.contains("eng"), "{hint}");
    }
}
