//! Looking at the state as a whole: records and chunks by key, its
//! statistics, its self-check, and what a repair marks or rebuilds.

use minirag_core::chunk::Chunk;
use minirag_core::ports::{IndexStats, SourceRecord};
use minirag_core::CHUNK_SCHEME;

use super::*;

impl State {
    pub fn entry(&self, source: &str) -> Option<&SourceEntry> {
        self.sources[*self.ids.get(source)? as usize].as_deref()
    }

    /// Whether more chunks were retired since the last compaction than are
    /// live (and at least [`crate::COMPACT_AFTER_RETIRED`]).
    pub(crate) fn mostly_retired(&self) -> bool {
        let retired = self.text.retired();
        retired >= crate::COMPACT_AFTER_RETIRED && retired > self.text.live()
    }

    /// Chunks `op` adds, retires, moves or gives vectors: what applying it
    /// costs, known before it is applied.
    pub(crate) fn chunks_touched(&self, op: &Op) -> usize {
        let held = |source: &str| self.entry(source).map_or(0, |e| e.slots.len());
        match op {
            Op::Replace { source, chunks, .. }
            | Op::ReplaceLocated { source, chunks, .. }
            | Op::ReplaceDescribed { source, chunks, .. } => chunks.len() + held(&source.source),
            Op::Delete { source } => held(source),
            Op::Move { from, .. } => held(from),
            Op::SetVectors { vectors, dim, .. } => vectors.len() / (*dim).max(1) as usize,
        }
    }

    pub fn record(&self, source: &str) -> Option<SourceRecord> {
        self.entry(source).map(|e| SourceRecord::from(&e.record))
    }

    pub fn chunk_at(&self, slot: u32) -> Option<Chunk> {
        self.chunks.get(slot).map(|(_, c)| Chunk::from(&*c))
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
            // Every chunk decoded: a snapshot's chunks are read in place,
            // and this is where each one is read whole.
            for &slot in &e.slots {
                match self.chunks.get(slot) {
                    Some((owner, _)) if owner == sid as u32 => {}
                    _ => problems.push(format!(
                        "source {} lists chunk slot {slot}, which holds another source's chunk or none \
                         (or one that does not decode)",
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
            self.chunks
                .sid(slot)
                .is_some_and(|sid| matches!(self.sources.get(sid as usize), Some(Some(_))))
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
            && (0..self.chunks.len() as u32).any(|s| self.chunks.live(s) && self.vectors.has(s))
        {
            problems.push("vectors are stored but no model is recorded for them".into());
        }
        problems
    }

    /// Indexes every chunk's text and every source's title again, into
    /// empty fields: what a snapshot whose postings were damaged is rebuilt
    /// with (they are derived from the chunks, which are sound).
    pub fn rebuild_fields(&mut self) {
        for slot in 0..self.chunks.len() as u32 {
            if let Some((_, chunk)) = self.chunks.get(slot) {
                let terms = self.analyzer.terms(&chunk.text);
                self.text.add(slot, &terms);
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
                Arc::make_mut(e).record.scheme_version = 0;
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
        let slot = {
            let mut table = self.text_table();
            let by_text = table.get_or_insert_with(|| self.text_slots());
            *by_text.get(&text_key(text))?
        };
        let (_, chunk) = self.chunks.get(slot)?;
        (&*chunk.text == text && self.vectors.has(slot))
            .then(|| self.vectors.row(slot).into_owned())
    }
}
