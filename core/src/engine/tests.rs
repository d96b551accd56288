//! The engine's logic over small in-memory stand-ins for the ports. The
//! hashing embedder tests the engine, not embeddings.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::*;
use crate::chunk::Chunk;
use crate::ports::{
    Candidate, ChunkKey, ConvertError, Converted, FetchError, Fetched, IndexError, IndexStats,
    IndexView,
};
use crate::testing::MapFiles;
use crate::testing::WordPunctCounter;

const DIM: usize = 16;

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Bag of hashed words, normalised: texts sharing words are close.
struct HashEmbedder {
    calls: AtomicUsize,
    embedded: AtomicUsize,
    unavailable: bool,
    /// Stands for a changed model (same width, other id).
    other_model: std::sync::atomic::AtomicBool,
}

impl HashEmbedder {
    fn new() -> Self {
        Self {
            calls: AtomicUsize::new(0),
            embedded: AtomicUsize::new(0),
            unavailable: false,
            other_model: Default::default(),
        }
    }
    fn vector(text: &str) -> Vec<f32> {
        let mut v = [0f32; DIM];
        for w in words(text) {
            let h = w
                .bytes()
                .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
            v[h as usize % DIM] += 1.0;
        }
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-9);
        v.iter().map(|x| x / n).collect()
    }
}

impl Embedder for HashEmbedder {
    fn model_id(&self) -> &str {
        if self.other_model.load(Ordering::SeqCst) {
            "hash-16b"
        } else {
            "hash-16"
        }
    }
    fn ready(&self) -> Result<(), EmbedError> {
        match self.unavailable {
            true => Err(EmbedError::Unavailable {
                cause: None,
                reason: "no model files at /nowhere".into(),
            }),
            false => Ok(()),
        }
    }
    fn dimension(&self) -> usize {
        DIM
    }
    fn embed_documents(&self, texts: &[&str]) -> Result<Embeddings, EmbedError> {
        if self.unavailable {
            return Err(EmbedError::Unavailable {
                cause: None,
                reason: "no model files at /nowhere".into(),
            });
        }
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.embedded.fetch_add(texts.len(), Ordering::SeqCst);
        let mut e = Embeddings::new(DIM);
        for t in texts {
            e.push(&Self::vector(t));
        }
        Ok(e)
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        if self.unavailable {
            return Err(EmbedError::Unavailable {
                cause: None,
                reason: "no model files at /nowhere".into(),
            });
        }
        Ok(Self::vector(text))
    }
}

/// Markdown and text pass through; "html" keeps text between tags and the `<title>`.
struct PassConverter;

impl Converter for PassConverter {
    fn convert(&self, r: ConvertRequest<'_>) -> Result<Converted, ConvertError> {
        let text = String::from_utf8(r.bytes.to_vec()).map_err(|_| ConvertError::Malformed {
            cause: None,
            name: r.name.into(),
            reason: "not UTF-8".into(),
        })?;
        match r.format {
            "html" => {
                let title = text
                    .split_once("<title>")
                    .and_then(|(_, rest)| rest.split_once("</title>"))
                    .map(|(t, _)| t.to_string());
                let body = text
                    .split_once("<body>")
                    .map_or(text.as_str(), |(_, b)| b)
                    .replace("</body>", "");
                Ok(Converted {
                    markdown: body.replace("<h1>", "# ").replace("</h1>", "\n\n"),
                    metadata_title: title,
                    page_chars: Vec::new(),
                })
            }
            "md" | "txt" | "markdown" => Ok(Converted {
                markdown: text,
                metadata_title: None,
                page_chars: Vec::new(),
            }),
            other => Err(ConvertError::Unsupported {
                format: other.into(),
            }),
        }
    }
}

struct MapFetcher(BTreeMap<String, (String, &'static str)>);

impl Fetcher for MapFetcher {
    fn fetch(&self, url: &str) -> Result<Fetched, FetchError> {
        let (body, ct) = self.0.get(url).ok_or_else(|| FetchError::Failed {
            cause: None,
            reason: format!("404 for {url}"),
        })?;
        Ok(Fetched {
            bytes: body.as_bytes().to_vec(),
            content_type: Some(ct.to_string()),
            final_url: url.into(),
        })
    }
}

struct FixedClock;

impl Clock for FixedClock {
    fn now_unix_seconds(&self) -> i64 {
        1_796_004_692
    }
}

#[derive(Default)]
struct Stored {
    record: Option<SourceRecord>,
    chunks: Vec<Chunk>,
    vectors: Option<Embeddings>,
}

/// Brute-force index: exact vector scan, keyword score = shared words.
#[derive(Default)]
struct MemIndex {
    sources: Mutex<BTreeMap<String, Stored>>,
    /// Vectors of `set_vectors` batches until a source's last batch.
    pending: Mutex<BTreeMap<String, Embeddings>>,
    windows: Mutex<Vec<usize>>,
    searches: AtomicUsize,
    keyword_fails: std::sync::atomic::AtomicBool,
    /// Calls of `settle`, what it announces (it has work) and whether it fails.
    settled: AtomicUsize,
    settle_says: Mutex<Option<String>>,
    settle_fails: std::sync::atomic::AtomicBool,
}

/// Reads live: the stand-in has no generations to pin.
struct LiveView<'a>(&'a MemIndex);

impl IndexView for LiveView<'_> {
    fn vector_search(
        &self,
        q: &[f32],
        k: usize,
        scope: &Scope,
    ) -> Result<Vec<Candidate>, IndexError> {
        self.0.searches.fetch_add(1, Ordering::SeqCst);
        self.0.windows.lock().unwrap().push(k);
        let map = self.0.sources.lock().unwrap();
        let mut out = Vec::new();
        for (src, s) in map.iter().filter(|(src, _)| scope.matches(src)) {
            let Some(v) = &s.vectors else { continue };
            for c in &s.chunks {
                let row = v.row(c.index as usize);
                let dot: f32 = row.iter().zip(q).map(|(a, b)| a * b).sum();
                out.push(Candidate {
                    key: ChunkKey {
                        source: src.clone(),
                        index: c.index,
                    },
                    value: 2.0 - 2.0 * dot,
                });
            }
        }
        out.sort_by(|a, b| a.value.total_cmp(&b.value));
        out.truncate(k);
        Ok(out)
    }

    fn keyword_search(
        &self,
        q: &str,
        k: usize,
        scope: &Scope,
    ) -> Result<Vec<Candidate>, IndexError> {
        if self.0.keyword_fails.load(Ordering::SeqCst) {
            return Err(IndexError::Storage {
                cause: None,
                reason: "postings unreadable".into(),
            });
        }
        self.0.searches.fetch_add(1, Ordering::SeqCst);
        let terms = words(q);
        let map = self.0.sources.lock().unwrap();
        let mut out = Vec::new();
        for (src, s) in map.iter().filter(|(src, _)| scope.matches(src)) {
            let title = s
                .record
                .as_ref()
                .map(|r| r.title.clone())
                .unwrap_or_default();
            for c in &s.chunks {
                let have = words(&format!("{} {title}", c.text));
                let score = terms.iter().filter(|t| have.contains(t)).count();
                if score > 0 {
                    out.push(Candidate {
                        key: ChunkKey {
                            source: src.clone(),
                            index: c.index,
                        },
                        value: score as f32,
                    });
                }
            }
        }
        out.sort_by(|a, b| b.value.total_cmp(&a.value));
        out.truncate(k);
        Ok(out)
    }

    fn source(&self, source: &str) -> Result<Option<SourceRecord>, IndexError> {
        Ok(self
            .0
            .sources
            .lock()
            .unwrap()
            .get(source)
            .and_then(|s| s.record.clone()))
    }

    fn sources(&self, scope: &Scope) -> Result<Vec<SourceRecord>, IndexError> {
        Ok(self
            .0
            .sources
            .lock()
            .unwrap()
            .values()
            .filter_map(|s| s.record.clone())
            .filter(|r| scope.matches(&r.source))
            .collect())
    }

    fn chunks(
        &self,
        source: &str,
        range: std::ops::RangeInclusive<u32>,
    ) -> Result<Vec<Chunk>, IndexError> {
        let map = self.0.sources.lock().unwrap();
        Ok(map
            .get(source)
            .map(|s| {
                s.chunks
                    .iter()
                    .filter(|c| range.contains(&c.index))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default())
    }

    fn get_chunks(&self, keys: &[ChunkKey]) -> Result<Vec<Option<Chunk>>, IndexError> {
        let map = self.0.sources.lock().unwrap();
        Ok(keys
            .iter()
            .map(|k| {
                map.get(&k.source)
                    .and_then(|s| s.chunks.get(k.index as usize).cloned())
            })
            .collect())
    }

    fn parent_chunks(&self, source: &str, parent: u32) -> Result<Vec<Chunk>, IndexError> {
        let map = self.0.sources.lock().unwrap();
        Ok(map
            .get(source)
            .map(|s| {
                s.chunks
                    .iter()
                    .filter(|c| c.parent == parent)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default())
    }

    fn stats(&self) -> Result<IndexStats, IndexError> {
        let map = self.0.sources.lock().unwrap();
        let chunk_count = map.values().map(|s| s.chunks.len() as u64).sum();
        let vectorless_chunk_count = map
            .values()
            .filter(|s| s.vectors.is_none())
            .map(|s| s.chunks.len() as u64)
            .sum();
        Ok(IndexStats {
            chunk_count,
            source_count: map.len() as u64,
            vectorless_chunk_count,
            ..Default::default()
        })
    }
    fn vector_model(&self) -> Option<String> {
        let map = self.0.sources.lock().unwrap();
        map.values()
            .filter(|s| s.vectors.is_some())
            .find_map(|s| s.record.as_ref()?.embedded_with.clone())
    }
}

impl Index for MemIndex {
    fn read(&self) -> Result<Box<dyn IndexView + '_>, IndexError> {
        Ok(Box::new(LiveView(self)))
    }
    fn settle(&self, announce: &mut dyn FnMut(&str)) -> Result<(), IndexError> {
        self.settled.fetch_add(1, Ordering::SeqCst);
        if let Some(line) = self.settle_says.lock().unwrap().as_deref() {
            announce(line);
        }
        if self.settle_fails.load(Ordering::SeqCst) {
            return Err(IndexError::Storage {
                cause: None,
                reason: "the graph build ran out of memory".into(),
            });
        }
        Ok(())
    }
    fn replace_source(
        &self,
        record: SourceRecord,
        chunks: Vec<Chunk>,
        vectors: Option<Embeddings>,
    ) -> Result<(), IndexError> {
        let source = record.source.clone();
        let mut map = self.sources.lock().unwrap();
        // Vectors of another model switch the index: the others' go.
        if vectors.is_some() {
            for s in map.values_mut() {
                if s.record.as_ref().and_then(|r| r.embedded_with.as_ref())
                    != record.embedded_with.as_ref()
                {
                    s.vectors = None;
                }
            }
        }
        map.insert(
            source,
            Stored {
                record: Some(record),
                chunks,
                vectors,
            },
        );
        Ok(())
    }

    fn set_vectors(
        &self,
        source: &str,
        model_id: &str,
        first: u32,
        texts: &[&str],
        vectors: Embeddings,
        complete: bool,
    ) -> Result<usize, IndexError> {
        let mut map = self.sources.lock().unwrap();
        let Some(stored) = map.get(source) else {
            return Ok(0);
        };
        let same = texts.iter().enumerate().all(|(k, t)| {
            stored
                .chunks
                .get(first as usize + k)
                .is_some_and(|c| c.text == *t)
        });
        if !same {
            return Err(IndexError::Storage {
                cause: None,
                reason: format!("{source} changed while it was embedded"),
            });
        }
        // Batches gather until the last; then the source has all its vectors.
        let mut pending = self.pending.lock().unwrap();
        if first == 0 {
            pending.remove(source); // a run that starts over
        }
        let rows = pending
            .entry(source.to_string())
            .or_insert_with(|| Embeddings::new(vectors.dim));
        rows.data.extend_from_slice(&vectors.data);
        if complete {
            let rows = pending.remove(source).unwrap();
            for s in map.values_mut() {
                if s.record.as_ref().and_then(|r| r.embedded_with.as_deref()) != Some(model_id) {
                    s.vectors = None;
                }
            }
            let stored = map.get_mut(source).unwrap();
            if let Some(r) = stored.record.as_mut() {
                r.embedded_with = Some(model_id.to_string());
            }
            stored.vectors = Some(rows);
        }
        Ok(texts.len())
    }

    fn delete_source(&self, source: &str) -> Result<usize, IndexError> {
        Ok(self
            .sources
            .lock()
            .unwrap()
            .remove(source)
            .map_or(0, |s| s.chunks.len()))
    }

    fn move_source(&self, _from: &str, _to: &str, _mtime: f64) -> Result<usize, IndexError> {
        Ok(0)
    }

    fn cached_vectors(&self, model_id: &str, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
        let map = self.sources.lock().unwrap();
        texts
            .iter()
            .map(|t| {
                map.values().find_map(|s| {
                    let v = s.vectors.as_ref()?;
                    (s.record.as_ref()?.embedded_with.as_deref() == Some(model_id)).then_some(())?;
                    s.chunks
                        .iter()
                        .find(|c| c.text == *t)
                        .map(|c| v.row(c.index as usize).to_vec())
                })
            })
            .collect()
    }
}

struct Fixture {
    engine: Engine,
    embedder: Arc<HashEmbedder>,
    index: Arc<MemIndex>,
    files: Arc<MapFiles>,
}

fn fixture_with(embedder: HashEmbedder, tweak: impl FnOnce(&mut Settings)) -> Fixture {
    let embedder = Arc::new(embedder);
    let index = Arc::new(MemIndex::default());
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
        converter: Arc::new(PassConverter),
        embedder: embedder.clone(),
        tokens: Arc::new(WordPunctCounter),
        index: index.clone(),
        fetcher: Arc::new(MapFetcher(pages)),
        files: files.clone(),
        clock: Arc::new(FixedClock),
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
    fixture_with(HashEmbedder::new(), |_| {})
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

#[test]
fn ingest_file_round_trip() {
    let f = fixture();
    let out = f
        .engine
        .ingest_file("/docs/guide.md", GUIDE.as_bytes(), "abc123", 1700000000.5)
        .unwrap();
    assert_eq!(
        (out.source.as_str(), out.title.as_str()),
        ("/docs/guide.md", "Setup Guide")
    );
    assert!(out.chunk_count >= 2);
    assert_eq!(out.notice, None);
    let rec = f.index.source("/docs/guide.md").unwrap().unwrap();
    assert_eq!(
        (rec.file_hash.as_str(), rec.mtime, rec.source_type),
        ("abc123", 1700000000.5, SourceType::File)
    );
    assert_eq!(rec.ingested_at, "2026-11-30T02:11:32Z");
    assert_eq!(rec.scheme_version, CHUNK_SCHEME);
    assert_eq!(rec.embedded_with.as_deref(), Some("hash-16"));
    assert!(!rec.title_seeded, "the H1 already holds the title");
    assert_eq!(rec.chunk_count as usize, out.chunk_count);
}

#[test]
fn file_errors_name_the_file_and_the_fix() {
    let f = fixture();
    let e = f
        .engine
        .ingest_file("/docs/script.py", b"print()", "", 0.0)
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("Unsupported file extension '.py'")
            && msg.contains(".md")
            && msg.contains(".pdf"),
        "{msg}"
    );
    let msg = f
        .engine
        .ingest_file("/docs/photo.JPG", b"..", "", 0.0)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("is an image") && msg.contains("OCR") && !msg.contains("Unsupported"),
        "{msg}"
    );
    let big = vec![b'a'; 1_000_001];
    let msg = f
        .engine
        .ingest_file("/docs/big.txt", &big, "", 0.0)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("1000001 bytes") && msg.contains("MAX_FILE_SIZE is 1000000"),
        "{msg}"
    );
    let e = f
        .engine
        .ingest_file("/docs/blank.md", b"  \n\n ", "", 0.0)
        .unwrap_err();
    assert_eq!(
        e,
        EngineError::Empty {
            source: "/docs/blank.md".into()
        }
    );
    assert_eq!(
        f.index.stats().unwrap().chunk_count,
        0,
        "nothing stored on failure"
    );
}

#[test]
fn filename_title_is_seeded_and_not_doubled_on_reingest() {
    let f = fixture();
    let body = "# 1 Общие положения\n\nТекст положения.";
    f.engine
        .ingest_file("/docs/Политика_премирования.md", body.as_bytes(), "h", 1.0)
        .unwrap();
    let first = f
        .index
        .chunks("/docs/Политика_премирования.md", 0..=10)
        .unwrap();
    assert!(first[0].text.starts_with("# Политика премирования\n\n"));
    f.engine
        .ingest_file("/docs/Политика_премирования.md", body.as_bytes(), "h", 1.0)
        .unwrap();
    let second = f
        .index
        .chunks("/docs/Политика_премирования.md", 0..=10)
        .unwrap();
    assert_eq!(first, second);
    let all: String = second.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(all.matches("# Политика премирования").count(), 1);
    // read_file gives the document back without the seed.
    let read = f
        .engine
        .read_document("/docs/Политика_премирования.md")
        .unwrap();
    assert_eq!(read.text, body);
}

#[test]
fn ingest_data_titles_and_formats() {
    let f = fixture();
    let out = f
        .engine
        .ingest_data("note-1", "Plain words here.", "text", Some("  My Note "))
        .unwrap();
    assert_eq!(out.title, "My Note");
    assert!(f.index.chunks("note-1", 0..=0).unwrap()[0]
        .text
        .starts_with("# My Note\n\n"));

    let out = f
        .engine
        .ingest_data("note-2", "# From H1\n\nBody.", "markdown", None)
        .unwrap();
    assert_eq!(out.title, "From H1");

    let out = f
        .engine
        .ingest_data(
            "page-1",
            "<title>Html T</title><body>Body text.</body>",
            "html",
            None,
        )
        .unwrap();
    assert_eq!(out.title, "Html T");

    let out = f
        .engine
        .ingest_data("note-3", "No title at all.", "text", None)
        .unwrap();
    assert_eq!(out.title, "note-3");
    assert_eq!(
        f.index.chunks("note-3", 0..=0).unwrap()[0].text,
        "No title at all.",
        "not seeded"
    );
    assert_eq!(
        f.index.source("note-3").unwrap().unwrap().source_type,
        SourceType::Data
    );

    let e = f.engine.ingest_data("x", "y", "pdf", None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "format must be one of ('text', 'markdown', 'html'), got 'pdf'"
    );
}

#[test]
fn ingest_url_defaults_and_titles() {
    let f = fixture();
    let out = f
        .engine
        .ingest_url("https://example.com/page", None, None)
        .unwrap();
    assert_eq!(
        (out.source.as_str(), out.title.as_str()),
        ("https://example.com/page", "Public Page")
    );
    assert_eq!(
        f.index
            .source("https://example.com/page")
            .unwrap()
            .unwrap()
            .source_type,
        SourceType::Url
    );
    let out = f
        .engine
        .ingest_url("https://example.com/bare", Some("my-id"), None)
        .unwrap();
    assert_eq!(
        (out.source.as_str(), out.title.as_str()),
        ("my-id", "my-id")
    );
    assert_eq!(
        f.index.chunks("my-id", 0..=0).unwrap()[0].text,
        "just words, no title"
    );
    let e = f
        .engine
        .ingest_url("https://example.com/missing", None, None)
        .unwrap_err();
    assert!(e.to_string().contains("404"));
}

#[test]
fn stored_vectors_equal_embeddings_of_stored_texts_and_unchanged_chunks_are_reused() {
    let f = fixture();
    f.engine
        .ingest_file("/docs/guide.md", GUIDE.as_bytes(), "h1", 1.0)
        .unwrap();
    let embedded_first = f.embedder.embedded.load(Ordering::SeqCst);
    let chunks = f.index.chunks("/docs/guide.md", 0..=100).unwrap();
    assert_eq!(
        embedded_first,
        chunks.len(),
        "one batch of every final chunk text"
    );
    {
        let map = f.index.sources.lock().unwrap();
        let v = map["/docs/guide.md"].vectors.as_ref().unwrap();
        for c in &chunks {
            assert_eq!(
                v.row(c.index as usize),
                HashEmbedder::vector(&c.text).as_slice()
            );
        }
    }
    let edited = GUIDE.replace(
        "Check the log file for details.",
        "Check the journal for details.",
    );
    f.engine
        .ingest_file("/docs/guide.md", edited.as_bytes(), "h2", 2.0)
        .unwrap();
    let embedded_again = f.embedder.embedded.load(Ordering::SeqCst) - embedded_first;
    assert_eq!(
        embedded_again, 1,
        "only the changed chunk is embedded again"
    );
}

#[test]
fn without_a_model_ingest_stores_text_and_query_is_keyword_only() {
    let mut e = HashEmbedder::new();
    e.unavailable = true;
    let f = fixture_with(e, |_| {});
    let out = f
        .engine
        .ingest_file("/docs/guide.md", GUIDE.as_bytes(), "h", 1.0)
        .unwrap();
    assert!(out.notice.as_deref().unwrap().contains("without vectors"));
    assert_eq!(
        f.index
            .source("/docs/guide.md")
            .unwrap()
            .unwrap()
            .embedded_with,
        None
    );
    let r = f.engine.query(query("ERR_CONN_RESET", 5, &[])).unwrap();
    assert_eq!(r.results[0].source, "/docs/guide.md");
    assert!(r.results[0].text.contains("ERR_CONN_RESET"));
    assert_eq!(r.results[0].distance, None);
    let notice = r.notice.unwrap();
    assert!(
        notice.contains("keyword-only") && notice.contains("could not be loaded"),
        "{notice}"
    );
}

#[test]
fn query_validation_happens_before_any_search() {
    let f = fixture();
    assert_eq!(
        f.engine.query(query("  ", 8, &[])).unwrap_err().to_string(),
        "query must not be empty"
    );
    for k in [0, -5] {
        let msg = f.engine.query(query("x", k, &[])).unwrap_err().to_string();
        assert_eq!(msg, format!("topK must be at least 1, got {k}"));
    }
    assert!(matches!(
        f.engine.query(query("x", 8, &["".into()])),
        Err(EngineError::Query(QueryError::EmptyScope))
    ));
    assert_eq!(f.index.searches.load(Ordering::SeqCst), 0);
    f.engine.query(query("x", 100_000_000, &[])).unwrap();
    assert_eq!(
        f.index.windows.lock().unwrap().as_slice(),
        [400],
        "topK clamped to 100 → window 400"
    );
}

#[test]
fn hits_carry_sources_display_paths_and_shared_parents() {
    let f = fixture_with(HashEmbedder::new(), |s| s.budget = 30);
    f.engine
        .ingest_file("/docs/guide.md", GUIDE.as_bytes(), "h", 1.0)
        .unwrap();
    f.engine
        .ingest_file(
            "/docs/sub/other.md",
            b"# Other\n\nUnrelated gardening notes about tomatoes.",
            "h",
            1.0,
        )
        .unwrap();
    let r = f
        .engine
        .query(query("error socket server retry log", 8, &[]))
        .unwrap();
    assert!(r.results.len() >= 3);
    assert_eq!(r.results[0].source, "/docs/guide.md");
    assert_eq!(r.sources[0].source, "/docs/guide.md");
    assert_eq!(r.sources[0].display_path, "guide.md");
    assert_eq!(
        r.sources.iter().map(|s| s.hits).sum::<usize>(),
        r.results.len()
    );
    assert!(
        r.parents.len() < r.results.len(),
        "several hits share a parent"
    );
    for hit in &r.results {
        let pid = hit.parent_id.as_ref().unwrap();
        assert!(pid.starts_with(&format!("{}#p", hit.source)));
        let (_, text) = r
            .parents
            .iter()
            .find(|(id, _)| id == pid)
            .expect("parent of every hit");
        let body = hit.text.split("\n\n").last().unwrap();
        assert!(text.contains(body), "hit text lies in its section");
    }
    let ids: Vec<&String> = r.parents.iter().map(|(id, _)| id).collect();
    let mut dedup = ids.clone();
    dedup.dedup();
    assert_eq!(ids, dedup, "each parent once");
    assert_eq!(r.notice, None);
}

#[test]
fn keyword_weight_lifts_exact_identifiers() {
    let f = fixture_with(HashEmbedder::new(), |s| s.hybrid_weight = 1.0);
    f.engine
        .ingest_file("/docs/guide.md", GUIDE.as_bytes(), "h", 1.0)
        .unwrap();
    let r = f.engine.query(query("ERR_CONN_RESET", 3, &[])).unwrap();
    assert!(r.results[0].text.contains("ERR_CONN_RESET"));
}

#[test]
fn scope_limits_results_and_explains_an_empty_scope() {
    let f = fixture();
    f.engine
        .ingest_file("/docs/proj/a.md", b"alpha beta gamma", "h", 1.0)
        .unwrap();
    f.engine
        .ingest_file("/docs/project-secret/b.md", b"alpha beta gamma", "h", 1.0)
        .unwrap();
    let scope = vec!["/docs/proj".to_string()];
    let r = f.engine.query(query("alpha", 8, &scope)).unwrap();
    assert!(!r.results.is_empty());
    assert!(r.results.iter().all(|h| h.source == "/docs/proj/a.md"));

    let scope = vec!["proj".to_string()];
    let r = f.engine.query(query("alpha", 8, &scope)).unwrap();
    assert!(r.results.is_empty());
    let notice = r.notice.unwrap();
    assert!(
        notice.contains("'proj'") && notice.contains("`source`") && notice.contains("displayPath"),
        "{notice}"
    );
}

#[test]
fn an_empty_index_says_how_to_fill_it() {
    let f = fixture();
    let r = f.engine.query(query("anything", 8, &[])).unwrap();
    assert!(r.results.is_empty() && r.sources.is_empty() && r.parents.is_empty());
    assert!(r.notice.unwrap().contains("sync_start"));
}

#[test]
fn a_scope_with_documents_but_no_match_has_no_notice() {
    let f = fixture_with(HashEmbedder::new(), |s| s.max_distance = Some(0.0));
    f.engine
        .ingest_file("/docs/a.md", b"alpha", "h", 1.0)
        .unwrap();
    let scope = vec!["/docs".to_string()];
    let r = f.engine.query(query("zzz", 8, &scope)).unwrap();
    assert!(r.results.is_empty());
    assert_eq!(r.notice, None);
}

/// Three sources with the same text.
fn three_alike(f: &Fixture) {
    for i in 0..3 {
        f.engine
            .ingest_file(
                &format!("/docs/{i}.md"),
                b"shared words everywhere",
                "h",
                1.0,
            )
            .unwrap();
    }
}

#[test]
fn max_files_and_top_k_cut_results() {
    let f = fixture_with(HashEmbedder::new(), |s| s.max_files = Some(1));
    three_alike(&f);
    let r = f.engine.query(query("shared words", 8, &[])).unwrap();
    assert_eq!(r.sources.len(), 1);
    let f = fixture();
    three_alike(&f);
    assert_eq!(
        f.engine
            .query(query("shared words", 1, &[]))
            .unwrap()
            .results
            .len(),
        1
    );
}

#[test]
fn neighbors_read_and_delete() {
    let f = fixture_with(HashEmbedder::new(), |s| s.budget = 16);
    let body: String = (0..40)
        .map(|i| format!("Sentence number {i} here."))
        .collect::<Vec<_>>()
        .join(" ");
    f.engine.ingest_data("long", &body, "text", None).unwrap();
    let n = f.engine.neighbors("long", 15, 2, 2).unwrap();
    assert_eq!(
        n.iter().map(|r| r.chunk_index).collect::<Vec<_>>(),
        [13, 14, 15, 16, 17]
    );
    assert!(n.iter().all(|r| r.score == 0.0 && r.distance.is_none()));
    let n = f.engine.neighbors("long", 0, 3, 1).unwrap();
    assert_eq!(n.iter().map(|r| r.chunk_index).collect::<Vec<_>>(), [0, 1]);
    assert!(f.engine.neighbors("missing", 0, 1, 1).unwrap().is_empty());

    let doc = f.engine.read_document("long").unwrap();
    assert_eq!(
        doc.text.split_whitespace().collect::<Vec<_>>(),
        body.split_whitespace().collect::<Vec<_>>()
    );

    assert!(f.engine.delete("long").unwrap() > 10);
    let e = f.engine.delete("long").unwrap_err();
    assert!(e.to_string().starts_with("Source not found in index: long"));
    assert!(matches!(
        f.engine.read_document("long"),
        Err(EngineError::NotFound { .. })
    ));
}

#[test]
fn extensions_and_fetched_formats() {
    assert_eq!(file_extension("/a/b.Tar.PDF"), "pdf");
    assert_eq!(file_extension("/a/.hidden"), "");
    assert_eq!(file_extension("/a/noext"), "");
    assert_eq!(
        format_for_content_type(Some("text/html"), "https://x/a.pdf"),
        "html"
    );
    assert_eq!(format_for_content_type(None, "https://x/a.pdf?x=1"), "pdf");
    assert_eq!(format_for_content_type(None, "https://x/REPORT.PDF"), "pdf");
    assert_eq!(
        format_for_content_type(Some("application/octet-stream"), "https://x/"),
        "html"
    );
}

// ------------------------------------------------------------ sync

fn states(f: &Fixture) -> Vec<&'static str> {
    f.engine
        .list_files(&[])
        .unwrap()
        .files
        .iter()
        .map(|x| x.state)
        .collect()
}

fn sync(f: &Fixture) -> crate::sync::SyncReport {
    f.engine
        .sync(None, &|_| {}, &std::sync::atomic::AtomicBool::new(false))
        .unwrap()
}

#[test]
fn a_finished_sync_settles_the_index_and_a_cancelled_one_leaves_it_to_the_next() {
    let f = fixture();
    f.files.put("/docs/a.md", "# Alpha\n\nApples are red.", 1.0);
    let lines = Mutex::new(Vec::new());
    let cancelled = std::sync::atomic::AtomicBool::new(true);
    let progress = |s: crate::sync::run::Step<'_>| lines.lock().unwrap().push(s.line.to_string());
    assert!(f.engine.sync(None, &progress, &cancelled).is_err());
    assert_eq!(f.index.settled.load(Ordering::SeqCst), 0);

    let r = sync(&f);
    assert_eq!(f.index.settled.load(Ordering::SeqCst), 1);
    *f.index.settle_says.lock().unwrap() = Some("building the stand-in's graph".into());
    assert!(r.notices.is_empty(), "{:?}", r.notices);
    f.engine
        .sync(None, &progress, &std::sync::atomic::AtomicBool::new(false))
        .unwrap();
    assert!(lines
        .lock()
        .unwrap()
        .contains(&"building the stand-in's graph".to_string()));

    // A failed upkeep is a notice: the sync's files are in all the same.
    f.index.settle_fails.store(true, Ordering::SeqCst);
    f.files.put("/docs/b.md", "# Beta\n\nBananas.", 1.0);
    let r = sync(&f);
    assert_eq!(r.counts.ingested, 1);
    assert!(
        r.notices
            .iter()
            .any(|n| n.contains("the graph build ran out of memory") && n.contains("next sync")),
        "{:?}",
        r.notices
    );
}

#[test]
fn a_model_change_is_a_re_embed_that_sync_and_list_files_agree_on() {
    let f = fixture();
    f.files.put("/docs/a.md", "# Alpha\n\nApples are red.", 1.0);
    f.files
        .put("/docs/b.md", "# Beta\n\nBananas are yellow.", 1.0);
    let r = sync(&f);
    assert_eq!((r.counts.scanned, r.counts.ingested), (2, 2));
    assert_eq!(states(&f), ["ingested", "ingested"]);

    f.embedder.other_model.store(true, Ordering::SeqCst);
    assert_eq!(
        states(&f),
        ["stale", "stale"],
        "list_files sees the model change"
    );
    let q = f.engine.query(query("apples", 5, &[])).unwrap();
    assert!(
        q.notice.as_deref().unwrap_or("").contains("another model"),
        "old vectors are not compared with the new model's query: {:?}",
        q.notice
    );
    assert_eq!(
        q.results[0].source, "/docs/a.md",
        "keyword side still answers"
    );

    let embedded_before = f.embedder.embedded.load(Ordering::SeqCst);
    let r = sync(&f);
    assert_eq!(
        (r.counts.reembedded, r.counts.ingested, r.counts.failed),
        (2, 0, 0),
        "{r:?}"
    );
    assert!(f.embedder.embedded.load(Ordering::SeqCst) > embedded_before);
    assert_eq!(states(&f), ["ingested", "ingested"]);
    let rec = f.index.source("/docs/b.md").unwrap().unwrap();
    assert_eq!(rec.embedded_with.as_deref(), Some("hash-16b"));
    let q = f.engine.query(query("apples", 5, &[])).unwrap();
    assert_eq!(q.notice, None);
    assert!(q.results[0].distance.is_some(), "vectors answer again");
    let r = sync(&f);
    assert_eq!((r.counts.skipped, r.counts.reembedded), (2, 0));
}

#[test]
fn sync_reports_too_large_files_moves_and_deletions() {
    let f = fixture_with(HashEmbedder::new(), |s| s.max_file_size = 40);
    f.files.put("/docs/a/soup.md", "# Soup\n\nLeek soup.", 1.0);
    f.files.put("/docs/gone.md", "# Gone\n\nSoon gone.", 1.0);
    f.files.put("/docs/big.md", &"x".repeat(41), 1.0);
    let r = sync(&f);
    assert_eq!((r.counts.ingested, r.counts.failed), (2, 1));
    assert!(
        r.errors[0].1.contains("MAX_FILE_SIZE is 40"),
        "{:?}",
        r.errors
    );

    f.files.remove("/docs/a/soup.md");
    f.files.remove("/docs/gone.md");
    f.files.put("/docs/b/soup.md", "# Soup\n\nLeek soup.", 2.0);
    let r = sync(&f);
    // The stand-in index cannot move, so the move falls back to an ingest.
    assert_eq!((r.counts.deleted, r.counts.ingested), (2, 1), "{r:?}");
    assert_eq!(
        states(&f),
        ["ingested", "not_ingested"],
        "b/soup.md, big.md"
    );
}

#[test]
fn a_cancelled_sync_stops_between_files_and_keeps_what_it_did() {
    let f = fixture();
    for i in 0..5 {
        f.files.put(
            &format!("/docs/{i}.md"),
            &format!("# N{i}\n\nnote {i}"),
            1.0,
        );
    }
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let err = f
        .engine
        .sync(
            None,
            &|step| {
                if step.done == 2 {
                    cancel.store(true, Ordering::SeqCst)
                }
            },
            &cancel,
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("cancelled after 2 of 5 files"),
        "{err}"
    );
    // The two kept files were stored keyword-only (their embedding phase
    // never came): the next sync embeds them without converting them again.
    let r = sync(&f);
    assert_eq!((r.counts.reembedded, r.counts.ingested), (2, 3), "{r:?}");
    let r = sync(&f);
    assert_eq!(r.counts.skipped, 5);
}

#[test]
fn a_failing_keyword_side_is_a_notice_not_silence() {
    let f = fixture();
    f.engine
        .ingest_file("/docs/guide.md", GUIDE.as_bytes(), "h", 1.0)
        .unwrap();
    f.index.keyword_fails.store(true, Ordering::SeqCst);
    let q = f.engine.query(query("ERR_CONN_RESET", 5, &[])).unwrap();
    assert!(!q.results.is_empty(), "the vector side still answers");
    let notice = q.notice.unwrap_or_default();
    assert!(
        notice.contains("keyword search failed") && notice.contains("postings unreadable"),
        "{notice}"
    );
}

#[test]
fn errors_keep_their_cause() {
    let f = fixture();
    let err = f.engine.ingest_path("/docs/missing.md").unwrap_err();
    assert!(
        err.to_string().contains("cannot read /docs/missing.md"),
        "{err}"
    );
    let file = std::error::Error::source(&err).expect("the file error");
    let os = file.source().expect("the OS error");
    assert_eq!(
        os.downcast_ref::<std::io::Error>().map(|e| e.kind()),
        Some(std::io::ErrorKind::NotFound)
    );
}

#[test]
fn a_sync_without_a_model_says_so_and_stores_text_only() {
    let mut e = HashEmbedder::new();
    e.unavailable = true;
    let f = fixture_with(e, |_| {});
    f.files.put("/docs/a.md", "# Alpha\n\nApples are red.", 1.0);
    let r = sync(&f);
    assert_eq!(r.counts.ingested, 1);
    let notice = r.notices.join(" ");
    assert!(
        notice.contains("without the embedding model") && notice.contains("MODEL_PATH"),
        "{notice}"
    );
    let rec = f.index.source("/docs/a.md").unwrap().unwrap();
    assert_eq!(rec.embedded_with, None);
}

#[test]
fn explain_gives_each_result_its_ranks_and_fused_score() {
    let f = fixture();
    f.engine
        .ingest_file("/docs/guide.md", GUIDE.as_bytes(), "h", 1.0)
        .unwrap();
    let plain = f
        .engine
        .query(query("ERR_CONN_RESET socket", 5, &[]))
        .unwrap();
    assert_eq!(plain.explain, None, "no explain unless asked");
    let mut request = query("ERR_CONN_RESET socket", 5, &[]);
    request.explain = true;
    let r = f.engine.query(request).unwrap();
    let explain = r.explain.expect("explained");
    assert_eq!(explain.len(), r.results.len());
    for (hit, e) in r.results.iter().zip(&explain) {
        assert_eq!(e.fused, hit.score);
        assert_eq!(e.keyword_weight, 0.6);
        assert_eq!(e.vector.map(|v| v.score as f32), hit.distance);
    }
    assert!(
        explain.windows(2).all(|w| w[0].fused >= w[1].fused),
        "results in fused order"
    );
    // Chunks follow their document: the j-th of one document scores the
    // first one's score × ½^j.
    let mut seen: HashMap<&str, (f64, i32)> = HashMap::new();
    let mut followers = 0;
    for (hit, e) in r.results.iter().zip(&explain) {
        let (first, j) = seen.entry(hit.source.as_str()).or_insert((e.fused, 0));
        let expect = *first * crate::search::documents::NEXT_CHUNK_DECAY.powi(*j);
        assert!((e.fused - expect).abs() < 1e-12, "{e:?}, expected {expect}");
        followers += i32::from(*j > 0);
        *j += 1;
    }
    assert!(followers > 0, "a document contributed several chunks");
    let top = &explain[0];
    assert!(
        top.keyword.is_some_and(|k| k.rank == 1 && k.score > 0.0),
        "{top:?}"
    );
    assert!(
        top.document.is_some_and(|d| d.rank == 1 && d.score > 0.0),
        "the document that holds the best chunk leads the document list: {top:?}"
    );
}

#[test]
fn a_sync_indexes_every_new_file_for_keywords_before_embedding_any() {
    let f = fixture();
    for i in 0..3 {
        f.files.put(
            &format!("/docs/{i}.md"),
            &format!("# N{i}\n\nnote {i}"),
            1.0,
        );
    }
    let steps = Mutex::new(Vec::new());
    let r = f
        .engine
        .sync(
            None,
            &|s| {
                let vectorless = f.index.stats().unwrap().vectorless_chunk_count;
                steps
                    .lock()
                    .unwrap()
                    .push((s.phase, s.done, s.total, vectorless));
            },
            &std::sync::atomic::AtomicBool::new(false),
        )
        .unwrap();
    assert_eq!((r.counts.ingested, r.counts.reembedded), (3, 0), "{r:?}");
    let steps = steps.into_inner().unwrap();
    let phases: Vec<_> = steps.iter().map(|s| s.0).collect();
    use crate::sync::run::Phase::{Embedding, Indexing};
    assert_eq!(
        phases,
        [Indexing, Indexing, Indexing, Embedding, Embedding, Embedding]
    );
    // When indexing ends every chunk is stored, none embedded yet; the
    // embedding phase counts chunks up to the total.
    assert_eq!(steps[2].3, 3, "all three keyword-only before any vector");
    assert_eq!((steps[5].1, steps[5].2), (3, 3));
    assert_eq!(f.index.stats().unwrap().vectorless_chunk_count, 0);
}

#[test]
fn a_large_source_is_embedded_in_batches_that_report_progress_and_stop_on_cancel() {
    let f = fixture();
    // One heading per paragraph: each paragraph is its own unit.
    let body: String = (0..600)
        .map(|i| format!("## Part {i}\n\nRow {i} of the large export.\n\n"))
        .collect();
    f.files.put("/docs/big.md", &body, 1.0);
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let lines = Mutex::new(Vec::new());
    let err = f
        .engine
        .sync(
            None,
            &|s| {
                if s.line.starts_with("embedding ") {
                    lines
                        .lock()
                        .unwrap()
                        .push((s.done, s.total, s.line.to_string()));
                    // Cancel after the first batch: the sync stops within one.
                    cancel.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            },
            &cancel,
        )
        .unwrap_err();
    let lines = lines.into_inner().unwrap();
    let total = f.index.stats().unwrap().chunk_count;
    assert!(
        total > 2 * crate::engine::EMBED_BATCH as u64,
        "{total} chunks"
    );
    let batch = crate::engine::EMBED_BATCH as u64;
    assert_eq!(
        lines,
        [(
            batch,
            total,
            format!("embedding /docs/big.md: {batch} / {total} chunks")
        )]
    );
    assert!(
        matches!(err, EngineError::Cancelled { done, total: t, .. } if done == batch && t == total),
        "{err:?}"
    );
    // The fake index keeps batches until the last: nothing embedded yet,
    // and the next sync embeds the whole source again, converting nothing.
    let r = sync(&f);
    assert_eq!((r.counts.ingested, r.counts.reembedded), (0, 1), "{r:?}");
    assert_eq!(f.index.stats().unwrap().vectorless_chunk_count, 0);
}
