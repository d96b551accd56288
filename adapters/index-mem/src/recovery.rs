//! Opening an index folder: the snapshot and the log replayed on it, and
//! when either is damaged, rebuilding from the previous generation or
//! salvaging what is sound.

use minirag_core::ports::IndexError;

use crate::disk::Paths;

use crate::damage::{damage_reports, keep_replaced, report_cut, report_damage};
use crate::disk;
use crate::snapshot_state::{empty_state, from_snapshot, Damaged};
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
                let outdated = snap.outdated;
                Ok((generation, from_snapshot(paths, snap)?, bytes, outdated))
            }
            None => Ok((0, empty_state(paths), 0, false)),
        });
    let (generation, state, snapshot_bytes, outdated) = match loaded {
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
    inner.snapshot_outdated = outdated;
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
        // Written out as a fresh snapshot at open, in the current format.
        snapshot_outdated: false,
    })
}

/// Applies log records past `wal_end` when the log follows our snapshot.
pub(crate) fn catch_up(paths: &Paths, inner: &mut Inner) -> Result<(), IndexError> {
    let read = disk::read_wal(paths, inner.wal_end)?;
    apply_log(paths, inner, read)
}

/// [`catch_up`] with the log already read from `inner.wal_end`, so the
/// read can happen before the generation is taken for writing.
pub(crate) fn apply_log(
    paths: &Paths,
    inner: &mut Inner,
    read: disk::WalRead,
) -> Result<(), IndexError> {
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
