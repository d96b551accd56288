//! Folding the log into a new snapshot generation.

use minirag_core::ports::IndexError;

use crate::disk::{DiskRepeats, Paths, Snapshot, FORMAT_VERSION};
use crate::records::SourceEntry;
use crate::vectors::{quantize_row, QUANTIZE_ROWS};

use crate::damage::damage_reports;
use crate::disk;
use crate::disk::faults;
use crate::recovery::{catch_up, load};
use crate::snapshot_state::from_snapshot;
use crate::Inner;

/// Writes a dense snapshot of the current state (generation + 1), starts a
/// new log, and takes it up, for a caller that holds the write lock.
pub(crate) fn compact(paths: &Paths, inner: &mut Inner) -> Result<(), IndexError> {
    match write_next(paths, inner) {
        Ok(next) => {
            *inner = next;
            Ok(())
        }
        Err(e) => {
            // A write that failed half way may have switched the snapshot
            // but not the log: the files on disk say which, so read them.
            *inner = load(paths)?;
            Err(e)
        }
    }
}

/// The work of [`compact`], reading the current state only, so queries go
/// on beside it (the caller holds the writer gate and the OS lock, so
/// nothing changes it): the live chunks are streamed into the new
/// snapshot's chunk table and the vectors into its files, from wherever
/// they are; the postings are copied to be renumbered. Returns the new
/// generation's state, the snapshot just written with its table mapped,
/// for the caller to swap in.
pub(crate) fn write_next(paths: &Paths, inner: &Inner) -> Result<Inner, IndexError> {
    // Left by a compaction that was killed: their space is this one's.
    disk::remove_temporaries(&paths.dir);
    let old_chunks = &inner.state.chunks;
    let st = &inner.state;
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
    for (old_sid, entry) in st.sources.iter().enumerate() {
        let Some(entry) = entry else { continue };
        let sid = sources.len() as u32;
        sid_map[old_sid] = Some(sid);
        let mut slots = Vec::with_capacity(entry.slots.len());
        for &old in &entry.slots {
            if !old_chunks.live(old) {
                continue;
            }
            in_order &= last.is_none_or(|l| old > l);
            last = Some(old);
            slot_map[old as usize] = Some(next);
            slots.push(next);
            next += 1;
            present.push(st.vectors.has(old));
            order.push(old);
        }
        sources.push(SourceEntry {
            record: entry.record.clone(),
            slots,
        });
    }
    // Every slot live and in order (one big sync into a fresh index): the
    // numbering does not change, and renumbering would only decode every
    // list (a million-posting list is an 8 MB copy) to write it back.
    let identity = in_order && next as usize == old_chunks.len();
    let mut text = st.text.clone();
    if identity {
        text.fold_segments();
    } else {
        text.renumber(&slot_map, next as usize);
    }
    drop(slot_map);
    let mut title = st.title.clone();
    title.renumber(&sid_map, sources.len());
    let repeats: Vec<DiskRepeats> = st
        .repeats
        .iter()
        .filter_map(|(sid, r)| {
            let terms = r.terms.iter().map(|(t, n)| (t.clone(), *n)).collect();
            Some((sid_map[*sid as usize]?, terms, r.len))
        })
        .collect();
    let mut snap = Snapshot {
        version: FORMAT_VERSION,
        dim: dim as u32,
        model_id: st.model_id.clone(),
        sources,
        chunks: Vec::new(),
        present,
        text,
        title,
        vector_file: String::new(),
        vector_crc: 0,
        vector_bytes: 0,
        quantized: None,
        table: None,
        repeats: Some(repeats),
        outdated: false,
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
    // A snapshot large enough to be scanned in int8 keeps its int8 copy,
    // so the next open need not build it.
    let quantize: Option<disk::Quantize> =
        (dim > 0 && order.len() >= QUANTIZE_ROWS).then_some(&quantize_row);
    let chunks = order.iter().map(|&old| {
        let (sid, chunk) = old_chunks.get(old)?;
        Some((sid_map[sid as usize]?, chunk))
    });
    disk::write_snapshot(paths, generation, &mut snap, rows, quantize, chunks)?;
    drop(order);
    if !inner.recovered {
        disk::keep_previous_wal(paths)?;
    }
    disk::reset_wal(paths, generation)?;
    disk::remove_old_vectors(paths, &[generation - 1, generation]);
    faults::reached(faults::Point::SnapshotWritten);
    // The new state is the snapshot just written, moved in rather than read
    // back from disk: a reload would decode the postings again.
    let snapshot_identity = disk::snapshot_identity(paths);
    let meta = std::fs::metadata(paths.meta()).map_or(0, |m| m.len());
    let snapshot_bytes = meta + snap.vector_bytes;
    let state = from_snapshot(paths, snap)?;
    let mut next = Inner::fresh(state, generation, snapshot_bytes, snapshot_identity);
    next.damage = damage_reports(&paths.dir);
    catch_up(paths, &mut next)?;
    Ok(next)
}
