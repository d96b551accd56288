//! The `Index` port: everything in memory, persisted as a checksummed
//! write-ahead log plus memory-mapped snapshots, shared by many processes.
//!
//! - [`analyzer`] and [`bm25`]: the hand-written keyword side.
//! - [`vectors`]: the contiguous vector matrix and its exact scan.
//! - [`state`]: the in-memory index, changed only by applying log records.
//! - [`disk`]: file formats, the WAL, snapshots and the writer lock.
//!
//! Writers take the OS lock on `LOCK`, catch up with other processes' log
//! records, append their own record, fsync, and only then apply it. Readers
//! catch up before every call by reading the log from where they stopped,
//! or reloading when a newer snapshot appeared.

/// Re-exported: the analyzer is shared with every Index adapter.
pub use minirag_analyzer as analyzer;
pub mod bm25;
pub mod disk;
mod fresh_rows;
mod job_records;
mod legacy;
mod postings;
pub mod records;
pub mod state;
pub mod sync_lock;
mod terms;
pub mod vectors;

use std::fs::File;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock, RwLockReadGuard};

use memmap2::Mmap;
use minirag_core::chunk::Chunk;
use minirag_core::ports::{
    Candidate, ChunkKey, DocumentHit, Embeddings, Index, IndexError, IndexStats, IndexView,
    SourceRecord, SyncLease,
};
use minirag_core::search::Scope;

use crate::disk::{Paths, Snapshot, WriterLock, FORMAT_VERSION, WAL_HEADER};
use crate::records::{DiskChunk, DiskSource, Op};
use crate::state::{text_hash, SourceEntry, State};
use crate::vectors::Matrix;

/// Fold the log into a new snapshot once it grows past this many bytes (or
/// past the snapshot's own size, whichever is larger).
pub const COMPACT_AFTER_BYTES: u64 = 64 << 20;

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
        }
    }
}

pub struct MemIndex {
    paths: Paths,
    inner: RwLock<Inner>,
    compact_after: u64,
}

impl MemIndex {
    /// Opens (creating if needed) the index folder.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, IndexError> {
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
        let paths = Paths { dir };
        let inner = load(&paths)?;
        let recovered = inner.recovered || inner.damaged;
        let index = Self {
            paths,
            inner: RwLock::new(inner),
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

    /// The state after catching up with other processes, read-locked.
    fn guard(&self) -> Result<RwLockReadGuard<'_, Inner>, IndexError> {
        self.refresh()?;
        Ok(self.inner.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Catches up with other processes: a newer snapshot, or new log records.
    pub fn refresh(&self) -> Result<(), IndexError> {
        // Two stats per call, no reads: a compaction renames a new
        // snapshot.meta into place (a new file identity), and appends only
        // ever grow the WAL.
        let snapshot = disk::snapshot_identity(&self.paths);
        let wal_len = std::fs::metadata(self.paths.wal())
            .map(|m| m.len())
            .unwrap_or(0);
        {
            let inner = self.inner.read().unwrap_or_else(|p| p.into_inner());
            if snapshot == inner.snapshot_identity
                && (inner.wal_end == 0 && wal_len <= WAL_HEADER || wal_len == inner.wal_end)
            {
                return Ok(());
            }
        }
        let mut inner = self.inner.write().unwrap_or_else(|p| p.into_inner());
        if snapshot != inner.snapshot_identity {
            *inner = load(&self.paths)?;
            return Ok(());
        }
        catch_up(&self.paths, &mut inner)
    }

    fn mutate(&self, op: Op) -> Result<usize, IndexError> {
        let _lock = WriterLock::take(&self.paths)?;
        self.refresh()?;
        let mut inner = self.inner.write().unwrap_or_else(|p| p.into_inner());
        inner.state.check(&op)?;
        if inner.wal_legacy {
            // An older build's log: fold it into a snapshot first, so the
            // new log holds one layout.
            compact(&self.paths, &mut inner)?;
        }
        if inner.wal_end == 0 {
            disk::reset_wal(&self.paths, inner.generation)?;
            inner.wal_end = WAL_HEADER;
        }
        let op = op.into_logged();
        inner.wal_end = disk::append_wal(&self.paths, inner.wal_end, &op)?;
        disk::note_wal_end(&self.paths, inner.generation, inner.wal_end);
        let n = inner.state.apply(op);
        if inner.wal_end > self.compact_after.max(inner.snapshot_bytes) {
            compact(&self.paths, &mut inner)?;
        }
        Ok(n)
    }

    /// Waits for background work started at open (the int8 copy of a large
    /// snapshot), so a bench measures the steady state.
    pub fn warm(&self) -> Result<(), IndexError> {
        self.guard()?.state.vectors.wait_quantized();
        Ok(())
    }

    /// Reads the index whole and cross-checks it: every checksum was read at
    /// open (snapshot, vector file, each log record), so this adds the
    /// references between its parts, and the damage it reported while what
    /// that damage lost is not rebuilt yet (sources still stale). Each
    /// problem named; empty when sound.
    pub fn verify(&self) -> Result<Vec<String>, IndexError> {
        let inner = self.guard()?;
        let mut problems = Vec::new();
        if inner.state.stats().stale_chunk_count > 0 {
            problems.extend(inner.damage.iter().cloned());
        }
        problems.extend(inner.state.verify());
        Ok(problems)
    }

    /// Folds the log into a new snapshot now.
    pub fn compact(&self) -> Result<(), IndexError> {
        let _lock = WriterLock::take(&self.paths)?;
        self.refresh()?;
        let mut inner = self.inner.write().unwrap_or_else(|p| p.into_inner());
        compact(&self.paths, &mut inner)
    }
}

fn load(paths: &Paths) -> Result<Inner, IndexError> {
    let snapshot_identity = disk::snapshot_identity(paths);
    let loaded = disk::read_snapshot(paths)
        .map_err(|error| Damaged {
            file: paths.meta(),
            error,
        })
        .and_then(|snap| match snap {
            Some((generation, snap)) => {
                let meta = std::fs::metadata(paths.meta()).map_or(0, |m| m.len());
                let bytes = meta + snap.vector_bytes;
                Ok((generation, from_snapshot(paths, snap)?, bytes))
            }
            None => Ok((0, empty_state(paths), 0)),
        });
    let (generation, state, snapshot_bytes) = match loaded {
        Ok(l) => l,
        Err(Damaged {
            file,
            error: corrupt,
        }) => {
            let Some(inner) = recover(paths, snapshot_identity) else {
                // No history to rebuild from: open what is sound.
                return salvage(paths, snapshot_identity, &corrupt).ok_or(corrupt);
            };
            eprintln!(
                "warn: {corrupt}; rebuilt the index from {}, {} and {}",
                paths.prev_meta().display(),
                paths.prev_wal().display(),
                paths.wal().display()
            );
            let why = corrupt.to_string();
            keep_replaced(
                paths,
                &file,
                inner.generation,
                &why,
                "the index was rebuilt from the previous snapshot and the logs",
            );
            let mut inner = inner;
            inner.damage = damage_reports(&paths.dir);
            return Ok(inner);
        }
    };
    let mut inner = Inner::fresh(state, generation, snapshot_bytes, snapshot_identity);
    let noted = disk::noted_wal_end(paths, generation);
    catch_up(paths, &mut inner)?;
    if let Some(noted) = noted {
        if noted > disk::WAL_HEADER && inner.wal_end < noted && !inner.damaged {
            // The log ends before records that were acknowledged: cut
            // short, or gone (a missing log reads as ending at 0).
            report_cut(paths, &mut inner, noted);
            // Noted once: the next write starts from the end found.
            disk::note_wal_end(paths, generation, inner.wal_end);
        }
    }
    inner.damage = damage_reports(&paths.dir);
    Ok(inner)
}

const SALVAGED_POSTINGS: &str = "with no earlier generation to rebuild from, the index opened \
     with what is sound: its postings rebuilt from the chunks' text";
const SALVAGED_LOCATIONS: &str = "with no earlier generation to rebuild from, the index opened \
     with what is sound: its chunks without their places, until the next sync rebuilds them";
const SALVAGED_VECTORS: &str = "with no earlier generation to rebuild from, the index opened \
     with what is sound: its chunks without vectors, until the next sync embeds them";

/// Opens what is sound of a damaged snapshot that has no history to be
/// rebuilt from: its sources and chunks must be readable; damaged postings
/// are rebuilt from the chunks' text, and a damaged vector file is left
/// out (the chunks stay, without vectors, and the next sync embeds them).
/// `None` when neither part is the damage, or the rest is not sound.
fn salvage(
    paths: &Paths,
    snapshot_identity: Option<(u64, u64, i64)>,
    corrupt: &IndexError,
) -> Option<Inner> {
    let (generation, mut snap, lost_parts) = disk::salvage_snapshot(&paths.meta()).ok()??;
    let postings_lost = lost_parts.postings;
    let locations_lost = lost_parts.locations;
    let vector_path = paths.dir.join(&snap.vector_file);
    let vectors_lost = snap.vector_bytes > 0
        && disk::file_crc(&vector_path, snap.vector_bytes)
            .map_or(true, |crc| crc != snap.vector_crc);
    if !postings_lost && !vectors_lost && !locations_lost {
        return None;
    }
    if vectors_lost {
        snap.vector_bytes = 0;
        snap.present.iter_mut().for_each(|p| *p = false);
    }
    let meta = std::fs::metadata(paths.meta()).map_or(0, |m| m.len());
    let mut state = from_snapshot(paths, snap).ok()?;
    if postings_lost {
        state.rebuild_fields();
    }
    if locations_lost {
        // The next sync rebuilds every source's chunks, locations with them
        // (their vectors come back from the chunk-text cache).
        let all: Vec<String> = state.ids.keys().cloned().collect();
        state.mark_stale(&all);
    }
    let mut inner = Inner::fresh(state, generation, meta, snapshot_identity);
    catch_up(paths, &mut inner).ok()?;
    let mut lost = Vec::new();
    if postings_lost {
        lost.push("its keyword postings were rebuilt from the chunks' text");
        keep_replaced(
            paths,
            &paths.meta(),
            generation,
            &corrupt.to_string(),
            SALVAGED_POSTINGS,
        );
    }
    if locations_lost && !postings_lost {
        lost.push(
            "its chunks' places (pages, lines) and its documents' languages and fields are unknown \
             until the next sync rebuilds them",
        );
        keep_replaced(
            paths,
            &paths.meta(),
            generation,
            &corrupt.to_string(),
            SALVAGED_LOCATIONS,
        );
    }
    if vectors_lost {
        lost.push("its vectors are left out until the next sync embeds the chunks again");
        keep_replaced(
            paths,
            &vector_path,
            generation,
            &corrupt.to_string(),
            SALVAGED_VECTORS,
        );
    }
    eprintln!("warn: {corrupt}; with no earlier generation to rebuild from, the index opens with what is sound: {}", lost.join("; "));
    // Written out as a fresh snapshot at open, as a recovered state is; the
    // damaged snapshot is not kept as the previous one.
    inner.recovered = true;
    inner.damage = damage_reports(&paths.dir);
    Some(inner)
}

/// Rebuilds the state a corrupt snapshot held: the previous snapshot (or the
/// empty state before the first one), the log that led from it to the
/// corrupt one, and the current log on top. `None` when any piece is
/// missing, damaged or from another generation.
fn recover(paths: &Paths, snapshot_identity: Option<(u64, u64, i64)>) -> Option<Inner> {
    let (base, mut state) = match disk::read_snapshot_at(&paths.prev_meta()).ok()? {
        Some((g, snap)) => (g, from_snapshot(paths, snap).ok()?),
        None => (0, empty_state(paths)),
    };
    let previous = disk::read_wal_at(&paths.prev_wal(), 0).ok()?;
    if previous.generation != Some(base) || previous.tail > 0 {
        return None;
    }
    let current = disk::read_wal(paths, 0).ok()?;
    if current.generation != Some(base + 1) {
        return None;
    }
    for op in previous.ops.into_iter().chain(current.ops) {
        state.apply(op);
    }
    Some(Inner {
        state,
        generation: base + 1,
        wal_end: current.end,
        snapshot_bytes: 0,
        snapshot_identity,
        recovered: true,
        damaged: false,
        damage: damage_reports(&paths.dir),
        wal_legacy: current.legacy,
    })
}

/// Applies log records past `wal_end` when the log follows our snapshot.
fn catch_up(paths: &Paths, inner: &mut Inner) -> Result<(), IndexError> {
    let read = disk::read_wal(paths, inner.wal_end)?;
    match read.generation {
        Some(g) if g == inner.generation => {
            // Records were checked by their writer before being logged, and
            // are checked again: one whose checksum holds but which does not
            // fit the state (written wrong, or damaged past its checksum)
            // stops the replay as damage would.
            let mut end = read.end;
            let mut damage = read.damage;
            let offsets = read.offsets;
            for (i, op) in read.ops.into_iter().enumerate() {
                if let Err(e) = inner.state.check_replay(&op) {
                    let at = offsets[i];
                    eprintln!("warn: a log record at byte {at} does not fit the index ({e})");
                    end = at;
                    damage = Some(disk::WalDamage {
                        at,
                        records_after: offsets.len() - i,
                        sources_after: Vec::new(),
                    });
                    break;
                }
                inner.state.apply(op);
            }
            inner.wal_end = end;
            inner.wal_legacy = read.legacy;
            if let Some(damage) = damage {
                report_damage(paths, inner, &damage);
            }
        }
        // A newer log: another process compacted, so there is a newer
        // snapshot to load. With none (our snapshot is still the current
        // file), the log's generation itself is damaged.
        Some(g) if g > inner.generation => {
            if disk::snapshot_identity(paths) != inner.snapshot_identity {
                *inner = load(paths)?;
            } else {
                inner.wal_end = 0;
                if let Some(damage) = disk::header_damage(paths)? {
                    report_damage(paths, inner, &damage);
                }
            }
        }
        _ => {
            inner.wal_end = 0;
            if let Some(damage) = read.damage {
                report_damage(paths, inner, &damage);
            }
        }
    }
    Ok(())
}

/// Contains `damage` and says so on stderr and in the stats; the state is
/// written into a snapshot at open, so its stale marks outlive this process.
fn report_damage(paths: &Paths, inner: &mut Inner, damage: &disk::WalDamage) {
    let message = contain_damage(paths, inner, damage);
    eprintln!("warn: {message}");
    inner.damage.push(message);
    inner.damaged = true;
}

/// Sets a damaged log aside (never deleted) and marks the sources its later
/// records wrote stale; returns the message that names it. The copy's
/// `.txt` twin keeps the message for `status` and `doctor`.
fn contain_damage(paths: &Paths, inner: &mut Inner, damage: &disk::WalDamage) -> String {
    let copy = keep_log_aside(paths, inner.generation, damage.at);
    let present = inner.state.mark_stale(&damage.sources_after);
    let message = format!(
        "the index log {} is damaged at byte {}: {} later records, writing {} sources ({present} \
         still in the index, now marked stale), were not applied; the damaged log is kept as {}, \
         and the next sync rebuilds those sources from their files",
        paths.wal().display(),
        damage.at,
        damage.records_after,
        damage.sources_after.len(),
        copy.display()
    );
    let _ = std::fs::write(copy.with_extension(REPORT_EXTENSION), &message);
    message
}

/// Copies the log as it is to `wal.damaged-<generation>-<offset>.log`
/// (once; never deleted), before a write cuts it at `at`.
fn keep_log_aside(paths: &Paths, generation: u64, at: u64) -> std::path::PathBuf {
    let copy = paths
        .dir
        .join(format!("{DAMAGED_PREFIX}{generation}-{at}.log"));
    if !copy.exists() {
        if let Err(e) = std::fs::copy(paths.wal(), &copy) {
            eprintln!(
                "warn: cannot keep the damaged log as {}: {e}",
                copy.display()
            );
        }
    }
    copy
}

/// Keeps what a rebuild replaced: the corrupt file as
/// `<name>.damaged-<generation>` (never deleted) and a report beside it for
/// `status` and `doctor`, saying `why` and what was `done` instead.
fn keep_replaced(paths: &Paths, corrupt: &std::path::Path, generation: u64, why: &str, done: &str) {
    let name = corrupt
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let copy = paths.dir.join(format!("{name}.damaged-{generation}"));
    if corrupt.exists() && !copy.exists() {
        let _ = std::fs::copy(corrupt, &copy);
    }
    let message = format!(
        "{why}; {done}, and the damaged file is kept as {}",
        copy.display()
    );
    let report = format!("{}.{REPORT_EXTENSION}", copy.display());
    let _ = std::fs::write(report, message);
}

/// A log that ends before `noted`, where acknowledged records ended: what
/// was cut is gone without a trace, so the log is kept as it is and the cut
/// named; the next sync rebuilds what those records held from the files.
fn report_cut(paths: &Paths, inner: &mut Inner, noted: u64) {
    // Which sources the lost records wrote is not known: every file's
    // source is rebuilt by the next sync (vectors come back from the cache).
    let files: Vec<String> = inner
        .state
        .sources
        .iter()
        .flatten()
        .filter(|e| e.record.source_type == 0)
        .map(|e| e.record.source.clone())
        .collect();
    let stale = inner.state.mark_stale(&files);
    let lost = noted - inner.wal_end;
    let after = format!(
        "every file's source ({stale}) is marked stale and the next sync rebuilds them from the \
         files; documents from ingest_data or ingest_url written since the last snapshot are gone"
    );
    let (report, message) = if paths.wal().exists() {
        let copy = keep_log_aside(paths, inner.generation, inner.wal_end);
        let message = format!(
            "the index log {} is cut short at byte {}: {lost} bytes of acknowledged records after \
             it are gone; the log is kept as {}, and {after}",
            paths.wal().display(),
            inner.wal_end,
            copy.display()
        );
        (copy.with_extension(REPORT_EXTENSION), message)
    } else {
        let message = format!(
            "the index log {} is missing, but {} notes {lost} bytes of acknowledged records in it: \
             they are gone, and {after}",
            paths.wal().display(),
            paths.wal_end().display()
        );
        let report = paths.dir.join(format!(
            "wal.missing-{}.{REPORT_EXTENSION}",
            inner.generation
        ));
        (report, message)
    };
    let _ = std::fs::write(report, &message);
    eprintln!("warn: {message}");
    inner.damage.push(message);
    // Written out as a snapshot at open, so the stale marks outlive this
    // process.
    inner.damaged = true;
}

/// Damaged logs set aside in `dir` (`wal.damaged-<generation>-<offset>.log`),
/// each with the message that named it.
pub fn damage_reports(dir: &std::path::Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(&format!(".{REPORT_EXTENSION}"))
        })
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect();
    out.sort();
    out
}

const DAMAGED_PREFIX: &str = "wal.damaged-";
/// Each kept damaged file has a report beside it with this extension.
const REPORT_EXTENSION: &str = "damage.txt";

/// An index with nothing in it yet, whose vectors spill into its folder.
fn empty_state(paths: &Paths) -> State {
    let mut state = State::new();
    state
        .vectors
        .set_spill_dir(Some(Arc::from(paths.dir.as_path())));
    state
}

/// What a decoded snapshot must hold to be used: its checksums held, so a
/// failure here is a snapshot written wrong or damaged past its checksum.
fn snapshot_consistent(snap: &Snapshot) -> Result<(), String> {
    let (n_chunks, n_sources) = (snap.chunks.len(), snap.sources.len());
    if snap.present.len() != n_chunks {
        return Err(format!(
            "{} vector flags for {n_chunks} chunks",
            snap.present.len()
        ));
    }
    if snap.vector_bytes > 0 && snap.vector_bytes != n_chunks as u64 * u64::from(snap.dim) * 4 {
        return Err(format!(
            "a vector file of {} bytes for {n_chunks} chunks of {} dimensions",
            snap.vector_bytes, snap.dim
        ));
    }
    if snap
        .chunks
        .iter()
        .any(|(sid, _)| *sid as usize >= n_sources)
    {
        return Err("a chunk of a source that is not there".into());
    }
    for (sid, e) in snap.sources.iter().enumerate() {
        if e.slots.iter().any(|&s| {
            snap.chunks
                .get(s as usize)
                .is_none_or(|(owner, _)| *owner as usize != sid)
        }) {
            return Err(format!(
                "source {} lists chunks it does not own",
                e.record.source
            ));
        }
    }
    if !snap.text.fits(n_chunks) || !snap.title.fits(n_sources) {
        return Err("postings that name chunks or sources that are not there".into());
    }
    Ok(())
}

/// A snapshot that could not be taken up, with the file at fault: recovery
/// sets that file aside by name (the error's text is for people).
#[derive(Debug)]
struct Damaged {
    file: PathBuf,
    error: IndexError,
}

impl From<Damaged> for IndexError {
    fn from(d: Damaged) -> Self {
        d.error
    }
}

fn from_snapshot(paths: &Paths, snap: Snapshot) -> Result<State, Damaged> {
    let damaged = |file: &Path, error| Damaged {
        file: file.to_path_buf(),
        error,
    };
    if let Err(why) = snapshot_consistent(&snap) {
        let meta = paths.meta();
        return Err(damaged(
            &meta,
            disk::storage(
                &meta,
                "is corrupt",
                format!("{why}; move it away and re-sync, or restore it from a backup"),
            ),
        ));
    }
    let mut state = State::new();
    let dim = snap.dim as usize;
    let map = if snap.vector_bytes > 0 {
        let path = paths.dir.join(&snap.vector_file);
        let file =
            File::open(&path).map_err(|e| damaged(&path, disk::io(&path, "cannot open", e)))?;
        // SAFETY: vector files are written once, renamed into place and never
        // modified; a replaced file stays valid while mapped.
        let map = unsafe { Mmap::map(&file) }
            .map_err(|e| damaged(&path, disk::io(&path, "cannot map", e)))?;
        Some((path, map))
    } else {
        None
    };
    // The vector file's checksum is verified on a second thread while this
    // one builds the lookup tables. It is read through the file, not the
    // map: pages touched through a map count in this process's memory until
    // evicted (a sync that compacts a big embedded index would hold the
    // whole vector file resident without ever searching it).
    let vectors_ok = std::thread::scope(|s| {
        let check = s.spawn(|| {
            map.as_ref().is_none_or(|(path, m)| {
                m.len() as u64 == snap.vector_bytes
                    && disk::file_crc(path, snap.vector_bytes)
                        .is_ok_and(|crc| crc == snap.vector_crc)
            })
        });
        for (sid, entry) in snap.sources.iter().enumerate() {
            state.ids.insert(entry.record.source.clone(), sid as u32);
        }
        for (slot, (_, chunk)) in snap.chunks.iter().enumerate() {
            if snap.present[slot] && dim > 0 && map.is_some() {
                state.by_text.insert(text_hash(&chunk.text), slot as u32);
            }
        }
        check.join().unwrap_or(false)
    });
    let (mapped, rows) = (map.is_some(), snap.present.len());
    state.vectors = match map {
        Some((path, _)) if !vectors_ok => {
            return Err(damaged(
                &path,
                disk::storage(
                    &path,
                    "is corrupt",
                    "checksum mismatch; move the index folder away and re-sync",
                ),
            ))
        }
        Some((_, map)) => Matrix::with_base(dim, map, snap.present),
        None => Matrix::new(dim),
    };
    // Before the empty rows are pushed, so that many of them spill too.
    state
        .vectors
        .set_spill_dir(Some(Arc::from(paths.dir.as_path())));
    if !mapped {
        (0..rows).for_each(|_| state.vectors.push(None));
    }
    state.model_id = snap.model_id;
    // A snapshot is dense: every slot holds a live chunk.
    state.vectorless = (0..snap.chunks.len() as u32)
        .filter(|&slot| !state.vectors.has(slot))
        .count() as u64;
    state.sources = snap.sources.into_iter().map(Some).collect();
    state.chunks = snap.chunks.into_iter().map(Some).collect();
    state.text = snap.text;
    state.title = snap.title;
    // Breadcrumb repeats are derived, not stored: one analysis per run of
    // chunks sharing a breadcrumb.
    for sid in 0..state.sources.len() {
        let slots = state.sources[sid]
            .as_ref()
            .map(|e| e.slots.clone())
            .unwrap_or_default();
        state.note_repeats(sid as u32, &slots);
    }
    Ok(state)
}

/// Writes a dense snapshot of the current state (generation + 1), starts a
/// new log, and reloads from it.
fn compact(paths: &Paths, inner: &mut Inner) -> Result<(), IndexError> {
    match write_compacted(paths, inner) {
        Ok(()) => Ok(()),
        Err(e) => {
            // The state was taken apart into the snapshot; the files on disk
            // (the untouched snapshot and the log) still hold all of it.
            *inner = load(paths)?;
            Err(e)
        }
    }
}

/// The work of [`compact`]: the live chunks and postings are moved, not
/// copied, into the snapshot (a large index would need twice its memory
/// otherwise), so on an error the caller reloads the state from disk.
fn write_compacted(paths: &Paths, inner: &mut Inner) -> Result<(), IndexError> {
    let mut old_chunks = std::mem::take(&mut inner.state.chunks);
    let st = &mut inner.state;
    let dim = st.dim();
    let mut slot_map: Vec<Option<u32>> = vec![None; old_chunks.len()];
    let mut sid_map: Vec<Option<u32>> = vec![None; st.sources.len()];
    // Sized up front: grown by doubling, a million-chunk index would
    // briefly hold up to twice its chunks and vectors.
    let live: usize = st.sources.iter().flatten().map(|e| e.slots.len()).sum();
    let mut sources = Vec::new();
    let mut present = Vec::with_capacity(live);
    // The old slot of every new one: the vectors are written straight from
    // the matrix, never gathered into a second one.
    let mut order: Vec<u32> = Vec::with_capacity(live);
    // New slots in source order; `in_order` when that is also slot order.
    let mut next = 0u32;
    let mut last: Option<u32> = None;
    let mut in_order = true;
    for (old_sid, entry) in st.sources.iter_mut().enumerate() {
        let Some(entry) = entry else { continue };
        let sid = sources.len() as u32;
        sid_map[old_sid] = Some(sid);
        // Renumbered within their own list (the old state is replaced, or
        // reloaded from disk on an error): a second list would add four
        // bytes a chunk to the compaction's peak.
        let mut slots = std::mem::take(&mut entry.slots);
        let mut kept = 0;
        for k in 0..slots.len() {
            let old = slots[k];
            if old_chunks[old as usize].is_none() {
                continue;
            }
            in_order &= last.is_none_or(|l| old > l);
            last = Some(old);
            slot_map[old as usize] = Some(next);
            slots[kept] = next;
            kept += 1;
            next += 1;
            present.push(st.vectors.has(old));
            order.push(old);
        }
        slots.truncate(kept);
        sources.push(SourceEntry {
            record: entry.record.clone(),
            slots,
        });
    }
    // Every slot live and in order (one big sync into a fresh index): the
    // numbering does not change, and renumbering would only decode every
    // list (a million-posting list is an 8 MB copy) to write it back.
    let identity = in_order && next as usize == old_chunks.len();
    let chunks: Vec<(u32, DiskChunk)> = if in_order {
        // The new order is the slot order (one big sync, a fresh index):
        // the chunks move within their own list, never into a second one.
        old_chunks
            .into_iter()
            .enumerate()
            .filter_map(|(old, c)| {
                let (sid, chunk) = c?;
                slot_map[old]?;
                Some((sid_map[sid as usize]?, chunk))
            })
            .collect()
    } else {
        let mut chunks = Vec::with_capacity(order.len());
        chunks.extend(order.iter().filter_map(|&old| {
            let (sid, chunk) = old_chunks[old as usize].take()?;
            Some((sid_map[sid as usize]?, chunk))
        }));
        chunks
    };
    let mut text = std::mem::take(&mut st.text);
    if !identity {
        text.renumber(&slot_map, chunks.len());
    }
    drop(slot_map);
    let mut title = std::mem::take(&mut st.title);
    title.renumber(&sid_map, sources.len());
    let mut snap = Snapshot {
        version: FORMAT_VERSION,
        dim: dim as u32,
        model_id: st.model_id.clone(),
        sources,
        chunks,
        present,
        text,
        title,
        vector_file: String::new(),
        vector_crc: 0,
        vector_bytes: 0,
    };
    let generation = inner.generation + 1;
    // Keep one generation back (snapshot, its vectors and the log from it
    // to the new snapshot) so that a corrupt snapshot can be rebuilt. A
    // recovered state has no readable current snapshot to keep: the
    // previous one and both logs stay as they are until this one is written.
    if !inner.recovered {
        disk::keep_previous_snapshot(paths)?;
    }
    let vectors = &st.vectors;
    let rows = order
        .iter()
        .filter(|_| dim > 0)
        .map(|&old| vectors.has(old).then(|| vectors.row(old)));
    disk::write_snapshot(paths, generation, &mut snap, rows)?;
    drop(order);
    if !inner.recovered {
        disk::keep_previous_wal(paths)?;
    }
    disk::reset_wal(paths, generation)?;
    disk::remove_old_vectors(paths, &[generation - 1, generation]);
    // The new state is the snapshot just written, moved in rather than read
    // back from disk: a reload would hold a third copy of a large index.
    let snapshot_identity = disk::snapshot_identity(paths);
    let meta = std::fs::metadata(paths.meta()).map_or(0, |m| m.len());
    let snapshot_bytes = meta + snap.vector_bytes;
    let state = from_snapshot(paths, snap)?;
    *inner = Inner::fresh(state, generation, snapshot_bytes, snapshot_identity);
    inner.damage = damage_reports(&paths.dir);
    catch_up(paths, inner)
}

/// A read of one generation: the read lock is held until the view drops,
/// so this process's writers wait for it and it never sees half a write.
pub struct MemView<'a> {
    inner: RwLockReadGuard<'a, Inner>,
}

impl IndexView for MemView<'_> {
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
        let chunks = &inner.state.chunks;
        Ok(entry
            .slots
            .iter()
            .filter(|&&s| {
                chunks[s as usize]
                    .as_ref()
                    .is_some_and(|(_, c)| c.parent == parent)
            })
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

impl Index for MemIndex {
    fn read(&self) -> Result<Box<dyn IndexView + '_>, IndexError> {
        Ok(Box::new(MemView {
            inner: self.guard()?,
        }))
    }

    /// Folds a long log into a snapshot (see [`SETTLE_AFTER_BYTES`]), so the
    /// next cold open reads a snapshot instead of replaying the sync.
    fn settle(&self, announce: &mut dyn FnMut(&str)) -> Result<(), IndexError> {
        let _lock = WriterLock::take(&self.paths)?;
        self.refresh()?;
        let mut inner = self.inner.write().unwrap_or_else(|p| p.into_inner());
        let log = inner.wal_end.saturating_sub(WAL_HEADER);
        if log <= SETTLE_AFTER_BYTES.max(inner.snapshot_bytes / SETTLE_SHARE) {
            return Ok(());
        }
        announce(&format!(
            "folding the index log ({} MB) into a snapshot, so the next open reads it at once",
            log >> 20
        ));
        compact(&self.paths, &mut inner)
    }

    fn lock_sync(&self) -> Result<SyncLease, IndexError> {
        sync_lock::take(&self.paths.dir)
    }

    fn put_job(&self, job: &minirag_core::jobs::Job) -> Result<(), IndexError> {
        job_records::put(&self.paths.dir, job)
    }

    fn job(&self, id: &str) -> Result<Option<minirag_core::jobs::Job>, IndexError> {
        job_records::get(&self.paths.dir, id)
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
