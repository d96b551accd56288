//! The in-memory index: sources, chunks, vectors and the two BM25 fields,
//! changed only by applying logged [`Op`]s, so memory and disk never disagree.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use minirag_core::ports::IndexError;

use crate::bm25::Field;
use crate::disk::text_key;
use crate::pages::Pages;
use crate::records::{DiskChunk, Op};
use crate::vectors::Matrix;
use minirag_rank::{Analyzer, Repeats};

pub use crate::records::SourceEntry;

/// Chunks from which a source counts as big: removing one that is also a
/// quarter of the index purges every postings list of it at once, rather
/// than leaving its postings to the next compaction.
const BIG_SOURCE: usize = 1 << 16;

/// One generation of the index. A clone shares everything large (the
/// mapped snapshot, the postings' pages and lists, each source's entry), so
/// a writer clones the generation views still read, applies its write to
/// the clone, and publishes it; a view never sees a write half done.
#[derive(Clone)]
pub struct State {
    pub analyzer: Arc<Analyzer>,
    pub model_id: Option<String>,
    pub ids: Arc<HashMap<String, u32>>,
    /// By source id; an entry is copied when a write changes it, and the
    /// pages of entries when a write changes one of theirs.
    pub(crate) sources: Pages<Option<Arc<SourceEntry>>>,
    /// slot → (source id, chunk)
    pub chunks: Chunks,
    pub vectors: Matrix,
    pub text: Field,
    pub title: Field,
    /// [`text_key`] of a chunk text → a slot holding it with a vector: what
    /// a sync looks up to reuse a vector. Built from the state on its first
    /// look-up ([`State::text_slots`]), not at open: a process that only
    /// queries never needs it; once built, writes keep it current. One
    /// table for a generation and those written after it (a look-up checks
    /// the slot against the generation it reads); a compaction, which
    /// renumbers the slots, starts a new one.
    pub by_text: Arc<Mutex<Option<HashMap<u64, u32>>>>,
    /// Live chunks without a vector, kept current by every change so a
    /// query can say how many wait for embedding without a scan.
    pub vectorless: u64,
    /// Per source, the breadcrumb terms its chunks repeat (kept in memory,
    /// derived from the chunks): whole-document BM25 counts a section's
    /// headings once, as the document has them.
    pub repeats: Arc<HashMap<u32, Arc<Repeats>>>,
    /// Sum of every source's repeated length.
    pub repeats_len: u64,
}

pub fn text_hash(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

impl Default for State {
    fn default() -> Self {
        Self::new()
    }
}

impl State {
    pub fn new() -> Self {
        Self {
            analyzer: Arc::default(),
            model_id: None,
            ids: Arc::default(),
            sources: Pages::default(),
            chunks: Chunks::default(),
            vectors: Matrix::new(0),
            text: Field::default(),
            title: Field::default(),
            by_text: Arc::default(),
            repeats: Arc::default(),
            repeats_len: 0,
            vectorless: 0,
        }
    }

    pub fn dim(&self) -> usize {
        self.vectors.dim()
    }

    /// Refuses an operation that would mix vector widths under one model
    /// (another model's vectors are a switch, see [`State::apply`]).
    /// [`State::check`] for a record read back from the log, where nothing
    /// can be taken on trust: widths are bounded too, as no embedding model
    /// makes vectors of more than 65,536 dimensions.
    pub fn check_replay(&self, op: &Op) -> Result<(), IndexError> {
        let dim = match op {
            Op::Replace { dim, .. } | Op::SetVectors { dim, .. } => *dim,
            _ => 0,
        };
        if dim > 1 << 16 {
            return Err(IndexError::storage(format!(
                "a record of vectors {dim} wide"
            )));
        }
        self.check(op)
    }

    pub fn check(&self, op: &Op) -> Result<(), IndexError> {
        if let Op::SetVectors {
            source,
            model,
            dim,
            first,
            hashes,
            vectors,
            ..
        } = op
        {
            return self.check_set_vectors(source, model, *dim, *first, hashes, vectors);
        }
        if let Op::Replace {
            source,
            dim,
            vectors: Some(v),
            chunks,
        } = op
        {
            self.check_vectors(source.embedded_with.as_deref(), *dim, chunks.len(), v.len())?;
        }
        Ok(())
    }

    /// Vectors of `model` and width `dim`, `values` floats for `rows` chunks:
    /// the same model at another width is refused by name.
    pub(crate) fn check_vectors(
        &self,
        model: Option<&str>,
        dim: u32,
        rows: usize,
        values: usize,
    ) -> Result<(), IndexError> {
        let stored = self.dim();
        let same_model = self.model_id.as_deref() == model;
        if same_model && self.has_vectors() && stored != dim as usize {
            return Err(IndexError::DimensionMismatch {
                stored,
                model: dim as usize,
            });
        }
        if rows.checked_mul(dim as usize) != Some(values) {
            return Err(IndexError::Storage {
                cause: None,
                reason: format!("{values} vectors of width {dim} do not match {rows} chunks"),
            });
        }
        Ok(())
    }

    pub(crate) fn check_set_vectors(
        &self,
        source: &str,
        model: &str,
        dim: u32,
        first: u32,
        hashes: &[u64],
        vectors: &[f32],
    ) -> Result<(), IndexError> {
        let changed = || IndexError::Storage {
            cause: None,
            reason: format!(
                "{source} changed while it was being embedded; the next sync embeds its new chunks"
            ),
        };
        let entry = self.entry(source).ok_or_else(changed)?;
        let slots = entry
            .slots
            .get(first as usize..first as usize + hashes.len());
        let same = slots.is_some_and(|slots| {
            slots.iter().zip(hashes).all(|(&slot, &h)| {
                self.chunks
                    .get(slot)
                    .is_some_and(|(_, c)| text_hash(&c.text) == h)
            })
        });
        if !same {
            return Err(changed());
        }
        if dim == 0 {
            return Err(IndexError::Storage {
                cause: None,
                reason: format!("vectors of width 0 for {source}"),
            });
        }
        self.check_vectors(Some(model), dim, hashes.len(), vectors.len())
    }

    /// Makes the matrix ready for vectors of `model` and `dim`: the first
    /// vectors fix the width; another model's vectors switch the index (every
    /// stored vector goes, the chunks stay keyword-searchable).
    pub(crate) fn prepare_vectors(&mut self, model: Option<&String>, dim: usize) {
        let has = self.has_vectors();
        let switching = has && (self.model_id.as_ref() != model || self.vectors.dim() != dim);
        if !has || switching {
            if self.vectors.rows() == 0 || (!switching && self.vectors.dim() == dim) {
                self.vectors.set_dim(dim);
            } else {
                self.rebuild_matrix(dim);
            }
            if switching {
                self.by_text = Arc::default();
            }
            self.model_id = model.cloned();
        }
    }

    /// Gives chunks `first..` of source `sid` their vectors: a row appended
    /// since the snapshot is written in place; a chunk whose row lies in the
    /// mapped snapshot moves to a new slot (the old one is dead until the
    /// next compaction).
    pub(crate) fn set_vectors(
        &mut self,
        sid: u32,
        first: u32,
        dim: usize,
        vectors: &[f32],
    ) -> usize {
        let mut n = 0;
        for (k, row) in vectors.chunks(dim).enumerate() {
            let i = first as usize + k;
            let Some(&slot) = self.sources[sid as usize]
                .as_ref()
                .and_then(|e| e.slots.get(i))
            else {
                break;
            };
            let had = self.vectors.has(slot);
            if self.vectors.set_row(slot, row) {
                if !had {
                    self.vectorless -= 1;
                }
                if let (Some(key), Some(map)) = (self.chunks.key(slot), self.text_table().as_mut())
                {
                    map.insert(key, slot);
                }
            } else if let Some((_, chunk)) = self.chunks.take(slot) {
                self.text.retire(slot);
                self.forget_text(text_key(&chunk.text), slot);
                if !had {
                    self.vectorless -= 1;
                }
                self.vectors.clear_row(slot);
                let new = self.chunks.len() as u32;
                // push_chunk counts a vector-less chunk; this one has a row.
                self.push_chunk(new, sid, chunk, Some(row));
                if let Some(e) = self.sources[sid as usize].as_mut() {
                    Arc::make_mut(e).slots[i] = new;
                }
            }
            n += 1;
        }
        n
    }

    pub(crate) fn has_vectors(&self) -> bool {
        self.vectors.any_present()
    }

    /// Applies a checked operation; returns the number of chunks affected.
    pub fn apply(&mut self, op: Op) -> usize {
        match op {
            op @ (Op::ReplaceLocated { .. } | Op::ReplaceDescribed { .. }) => {
                self.apply(op.merged())
            }
            Op::Replace {
                source,
                chunks,
                dim,
                vectors,
            } => {
                let n = chunks.len();
                let sid = self.remove_source(&source.source).unwrap_or_else(|| {
                    self.sources.push(None);
                    (self.sources.len() - 1) as u32
                });
                if vectors.is_some() {
                    // Vectors of another model switch the index to it: every
                    // stored vector goes (never compared with the new
                    // model's), the chunks stay, keyword-searchable, until
                    // sync re-embeds their sources.
                    self.prepare_vectors(source.embedded_with.as_ref(), dim as usize);
                }
                let base = self.chunks.len();
                self.place_chunks(sid, chunks);
                let slots: Vec<u32> = (base as u32..(base + n) as u32).collect();
                let dim = dim as usize;
                self.index_slots(&slots, |i| {
                    vectors.as_ref().map(|v| &v[i * dim..(i + 1) * dim])
                });
                self.title.add(sid, &self.analyzer.terms(&source.title));
                self.note_repeats(sid, &slots);
                if self.ids.get(&source.source) != Some(&sid) {
                    Arc::make_mut(&mut self.ids).insert(source.source.clone(), sid);
                }
                self.sources[sid as usize] = Some(Arc::new(SourceEntry {
                    record: source,
                    slots,
                }));
                n
            }
            Op::Delete { source } => match self.remove_source(&source) {
                Some(sid) => {
                    let n = self.sources[sid as usize]
                        .take()
                        .map_or(0, |e| e.slots.len());
                    Arc::make_mut(&mut self.ids).remove(&source);
                    n
                }
                None => 0,
            },
            Op::SetVectors {
                source,
                model,
                dim,
                first,
                vectors,
                complete,
                ..
            } => {
                let Some(&sid) = self.ids.get(&source) else {
                    return 0;
                };
                self.prepare_vectors(Some(&model), dim as usize);
                let n = self.set_vectors(sid, first, dim as usize, &vectors);
                if complete {
                    if let Some(e) = self.sources[sid as usize].as_mut() {
                        Arc::make_mut(e).record.embedded_with = Some(model);
                    }
                }
                n
            }
            Op::Move { from, to, mtime } => {
                if self.ids.contains_key(&to) {
                    return 0;
                }
                let Some(&sid) = self.ids.get(&from) else {
                    return 0;
                };
                let ids = Arc::make_mut(&mut self.ids);
                ids.remove(&from);
                ids.insert(to.clone(), sid);
                let entry = self.sources[sid as usize].as_mut().expect("indexed source");
                let entry = Arc::make_mut(entry);
                entry.record.source = to;
                entry.record.mtime = mtime;
                entry.slots.len()
            }
        }
    }

    /// Appends a source's chunks as new slots, before any is indexed.
    pub(crate) fn place_chunks(&mut self, sid: u32, chunks: Vec<DiskChunk>) {
        self.chunks.place(sid, chunks);
    }

    /// The model of the stored vectors, `None` when there are none.
    pub fn vector_model(&self) -> Option<String> {
        self.has_vectors().then(|| self.model_id.clone()).flatten()
    }

    /// A matrix of `dim` with every row empty: the first vectors fix the
    /// width (earlier vector-less rows are re-laid), or a new model's
    /// vectors replace an old model's.
    pub(crate) fn rebuild_matrix(&mut self, dim: usize) {
        let mut m = Matrix::new(dim);
        m.set_spill_dir(self.vectors.spill_dir());
        for _ in 0..self.vectors.rows() {
            m.push(None);
        }
        self.vectors = m;
        self.vectorless = self.chunks.count() as u64;
    }

    /// [`State::by_text`], locked: `None` until its first look-up.
    pub(crate) fn text_table(&self) -> MutexGuard<'_, Option<HashMap<u64, u32>>> {
        self.by_text.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Drops the text key `key` from [`State::by_text`] when it names `slot`.
    fn forget_text(&mut self, key: u64, slot: u32) {
        if let Some(map) = self.text_table().as_mut() {
            if map.get(&key) == Some(&slot) {
                map.remove(&key);
            }
        }
    }

    /// Every slot with a vector by its text's key, later slots first: what
    /// [`State::by_text`] holds, built from the state.
    pub(crate) fn text_slots(&self) -> HashMap<u64, u32> {
        let mut map = HashMap::new();
        for slot in 0..self.chunks.len() as u32 {
            if self.vectors.has(slot) {
                if let Some(key) = self.chunks.key(slot) {
                    map.insert(key, slot);
                }
            }
        }
        map
    }

    /// Removes a source's chunks and title terms; keeps its id for reuse.
    pub(crate) fn remove_source(&mut self, source: &str) -> Option<u32> {
        let sid = *self.ids.get(source)?;
        let entry = self.sources[sid as usize].as_ref()?.clone();
        // A source that is a large part of the index: every list is purged
        // of its postings at once, for the memory (others wait for
        // compaction).
        let bulk = entry.slots.len() >= BIG_SOURCE && entry.slots.len() * 4 >= self.chunks.len();
        for &slot in &entry.slots {
            // No chunk is decoded: its text's key is in the table, and
            // retiring it needs no terms.
            if let Some(h) = self.chunks.key(slot) {
                self.chunks.remove(slot);
                self.text.retire(slot);
                self.forget_text(h, slot);
                if !self.vectors.has(slot) {
                    self.vectorless -= 1;
                }
            }
            self.vectors.clear_row(slot);
        }
        if bulk {
            self.text.purge_retired();
        }
        self.title
            .remove(sid, &self.analyzer.terms(&entry.record.title));
        if self.repeats.contains_key(&sid) {
            if let Some(r) = Arc::make_mut(&mut self.repeats).remove(&sid) {
                self.repeats_len -= r.len;
            }
        }
        Some(sid)
    }
}

mod chunks;
mod indexing;
mod inspect;
mod search;

pub use chunks::Chunks;
