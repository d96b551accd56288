//! An engine wired to the fakes, for tests of the use cases built on it.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::fakes::*;
use super::{MapFiles, NoOcr, WordPunctCounter};
use crate::engine::{Engine, Ports, Settings};

/// An engine over the fakes, with handles on the fakes it runs on.
pub struct Fixture {
    pub engine: Engine,
    pub embedder: Arc<FakeEmbedder>,
    pub index: Arc<FakeIndex>,
    pub files: Arc<MapFiles>,
}

/// `/docs` as the one root, two fetchable pages, and `tweak` applied to
/// the settings.
pub fn fixture_with(embedder: FakeEmbedder, tweak: impl FnOnce(&mut Settings)) -> Fixture {
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
        ocr: Arc::new(NoOcr),
        languages: Arc::new(ScriptLanguages),
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

pub fn fixture() -> Fixture {
    fixture_with(FakeEmbedder::new(), |_| {})
}
