//! `MemView`: the read view over one generation of the state.

use std::ops::RangeInclusive;

use minirag_core::chunk::Chunk;
use minirag_core::ports::{
    Candidate, ChunkKey, DocumentHit, IndexError, IndexStats, IndexView, SourceRecord,
};
use minirag_core::search::Scope;

use crate::disk::WAL_HEADER;

use crate::generations::Reading;
use crate::reclaim::Pinned;

/// A read of one generation, pinned by its `Arc`: no lock is held while it
/// lives, so writers never wait for it, and it never sees half a write.
/// The thread holding it may call the index again, writes included.
pub(crate) struct MemView {
    pub(crate) inner: Pinned,
    /// Counts the view as a read in flight.
    pub(crate) _reading: Reading,
}

impl IndexView for MemView {
    fn vector_search(
        &self,
        query: &[f32],
        k: usize,
        scope: &Scope,
    ) -> Result<Vec<Candidate>, IndexError> {
        Ok(self.inner.state.vector_search(query, k, scope))
    }

    fn keyword_search(
        &self,
        query: &str,
        k: usize,
        scope: &Scope,
    ) -> Result<Vec<Candidate>, IndexError> {
        Ok(self.inner.state.keyword_search(query, k, scope))
    }

    fn document_search(
        &self,
        query: &str,
        k: usize,
        scope: &Scope,
    ) -> Result<Vec<DocumentHit>, IndexError> {
        Ok(self.inner.state.document_search(query, k, scope))
    }

    fn source(&self, source: &str) -> Result<Option<SourceRecord>, IndexError> {
        Ok(self.inner.state.record(source))
    }

    fn sources(&self, scope: &Scope) -> Result<Vec<SourceRecord>, IndexError> {
        let inner = &self.inner;
        let mut out: Vec<SourceRecord> = inner
            .state
            .sources
            .iter()
            .flatten()
            .filter(|e| scope.admits(&e.record))
            .map(|e| SourceRecord::from(&e.record))
            .collect();
        out.sort_by(|a, b| a.source.cmp(&b.source));
        Ok(out)
    }

    fn chunks(&self, source: &str, range: RangeInclusive<u32>) -> Result<Vec<Chunk>, IndexError> {
        let inner = &self.inner;
        let Some(entry) = inner.state.entry(source) else {
            return Ok(Vec::new());
        };
        let (start, end) = (*range.start() as usize, *range.end() as usize);
        Ok(entry
            .slots
            .iter()
            .skip(start)
            .take(end.saturating_sub(start).saturating_add(1))
            .filter_map(|&s| inner.state.chunk_at(s))
            .collect())
    }

    fn get_chunks(&self, keys: &[ChunkKey]) -> Result<Vec<Option<Chunk>>, IndexError> {
        let inner = &self.inner;
        Ok(keys
            .iter()
            .map(|k| {
                let entry = inner.state.entry(&k.source)?;
                inner.state.chunk_at(*entry.slots.get(k.index as usize)?)
            })
            .collect())
    }

    fn parent_chunks(&self, source: &str, parent: u32) -> Result<Vec<Chunk>, IndexError> {
        let inner = &self.inner;
        let Some(entry) = inner.state.entry(source) else {
            return Ok(Vec::new());
        };
        // Only the parent's chunks are decoded whole.
        Ok(entry
            .slots
            .iter()
            .filter(|&&s| inner.state.chunks.parent(s) == Some(parent))
            .filter_map(|&s| inner.state.chunk_at(s))
            .collect())
    }

    fn stats(&self) -> Result<IndexStats, IndexError> {
        Ok(IndexStats {
            damage: self.inner.damage.clone(),
            log_bytes: self.inner.wal_end.saturating_sub(WAL_HEADER),
            ..self.inner.state.stats()
        })
    }

    fn vector_model(&self) -> Option<String> {
        self.inner.state.vector_model()
    }

    fn vectorless_chunks(&self) -> Result<u64, IndexError> {
        Ok(self.inner.state.vectorless)
    }
}
