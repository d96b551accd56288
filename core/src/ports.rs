//! Ports: the traits through which the domain reaches the outside world.
//!
//! Each adapter crate implements one of these; the engine is written against
//! them only. All ports are `Send + Sync` because one engine serves several
//! MCP requests at once.

use std::ops::RangeInclusive;

use crate::cause::Cause;
use crate::chunk::Chunk;
use crate::search::Scope;
pub use crate::search::{Candidate, ChunkKey, DocumentHit};
pub use crate::tokens::TokenCounter;

// ---------------------------------------------------------------- Converter

/// What a converter is asked to turn into Markdown.
#[derive(Debug, Clone, Copy)]
pub struct ConvertRequest<'a> {
    /// Name used in messages (a path, a URL or a data id).
    pub name: &'a str,
    /// Lower-case format key: a file extension without the dot (`pdf`, `md`,
    /// `html`, …) or, for `ingest_data`, `text` / `markdown` / `html`.
    pub format: &'a str,
    /// The document's bytes as read or fetched.
    pub bytes: &'a [u8],
}

/// A converted document: structure-preserving Markdown plus the title the
/// format's own metadata carries (HTML `<title>`, EPUB `dc:title`, …).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Converted {
    /// The document as Markdown: headings, lists, tables and code kept.
    pub markdown: String,
    /// The title the format's own metadata gives, if any.
    pub metadata_title: Option<String>,
    /// PDFs: non-whitespace characters of each page's text layer, in page
    /// order, so the engine can route thin pages to OCR. Empty otherwise.
    pub page_chars: Vec<u32>,
    /// Where the Markdown's lines are in the file (pages, sheet rows,
    /// cells, file lines), sorted by line; see [`crate::location`].
    pub places: Vec<crate::location::Place>,
    /// Fields the document declares about itself, as the format names them
    /// (`author`, `keywords`, front matter keys), gathered under the shared
    /// budget; the engine normalises them.
    pub meta: crate::meta::Declared,
}

/// Why a document could not be converted. Messages name the document.
#[derive(Debug, Clone, PartialEq)]
pub enum ConvertError {
    /// The format key is not one the converter reads.
    Unsupported {
        /// The format key that was asked for.
        format: String,
    },
    /// The file is malformed, truncated, encrypted or hostile; `reason` says which.
    Malformed {
        /// The document's name, as in [`ConvertRequest::name`].
        name: String,
        /// What is wrong with it, phrased for the user.
        reason: String,
        /// The parser's own error, when one said why.
        cause: Option<Cause>,
    },
    /// A PDF without a text layer on any of its `pages`.
    NeedsOcr {
        /// The document's name.
        name: String,
        /// Its page count.
        pages: u32,
    },
}

impl std::fmt::Display for ConvertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unsupported { format } => write!(f, "no converter reads the format '{format}'"),
            Self::Malformed { name, reason, .. } => write!(f, "could not read {name}: {reason}"),
            Self::NeedsOcr { name, .. } => write!(
                f,
                "{name} looks like a scanned PDF (no text layer); it needs OCR, which this build does not do"
            ),
        }
    }
}

impl ConvertError {
    /// A file that cannot be read, with no deeper error to keep.
    pub fn malformed(name: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Malformed {
            name: name.into(),
            reason: reason.into(),
            cause: None,
        }
    }
}

impl std::error::Error for ConvertError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Malformed { cause: Some(c), .. } => Some(c.get()),
            _ => None,
        }
    }
}

/// Turns a document's bytes into Markdown; one implementation per set of formats.
pub trait Converter: Send + Sync {
    /// Converts one document; the error names it.
    fn convert(&self, request: ConvertRequest<'_>) -> Result<Converted, ConvertError>;
}

// ---------------------------------------------------------------- Ocr

/// Why text recognition cannot run, each phrased as what to install or
/// change.
#[derive(Debug, Clone, PartialEq)]
pub enum OcrUnavailable {
    /// The engine's program does not start or does not answer: `step`
    /// says which, `reason` what running it said.
    NotRunning {
        /// The program that was tried (`tesseract`).
        program: String,
        /// Which step failed: starting it, or asking its version or languages.
        step: &'static str,
        /// What running it said.
        reason: String,
        /// How to install it, for the message.
        install: String,
    },
    /// Languages the setting names have no data installed.
    MissingLanguages {
        /// The setting that names the languages (`RAG_OCR_LANG`).
        setting: &'static str,
        /// Its value.
        configured: String,
        /// Languages it names that have no data installed.
        missing: Vec<String>,
        /// Languages that are installed, to choose from.
        installed: Vec<String>,
    },
    /// No engine is wired in (a build or test without one).
    NotWired {
        /// How to install an engine, for the message.
        install: String,
    },
    /// OCR routing is off by configuration.
    Off {
        /// The setting that turns it off.
        setting: &'static str,
    },
}

impl std::fmt::Display for OcrUnavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotRunning {
                program,
                step,
                reason,
                install,
            } => write!(f, "{program} {step} ({reason}); {install}"),
            Self::MissingLanguages {
                setting,
                configured,
                missing,
                installed,
            } => write!(
                f,
                "{setting} is '{configured}', but Tesseract has no '{}'; installed: {} (Debian: apt install tesseract-ocr-<lang>)",
                missing.join("+"),
                installed.join(", ")
            ),
            Self::NotWired { install } => f.write_str(install),
            Self::Off { setting } => write!(f, "OCR routing is off ({setting}=0)"),
        }
    }
}

impl std::error::Error for OcrUnavailable {}

/// Why recognition failed. The message names the file.
#[derive(Debug, Clone, PartialEq)]
pub struct OcrError {
    /// The image or page recognised, for the message.
    pub name: String,
    /// What went wrong.
    pub reason: String,
    /// The OS or image decoder's error underneath, when there is one.
    pub cause: Option<Cause>,
}

impl std::fmt::Display for OcrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.name, self.reason)
    }
}

impl std::error::Error for OcrError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause.as_ref().map(Cause::get)
    }
}

/// Which language a document is written in, detected once at ingest for
/// the `language` filter.
pub trait Languages: Send + Sync {
    /// The ISO 639-1 code (`en`, `ru`) of the language most of `text` is
    /// in, or `None` when the text is too short or too mixed to tell.
    fn detect(&self, text: &str) -> Option<&'static str>;
}

/// Text recognition for scans: image files and PDF pages without a text
/// layer. Which pages need it, and what becomes of the text, is the
/// engine's rule; the adapter only reads pixels.
pub trait Ocr: Send + Sync {
    /// The engine's name (`tesseract 5.3.0 (rus+eng)`), or why it is
    /// unavailable, phrased as what to install or change.
    fn engine(&self) -> Result<String, OcrUnavailable>;
    /// The text of every frame of an image (each page of a multi-page TIFF).
    fn image(&self, name: &str, bytes: &[u8]) -> Result<Vec<String>, OcrError>;
    /// The text of the given 1-based pages of a PDF, in that order. After
    /// each page `go_on(done, total)` is asked; `false` stops between pages
    /// with an error.
    fn pdf_pages(
        &self,
        name: &str,
        bytes: &[u8],
        pages: &[u32],
        go_on: &dyn Fn(u32, u32) -> bool,
    ) -> Result<Vec<String>, OcrError>;
}

// ---------------------------------------------------------------- Embedder

/// Row-major matrix of unit vectors, one row per input text. One allocation
/// instead of a `Vec` per row: the index stores vectors contiguously too.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Embeddings {
    /// Width of every row.
    pub dim: usize,
    /// `dim` values per row, rows one after another.
    pub data: Vec<f32>,
}

impl Embeddings {
    /// No rows yet, each `dim` wide.
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            data: Vec::new(),
        }
    }
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }
    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Row `i`; panics past the last row, like slice indexing.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }
    /// Appends one row of width `dim`.
    pub fn push(&mut self, row: &[f32]) {
        debug_assert_eq!(row.len(), self.dim);
        self.data.extend_from_slice(row);
    }
}

/// Why vectors could not be made.
#[derive(Debug, Clone, PartialEq)]
pub enum EmbedError {
    /// The model cannot be loaded (no network, bad path, broken files). The
    /// engine degrades to keyword-only search and vector-less ingest.
    Unavailable {
        /// Why, phrased for the user.
        reason: String,
        /// The loader's error (I/O, download, a bad file), when there is one.
        cause: Option<Cause>,
    },
    /// The model loaded but failed on this input.
    Failed {
        /// Why, phrased for the user.
        reason: String,
        /// The encoder's or server's error underneath, when there is one.
        cause: Option<Cause>,
    },
}

impl std::fmt::Display for EmbedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unavailable { reason, .. } => {
                write!(f, "the embedding model could not be loaded: {reason}")
            }
            Self::Failed { reason, .. } => write!(f, "embedding failed: {reason}"),
        }
    }
}

impl std::error::Error for EmbedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Unavailable { cause, .. } | Self::Failed { cause, .. } => {
                cause.as_ref().map(Cause::get)
            }
        }
    }
}

/// What an embedder is doing, for `status` and `doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbedderState {
    /// Nothing tried yet: it loads (or connects) on first use.
    NotLoaded,
    /// Loading now; `done` of `total` bytes downloaded (0 of 0: nothing to
    /// download, or the size is not known yet).
    Loading {
        /// Bytes downloaded so far.
        done: u64,
        /// Bytes to download, or 0 while unknown.
        total: u64,
    },
    /// Loaded and answering.
    Ready,
    /// The last attempt failed; the next use after a pause tries again.
    Failed {
        /// Why, phrased for the user.
        reason: String,
    },
}

/// Whether an embedder can embed now ([`Embedder::start`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Readiness {
    /// It can embed now.
    Ready,
    /// Loading in the background (a download): work that needs no vectors
    /// goes on meanwhile.
    Pending,
    /// It cannot: loading failed.
    Failed(EmbedError),
}

/// Turns texts into unit vectors: the in-process encoder or a remote server.
pub trait Embedder: Send + Sync {
    /// What it is doing now, without waiting for a load in progress.
    fn state(&self) -> EmbedderState {
        EmbedderState::Ready
    }
    /// Makes it ready, or starts making it ready in the background when that
    /// takes long (a download), without waiting for it. By default, [`Embedder::ready`].
    fn start(&self) -> Readiness {
        match self.ready() {
            Ok(()) => Readiness::Ready,
            Err(e) => Readiness::Failed(e),
        }
    }
    /// Stable id of the model by its content (the same files anywhere are
    /// the same model): vectors of different models never mix. Valid once
    /// [`Embedder::ready`] succeeded.
    fn model_id(&self) -> &str;
    /// Loads the model if needed; `Unavailable` when it cannot be loaded.
    fn ready(&self) -> Result<(), EmbedError> {
        Ok(())
    }
    /// Width of the vectors it makes (valid once ready).
    fn dimension(&self) -> usize;
    /// Embeds documents; row `i` belongs to `texts[i]`, L2-normalised.
    fn embed_documents(&self, texts: &[&str]) -> Result<Embeddings, EmbedError>;
    /// Embeds a query, L2-normalised.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError>;
}

// ---------------------------------------------------------------- Fetcher

/// A fetched URL's body and what the server said about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Fetched {
    /// The body, at most the fetcher's cap.
    pub bytes: Vec<u8>,
    /// The media type without parameters, lower-case (`text/html`).
    pub content_type: Option<String>,
    /// The URL after redirects.
    pub final_url: String,
}

/// Why a URL could not be fetched; the message names the URL.
#[derive(Debug, Clone, PartialEq)]
pub enum FetchError {
    /// The URL or one of its redirect hops is not allowed (scheme, private host…).
    Refused {
        /// Why, naming the URL or hop.
        reason: String,
    },
    /// Network, timeout, size or type failure.
    Failed {
        /// Why, naming the URL.
        reason: String,
        /// The HTTP client's or resolver's error, when there is one.
        cause: Option<Cause>,
    },
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refused { reason } | Self::Failed { reason, .. } => f.write_str(reason),
        }
    }
}

impl FetchError {
    /// A failure with no deeper error to keep.
    pub fn failed(reason: impl Into<String>) -> Self {
        Self::Failed {
            reason: reason.into(),
            cause: None,
        }
    }
}

impl std::error::Error for FetchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Failed { cause: Some(c), .. } => Some(c.get()),
            _ => None,
        }
    }
}

/// Fetches a URL for `ingest_url` under the network rules (timeouts, size cap, no private hosts unless allowed).
pub trait Fetcher: Send + Sync {
    /// Fetches `url`, following redirects the rules allow.
    fn fetch(&self, url: &str) -> Result<Fetched, FetchError>;
}

// ---------------------------------------------------------------- Files

/// A document file found by a scan, before it is read.
#[derive(Debug, Clone, PartialEq)]
pub struct ScannedFile {
    /// As found under a root (a symlinked file keeps its own name).
    pub path: String,
    /// Bytes on disk when scanned.
    pub size: u64,
    /// st_mtime, seconds.
    pub mtime: f64,
}

/// A folder a scan could not see into: sync must not mistake its files for
/// deletions.
#[derive(Debug, Clone, PartialEq)]
pub struct BlindFolder {
    /// The folder, absolute.
    pub path: String,
    /// The OS error, or `None` for a root that is an empty folder (an
    /// unmounted volume, perhaps).
    pub error: Option<String>,
}

impl BlindFolder {
    /// What the user should do about it, for sync's notices.
    pub fn message(&self) -> String {
        match &self.error {
            Some(e) => format!(
                "could not list this folder ({e}); indexed files under it were kept. Make it readable, or reconnect the drive, then sync again."
            ),
            None => "this root is an empty folder; indexed files under it were kept in case it is an unmounted volume. Mount it, or remove the root from BASE_DIRS.".into(),
        }
    }
}

/// What a walk of the roots found, files sorted by path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scan {
    /// Document files, sorted by path.
    pub files: Vec<ScannedFile>,
    /// Folders the walk could not see into.
    pub blind: Vec<BlindFolder>,
}

/// A file's bytes with the facts sync compares.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRead {
    /// The whole file.
    pub bytes: Vec<u8>,
    /// sha256 hex of `bytes`.
    pub sha256: String,
    /// st_mtime, seconds, when read.
    pub mtime: f64,
}

/// Why a file could not be read; the message names it.
#[derive(Debug, Clone, PartialEq)]
pub enum FileError {
    /// A folder where a file was expected.
    IsFolder {
        /// The path given.
        path: String,
    },
    /// Larger than the limit the caller passed; not read.
    TooLarge {
        /// The path given.
        path: String,
        /// Its size in bytes.
        size: u64,
    },
    /// The OS refused.
    Unreadable {
        /// The path given.
        path: String,
        /// The OS error.
        source: Cause,
    },
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::IsFolder { path } => write!(
                f,
                "{path} is a folder; index folders with sync_start (CLI: `minirag-mcp sync {path}`)"
            ),
            Self::TooLarge { path, size } => write!(f, "{path} is {size} bytes, over the limit"),
            Self::Unreadable { path, source } => write!(f, "cannot read {path}: {source}"),
        }
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Unreadable { source, .. } => Some(source.get()),
            _ => None,
        }
    }
}

/// `path` normalised lexically: `.` dropped, `..` taken back, repeated `/`
/// folded. What [`Files::resolve`] does where nothing exists on disk.
pub(crate) fn normalise_path(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The document folders: walking them by the scan rules, reading files.
/// Paths are absolute strings; roots are already resolved.
pub trait Files: Send + Sync {
    /// Walks `roots`, or only `limit` (folders or files under them) when given.
    /// `images`: image files count as documents (OCR is available).
    fn scan(&self, roots: &[String], limit: &[String], images: bool) -> Scan;
    /// Reads a file (the bytes, their sha256 and the mtime), refusing one
    /// over `max_bytes` before reading it.
    fn read(&self, path: &str, max_bytes: u64) -> Result<FileRead, FileError>;
    /// sha256 hex of a file, `None` when it cannot be read.
    fn sha256(&self, path: &str) -> Option<String>;
    /// Whether `path` is a folder (a folder argument is scanned, a file
    /// argument is read as given).
    fn is_folder(&self, path: &str) -> bool;
    /// An absolute path with symlinks resolved as far as it exists, the
    /// rest normalised lexically; containment checks the result.
    fn resolve(&self, path: &str) -> String {
        normalise_path(path)
    }
}

// ---------------------------------------------------------------- Clock

/// Wall-clock time, as a port so tests pin `ingestedAt`.
pub trait Clock: Send + Sync {
    /// Seconds since the Unix epoch, UTC.
    fn now_unix_seconds(&self) -> i64;
}

// ---------------------------------------------------------------- Index

pub use crate::source::{SourceAttributes, SourceRecord, SourceType};

/// What an index holds, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexStats {
    /// Live chunks.
    pub chunk_count: u64,
    /// Live sources (files, data and URLs).
    pub source_count: u64,
    /// Chunks whose source has an older [`crate::CHUNK_SCHEME`].
    pub stale_chunk_count: u64,
    /// Chunks stored without a vector.
    pub vectorless_chunk_count: u64,
    /// Damage the index found in its own files and contained (a damaged
    /// log set aside, say), one message each naming the file; empty when
    /// sound.
    pub damage: Vec<String>,
    /// Bytes of log a cold open replays on top of the snapshot (0 where
    /// the index keeps no such log).
    pub log_bytes: u64,
}

/// Why an index call failed; every message names what to do.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexError {
    /// Stored vectors have another width than the embedder produces.
    DimensionMismatch {
        /// The index's width.
        stored: usize,
        /// The embedder's.
        model: usize,
    },
    /// Another process holds the sync lock; `reason` names it and says what to do.
    Busy {
        /// Names the holder and says what to do.
        reason: String,
        /// The lock or database error underneath, when there is one.
        cause: Option<Cause>,
    },
    /// Storage failure; the message names the path and what is wrong.
    Storage {
        /// Names the path and what is wrong.
        reason: String,
        /// The decoder's or database's error underneath, when there is one.
        cause: Option<Cause>,
    },
    /// The OS refused an operation; `context` names it and the path.
    Io {
        /// The operation and the path.
        context: String,
        /// The OS error.
        source: Cause,
    },
}

impl std::fmt::Display for IndexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::DimensionMismatch { stored, model } => write!(
                f,
                "the index holds {stored}-dimensional vectors but the model makes {model}-dimensional ones; \
                 point DB_PATH at a new folder or re-ingest everything with the new model"
            ),
            Self::Busy { reason, .. } | Self::Storage { reason, .. } => f.write_str(reason),
            Self::Io { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

impl std::error::Error for IndexError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source.get()),
            Self::Busy { cause, .. } | Self::Storage { cause, .. } => {
                cause.as_ref().map(Cause::get)
            }
            _ => None,
        }
    }
}

impl IndexError {
    /// A storage failure with no deeper error to keep.
    pub fn storage(reason: impl Into<String>) -> Self {
        Self::Storage {
            reason: reason.into(),
            cause: None,
        }
    }

    /// A storage failure caused by `e`.
    pub fn storage_caused(
        reason: impl Into<String>,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Storage {
            reason: reason.into(),
            cause: Some(Cause::new(e)),
        }
    }

    /// The sync lock is held elsewhere, with no deeper error to keep.
    pub fn busy(reason: impl Into<String>) -> Self {
        Self::Busy {
            reason: reason.into(),
            cause: None,
        }
    }
}

/// One consistent read of the index, like tantivy's `Searcher`: every call
/// sees the same generation, so a query's searches, chunks, titles and
/// parents agree even while another process writes. Writers never wait
/// for it; hold it for one use case, not longer, as it pins what it reads
/// (a generation's memory in the embedded index, a transaction and a
/// pooled connection on PostgreSQL).
pub trait IndexView: Sync {
    /// Nearest chunks to a unit query vector, nearest first, `scope` applied
    /// before the cut at `k`. Only vectors of [`IndexView::vector_model`].
    fn vector_search(
        &self,
        query: &[f32],
        k: usize,
        scope: &Scope,
    ) -> Result<Vec<Candidate>, IndexError>;
    /// BM25 over chunk text and title, best first, `scope` applied before the cut.
    fn keyword_search(
        &self,
        query: &str,
        k: usize,
        scope: &Scope,
    ) -> Result<Vec<Candidate>, IndexError>;
    /// Sources ranked by BM25 over the whole document (all its chunks' text
    /// taken as one document, and its title), best first, `scope` applied
    /// before the cut at `k`, each with its best keyword chunk. The default
    /// gathers the keyword list's chunk scores per source instead, for an
    /// adapter without whole-document statistics.
    fn document_search(
        &self,
        query: &str,
        k: usize,
        scope: &Scope,
    ) -> Result<Vec<DocumentHit>, IndexError> {
        let chunks = self.keyword_search(query, k.saturating_mul(4), scope)?;
        let mut docs = crate::search::document_ranking(&chunks);
        docs.truncate(k);
        Ok(docs)
    }

    /// One source's record; `None` when it is not indexed.
    fn source(&self, source: &str) -> Result<Option<SourceRecord>, IndexError>;
    /// Sources under `scope`, sorted by source.
    fn sources(&self, scope: &Scope) -> Result<Vec<SourceRecord>, IndexError>;
    /// Chunks of one source whose index lies in `range`, ordered by index.
    fn chunks(&self, source: &str, range: RangeInclusive<u32>) -> Result<Vec<Chunk>, IndexError>;
    /// Chunks by key; `None` for keys that vanished since the search.
    fn get_chunks(&self, keys: &[ChunkKey]) -> Result<Vec<Option<Chunk>>, IndexError>;
    /// Every chunk of one parent section, ordered by index.
    fn parent_chunks(&self, source: &str, parent: u32) -> Result<Vec<Chunk>, IndexError>;
    /// Counts of what the index holds.
    fn stats(&self) -> Result<IndexStats, IndexError>;
    /// Live chunks without a vector (`stats().vectorless_chunk_count`);
    /// adapters answer it without a scan, as every query with vectors asks.
    fn vectorless_chunks(&self) -> Result<u64, IndexError> {
        Ok(self.stats()?.vectorless_chunk_count)
    }
    /// The model whose vectors the index holds; `None` when it holds none.
    /// Query vectors of another model are never compared with them.
    fn vector_model(&self) -> Option<String>;
}

/// Proof that this process runs the one sync of an index; dropping it
/// releases the lock.
pub struct SyncLease {
    _held: Option<Box<dyn Send>>,
    /// Set when the lock could not be taken for a reason other than another
    /// holder (a read-only folder, say): the sync then runs unlocked.
    pub warning: Option<String>,
}

impl SyncLease {
    /// A lease that holds the lock until `guard` drops.
    pub fn held(guard: Box<dyn Send>) -> Self {
        Self {
            _held: Some(guard),
            warning: None,
        }
    }
    /// A lease without the lock, with why it could not be taken.
    pub fn unlocked(warning: Option<String>) -> Self {
        Self {
            _held: None,
            warning,
        }
    }
}

/// Where chunks, vectors and postings live: the embedded index or PostgreSQL. Every call is durable once it returns.
pub trait Index: Send + Sync {
    /// A read view pinned to the current generation.
    fn read(&self) -> Result<Box<dyn IndexView + '_>, IndexError>;

    /// Atomically replaces every chunk of `record.source` (readers see the old
    /// or the new set, never a mix). `vectors`, when given, has one row per
    /// chunk. Vectors of a model other than the stored one (by
    /// `record.embedded_with`) switch the index to that model: every other
    /// source keeps its chunks and answers keyword-only until re-embedded.
    fn replace_source(
        &self,
        record: SourceRecord,
        chunks: Vec<Chunk>,
        vectors: Option<Embeddings>,
    ) -> Result<(), IndexError>;
    /// Stores vectors of `model_id` for chunks `first..first + n` of a
    /// source whose chunks are already stored, one batch of a large source at
    /// a time, so each batch is durable on its own and memory stays bounded.
    /// `texts` are the chunk texts the vectors were computed from: when the
    /// stored texts differ (the source changed meanwhile) the write is
    /// refused. `complete` marks the last batch: the source then counts as
    /// embedded with `model_id`. Vectors of another model switch the index to
    /// it, as in [`Index::replace_source`]. Returns the chunks updated.
    fn set_vectors(
        &self,
        source: &str,
        model_id: &str,
        first: u32,
        texts: &[&str],
        vectors: Embeddings,
        complete: bool,
    ) -> Result<usize, IndexError>;
    /// Removes a source; returns how many chunks it had.
    fn delete_source(&self, source: &str) -> Result<usize, IndexError>;
    /// Re-paths a source without re-embedding (a moved file); returns the
    /// number of chunks moved (0 when `from` is unknown).
    fn move_source(&self, from: &str, to: &str, mtime: f64) -> Result<usize, IndexError>;

    /// Other processes with other roots write into this index too (a
    /// database server): a sync then owns only the files under its roots.
    fn shared(&self) -> bool {
        false
    }

    /// Takes the index's sync lock (one sync per index across processes), or
    /// [`IndexError::Busy`] naming the holder.
    fn lock_sync(&self) -> Result<SyncLease, IndexError> {
        Ok(SyncLease::unlocked(None))
    }

    /// Publishes a sync job's record where every process of this index can
    /// read it, so a job started through one server is followed through
    /// another. The default keeps nothing: only the process running a job
    /// then knows it.
    fn put_job(&self, job: &crate::progress::Job) -> Result<(), IndexError> {
        let _ = job;
        Ok(())
    }

    /// A job record [`Index::put_job`] published, by id.
    fn job(&self, id: &str) -> Result<Option<crate::progress::Job>, IndexError> {
        let _ = id;
        Ok(None)
    }

    /// Work deferred to the end of a sync, once its many writes are over,
    /// while the sync lock is still held. `announce` gets one line per step
    /// that may take long. index-pg builds its vector graph here: pgvector
    /// builds one in bulk many times faster than it grows one row by row.
    /// A failure leaves the index correct (only slower), so a sync reports
    /// it as a notice.
    fn settle(&self, announce: &mut dyn FnMut(&str)) -> Result<(), IndexError> {
        let _ = announce;
        Ok(())
    }

    /// Stored vectors of `model_id` for chunk texts equal to `texts[i]`, so an
    /// unchanged chunk of a re-ingested source is not embedded again.
    fn cached_vectors(&self, model_id: &str, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
        let _ = model_id;
        vec![None; texts.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_width_clash_names_both_widths_and_the_fix() {
        let e = IndexError::DimensionMismatch {
            stored: 8,
            model: 16,
        }
        .to_string();
        assert!(
            e.contains("8-dimensional") && e.contains("16-dimensional") && e.contains("DB_PATH"),
            "{e}"
        );
    }
}
