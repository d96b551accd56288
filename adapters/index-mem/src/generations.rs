//! The current generation and how it moves on: a writer of this process
//! publishes the next one, and catching up with other processes' log
//! records builds one. With reads of this process in flight, a helper
//! thread catches up beside them, so no query waits for another process's
//! writes to be replayed.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::thread::JoinHandle;

use parking_lot::RwLock;

use minirag_core::ports::IndexError;

use crate::disk::{self, Paths, WAL_HEADER};
use crate::reclaim;
use crate::recovery::{apply_log, load};
use crate::Inner;

/// The most chunks a write changes in place (adds, retires, moves or
/// gives vectors): a query arriving meanwhile waits for at most about a
/// tenth of a second of writing. A larger one works on a copy even in an
/// unread index, at a fifth more of its writing time (sources of 1,000
/// chunks at 500,000 terms; a tenth at 5,000).
const IN_PLACE_CHUNKS: usize = 1024;

/// What a `MemIndex` shares with its views and its catch-up helper.
pub(crate) struct Shared {
    pub(crate) paths: Paths,
    /// The current generation. The lock guards the pointer only: a reader
    /// holds it to clone the `Arc`, a writer to swap in the next one (or,
    /// when no view holds the generation, to change it in place).
    current: RwLock<Arc<Inner>>,
    /// Held by this process's writer from before its log append until the
    /// next generation is published, and by whoever catches up or
    /// compacts: one builder of the next generation at a time. Meanwhile a
    /// reader does not catch up with the log, which holds a record not yet
    /// applied (the writer catches up with other processes itself).
    writing: Mutex<()>,
    /// Views alive now, on every thread.
    views: AtomicUsize,
    /// Views ever taken, and how many there had been at this process's
    /// last write (or a lone reader's replay): a generation is changed in
    /// place only when the two agree (see [`Shared::update`]). Relaxed: they
    /// choose between two paths that are both correct, and a read that
    /// races a write only makes one of them wait.
    reads: AtomicU64,
    reads_at_last_write: AtomicU64,
    /// The helper catching up for the reads in flight (its result: 1 when
    /// it caught up).
    helper: Mutex<Option<JoinHandle<usize>>>,
    helping: AtomicBool,
    /// The helper's catch-up failed: the next read catches up itself, and
    /// returns the error.
    helper_failed: AtomicBool,
}

thread_local! {
    /// Views this thread holds (of any index): a read does not count its
    /// own caller's views as reads in flight.
    static HELD_HERE: Cell<usize> = const { Cell::new(0) };
}

/// Who replays another process's log records.
enum Replayer {
    /// A read with no other view of this process alive.
    LoneReader,
    /// A writer of this process before its write, compaction, the helper.
    Writer,
}

/// What the files hold that the current generation lacks.
enum Newer {
    Nothing,
    /// Another process compacted: a new snapshot to load.
    Snapshot,
    /// Log records past the generation's end.
    Records,
}

/// Counts a view as in flight while it lives.
pub(crate) struct Reading(Arc<Shared>);

impl Reading {
    pub(crate) fn new(shared: &Arc<Shared>) -> Self {
        shared.views.fetch_add(1, Ordering::Relaxed);
        shared.reads.fetch_add(1, Ordering::Relaxed);
        HELD_HERE.with(|h| h.set(h.get() + 1));
        Self(Arc::clone(shared))
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        self.0.views.fetch_sub(1, Ordering::Relaxed);
        // A view dropped on another thread than its own leaves that
        // thread's count high; saturating keeps it from wrapping.
        HELD_HERE.with(|h| h.set(h.get().saturating_sub(1)));
    }
}

/// Marks the helper ended when it drops.
struct Helped<'a>(&'a Shared);

impl Drop for Helped<'_> {
    fn drop(&mut self) {
        self.0.helping.store(false, Ordering::Release);
    }
}

impl Shared {
    pub(crate) fn new(paths: Paths, inner: Inner) -> Self {
        Self {
            paths,
            current: RwLock::new(Arc::new(inner)),
            writing: Mutex::new(()),
            views: AtomicUsize::new(0),
            reads: AtomicU64::new(0),
            reads_at_last_write: AtomicU64::new(0),
            helper: Mutex::new(None),
            helping: AtomicBool::new(false),
            helper_failed: AtomicBool::new(false),
        }
    }

    /// The current generation, as it is.
    pub(crate) fn current(&self) -> Arc<Inner> {
        Arc::clone(&self.current.read())
    }

    /// Swaps in the next generation; the one it replaces lives on until its
    /// last view drops.
    pub(crate) fn publish(&self, next: Inner) {
        let previous = std::mem::replace(&mut *self.current.write(), Arc::new(next));
        // Freed after the lock, off this thread, when this was its last holder.
        reclaim::release(previous);
    }

    /// Builds the next generation with `change`, for a caller that holds
    /// the writer gate, a change of `chunks` chunks. Changed in place only
    /// while the index is unread (no view holds the generation and none
    /// was taken since the last write: a sync alone, the CLI) and the
    /// change is small: a reader that arrives during an in-place change
    /// waits for all of it. Otherwise `change` works on a copy, which
    /// shares all that it leaves alone, and the copy is published: once
    /// reads come, no reader waits for a write, and the first after a
    /// quiet spell waits for one small write at most.
    pub(crate) fn update<R>(&self, chunks: usize, change: impl FnOnce(&mut Inner) -> R) -> R {
        let unread = self.unread_since_last_write(0, true);
        self.change(unread && chunks <= IN_PLACE_CHUNKS, change)
    }

    /// Whether no view was taken since this process's last write but
    /// `own` the caller took itself; `mark` makes this call the last write.
    fn unread_since_last_write(&self, own: u64, mark: bool) -> bool {
        let reads = self.reads.load(Ordering::Relaxed);
        let seen = if mark {
            self.reads_at_last_write.swap(reads, Ordering::Relaxed)
        } else {
            self.reads_at_last_write.load(Ordering::Relaxed)
        };
        reads.wrapping_sub(seen) <= own
    }

    /// `change` in place when asked and no view holds the generation;
    /// otherwise on a copy of it, which shares all that `change` leaves
    /// alone, published (no reader waits for it).
    fn change<R>(&self, in_place: bool, change: impl FnOnce(&mut Inner) -> R) -> R {
        if in_place {
            let mut current = self.current.write();
            if let Some(inner) = Arc::get_mut(&mut current) {
                return change(inner);
            }
        }
        let mut next = Inner::clone(&self.current());
        let out = change(&mut next);
        self.publish(next);
        out
    }

    /// This process's writer gate, for a writer: it waits for another
    /// writer of this process (or for a catch-up).
    pub(crate) fn gate(&self) -> MutexGuard<'_, ()> {
        self.writing.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Catches up with other processes before a read: a newer snapshot, or
    /// new log records. Skipped while a writer of this process is
    /// mid-write, or another thread is catching up. When no other read of
    /// this process is in flight the caller catches up itself, so it reads
    /// every write another process made before the call; otherwise a
    /// helper thread does, beside the reads, and the caller reads the
    /// newest generation published.
    pub(crate) fn refresh(self: &Arc<Self>) -> Result<(), IndexError> {
        let gate = match self.writing.try_lock() {
            Ok(gate) => gate,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return Ok(()),
        };
        let newer = self.newer();
        if matches!(newer, Newer::Nothing) {
            return Ok(());
        }
        let others = self
            .views
            .load(Ordering::Relaxed)
            .saturating_sub(HELD_HERE.with(Cell::get));
        if others == 0 || self.helper_failed.swap(false, Ordering::AcqRel) {
            return self.take_up(newer, Replayer::LoneReader);
        }
        drop(gate);
        self.help();
        Ok(())
    }

    /// Starts the helper unless it runs: it catches up once (every record
    /// the log holds then) and ends, so a writer of this process waiting
    /// for the gate gets it next; the next read that finds more starts
    /// another.
    fn help(self: &Arc<Self>) {
        if self.helping.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut slot = self.helper.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(done) = slot.take() {
            // The last helper cleared `helping` as it ended.
            let _ = done.join();
        }
        let me = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("minirag-catch-up".into())
            .spawn(move || {
                // Cleared however the helper ends, a panic included, so the
                // next read that finds more can start another.
                let _done = Helped(&me);
                let caught_up = {
                    let _gate = me.gate();
                    me.catch_up()
                };
                if caught_up.is_err() {
                    me.helper_failed.store(true, Ordering::Release);
                }
                usize::from(caught_up.is_ok())
            });
        match spawned {
            Ok(handle) => *slot = Some(handle),
            Err(_) => {
                // No thread to be had: the next read catches up itself.
                self.helper_failed.store(true, Ordering::Release);
                self.helping.store(false, Ordering::Release);
            }
        }
    }

    /// Waits for the helper to finish: 1 when it caught up, 0 when it
    /// failed, `None` when none ran since the last call (tests).
    pub(crate) fn join_helper(&self) -> Option<usize> {
        let handle = self.helper.lock().unwrap_or_else(|p| p.into_inner()).take();
        handle.and_then(|h| h.join().ok())
    }

    /// What the files hold that the current generation lacks: two stats,
    /// no reads (a compaction renames a new snapshot.meta into place, a new
    /// file identity, and appends only ever grow the WAL).
    fn newer(&self) -> Newer {
        let snapshot = disk::snapshot_identity(&self.paths);
        let wal_len = std::fs::metadata(self.paths.wal())
            .map(|m| m.len())
            .unwrap_or(0);
        let inner = self.current();
        if snapshot != inner.snapshot_identity {
            Newer::Snapshot
        } else if inner.wal_end == 0 && wal_len <= WAL_HEADER || wal_len == inner.wal_end {
            Newer::Nothing
        } else {
            Newer::Records
        }
    }

    /// [`Shared::refresh`] for a caller that holds the writer gate.
    pub(crate) fn catch_up(&self) -> Result<(), IndexError> {
        self.take_up(self.newer(), Replayer::Writer)
    }

    /// Takes up what [`Shared::newer`] found; the caller holds the gate.
    fn take_up(&self, newer: Newer, by: Replayer) -> Result<(), IndexError> {
        match newer {
            Newer::Nothing => Ok(()),
            // Another process compacted: the new generation is read beside
            // queries, then swapped in.
            Newer::Snapshot => {
                self.publish(load(&self.paths)?);
                Ok(())
            }
            // All the new records go into one next generation, read from
            // the log first, and replayed in place by the rule a write
            // follows, however many (the caller waits for all of them): on
            // a copy a lone reader replayed slower than a writer process
            // wrote, and its every query waited longer than the last.
            Newer::Records => {
                let (generation, end) = {
                    let current = self.current();
                    (current.generation, current.wal_end)
                };
                let read = disk::read_wal(&self.paths, end)?;
                // Only whole records of our log: a newer log (a snapshot to
                // load) or damage (a report to write) is taken up on a copy.
                let plain = read.generation == Some(generation) && read.damage.is_none();
                let unread = plain
                    && match by {
                        // Its own view is the one read it may have taken, and
                        // its replay is this process's last write.
                        Replayer::LoneReader => self.unread_since_last_write(1, true),
                        // Its own write comes next, and counts the reads.
                        Replayer::Writer => self.unread_since_last_write(0, false),
                    };
                self.change(unread, |inner| apply_log(&self.paths, inner, read))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use minirag_core::ports::Index;
    use minirag_index_conformance::synthetic::{source_record, vocabulary, zipf_chunk, Rng};

    use crate::MemIndex;

    fn write(index: &MemIndex, s: usize) {
        write_chunks(index, s, 3);
    }

    fn write_chunks(index: &MemIndex, s: usize, n: u32) {
        let (vocab, mut rng) = (vocabulary(), Rng(s as u64));
        let chunks = (0..n).map(|i| zipf_chunk(&mut rng, &vocab, i)).collect();
        index
            .replace_source(source_record(s, n as usize, &vocab), chunks, None)
            .unwrap();
    }

    /// Whether `then` changes the generation in place (the same allocation
    /// stays current) rather than publishing a copy.
    fn in_place(index: &MemIndex, then: impl FnOnce()) -> bool {
        let before = Arc::as_ptr(&index.shared.current());
        then();
        Arc::as_ptr(&index.shared.current()) == before
    }

    #[test]
    fn a_write_goes_in_place_only_while_no_view_was_taken_since_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let index = MemIndex::open(dir.path()).unwrap();
        write(&index, 0);
        assert!(in_place(&index, || write(&index, 1)), "an unread index");

        drop(index.read().unwrap());
        assert!(
            !in_place(&index, || write(&index, 2)),
            "a view was taken (and dropped) since the last write: a copy"
        );
        assert!(
            in_place(&index, || write(&index, 3)),
            "no view since that write: in place again"
        );

        let view = index.read().unwrap();
        assert!(!in_place(&index, || write(&index, 4)), "a view holds it");
        drop(view);
        assert_eq!(index.read().unwrap().stats().unwrap().source_count, 5);

        let large = super::IN_PLACE_CHUNKS as u32 + 1;
        write(&index, 5);
        assert!(
            !in_place(&index, || write_chunks(&index, 6, large)),
            "unread, but a large write: a copy"
        );
        assert!(
            !in_place(&index, || write_chunks(&index, 6, 2)),
            "unread, but it retires that large source's chunks: a copy"
        );
        assert!(in_place(&index, || write(&index, 6)), "small again");
    }

    /// Another handle on the folder writes as another process would; this
    /// one catches up with its log as it reads.
    #[test]
    fn a_lone_reader_replays_another_writers_records_in_place_and_a_copy_when_a_view_holds() {
        let dir = tempfile::tempdir().unwrap();
        let (reader, writer) = (
            MemIndex::open(dir.path()).unwrap(),
            MemIndex::open(dir.path()).unwrap(),
        );
        write(&writer, 0);
        drop(reader.read().unwrap());
        write(&writer, 1);
        let replayed = |then: &dyn Fn()| in_place(&reader, then);
        assert!(
            replayed(&|| drop(reader.read().unwrap())),
            "a lone read since the last catch-up: in place"
        );
        write(&writer, 2);
        let held = reader.read().unwrap();
        write(&writer, 3);
        assert!(
            !replayed(&|| drop(reader.read().unwrap())),
            "a view holds the generation: a copy"
        );
        assert_eq!(held.stats().unwrap().source_count, 3);
        drop(held);
        assert_eq!(reader.read().unwrap().stats().unwrap().source_count, 4);
    }
}
