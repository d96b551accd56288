//! The `Index` port: everything in memory, persisted as a checksummed
//! write-ahead log plus memory-mapped snapshots, shared by many processes.
//!
//! - [`analyzer`] and [`bm25`]: the hand-written keyword side.
//! - [`vectors`]: the contiguous vector matrix and its exact scan.
//! - [`state`]: the in-memory index, changed only by applying log records.
//! - [`disk`]: file formats, the WAL, snapshots and the writer lock.
//!
//! The index a query reads is one immutable generation behind an `Arc`: a
//! view clones the `Arc` and holds no lock while it lives. Writers take
//! this process's writer gate and the OS lock on `LOCK`, catch up with
//! other processes' log records, append their own record and fsync it,
//! then apply it to a copy of the current generation (which shares all
//! that the write does not change) and publish the copy with one pointer
//! swap; a generation no view holds is changed in place. Readers catch up
//! with the log before every call (`generations`): a lone reader itself,
//! and with other reads in flight a helper thread beside them; not while a
//! writer of this process holds the gate.

/// Re-exported: the analyzer is shared with every Index adapter.
#[doc(hidden)]
pub use minirag_rank as analyzer;
#[doc(hidden)]
pub mod bm25;
mod compaction;
mod damage;
#[doc(hidden)]
pub mod disk;
mod fresh_rows;
mod generations;
mod job_records;
mod legacy;
mod lists;
mod pages;
mod port;
mod postings;
mod reclaim;
#[doc(hidden)]
pub mod records;
mod recovery;
mod snapshot_state;
#[doc(hidden)]
pub mod state;
#[doc(hidden)]
pub mod sync_lock;
mod terms;
#[doc(hidden)]
pub mod vectors;
mod view;

use std::path::Path;
use std::sync::{Arc, MutexGuard};

use minirag_core::ports::IndexError;

use crate::disk::{Paths, WriterLock, WAL_HEADER};
use crate::generations::Shared;
use crate::records::Op;
use crate::state::State;
use compaction::*;
use recovery::*;

/// Fold the log into a new snapshot once it grows past this many bytes (or
/// past the snapshot's own size, whichever is larger).
pub const COMPACT_AFTER_BYTES: u64 = 64 << 20;

/// Fold the log into a new snapshot, too, once more chunks were retired
/// since the last than are live, and at least this many: their postings
/// stay in the lists until compaction drops them, and a query reads past
/// them (a small index re-synced often would otherwise wait for the
/// [`COMPACT_AFTER_BYTES`] of log).
pub const COMPACT_AFTER_RETIRED: u64 = 4096;

/// At the end of a sync, fold the log into a snapshot once it holds more
/// than this many bytes and more than [`SETTLE_SHARE`] of the snapshot:
/// every process that opens the index later (a CLI query, a `status`
/// poller) replays the log, and replaying re-analyses every chunk in it,
/// while a snapshot is read as it was written. A sync that changed a file or
/// two leaves a small log and pays nothing.
pub const SETTLE_AFTER_BYTES: u64 = 1 << 20;
/// The share of the snapshot's size (`1/SETTLE_SHARE`) past which a sync's
/// log is folded when the sync ends.
pub const SETTLE_SHARE: u64 = 8;

/// One generation of the index, with where it stands against the files.
#[derive(Clone)]
struct Inner {
    state: State,
    generation: u64,
    /// End of the last applied WAL record; 0 when the WAL does not follow
    /// our snapshot (missing, stale or torn header).
    wal_end: u64,
    /// Size of the current snapshot: the log may grow to this before it is
    /// folded, so compaction work stays linear in the data written.
    snapshot_bytes: u64,
    /// Identity of the snapshot file we loaded, taken before reading it (a
    /// replacement racing the read only causes one extra reload).
    snapshot_identity: Option<(u64, u64, i64)>,
    /// The current snapshot was corrupt and this state was rebuilt from the
    /// previous snapshot and the logs.
    recovered: bool,
    /// The log had damage with valid records after it: fold the state into
    /// a snapshot at open, so its stale marks are kept.
    damaged: bool,
    /// What [`damage_reports`] found in the folder when this state was read.
    damage: Vec<String>,
    /// The log was written by an older build (WAL format 1).
    wal_legacy: bool,
    /// The snapshot is in an older format: the next `settle` rewrites it,
    /// however short the log, so an upgraded index opens as fast as a new one.
    snapshot_outdated: bool,
}

impl Inner {
    /// A state just read from (or written as) a snapshot, before its log.
    fn fresh(
        state: State,
        generation: u64,
        snapshot_bytes: u64,
        snapshot_identity: Option<(u64, u64, i64)>,
    ) -> Self {
        Self {
            state,
            generation,
            wal_end: 0,
            snapshot_bytes,
            snapshot_identity,
            recovered: false,
            damaged: false,
            damage: Vec::new(),
            wal_legacy: false,
            snapshot_outdated: false,
        }
    }
}

/// The embedded index: in memory, persisted under one folder, shared by the processes that open it.
pub struct MemIndex {
    shared: Arc<Shared>,
    compact_after: u64,
}

impl MemIndex {
    /// Opens (creating if needed) the index folder.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, IndexError> {
        Self::open_checking(dir, disk::CHECKED_AT_OPEN)
    }

    /// [`MemIndex::open`], reading the checksums of vector files up to
    /// `checked_at_open` bytes (tests: a small index with a large one's
    /// checks).
    #[doc(hidden)]
    pub fn open_checking(dir: impl AsRef<Path>, checked_at_open: u64) -> Result<Self, IndexError> {
        let dir = dir.as_ref().to_path_buf();
        if dir.exists() && !dir.is_dir() {
            return Err(IndexError::Storage {
                cause: None,
                reason: format!(
                    "DB_PATH {} is a file, not a folder; point DB_PATH at a folder",
                    dir.display()
                ),
            });
        }
        std::fs::create_dir_all(&dir).map_err(|e| IndexError::Io {
            context: format!("cannot create the index folder DB_PATH {}", dir.display()),
            source: minirag_core::cause::Cause::new(e),
        })?;
        let paths = Paths {
            checked_at_open,
            ..Paths::new(dir)
        };
        let inner = load(&paths)?;
        let recovered = inner.recovered || inner.damaged;
        let index = Self {
            shared: Arc::new(Shared::new(paths, inner)),
            compact_after: COMPACT_AFTER_BYTES,
        };
        if recovered {
            // Replace the corrupt snapshot with a good one right away.
            index.compact()?;
        }
        Ok(index)
    }

    /// Sets the log size that triggers compaction (tests use small values).
    pub fn with_compaction_threshold(mut self, bytes: u64) -> Self {
        self.compact_after = bytes;
        self
    }

    /// The generation after catching up with other processes.
    fn guard(&self) -> Result<Arc<Inner>, IndexError> {
        self.refresh()?;
        Ok(self.current())
    }

    /// The current generation, as it is.
    fn current(&self) -> Arc<Inner> {
        self.shared.current()
    }

    /// This process's writer gate (see [`Shared::gate`]).
    fn gate(&self) -> MutexGuard<'_, ()> {
        self.shared.gate()
    }

    /// Catches up with other processes (see [`Shared::refresh`]).
    pub fn refresh(&self) -> Result<(), IndexError> {
        self.shared.refresh()
    }

    /// Waits for the thread that catches up beside reads in flight: 1 when
    /// it caught up, 0 when it failed, `None` when none ran since the last
    /// call (tests).
    #[doc(hidden)]
    pub fn join_catch_up_helper(&self) -> Option<usize> {
        self.shared.join_helper()
    }

    /// Checks, logs (appended and fsynced with no lock readers wait on),
    /// then applies `op` to the next generation (`Shared::update`).
    fn mutate(&self, op: Op) -> Result<usize, IndexError> {
        let _gate = self.gate();
        let _lock = WriterLock::take(&self.shared.paths)?;
        self.shared.catch_up()?;
        // Only this writer changes the log's end and generation now (the
        // gate and the OS lock are held): reading them, then appending
        // without the lock, is safe.
        let (generation, end, legacy, fresh_log, chunks) = {
            let inner = self.current();
            inner.state.check(&op)?;
            let fresh_log = inner.wal_legacy || inner.wal_end == 0;
            let chunks = inner.state.chunks_touched(&op);
            (
                inner.generation,
                inner.wal_end,
                inner.wal_legacy,
                fresh_log,
                chunks,
            )
        };
        let (generation, end) = if fresh_log {
            // Folding an older build's log rewrites the whole index: never
            // in place, where a reader would wait for it.
            let rewritten = if legacy { usize::MAX } else { 0 };
            self.shared.update(rewritten, |inner| {
                if inner.wal_legacy {
                    // An older build's log: fold it into a snapshot first,
                    // so the new log holds one layout.
                    compact(&self.shared.paths, inner)?;
                }
                if inner.wal_end == 0 {
                    disk::reset_wal(&self.shared.paths, inner.generation)?;
                    inner.wal_end = WAL_HEADER;
                }
                Ok::<_, IndexError>((inner.generation, inner.wal_end))
            })?
        } else {
            (generation, end)
        };
        let op = op.into_logged();
        let end = disk::append_wal(&self.shared.paths, end, &op)?;
        disk::note_wal_end(&self.shared.paths, generation, end);
        let (n, fold) = self.shared.update(chunks, |inner| {
            inner.wal_end = end;
            let n = inner.state.apply(op);
            (
                n,
                inner.wal_end > self.compact_after.max(inner.snapshot_bytes)
                    || inner.state.mostly_retired(),
            )
        });
        if fold {
            self.compact_beside_queries()?;
        }
        Ok(n)
    }

    /// Writes the next snapshot generation from a read of the state, so
    /// queries go on meanwhile, then publishes it. The
    /// caller holds the writer gate and the OS lock: nothing else changes
    /// the state, and this process does not catch up, until it is done.
    fn compact_beside_queries(&self) -> Result<(), IndexError> {
        match write_next(&self.shared.paths, &self.current()) {
            Ok(next) => {
                self.shared.publish(next);
                Ok(())
            }
            Err(e) => {
                // A write that failed half way may have switched the
                // snapshot but not the log: the files say which.
                self.shared.publish(load(&self.shared.paths)?);
                Err(e)
            }
        }
    }

    /// Waits for background work started at open (the int8 copy of a large
    /// snapshot), so a bench measures the steady state.
    pub fn warm(&self) -> Result<(), IndexError> {
        self.guard()?.state.vectors.wait_quantized();
        Ok(())
    }

    /// Whether the snapshot's int8 copy of its vectors is read in place
    /// from its file (tests and benches: a cold open then builds nothing).
    #[doc(hidden)]
    pub fn quantized_in_place(&self) -> Result<bool, IndexError> {
        Ok(self.guard()?.state.vectors.quantized_in_place())
    }

    /// Reads the index whole and cross-checks it: the checksums of vector
    /// files too large to read at open ([`disk::CHECKED_AT_OPEN`]; every
    /// other checksum was read at open), the references between its parts, and the damage it reported while what
    /// that damage lost is not rebuilt yet (sources still stale). Each
    /// problem named; empty when sound.
    pub fn verify(&self) -> Result<Vec<String>, IndexError> {
        let inner = self.guard()?;
        let mut problems = Vec::new();
        if inner.state.stats().stale_chunk_count > 0 {
            problems.extend(inner.damage.iter().cloned());
        }
        problems.extend(inner.state.verify());
        problems.extend(inner.state.vectors.verify_files());
        Ok(problems)
    }

    /// Folds the log into a new snapshot now.
    pub fn compact(&self) -> Result<(), IndexError> {
        let _gate = self.gate();
        let _lock = WriterLock::take(&self.shared.paths)?;
        self.shared.catch_up()?;
        self.compact_beside_queries()
    }
}
