//! A decoded snapshot taken up as the state: its parts checked against
//! each other, its vector files mapped (the int8 copy when it is sound),
//! and the tables derived at open.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;
use minirag_core::ports::IndexError;
use minirag_rank::Repeats;

use crate::disk::{self, Paths, QuantizedFile, Snapshot};
use crate::state::{Chunks, State};
use crate::vectors::{FileCheck, Matrix};

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
    pub(crate) file: PathBuf,
    pub(crate) error: IndexError,
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
                    && (snap.vector_bytes > paths.checked_at_open
                        || disk::file_crc(path, snap.vector_bytes)
                            .is_ok_and(|crc| crc == snap.vector_crc))
            });
            let quantized = quantized.filter(|(path, q, _)| {
                let sound = q.bytes > paths.checked_at_open
                    || disk::file_crc(path, q.bytes).is_ok_and(|crc| crc == q.crc);
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
        let ids = Arc::make_mut(&mut state.ids);
        for (sid, entry) in snap.sources.iter().enumerate() {
            ids.insert(entry.record.source.clone(), sid as u32);
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
            if snap.vector_bytes > paths.checked_at_open {
                matrix.defer_check(FileCheck::new(path, snap.vector_bytes, snap.vector_crc));
            }
            matrix
        }
        None => Matrix::new(dim),
    };
    if let Some((path, q, map)) = quantized {
        let check = FileCheck::new(path.clone(), q.bytes, q.crc);
        if state
            .vectors
            .adopt_quantized(map, q.rows as usize, q.scales_at() as usize)
        {
            if q.bytes > paths.checked_at_open {
                state.vectors.defer_check(check);
            }
        } else {
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
    state.sources = snap
        .sources
        .into_iter()
        .map(|e| Some(Arc::new(e)))
        .collect();
    state.text = snap.text;
    state.title = snap.title;
    match snap.repeats {
        // Kept by the snapshot (format 8): no chunk is read for them.
        Some(repeats) => {
            let table = Arc::make_mut(&mut state.repeats);
            for (sid, terms, len) in repeats {
                let repeats = Repeats {
                    terms: terms.into_iter().collect(),
                    len,
                };
                state.repeats_len += len;
                table.insert(sid, Arc::new(repeats));
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
