//! Deterministic stand-ins for tests (feature `testing`). Never used by the product.

use crate::markdown::is_word_char;
use crate::tokens::TokenCounter;

/// The reference test suite's counter: matches of `\w+|[^\w\s]`, plus 2 for
/// the special tokens. Deterministic and cheap, so chunking tests do not
/// depend on a model.
#[derive(Debug, Default, Clone, Copy)]
pub struct WordPunctCounter;

/// Number of `\w+|[^\w\s]` matches in `text`.
pub fn word_punct_tokens(text: &str) -> usize {
    let mut n = 0;
    let mut in_word = false;
    for c in text.chars() {
        if is_word_char(c) {
            if !in_word {
                n += 1;
                in_word = true;
            }
        } else {
            in_word = false;
            if !c.is_whitespace() {
                n += 1;
            }
        }
    }
    n
}

impl TokenCounter for WordPunctCounter {
    fn count(&self, text: &str) -> usize {
        word_punct_tokens(text) + 2
    }
}

/// Document folders in memory: paths are absolute strings, scans follow the
/// format table, and "sha256" is a stand-in digest (stable, not SHA-256).
#[derive(Debug, Default)]
pub struct MapFiles {
    files: std::sync::Mutex<std::collections::BTreeMap<String, (Vec<u8>, f64)>>,
}

impl MapFiles {
    pub fn put(&self, path: &str, bytes: &str, mtime: f64) {
        self.lock()
            .insert(path.into(), (bytes.as_bytes().to_vec(), mtime));
    }
    pub fn remove(&self, path: &str) {
        self.lock().remove(path);
    }
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<String, (Vec<u8>, f64)>> {
        self.files.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn digest(bytes: &[u8]) -> String {
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x100_0000_01b3)
    });
    format!("{h:016x}")
}

impl crate::ports::Files for MapFiles {
    fn scan(&self, roots: &[String], limit: &[String], _images: bool) -> crate::ports::Scan {
        use crate::search::is_under;
        let files = self.lock();
        let mut out = crate::ports::Scan::default();
        for root in roots {
            if !files.keys().any(|p| is_under(p, root)) {
                out.blind.push(crate::ports::BlindFolder {
                    path: root.clone(),
                    error: None,
                });
            }
        }
        for (path, (bytes, mtime)) in files.iter() {
            let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
            if roots.iter().any(|r| is_under(path, r))
                && (limit.is_empty() || limit.iter().any(|l| is_under(path, l)))
                && crate::formats::is_document_extension(ext)
            {
                out.files.push(crate::ports::ScannedFile {
                    path: path.clone(),
                    size: bytes.len() as u64,
                    mtime: *mtime,
                });
            }
        }
        out
    }

    fn read(
        &self,
        path: &str,
        max_bytes: u64,
    ) -> Result<crate::ports::FileRead, crate::ports::FileError> {
        let files = self.lock();
        let (bytes, mtime) =
            files
                .get(path)
                .ok_or_else(|| crate::ports::FileError::Unreadable {
                    path: path.into(),
                    source: crate::cause::Cause::new(std::io::Error::from(
                        std::io::ErrorKind::NotFound,
                    )),
                })?;
        if bytes.len() as u64 > max_bytes {
            return Err(crate::ports::FileError::TooLarge {
                path: path.into(),
                size: bytes.len() as u64,
            });
        }
        Ok(crate::ports::FileRead {
            sha256: digest(bytes),
            bytes: bytes.clone(),
            mtime: *mtime,
        })
    }

    fn sha256(&self, path: &str) -> Option<String> {
        self.lock().get(path).map(|(b, _)| digest(b))
    }

    /// A folder is any prefix of a stored path.
    fn is_folder(&self, path: &str) -> bool {
        self.lock()
            .keys()
            .any(|p| p != path && crate::search::is_under(p, path))
    }
}

/// An OCR port with no engine: scans stay unreadable, with this hint.
pub struct NoOcr;

pub const NO_OCR_HINT: &str = "install Tesseract (tests have none)";

impl crate::ports::Ocr for NoOcr {
    fn engine(&self) -> Result<String, crate::ports::OcrUnavailable> {
        Err(crate::ports::OcrUnavailable::NotWired {
            install: NO_OCR_HINT.into(),
        })
    }
    fn image(&self, name: &str, _bytes: &[u8]) -> Result<Vec<String>, crate::ports::OcrError> {
        Err(crate::ports::OcrError {
            cause: None,
            name: name.into(),
            reason: NO_OCR_HINT.into(),
        })
    }
    fn pdf_pages(
        &self,
        name: &str,
        bytes: &[u8],
        _pages: &[u32],
        _go_on: &dyn Fn(u32, u32) -> bool,
    ) -> Result<Vec<String>, crate::ports::OcrError> {
        self.image(name, bytes)
    }
}

pub mod fakes;
pub mod fixture;
