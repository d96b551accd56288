//! The `Index` port on `MemIndex`: reads through a view of the current
//! generation, writes through [`MemIndex::mutate`].

use minirag_core::chunk::Chunk;
use minirag_core::ports::{Embeddings, Index, IndexError, IndexView, SourceRecord, SyncLease};

use crate::disk::{WriterLock, WAL_HEADER};
use crate::generations::Reading;
use crate::reclaim::Pinned;
use crate::records::{DiskChunk, DiskSource, Op};
use crate::view::MemView;
use crate::{job_records, state, sync_lock, MemIndex, SETTLE_AFTER_BYTES, SETTLE_SHARE};

impl Index for MemIndex {
    fn read(&self) -> Result<Box<dyn IndexView + '_>, IndexError> {
        // Counted before the generation is taken, so a write that starts
        // meanwhile works on a copy.
        let reading = Reading::new(&self.shared);
        Ok(Box::new(MemView {
            inner: Pinned::new(self.guard()?),
            _reading: reading,
        }))
    }

    /// Folds a long log into a snapshot (see [`SETTLE_AFTER_BYTES`]), so the
    /// next cold open reads a snapshot instead of replaying the sync.
    fn settle(&self, announce: &mut dyn FnMut(&str)) -> Result<(), IndexError> {
        let _gate = self.gate();
        let _lock = WriterLock::take(&self.shared.paths)?;
        self.shared.catch_up()?;
        let (log, snapshot_bytes, outdated) = {
            let inner = self.current();
            (
                inner.wal_end.saturating_sub(WAL_HEADER),
                inner.snapshot_bytes,
                inner.snapshot_outdated,
            )
        };
        if outdated {
            announce(
                "rewriting the index in the current format, so the next open reads it at once",
            );
        } else if log <= SETTLE_AFTER_BYTES.max(snapshot_bytes / SETTLE_SHARE) {
            return Ok(());
        } else {
            announce(&format!(
                "folding the index log ({} MB) into a snapshot, so the next open reads it at once",
                log >> 20
            ));
        }
        self.compact_beside_queries()
    }

    fn lock_sync(&self) -> Result<SyncLease, IndexError> {
        sync_lock::take(&self.shared.paths.dir)
    }

    fn put_job(&self, job: &minirag_core::jobs::Job) -> Result<(), IndexError> {
        job_records::put(&self.shared.paths.dir, job)
    }

    fn job(&self, id: &str) -> Result<Option<minirag_core::jobs::Job>, IndexError> {
        job_records::get(&self.shared.paths.dir, id)
    }

    fn replace_source(
        &self,
        record: SourceRecord,
        chunks: Vec<Chunk>,
        vectors: Option<Embeddings>,
    ) -> Result<(), IndexError> {
        let dim = vectors.as_ref().map_or(0, |v| v.dim) as u32;
        let op = Op::Replace {
            source: DiskSource::from(&record),
            chunks: chunks.into_iter().map(DiskChunk::from).collect(),
            dim,
            vectors: vectors.map(|v| v.data),
        };
        self.mutate(op).map(|_| ())
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
        self.mutate(Op::SetVectors {
            source: source.into(),
            model: model_id.into(),
            dim: vectors.dim as u32,
            first,
            hashes: texts.iter().map(|t| state::text_hash(t)).collect(),
            vectors: vectors.data,
            complete,
        })
    }

    fn delete_source(&self, source: &str) -> Result<usize, IndexError> {
        if self.guard()?.state.entry(source).is_none() {
            return Ok(0);
        }
        self.mutate(Op::Delete {
            source: source.into(),
        })
    }

    fn move_source(&self, from: &str, to: &str, mtime: f64) -> Result<usize, IndexError> {
        {
            let inner = self.guard()?;
            if inner.state.entry(from).is_none() || inner.state.entry(to).is_some() {
                return Ok(0);
            }
        }
        self.mutate(Op::Move {
            from: from.into(),
            to: to.into(),
            mtime,
        })
    }

    fn cached_vectors(&self, model_id: &str, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
        match self.guard() {
            Ok(inner) => texts
                .iter()
                .map(|t| inner.state.cached_vector(model_id, t))
                .collect(),
            Err(_) => vec![None; texts.len()],
        }
    }
}
