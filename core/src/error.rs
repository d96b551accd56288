//! Errors of the engine's use cases. Every message names the thing that is
//! wrong and, where there is one, the next step.

use crate::formats::{extensions, FormatKind};
use crate::ports::{ConvertError, EmbedError, FetchError, FileError, IndexError};
use crate::search::QueryError;

/// Why a use case failed; each message names the thing and the next step.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineError {
    /// A query argument is invalid.
    Query(QueryError),
    /// A file whose extension no converter reads.
    UnsupportedExtension {
        /// The file.
        path: String,
        /// Its extension.
        extension: String,
    },
    /// An image file, and no OCR engine: `why` says what to install.
    Image {
        /// The file.
        path: String,
        /// What to install or change.
        why: Box<crate::ports::OcrUnavailable>,
    },
    /// A PDF with no text layer, and no OCR engine.
    ScannedPdf {
        /// The file.
        path: String,
        /// What to install or change.
        why: Box<crate::ports::OcrUnavailable>,
    },
    /// Recognition ran and found no text.
    OcrEmpty {
        /// The file.
        path: String,
    },
    /// Recognition failed (an undecodable image, a page that cannot be
    /// rendered, a time or memory limit).
    Ocr(crate::ports::OcrError),
    /// A file over `MAX_FILE_SIZE`.
    TooLarge {
        /// The file.
        path: String,
        /// Its size in bytes.
        size: u64,
        /// The limit in bytes.
        max: u64,
    },
    /// `ingest_data` with a format other than text / markdown / html.
    BadFormat {
        /// The format asked for.
        format: String,
    },
    /// `ingest_data` / `ingest_url` named a `source` that is a file path:
    /// those sources live apart from files, so they can never stand in for
    /// one (or be served as one).
    SourceIsAPath {
        /// The id given.
        source: String,
    },
    /// Conversion produced no text.
    Empty {
        /// The source.
        source: String,
    },
    /// The converter refused the document.
    Convert(ConvertError),
    /// The URL could not be fetched.
    Fetch(FetchError),
    /// Vectors could not be made.
    Embed(EmbedError),
    /// The index refused.
    Index(IndexError),
    /// A source that is not indexed.
    NotFound {
        /// The source asked for.
        source: String,
    },
    /// No chunk of the document is at the place asked for (or the document
    /// was indexed before places were kept).
    NoSuchPart {
        /// The source.
        source: String,
        /// The part asked for, as given.
        wanted: String,
        /// The places the document has (`pp. 1–4`) and the first one's
        /// fragment (`page=1`); none when it was indexed without places.
        has: Option<(String, String)>,
    },
    /// Rows asked for with no sheet, in a workbook where more than one
    /// sheet has them.
    WhichSheet {
        /// The source.
        source: String,
        /// The rows asked for, as `rows=A-B`.
        rows: String,
        /// The sheets that have them, in document order.
        sheets: Vec<String>,
    },
    /// Reading a file failed.
    File(FileError),
    /// A sync stopped on request between files.
    Cancelled {
        /// Files done before the stop.
        done: u64,
        /// Files the sync had to do.
        total: u64,
        /// What was counted: files, or chunks to embed.
        unit: &'static str,
    },
    /// The work stopped on a bug (a panic), contained to this call or job.
    Crashed {
        /// The panic's message.
        message: String,
    },
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Query(e) => e.fmt(f),
            Self::UnsupportedExtension { path, extension } => {
                let list: Vec<String> = extensions(FormatKind::Document)
                    .iter()
                    .map(|e| format!(".{e}"))
                    .collect();
                let shown = if extension.is_empty() {
                    "(none)".to_string()
                } else {
                    format!(".{extension}")
                };
                write!(
                    f,
                    "Unsupported file extension '{shown}' of {path}; supported: {}",
                    list.join(", ")
                )
            }
            Self::Image { path, why } => write!(f, "{path} is an image, which needs OCR: {why}"),
            Self::ScannedPdf { path, why } => {
                write!(f, "{path} looks like a scanned PDF (no text layer); {why}")
            }
            Self::OcrEmpty { path } => {
                write!(
                    f,
                    "{path}: OCR produced no text (page may be blank or unreadable)"
                )
            }
            Self::Ocr(e) => e.fmt(f),
            Self::TooLarge { path, size, max } => {
                write!(f, "{path} is {size} bytes; MAX_FILE_SIZE is {max} (raise MAX_FILE_SIZE to index it)")
            }
            Self::BadFormat { format } => {
                write!(
                    f,
                    "format must be one of ('text', 'markdown', 'html'), got '{format}'"
                )
            }
            Self::SourceIsAPath { source } => write!(
                f,
                "source '{source}' is a file path, and a source of ingest_data or ingest_url \
                 lives apart from files: name it without a leading '/', '~' or drive (for \
                 example 'notes/{}'), or index the file itself with ingest_file",
                source
                    .rsplit(['/', '\\'])
                    .find(|p| !p.is_empty())
                    .unwrap_or("name")
            ),
            Self::Empty { source } => write!(f, "No text content extracted from {source}"),
            Self::Convert(e) => e.fmt(f),
            Self::Fetch(e) => e.fmt(f),
            Self::Embed(e) => e.fmt(f),
            Self::Index(e) => e.fmt(f),
            Self::File(e) => e.fmt(f),
            Self::Cancelled { done, total, unit } => {
                write!(
                    f,
                    "sync cancelled after {done} of {total} {unit}; what was done is kept"
                )
            }
            Self::Crashed { message } => write!(
                f,
                "the work stopped on an internal error ({message}); what was done before it is \
                 kept; please report it with the input that caused it"
            ),
            Self::NotFound { source } => {
                write!(f, "Source not found in index: {source} — ingest it first (MCP: ingest_file or sync_start; CLI: `minirag-mcp ingest PATH` or `minirag-mcp sync`).")
            }
            Self::NoSuchPart {
                source,
                wanted,
                has: Some((places, first)),
            } => write!(
                f,
                "No part of {source} is at {wanted}; it has {places}: ask for one of those, as {first}"
            ),
            Self::NoSuchPart {
                source,
                wanted,
                has: None,
            } => write!(
                f,
                "No part of {source} is at {wanted}: it was indexed without places; its next sync \
                 keeps them, then ask for a place a result's `location` names"
            ),
            Self::WhichSheet {
                source,
                rows,
                sheets,
            } => write!(
                f,
                "{source} has {rows} on {} sheets ({}): name one, as {rows}&sheet={}",
                sheets.len(),
                sheets.join(", "),
                sheets[0]
            ),
        }
    }
}

impl std::error::Error for EngineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Query(e) => Some(e),
            Self::Convert(e) => Some(e),
            Self::Fetch(e) => Some(e),
            Self::Embed(e) => Some(e),
            Self::Index(e) => Some(e),
            Self::File(e) => Some(e),
            Self::Ocr(e) => Some(e),
            Self::Image { why, .. } | Self::ScannedPdf { why, .. } => Some(why.as_ref()),
            _ => None,
        }
    }
}

pub use crate::cause::Cause;

impl From<QueryError> for EngineError {
    fn from(e: QueryError) -> Self {
        Self::Query(e)
    }
}

impl From<IndexError> for EngineError {
    fn from(e: IndexError) -> Self {
        Self::Index(e)
    }
}

impl From<ConvertError> for EngineError {
    fn from(e: ConvertError) -> Self {
        Self::Convert(e)
    }
}

impl From<EmbedError> for EngineError {
    fn from(e: EmbedError) -> Self {
        Self::Embed(e)
    }
}

impl From<FileError> for EngineError {
    fn from(e: FileError) -> Self {
        Self::File(e)
    }
}

impl From<FetchError> for EngineError {
    fn from(e: FetchError) -> Self {
        Self::Fetch(e)
    }
}

/// What a caught panic said, for [`EngineError::Crashed`].
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}
