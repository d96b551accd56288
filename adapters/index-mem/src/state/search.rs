//! Reads of the state: vector, keyword and whole-document search under a
//! scope, and the query's terms.

use std::collections::HashMap;

use minirag_core::ports::{Candidate, ChunkKey, DocumentHit};
use minirag_core::search::Scope;

use minirag_rank::{best_first, breadcrumb_repeats, title_score, BestChunk};

use super::*;

impl State {
    /// A query's distinct terms (BM25 counts each once per query).
    pub(crate) fn query_terms(&self, query: &str) -> Vec<String> {
        self.analyzer.query_terms(query)
    }

    pub(crate) fn allowed_sources(&self, scope: &Scope) -> Vec<bool> {
        self.sources
            .iter()
            .map(|e| e.as_ref().is_some_and(|e| scope.admits(&e.record)))
            .collect()
    }

    pub(crate) fn key(&self, slot: u32) -> Option<ChunkKey> {
        let sid = self.chunks.sid(slot)?;
        let entry = self.sources[sid as usize].as_ref()?;
        Some(ChunkKey {
            source: entry.record.source.clone(),
            index: self.chunks.index(slot)?,
        })
    }

    pub fn vector_search(&self, query: &[f32], k: usize, scope: &Scope) -> Vec<Candidate> {
        let allowed = self.allowed_sources(scope);
        let every = allowed
            .iter()
            .zip(self.sources.iter())
            .all(|(allowed, entry)| *allowed || entry.is_none());
        let hits = if every {
            // Every row with a vector is a live chunk's (removing or moving
            // a chunk clears its row): no per-row look-up into the chunks.
            self.vectors.nearest(query, k, |_| true)
        } else {
            let chunks = &self.chunks;
            self.vectors.nearest(query, k, |slot| {
                chunks.sid(slot).is_some_and(|sid| allowed[sid as usize])
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
            let (_, c) = self.chunks.get(slot)?;
            Some(
                c.text
                    .get(..c.prefix_len as usize)
                    .unwrap_or("")
                    .to_string(),
            )
        });
        let prefixes: Vec<String> = prefixes.collect();
        let r = breadcrumb_repeats(&self.analyzer, prefixes.iter().map(String::as_str));
        if r.len > 0 {
            self.repeats_len += r.len;
            Arc::make_mut(&mut self.repeats).insert(sid, Arc::new(r));
        }
    }

    /// Whole-document BM25: each source scored as one document made of its
    /// chunks' text, plus its [`title_score`]; best first, `scope`
    /// applied before the cut at `k`. Each carries its best chunk by
    /// chunk-level BM25 (text only: the title is the same for every chunk).
    pub fn document_search(&self, query: &str, k: usize, scope: &Scope) -> Vec<DocumentHit> {
        let terms = self.query_terms(query);
        let terms: Vec<&str> = terms.iter().map(String::as_str).collect();
        let allowed = self.allowed_sources(scope);
        let live = self.sources.iter().filter(|e| e.is_some()).count();
        let sid_of = |slot: u32| self.chunks.sid(slot);
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
                add(sid, title_score(s));
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
        // A title-only match keeps its first chunk.
        let mut best = vec![BestChunk::default(); ranked.len()];
        for (slot, s) in chunk_scores {
            let (Some(sid), Some(index)) = (self.chunks.sid(slot), self.chunks.index(slot)) else {
                continue;
            };
            best[rank_of[sid as usize] as usize].offer(s, index);
        }
        let best = best.into_iter().map(|b| b.index);
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
                    add(slot, title_score(s));
                }
            }
        });
        // The scope is checked once per touched slot, after scoring.
        let everything = allowed.iter().all(|a| *a);
        let mut ranked: Vec<(u32, f32)> = touched
            .into_iter()
            .filter(|&slot| {
                everything
                    || self
                        .chunks
                        .sid(slot)
                        .is_some_and(|sid| allowed[sid as usize])
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
}
