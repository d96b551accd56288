//! The use cases, written once over the ports: ingest (convert → title →
//! chunk → embed → replace) and query (validate → embed → candidates → fuse
//! → filter → shape). The MCP server and the CLI only parse, call and format.

use std::sync::Arc;

pub use crate::progress::SyncControl;
#[cfg(test)]
use crate::progress::EMBED_BATCH;

use crate::config::Config;
use crate::ports::{
    Clock, Converter, Embedder, Fetcher, Files, Index, Languages, Ocr, TokenCounter,
};
use crate::search::Grouping;

/// The settings the use cases need, taken from [`Config`].
#[derive(Debug, Clone)]
pub struct Settings {
    /// Document roots, symlinks resolved, in configured order.
    pub roots: Vec<String>,
    /// Tokens a chunk may hold.
    pub budget: usize,
    /// The keyword share of hybrid fusion, 0 to 1.
    pub hybrid_weight: f64,
    /// How results group when a query does not say.
    pub grouping: Option<Grouping>,
    /// Vector hits farther than this are dropped.
    pub max_distance: Option<f64>,
    /// Sync refuses roots with more files than this.
    pub max_files: Option<usize>,
    /// Larger files are skipped, in bytes.
    pub max_file_size: u64,
    /// A PDF page with fewer non-whitespace characters is OCRed (0: never).
    pub ocr_min_chars_per_page: u32,
}

impl From<&Config> for Settings {
    fn from(c: &Config) -> Self {
        Self {
            roots: c.roots.clone(),
            budget: c.chunk_token_budget,
            hybrid_weight: c.hybrid_weight,
            grouping: c.grouping,
            max_distance: c.max_distance,
            max_files: c.max_files,
            max_file_size: c.max_file_size,
            ocr_min_chars_per_page: c.ocr_min_chars_per_page,
        }
    }
}

/// The adapters the engine runs on.
#[derive(Clone)]
pub struct Ports {
    /// Documents → Markdown.
    pub converter: Arc<dyn Converter>,
    /// Texts → vectors.
    pub embedder: Arc<dyn Embedder>,
    /// Counts tokens as the model does, for chunking.
    pub tokens: Arc<dyn TokenCounter>,
    /// Where chunks, vectors and postings live.
    pub index: Arc<dyn Index>,
    /// Fetches URLs for `ingest_url`.
    pub fetcher: Arc<dyn Fetcher>,
    /// Reads and walks the roots.
    pub files: Arc<dyn Files>,
    /// The time, for ingest stamps and jobs.
    pub clock: Arc<dyn Clock>,
    /// Reads text off images and scanned pages.
    pub ocr: Arc<dyn Ocr>,
    /// Detects a document's language.
    pub languages: Arc<dyn Languages>,
}

/// The use cases over the ports: ingest, sync, query, read, list and delete.
pub struct Engine {
    settings: Settings,
    ports: Ports,
}

impl Engine {
    /// An engine over `ports` with `settings`.
    pub fn new(settings: Settings, ports: Ports) -> Self {
        Self { settings, ports }
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub(crate) fn ports(&self) -> &Ports {
        &self.ports
    }

    /// Unix seconds by the clock port.
    pub fn now(&self) -> i64 {
        self.ports.clock.now_unix_seconds()
    }
}

mod ingest;
mod query;
mod read;

#[cfg(test)]
use ingest::file_extension;
pub use ingest::{IngestOutcome, PreparedIngest};
pub use query::QueryRequest;
pub use read::{IndexState, IngestTargets, ReadDocument};

#[cfg(test)]
mod tests;

pub mod ocr;
