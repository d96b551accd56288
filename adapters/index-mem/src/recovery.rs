//! Opening an index folder: the snapshot and the log replayed on it, and
//! when either is damaged, rebuilding from the previous generation or
//! salvaging what is sound.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;
use minirag_core::ports::IndexError;

use crate::disk::{Paths, QuantizedFile, Snapshot};
use crate::state::{Chunks, State};
use crate::vectors::Matrix;
use minirag_rank::Repeats;

use crate::damage::{damage_reports, keep_replaced, report_cut, report_damage};
use crate::disk;
use crate::Inner;

pub(crate) fn load(paths: &Paths) -> Result<Inner, IndexError> {
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

pub(crate) const SALVAGED_POSTINGS: &str =
    "with no earlier generation to rebuild from, the index opened \
     with what is sound: its postings rebuilt from the chunks' text";
pub(crate) const SALVAGED_LOCATIONS: &str =
    "with no earlier generation to rebuild from, the index opened \
     with what is sound: its chunks without their places, until the next sync rebuilds them";
pub(crate) const SALVAGED_INT8: &str =
    "with no earlier generation to rebuild from, the index opened \
     with what is sound: its derived tables (the int8 copy of its vectors, \
     the breadcrumb repeats) built again";
pub(crate) const SALVAGED_VECTORS: &str =
    "with no earlier generation to rebuild from, the index opened \
     with what is sound: its chunks without vectors, until the next sync embeds them";

/// Opens what is sound of a damaged snapshot that has no history to be
/// rebuilt from: its sources and chunks must be readable; damaged postings
/// are rebuilt from the chunks' text, and a damaged vector file is left
/// out (the chunks stay, without vectors, and the next sync embeds them).
/// `None` when neither part is the damage, or the rest is not sound.
pub(crate) fn salvage(
    paths: &Paths,
    snapshot_identity: Option<(u64, u64, i64)>,
    corrupt: &IndexError,
) -> Option<Inner> {
    let (generation, mut snap, lost_parts) = disk::salvage_snapshot(&paths.meta()).ok()??;
    let postings_lost = lost_parts.postings;
    let locations_lost = lost_parts.locations;
    let derived_lost = lost_parts.derived;
    let vector_path = paths.dir.join(&snap.vector_file);
    let vectors_lost = snap.vector_bytes > 0
        && disk::file_crc(&vector_path, snap.vector_bytes)
            .map_or(true, |crc| crc != snap.vector_crc);
    if !postings_lost && !vectors_lost && !locations_lost && !derived_lost {
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
    if derived_lost && !postings_lost && !locations_lost {
        lost.push("its derived tables (the int8 copy of its vectors, the breadcrumb repeats) are built again");
        keep_replaced(
            paths,
            &paths.meta(),
            generation,
            &corrupt.to_string(),
            SALVAGED_INT8,
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
pub(crate) fn recover(paths: &Paths, snapshot_identity: Option<(u64, u64, i64)>) -> Option<Inner> {
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
pub(crate) fn catch_up(paths: &Paths, inner: &mut Inner) -> Result<(), IndexError> {
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

/// An index with nothing in it yet, whose vectors spill into its folder.
pub(crate) fn empty_state(paths: &Paths) -> State {
    let mut state = State::new();
    state
        .vectors
        .set_spill_dir(Some(Arc::from(paths.dir.as_path())));
    state
}

/// The snapshot's int8 file, mapped, when it is there and of the length
/// its record gives; it is derived data, so anything else only means the
/// copy is built from the f32 rows (said on stderr), never a failed open.
fn map_quantized(paths: &Paths, q: &QuantizedFile) -> Option<(PathBuf, QuantizedFile, Mmap)> {
    let path = paths.dir.join(&q.file);
    let mapped = File::open(&path).and_then(|f| {
        // SAFETY: int8 files are written once, renamed into place and never
        // modified; a replaced file stays valid while mapped.
        unsafe { Mmap::map(&f) }
    });
    match mapped {
        Ok(map) if map.len() as u64 == q.bytes && q.bytes == q.expected_bytes() => {
            Some((path, q.clone(), map))
        }
        Ok(_) => {
            eprintln!(
                "warn: {} is not the length its snapshot records; the int8 copy of the \
                 vectors is built from the f32 rows instead",
                path.display()
            );
            None
        }
        Err(e) => {
            eprintln!(
                "warn: cannot map {} ({e}); the int8 copy of the vectors is built from \
                 the f32 rows instead",
                path.display()
            );
            None
        }
    }
}

/// What a decoded snapshot must hold to be used: its checksums held, so a
/// failure here is a snapshot written wrong or damaged past its checksum.
pub(crate) fn snapshot_consistent(snap: &Snapshot) -> Result<(), String> {
    let (n_chunks, n_sources) = (snap.chunk_count(), snap.sources.len());
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
    if (0..n_chunks).any(|slot| {
        snap.chunk_sid(slot)
            .is_none_or(|sid| sid as usize >= n_sources)
    }) {
        return Err("a chunk of a source that is not there".into());
    }
    for (sid, e) in snap.sources.iter().enumerate() {
        if e.slots.iter().any(|&s| {
            snap.chunk_sid(s as usize)
                .is_none_or(|owner| owner as usize != sid)
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
pub(crate) struct Damaged {
    file: PathBuf,
    error: IndexError,
}

impl From<Damaged> for IndexError {
    fn from(d: Damaged) -> Self {
        d.error
    }
}

pub(crate) fn from_snapshot(paths: &Paths, mut snap: Snapshot) -> Result<State, Damaged> {
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
    let quantized = map
        .as_ref()
        .and(snap.quantized.as_ref())
        .and_then(|q| map_quantized(paths, q));
    // The vector files' checksums are verified on a second thread while
    // this one builds the lookup tables. They are read through the file,
    // not the map: pages touched through a map count in this process's
    // memory until evicted (a sync that compacts a big embedded index would
    // hold the whole vector file resident without ever searching it).
    let (vectors_ok, quantized) = std::thread::scope(|s| {
        let check = s.spawn(|| {
            let vectors_ok = map.as_ref().is_none_or(|(path, m)| {
                m.len() as u64 == snap.vector_bytes
                    && disk::file_crc(path, snap.vector_bytes)
                        .is_ok_and(|crc| crc == snap.vector_crc)
            });
            let quantized = quantized.filter(|(path, q, _)| {
                let sound = disk::file_crc(path, q.bytes).is_ok_and(|crc| crc == q.crc);
                if !sound {
                    eprintln!(
                        "warn: {} is corrupt (checksum mismatch); the int8 copy of the \
                         vectors is built from the f32 rows instead, and the next \
                         compaction writes it again",
                        path.display()
                    );
                }
                sound
            });
            (vectors_ok, quantized)
        });
        for (sid, entry) in snap.sources.iter().enumerate() {
            state.ids.insert(entry.record.source.clone(), sid as u32);
        }
        state.chunks = match snap.table.take() {
            Some(table) => Chunks::mapped(table),
            None => Chunks::owned(
                std::mem::take(&mut snap.chunks)
                    .into_iter()
                    .map(Some)
                    .collect(),
            ),
        };
        if dim > 0 && map.is_some() {
            for slot in (0..snap.present.len() as u32).filter(|&s| snap.present[s as usize]) {
                if let Some(key) = state.chunks.key(slot) {
                    state.by_text.insert(key, slot);
                }
            }
        }
        check.join().unwrap_or((false, None))
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
        Some((path, map)) => {
            let mut matrix = Matrix::with_base(dim, map, snap.present);
            if let Ok(file) = File::open(&path) {
                matrix.rescore_through(file);
            }
            matrix
        }
        None => Matrix::new(dim),
    };
    if let Some((path, q, map)) = quantized {
        if !state
            .vectors
            .adopt_quantized(map, q.rows as usize, q.scales_at() as usize)
        {
            eprintln!(
                "warn: {} does not match its snapshot's vectors; the int8 copy is \
                 built from the f32 rows instead",
                path.display()
            );
        }
    }
    // Before the empty rows are pushed, so that many of them spill too.
    state
        .vectors
        .set_spill_dir(Some(Arc::from(paths.dir.as_path())));
    if !mapped {
        (0..rows).for_each(|_| state.vectors.push(None));
    }
    state.model_id = snap.model_id;
    // A snapshot is dense: every slot holds a live chunk.
    state.vectorless = (0..state.chunks.len() as u32)
        .filter(|&slot| !state.vectors.has(slot))
        .count() as u64;
    state.sources = snap.sources.into_iter().map(Some).collect();
    state.text = snap.text;
    state.title = snap.title;
    match snap.repeats {
        // Kept by the snapshot (format 8): no chunk is read for them.
        Some(repeats) => {
            for (sid, terms, len) in repeats {
                let repeats = Repeats {
                    terms: terms.into_iter().collect(),
                    len,
                };
                state.repeats_len += len;
                state.repeats.insert(sid, repeats);
            }
        }
        // Derived from the chunks: one analysis per run of chunks sharing
        // a breadcrumb.
        None => {
            for sid in 0..state.sources.len() {
                let slots = state.sources[sid]
                    .as_ref()
                    .map(|e| e.slots.clone())
                    .unwrap_or_default();
                state.note_repeats(sid as u32, &slots);
            }
        }
    }
    Ok(state)
}
