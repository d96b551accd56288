//! The use cases, written once over the ports: ingest (convert → title →
//! chunk → embed → replace) and query (validate → embed → candidates → fuse
//! → filter → shape). The MCP server and the CLI only parse, call and format.

use std::sync::Arc;

pub use crate::progress::{SyncControl, EMBED_BATCH};

use crate::config::Config;
use crate::ports::{
    Clock, Converter, Embedder, Fetcher, Files, Index, Languages, Ocr, TokenCounter,
};
use crate::search::Grouping;

/// The settings the use cases need, taken from [`Config`].
#[derive(Debug, Clone)]
pub struct Settings {
    pub roots: Vec<String>,
    pub budget: usize,
    pub hybrid_weight: f64,
    pub grouping: Option<Grouping>,
    pub max_distance: Option<f64>,
    pub max_files: Option<usize>,
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
    pub converter: Arc<dyn Converter>,
    pub embedder: Arc<dyn Embedder>,
    pub tokens: Arc<dyn TokenCounter>,
    pub index: Arc<dyn Index>,
    pub fetcher: Arc<dyn Fetcher>,
    pub files: Arc<dyn Files>,
    pub clock: Arc<dyn Clock>,
    pub ocr: Arc<dyn Ocr>,
    pub languages: Arc<dyn Languages>,
}

pub struct Engine {
    settings: Settings,
    ports: Ports,
}

impl Engine {
    pub fn new(settings: Settings, ports: Ports) -> Self {
        Self { settings, ports }
    }

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

pub use ingest::{file_extension, IngestOutcome, PreparedIngest};
pub use query::QueryRequest;
pub use read::{IndexState, IngestTargets, ReadDocument};

#[cfg(test)]
mod tests;

pub mod ocr;
