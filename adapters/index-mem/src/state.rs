//! The in-memory index: sources, chunks, vectors and the two BM25 fields,
//! changed only by applying logged [`Op`]s, so memory and disk never disagree.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use minirag_core::chunk::Chunk;
use minirag_core::ports::{Candidate, ChunkKey, DocumentHit, IndexError, IndexStats, SourceRecord};
use minirag_core::search::Scope;
use minirag_core::CHUNK_SCHEME;
use serde::{Deserialize, Serialize};

use crate::bm25::{Field, TITLE_WEIGHT};
use crate::records::{DiskChunk, DiskSource, Op};
use crate::vectors::Matrix;
use minirag_analyzer::{breadcrumb_repeats, Analyzer, Repeats};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SourceEntry {
    pub record: DiskSource,
    /// Chunk slots in chunk-index order.
    pub slots: Vec<u32>,
}

/// Chunks from which a source counts as big: removing one that is also a
/// quarter of the index purges every postings list once instead of
/// analysing each of its chunks again.
const BIG_SOURCE: usize = 1 << 16;

pub struct State {
    pub analyzer: Analyzer,
    pub model_id: Option<String>,
    pub ids: HashMap<String, u32>,
    pub sources: Vec<Option<SourceEntry>>,
    /// slot → (source id, chunk)
    pub chunks: Vec<Option<(u32, DiskChunk)>>,
    pub vectors: Matrix,
    pub text: Field,
    pub title: Field,
    /// Hash of a chunk text → a slot holding it with a vector.
    pub by_text: HashMap<u64, u32>,
    /// Live chunks without a vector, kept current by every change so a
    /// query can say how many wait for embedding without a scan.
    pub vectorless: u64,
    /// Per source, the breadcrumb terms its chunks repeat (kept in memory,
    /// derived from the chunks): whole-document BM25 counts a section's
    /// headings once, as the document has them.
    pub repeats: HashMap<u32, Repeats>,
    /// Sum of every source's repeated length.
    pub repeats_len: u64,
}

/// Keeps the `k` highest scores, best first, ties by id (a partial
/// selection, then a sort of what is left).
fn best_first(ranked: &mut Vec<(u32, f32)>, k: usize) {
    let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if ranked.len() > k && k > 0 {
        ranked.select_nth_unstable_by(k - 1, order);
    }
    ranked.truncate(k);
    ranked.sort_by(order);
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
            analyzer: Analyzer::default(),
            model_id: None,
            ids: HashMap::new(),
            sources: Vec::new(),
            chunks: Vec::new(),
            vectors: Matrix::new(0),
            text: Field::default(),
            title: Field::default(),
            by_text: HashMap::new(),
            repeats: HashMap::new(),
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
    fn check_vectors(
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

    fn check_set_vectors(
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
                self.chunks[slot as usize]
                    .as_ref()
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
    fn prepare_vectors(&mut self, model: Option<&String>, dim: usize) {
        let has = self.has_vectors();
        let switching = has && (self.model_id.as_ref() != model || self.vectors.dim() != dim);
        if !has || switching {
            if self.vectors.rows() == 0 || (!switching && self.vectors.dim() == dim) {
                self.vectors.set_dim(dim);
            } else {
                self.rebuild_matrix(dim);
            }
            if switching {
                self.by_text.clear();
            }
            self.model_id = model.cloned();
        }
    }

    /// Gives chunks `first..` of source `sid` their vectors: a row appended
    /// since the snapshot is written in place; a chunk whose row lies in the
    /// mapped snapshot moves to a new slot (the old one is dead until the
    /// next compaction).
    fn set_vectors(&mut self, sid: u32, first: u32, dim: usize, vectors: &[f32]) -> usize {
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
                if let Some((_, chunk)) = &self.chunks[slot as usize] {
                    self.by_text.insert(text_hash(&chunk.text), slot);
                }
            } else if let Some((_, chunk)) = self.chunks[slot as usize].take() {
                self.text.retire(slot, &self.analyzer.terms(&chunk.text));
                let h = text_hash(&chunk.text);
                if self.by_text.get(&h) == Some(&slot) {
                    self.by_text.remove(&h);
                }
                if !had {
                    self.vectorless -= 1;
                }
                self.vectors.clear_row(slot);
                let new = self.chunks.len() as u32;
                // push_chunk counts a vector-less chunk; this one has a row.
                self.push_chunk(new, sid, chunk, Some(row));
                if let Some(e) = self.sources[sid as usize].as_mut() {
                    e.slots[i] = new;
                }
            }
            n += 1;
        }
        n
    }

    fn has_vectors(&self) -> bool {
        self.vectors.present().iter().any(|p| *p)
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
                for (i, &slot) in slots.iter().enumerate() {
                    let row = vectors
                        .as_ref()
                        .map(|v| &v[i * dim as usize..(i + 1) * dim as usize]);
                    self.index_slot(slot, row);
                }
                self.title.add(sid, &self.analyzer.terms(&source.title));
                self.note_repeats(sid, &slots);
                self.ids.insert(source.source.clone(), sid);
                self.sources[sid as usize] = Some(SourceEntry {
                    record: source,
                    slots,
                });
                n
            }
            Op::Delete { source } => match self.remove_source(&source) {
                Some(sid) => {
                    let n = self.sources[sid as usize]
                        .take()
                        .map_or(0, |e| e.slots.len());
                    self.ids.remove(&source);
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
                        e.record.embedded_with = Some(model);
                    }
                }
                n
            }
            Op::Move { from, to, mtime } => {
                if self.ids.contains_key(&to) {
                    return 0;
                }
                let Some(sid) = self.ids.remove(&from) else {
                    return 0;
                };
                let entry = self.sources[sid as usize].as_mut().expect("indexed source");
                entry.record.source = to.clone();
                entry.record.mtime = mtime;
                self.ids.insert(to, sid);
                entry.slots.len()
            }
        }
    }

    /// Appends a source's chunks as new slots, before any is indexed. They
    /// are taken from the back of the record's list, which gives its memory
    /// back as it goes: a million-chunk file never has two lists of chunks.
    fn place_chunks(&mut self, sid: u32, mut chunks: Vec<DiskChunk>) {
        const GIVE_BACK_EVERY: usize = 1 << 16;
        let base = self.chunks.len();
        let n = chunks.len();
        // One big source: room for exactly its chunks, not the next power
        // of two (growth stays amortized: at least doubling).
        if self.chunks.capacity() - base < n {
            self.chunks.reserve_exact(n.max(base));
        }
        self.chunks.resize_with(base + n, || None);
        while let Some(chunk) = chunks.pop() {
            self.chunks[base + chunks.len()] = Some((sid, chunk));
            if chunks.len().is_multiple_of(GIVE_BACK_EVERY) && n > GIVE_BACK_EVERY {
                chunks.shrink_to_fit();
            }
        }
    }

    /// Indexes the chunk placed at `slot` (the next row of the matrix):
    /// its terms, and its vector when it has one.
    fn index_slot(&mut self, slot: u32, row: Option<&[f32]>) {
        let Some((_, chunk)) = &self.chunks[slot as usize] else {
            return;
        };
        let terms = self.analyzer.terms(&chunk.text);
        if row.is_some() {
            self.by_text.insert(text_hash(&chunk.text), slot);
        } else {
            self.vectorless += 1;
        }
        self.text.add(slot, &terms);
        // A vector-less chunk in a matrix of unknown width gets a width later.
        if self.vectors.dim() == 0 && row.is_none() {
            self.vectors.push(None);
        } else {
            self.vectors.push(row);
        }
    }

    fn push_chunk(&mut self, slot: u32, sid: u32, chunk: DiskChunk, row: Option<&[f32]>) {
        debug_assert_eq!(slot as usize, self.chunks.len());
        self.chunks.push(Some((sid, chunk)));
        self.index_slot(slot, row);
    }

    /// The model of the stored vectors, `None` when there are none.
    pub fn vector_model(&self) -> Option<String> {
        self.has_vectors().then(|| self.model_id.clone()).flatten()
    }

    /// A matrix of `dim` with every row empty: the first vectors fix the
    /// width (earlier vector-less rows are re-laid), or a new model's
    /// vectors replace an old model's.
    fn rebuild_matrix(&mut self, dim: usize) {
        let mut m = Matrix::new(dim);
        m.set_spill_dir(self.vectors.spill_dir());
        for _ in 0..self.vectors.rows() {
            m.push(None);
        }
        self.vectors = m;
        self.vectorless = self.chunks.iter().flatten().count() as u64;
    }

    /// Removes a source's chunks and title terms; keeps its id for reuse.
    fn remove_source(&mut self, source: &str) -> Option<u32> {
        let sid = *self.ids.get(source)?;
        let entry = self.sources[sid as usize].as_ref()?.clone();
        // A source that is a large part of the index: its chunks are counted
        // out without analysing their text again, and every list is purged
        // once (cheaper than finding each chunk's terms when most go).
        let bulk = entry.slots.len() >= BIG_SOURCE && entry.slots.len() * 4 >= self.chunks.len();
        for &slot in &entry.slots {
            if let Some((_, chunk)) = self.chunks[slot as usize].take() {
                if bulk {
                    self.text.forget(slot);
                } else {
                    self.text.retire(slot, &self.analyzer.terms(&chunk.text));
                }
                let h = text_hash(&chunk.text);
                if self.by_text.get(&h) == Some(&slot) {
                    self.by_text.remove(&h);
                }
                if !self.vectors.has(slot) {
                    self.vectorless -= 1;
                }
            }
            self.vectors.clear_row(slot);
        }
        if bulk {
            self.text.purge_forgotten();
        }
        self.title
            .remove(sid, &self.analyzer.terms(&entry.record.title));
        if let Some(r) = self.repeats.remove(&sid) {
            self.repeats_len -= r.len;
        }
        Some(sid)
    }

    /// A query's distinct terms (BM25 counts each once per query).
    fn query_terms(&self, query: &str) -> Vec<String> {
        let mut terms = self.analyzer.terms(query);
        terms.sort();
        terms.dedup();
        terms
    }

    fn allowed_sources(&self, scope: &Scope) -> Vec<bool> {
        self.sources
            .iter()
            .map(|e| e.as_ref().is_some_and(|e| scope.admits(&e.record)))
            .collect()
    }

    fn key(&self, slot: u32) -> Option<ChunkKey> {
        let (sid, chunk) = self.chunks[slot as usize].as_ref()?;
        let entry = self.sources[*sid as usize].as_ref()?;
        Some(ChunkKey {
            source: entry.record.source.clone(),
            index: chunk.index,
        })
    }

    pub fn vector_search(&self, query: &[f32], k: usize, scope: &Scope) -> Vec<Candidate> {
        let hits = if scope.is_all() {
            // Every row with a vector is a live chunk's (removing or moving
            // a chunk clears its row): no per-row look-up into the chunks.
            self.vectors.nearest(query, k, |_| true)
        } else {
            let allowed = self.allowed_sources(scope);
            let chunks = &self.chunks;
            self.vectors.nearest(query, k, |slot| {
                chunks[slot as usize]
                    .as_ref()
                    .is_some_and(|(sid, _)| allowed[*sid as usize])
            })
        };
        hits.into_iter()
            .filter_map(|(slot, d)| {
                Some(Candidate {
                    key: self.key(slot)?,
                    value: d,
                })
            })
            .collect()
    }

    /// Records the breadcrumb terms the chunks in `slots` repeat.
    pub fn note_repeats(&mut self, sid: u32, slots: &[u32]) {
        let prefixes = slots.iter().filter_map(|&slot| {
            let (_, c) = self.chunks[slot as usize].as_ref()?;
            Some(c.text.get(..c.prefix_len as usize).unwrap_or(""))
        });
        let r = breadcrumb_repeats(&self.analyzer, prefixes);
        if r.len > 0 {
            self.repeats_len += r.len;
            self.repeats.insert(sid, r);
        }
    }

    /// Whole-document BM25: each source scored as one document made of its
    /// chunks' text, plus its title at [`TITLE_WEIGHT`]; best first, `scope`
    /// applied before the cut at `k`. Each carries its best chunk by
    /// chunk-level BM25 (text only: the title is the same for every chunk).
    pub fn document_search(&self, query: &str, k: usize, scope: &Scope) -> Vec<DocumentHit> {
        let terms = self.query_terms(query);
        let terms: Vec<&str> = terms.iter().map(String::as_str).collect();
        let allowed = self.allowed_sources(scope);
        let live = self.sources.iter().filter(|e| e.is_some()).count();
        let sid_of = |slot: u32| self.chunks[slot as usize].as_ref().map(|(sid, _)| *sid);
        let mut acc = vec![0f32; self.sources.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut add = |sid: u32, s: f32| {
            let a = &mut acc[sid as usize];
            if *a == 0.0 {
                touched.push(sid);
            }
            *a += s;
        };
        self.text.score_groups(
            &terms,
            self.sources.len(),
            live,
            sid_of,
            |sid| {
                let all: u64 = self.sources[sid as usize].as_ref().map_or(0, |e| {
                    e.slots
                        .iter()
                        .map(|&s| u64::from(self.text.length(s)))
                        .sum()
                });
                all - self.repeats.get(&sid).map_or(0, |r| r.len)
            },
            |sid, term| {
                self.repeats
                    .get(&sid)
                    .and_then(|r| r.terms.get(term).copied())
                    .unwrap_or(0)
            },
            self.repeats_len,
            &mut add,
        );
        self.title.score(&terms, |sid, s| {
            if self.sources[sid as usize].is_some() {
                add(sid, TITLE_WEIGHT * s);
            }
        });
        let mut ranked: Vec<(u32, f32)> = touched
            .into_iter()
            .filter(|sid| allowed[*sid as usize])
            .map(|sid| (sid, acc[sid as usize]))
            .collect();
        best_first(&mut ranked, k);
        // The best chunk of each kept document: chunk-level BM25 (the first
        // of equals), summed in one pass over the query terms' postings for
        // the chunks of kept documents only.
        let mut rank_of = vec![u32::MAX; self.sources.len()];
        for (i, (sid, _)) in ranked.iter().enumerate() {
            rank_of[*sid as usize] = i as u32;
        }
        let mut chunk_scores: HashMap<u32, f32> = HashMap::new();
        self.text.score(&terms, |slot, s| {
            if sid_of(slot).is_some_and(|sid| rank_of[sid as usize] != u32::MAX) {
                *chunk_scores.entry(slot).or_default() += s;
            }
        });
        // (score, chunk index) per kept document; a title-only match keeps
        // its first chunk.
        let mut best = vec![(0.0f32, 0u32); ranked.len()];
        for (slot, s) in chunk_scores {
            let Some((sid, chunk)) = self.chunks[slot as usize].as_ref() else {
                continue;
            };
            let b = &mut best[rank_of[*sid as usize] as usize];
            if s > b.0 || (s > 0.0 && s == b.0 && chunk.index < b.1) {
                *b = (s, chunk.index);
            }
        }
        let best = best.into_iter().map(|(_, index)| index);
        ranked
            .into_iter()
            .zip(best)
            .filter_map(|((sid, score), best_chunk)| {
                Some(DocumentHit {
                    source: self.sources[sid as usize].as_ref()?.record.source.clone(),
                    score,
                    best_chunk,
                })
            })
            .collect()
    }

    pub fn keyword_search(&self, query: &str, k: usize, scope: &Scope) -> Vec<Candidate> {
        let terms = self.query_terms(query);
        let terms: Vec<&str> = terms.iter().map(String::as_str).collect();
        let allowed = self.allowed_sources(scope);
        // Dense accumulators (one per slot; the zeroed pages come lazily from
        // the OS) and the list of slots touched, instead of a hash map: at a
        // million chunks a frequent term adds to hundreds of thousands.
        let mut acc = vec![0f32; self.chunks.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut add = |slot: u32, s: f32| {
            let a = &mut acc[slot as usize];
            if *a == 0.0 {
                touched.push(slot);
            }
            *a += s;
        };
        self.text.score(&terms, &mut add);
        self.title.score(&terms, |sid, s| {
            if let Some(entry) = &self.sources[sid as usize] {
                for &slot in &entry.slots {
                    add(slot, TITLE_WEIGHT * s);
                }
            }
        });
        // The scope is checked once per touched slot, after scoring.
        let everything = allowed.iter().all(|a| *a);
        let mut ranked: Vec<(u32, f32)> = touched
            .into_iter()
            .filter(|&slot| {
                everything
                    || self.chunks[slot as usize]
                        .as_ref()
                        .is_some_and(|(sid, _)| allowed[*sid as usize])
            })
            .map(|slot| (slot, acc[slot as usize]))
            .collect();
        best_first(&mut ranked, k);
        ranked
            .into_iter()
            .filter_map(|(slot, s)| {
                Some(Candidate {
                    key: self.key(slot)?,
                    value: s,
                })
            })
            .collect()
    }

    pub fn entry(&self, source: &str) -> Option<&SourceEntry> {
        self.sources[*self.ids.get(source)? as usize].as_ref()
    }

    pub fn record(&self, source: &str) -> Option<SourceRecord> {
        self.entry(source).map(|e| SourceRecord::from(&e.record))
    }

    pub fn chunk_at(&self, slot: u32) -> Option<Chunk> {
        self.chunks[slot as usize]
            .as_ref()
            .map(|(_, c)| Chunk::from(c))
    }

    /// Cross-checks what the state holds, naming each inconsistency: every
    /// source's slots hold its own chunks and as many as its record says,
    /// postings point at live chunks and sources, lengths add up, vectors
    /// belong to live chunks, the vectorless count is right, and vectors are
    /// of the model the index records.
    pub fn verify(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for (sid, entry) in self.sources.iter().enumerate() {
            let Some(e) = entry else { continue };
            if self.ids.get(&e.record.source) != Some(&(sid as u32)) {
                problems.push(format!(
                    "source {} is not found under its own name",
                    e.record.source
                ));
            }
            if e.record.chunk_count as usize != e.slots.len() {
                problems.push(format!(
                    "source {} records {} chunks but holds {}",
                    e.record.source,
                    e.record.chunk_count,
                    e.slots.len()
                ));
            }
            for &slot in &e.slots {
                match self.chunks.get(slot as usize) {
                    Some(Some((owner, _))) if *owner == sid as u32 => {}
                    _ => problems.push(format!(
                        "source {} lists chunk slot {slot}, which holds another source's chunk or none",
                        e.record.source
                    )),
                }
            }
            if let (Some(with), Some(model)) = (&e.record.embedded_with, &self.model_id) {
                if with != model && e.slots.iter().any(|&s| self.vectors.has(s)) {
                    problems.push(format!(
                        "source {} holds vectors of {with}, the index's are of {model}",
                        e.record.source
                    ));
                }
            }
        }
        let live_chunk = |slot: u32| {
            matches!(self.chunks.get(slot as usize), Some(Some((sid, _)))
                if matches!(self.sources.get(*sid as usize), Some(Some(_))))
        };
        let (text_bad, text_len) = self.text.dangling(live_chunk);
        if text_bad > 0 {
            problems.push(format!(
                "{text_bad} text postings point at chunks that are gone"
            ));
        }
        if !text_len {
            problems.push("the text field's total length does not add up".into());
        }
        let live_source = |sid: u32| matches!(self.sources.get(sid as usize), Some(Some(_)));
        let (title_bad, title_len) = self.title.dangling(live_source);
        if title_bad > 0 {
            problems.push(format!(
                "{title_bad} title postings point at sources that are gone"
            ));
        }
        if !title_len {
            problems.push("the title field's total length does not add up".into());
        }
        let vectorless = (0..self.chunks.len() as u32)
            .filter(|&slot| live_chunk(slot) && !self.vectors.has(slot))
            .count() as u64;
        if vectorless != self.vectorless {
            problems.push(format!(
                "{vectorless} live chunks have no vector, the index counts {}",
                self.vectorless
            ));
        }
        if self.model_id.is_none()
            && self
                .chunks
                .iter()
                .enumerate()
                .any(|(s, c)| c.is_some() && self.vectors.has(s as u32))
        {
            problems.push("vectors are stored but no model is recorded for them".into());
        }
        problems
    }

    /// Indexes every chunk's text and every source's title again, into
    /// empty fields: what a snapshot whose postings were damaged is rebuilt
    /// with (they are derived from the chunks, which are sound).
    pub fn rebuild_fields(&mut self) {
        for slot in 0..self.chunks.len() {
            if let Some((_, chunk)) = &self.chunks[slot] {
                let terms = self.analyzer.terms(&chunk.text);
                self.text.add(slot as u32, &terms);
            }
        }
        for sid in 0..self.sources.len() {
            if let Some(e) = &self.sources[sid] {
                let terms = self.analyzer.terms(&e.record.title);
                self.title.add(sid as u32, &terms);
            }
        }
    }

    /// Marks `sources` stale (an old chunking scheme), so the next sync
    /// rebuilds them from their files; returns how many are in the index.
    pub fn mark_stale(&mut self, sources: &[String]) -> usize {
        let mut n = 0;
        for source in sources {
            let Some(&sid) = self.ids.get(source) else {
                continue;
            };
            if let Some(Some(e)) = self.sources.get_mut(sid as usize) {
                e.record.scheme_version = 0;
                n += 1;
            }
        }
        n
    }

    pub fn stats(&self) -> IndexStats {
        let mut s = IndexStats::default();
        for e in self.sources.iter().flatten() {
            s.source_count += 1;
            let n = e.slots.len() as u64;
            s.chunk_count += n;
            if e.record.scheme_version < CHUNK_SCHEME {
                s.stale_chunk_count += n;
            }
            s.vectorless_chunk_count += e
                .slots
                .iter()
                .filter(|&&slot| !self.vectors.has(slot))
                .count() as u64;
        }
        s
    }

    pub fn cached_vector(&self, model_id: &str, text: &str) -> Option<Vec<f32>> {
        if self.model_id.as_deref() != Some(model_id) {
            return None;
        }
        let slot = *self.by_text.get(&text_hash(text))?;
        let (_, chunk) = self.chunks[slot as usize].as_ref()?;
        (&*chunk.text == text && self.vectors.has(slot))
            .then(|| self.vectors.row(slot).into_owned())
    }
}
