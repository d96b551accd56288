//! Stand-ins for the engine's ports, for tests of the engine's logic: a
//! hashing embedder, a pass-through converter, a map of fetched pages, a
//! fixed clock and a brute-force index. They test the engine, not
//! embeddings or storage.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::chunk::Chunk;
use crate::ports::*;
use crate::search::Scope;

pub const DIM: usize = 16;

pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Bag of hashed words, normalised: texts sharing words are close.
pub struct FakeEmbedder {
    pub calls: AtomicUsize,
    pub embedded: AtomicUsize,
    pub unavailable: bool,
    /// Stands for a changed model (same width, other id).
    pub other_model: std::sync::atomic::AtomicBool,
    /// The [`tick`] of the last `ready` call (0: never).
    pub ready_at: AtomicUsize,
}

/// A process-wide order of fake calls, to test which came first.
static TICKS: AtomicUsize = AtomicUsize::new(1);

pub fn tick() -> usize {
    TICKS.fetch_add(1, Ordering::SeqCst)
}

impl Default for FakeEmbedder {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeEmbedder {
    pub fn new() -> Self {
        Self {
            calls: AtomicUsize::new(0),
            embedded: AtomicUsize::new(0),
            unavailable: false,
            other_model: Default::default(),
            ready_at: AtomicUsize::new(0),
        }
    }
    pub fn vector(text: &str) -> Vec<f32> {
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

impl Embedder for FakeEmbedder {
    fn model_id(&self) -> &str {
        if self.other_model.load(Ordering::SeqCst) {
            "hash-16b"
        } else {
            "hash-16"
        }
    }
    fn ready(&self) -> Result<(), EmbedError> {
        self.ready_at.store(tick(), Ordering::SeqCst);
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
pub struct FakeConverter;

impl Converter for FakeConverter {
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
                    places: Vec::new(),
                    meta: Default::default(),
                })
            }
            "md" | "txt" | "markdown" => Ok(Converted {
                markdown: text,
                metadata_title: None,
                page_chars: Vec::new(),
                places: Vec::new(),
                meta: Default::default(),
            }),
            other => Err(ConvertError::Unsupported {
                format: other.into(),
            }),
        }
    }
}

pub struct FakeFetcher(pub BTreeMap<String, (String, &'static str)>);

impl Fetcher for FakeFetcher {
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

/// Tells Russian from English by script: enough for the engine's own tests,
/// which are about where the language goes, not how it is found.
pub struct ScriptLanguages;

impl crate::ports::Languages for ScriptLanguages {
    fn detect(&self, text: &str) -> Option<&'static str> {
        let cyrillic = text
            .chars()
            .filter(|c| ('а'..='я').contains(&c.to_lowercase().next().unwrap_or(*c)))
            .count();
        let latin = text.chars().filter(char::is_ascii_alphabetic).count();
        match (cyrillic, latin) {
            (0, 0) => None,
            (c, l) if c > l => Some("ru"),
            _ => Some("en"),
        }
    }
}

pub struct FakeClock;

impl Clock for FakeClock {
    fn now_unix_seconds(&self) -> i64 {
        1_796_004_692
    }
}

#[derive(Default)]
pub struct Stored {
    pub record: Option<SourceRecord>,
    pub chunks: Vec<Chunk>,
    pub vectors: Option<Embeddings>,
}

/// Brute-force index: exact vector scan, keyword score = shared words.
#[derive(Default)]
pub struct FakeIndex {
    pub sources: Mutex<BTreeMap<String, Stored>>,
    /// Vectors of `set_vectors` batches until a source's last batch.
    pub pending: Mutex<BTreeMap<String, Embeddings>>,
    pub windows: Mutex<Vec<usize>>,
    pub searches: AtomicUsize,
    pub keyword_fails: std::sync::atomic::AtomicBool,
    /// Calls of `settle`, what it announces (it has work) and whether it fails.
    pub settled: AtomicUsize,
    pub settle_says: Mutex<Option<String>>,
    pub settle_fails: std::sync::atomic::AtomicBool,
    /// The [`tick`] of the last `read` call (0: never).
    pub read_at: AtomicUsize,
    /// The sync lock, as another process would see it.
    pub sync_lock: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Published job records, as every process of the index sees them.
    pub jobs: Mutex<BTreeMap<String, crate::progress::Job>>,
}

/// Frees [`FakeIndex::sync_lock`] when the lease is dropped.
struct FakeLease(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for FakeLease {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Reads live: the stand-in has no generations to pin.
struct FakeView<'a>(&'a FakeIndex);

impl IndexView for FakeView<'_> {
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
        for (src, s) in map.iter().filter(|(src, s)| match &s.record {
            Some(r) => scope.admits(r),
            None => scope.matches(src),
        }) {
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
        for (src, s) in map.iter().filter(|(src, s)| match &s.record {
            Some(r) => scope.admits(r),
            None => scope.matches(src),
        }) {
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
            .filter(|r| scope.admits(r))
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

impl Index for FakeIndex {
    fn read(&self) -> Result<Box<dyn IndexView + '_>, IndexError> {
        self.read_at.store(tick(), Ordering::SeqCst);
        Ok(Box::new(FakeView(self)))
    }
    fn put_job(&self, job: &crate::progress::Job) -> Result<(), IndexError> {
        self.jobs
            .lock()
            .unwrap()
            .insert(job.id.clone(), job.clone());
        Ok(())
    }
    fn job(&self, id: &str) -> Result<Option<crate::progress::Job>, IndexError> {
        Ok(self.jobs.lock().unwrap().get(id).cloned())
    }
    fn lock_sync(&self) -> Result<SyncLease, IndexError> {
        if self.sync_lock.swap(true, Ordering::SeqCst) {
            return Err(IndexError::busy("another sync holds the fake index"));
        }
        Ok(SyncLease::held(Box::new(FakeLease(self.sync_lock.clone()))))
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
