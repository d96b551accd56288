//! The engine's use cases over the fakes of [`crate::testing::fakes`], one
//! file per use case. The shared fixture lives here.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use super::*;
use crate::error::EngineError;
use crate::ports::*;
use crate::search::*;
use crate::testing::fakes::*;
use crate::testing::{MapFiles, WordPunctCounter};
use crate::CHUNK_SCHEME;

mod ingest;
mod query;
mod read;
mod sync;

struct Fixture {
    engine: Engine,
    embedder: Arc<FakeEmbedder>,
    index: Arc<FakeIndex>,
    files: Arc<MapFiles>,
}

fn fixture_with(embedder: FakeEmbedder, tweak: impl FnOnce(&mut Settings)) -> Fixture {
    let embedder = Arc::new(embedder);
    let index = Arc::new(FakeIndex::default());
    let files = Arc::new(MapFiles::default());
    let mut pages = BTreeMap::new();
    pages.insert(
        "https://example.com/page".to_string(),
        (
            "<html><title>Public Page</title><body><h1>Welcome</h1>PUBLIC-BODY text.</body></html>"
                .to_string(),
            "text/html",
        ),
    );
    pages.insert(
        "https://example.com/bare".to_string(),
        ("just words, no title".to_string(), "text/plain"),
    );
    let ports = Ports {
        converter: Arc::new(FakeConverter),
        embedder: embedder.clone(),
        tokens: Arc::new(WordPunctCounter),
        index: index.clone(),
        fetcher: Arc::new(FakeFetcher(pages)),
        files: files.clone(),
        clock: Arc::new(FakeClock),
        ocr: Arc::new(crate::testing::NoOcr),
    };
    let mut settings = Settings {
        roots: vec!["/docs".into()],
        budget: 110,
        hybrid_weight: 0.6,
        grouping: None,
        max_distance: None,
        max_files: None,
        max_file_size: 1_000_000,
        ocr_min_chars_per_page: 25,
    };
    tweak(&mut settings);
    Fixture {
        engine: Engine::new(settings, ports),
        embedder,
        index,
        files,
    }
}

fn fixture() -> Fixture {
    fixture_with(FakeEmbedder::new(), |_| {})
}

fn query<'a>(q: &'a str, k: i64, scope: &'a [String]) -> QueryRequest<'a> {
    QueryRequest {
        query: q,
        top_k: k,
        scope,
        explain: false,
    }
}

const GUIDE: &str =
    "# Setup Guide\n\nInstall the package with apt. Then restart the service.\n\n## Errors\n\n\
    The error ERR_CONN_RESET means the server closed the socket. Retry after a pause.\n\n\
    Other errors are logged. Check the log file for details.";
