//! Reading `snapshot.meta`: whole, or salvaged when a part is damaged.
//! Each section is found by the lengths in the headers before it and
//! checked against its CRC; the head and the postings are read on two
//! threads, the chunk table mapped in place.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use minirag_core::ports::IndexError;

use crate::bm25::Field;
use crate::legacy::SourceEntryV1;
use crate::records::SourceEntry;
use crate::records::{DiskAttributes, DiskChunk, DiskLocation};

use super::chunk_table::{bad_table, ChunkTable};
use super::codec::decode_limited;
use super::errors::{io, storage};
use super::framing::crc_of_range;
use super::paths::Paths;
use super::quantized::QuantizedFile;
use super::snapshot::*;

pub fn read_snapshot(paths: &Paths) -> Result<Option<(u64, Snapshot)>, IndexError> {
    match read_snapshot_at(&paths.meta())? {
        None if snapshot_was_written(paths) => Err(storage(
            &paths.meta(),
            "is missing",
            "the folder holds what only a written snapshot leaves (snapshot.prev.meta \
             or wal.prev.log), so it was deleted or lost; \
             restore it from a backup, or move the folder away and re-sync",
        )),
        found => Ok(found),
    }
}

/// Files that only a written snapshot leaves behind: the previous
/// generation's snapshot or log (the first compaction keeps the log it
/// folded in). Neither a vector file nor the log's generation counts: a
/// compaction writes its vector file before `snapshot.meta`, so one that
/// failed between the two leaves a vector file in a sound folder, and a
/// flipped bit in the log's header is damage the log reports itself.
pub(crate) fn snapshot_was_written(paths: &Paths) -> bool {
    paths.prev_meta().exists() || paths.prev_wal().exists()
}

pub fn read_snapshot_at(path: &Path) -> Result<Option<(u64, Snapshot)>, IndexError> {
    read_snapshot_parts(path, false).map(|s| s.map(|(g, snap, _)| (g, snap)))
}

/// What a salvaged snapshot came without.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lost {
    /// To be rebuilt from the chunks' text.
    pub postings: bool,
    /// The chunks' locations, until a sync rebuilds them.
    pub locations: bool,
    /// Derived tables (the int8 copy's record, the breadcrumb repeats),
    /// built again instead.
    pub derived: bool,
}

/// What can still be read of a damaged snapshot: its head (sources and
/// chunks) must be sound; damaged postings come back empty, to be rebuilt
/// from the chunks' text, and damaged locations as none.
pub fn salvage_snapshot(path: &Path) -> Result<Option<(u64, Snapshot, Lost)>, IndexError> {
    read_snapshot_parts(path, true)
}

pub(crate) fn read_snapshot_parts(
    path: &Path,
    salvage: bool,
) -> Result<Option<(u64, Snapshot, Lost)>, IndexError> {
    let path = path.to_path_buf();
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(&path, "cannot read", e)),
    };
    let file_len = file
        .metadata()
        .map_err(|e| io(&path, "cannot stat", e))?
        .len();
    const FIX: &str = "move it away and re-sync, or restore it from a backup";
    let corrupt = |why: &str| storage(&path, "is corrupt", format!("{why}; {FIX}"));
    let undecodable = |e: bincode::error::DecodeError| {
        IndexError::storage_caused(format!("is corrupt {}: {e}; {FIX}", path.display()), e)
    };
    // The file is checked and decoded in streams, never read whole: a large
    // index opens in the memory of its state, not twice that.
    use std::os::unix::fs::FileExt;
    let mut header = [0u8; 16];
    if file_len < SNAP_HEADER as u64 || file.read_exact_at(&mut header, 0).is_err() {
        return Err(corrupt("bad header"));
    }
    let magic: &[u8; 8] = header[..8].try_into().unwrap();
    let known: [&[u8; 8]; 9] = [
        SNAP_MAGIC,
        SNAP_MAGIC_V8,
        SNAP_MAGIC_V7,
        SNAP_MAGIC_V6,
        SNAP_MAGIC_V5,
        SNAP_MAGIC_V4,
        SNAP_MAGIC_V3,
        SNAP_MAGIC_V2,
        SNAP_MAGIC_V1,
    ];
    if !known.contains(&magic) {
        return Err(corrupt("bad header"));
    }
    let generation = u64::from_le_bytes(header[8..16].try_into().unwrap());
    let sections_at = if [
        SNAP_MAGIC,
        SNAP_MAGIC_V8,
        SNAP_MAGIC_V7,
        SNAP_MAGIC_V6,
        SNAP_MAGIC_V5,
    ]
    .contains(&magic)
    {
        let mut crc = [0u8; 4];
        file.read_exact_at(&mut crc, 16)
            .map_err(|_| corrupt("truncated"))?;
        if u32::from_le_bytes(crc) != crc32fast::hash(&header) {
            return Err(corrupt("header checksum mismatch"));
        }
        20
    } else {
        16
    };
    // [len u64][crc u32][payload] sections from `at`: the payload's offset
    // and length, once its checksum holds.
    // A section's payload (offset and length) by its header at `at`.
    let locate = |at: u64| -> Result<(u64, u64), IndexError> {
        let mut head = [0u8; 12];
        file.read_exact_at(&mut head, at)
            .map_err(|_| corrupt("truncated"))?;
        let len = u64::from_le_bytes(head[..8].try_into().unwrap());
        let start = at + 12;
        if start.checked_add(len).is_none_or(|end| end > file_len) {
            return Err(corrupt("truncated"));
        }
        Ok((start, len))
    };
    // The payload, once its checksum (just before it) holds.
    let checked = |(start, len): (u64, u64)| -> Result<(u64, u64), IndexError> {
        let mut crc = [0u8; 4];
        file.read_exact_at(&mut crc, start - 4)
            .map_err(|_| corrupt("truncated"))?;
        let crc = u32::from_le_bytes(crc);
        let mut buf = vec![0u8; 1 << 20];
        if crc_of_range(&file, start, len, &mut buf).map_err(|e| io(&path, "cannot read", e))?
            != crc
        {
            return Err(corrupt("checksum mismatch"));
        }
        Ok((start, len))
    };
    // A buffered reader over one checked section.
    let reader = |(start, len): (u64, u64)| -> Result<_, IndexError> {
        let mut f = File::open(&path).map_err(|e| io(&path, "cannot read", e))?;
        f.seek(SeekFrom::Start(start))
            .map_err(|e| io(&path, "cannot seek in", e))?;
        Ok(std::io::BufReader::with_capacity(1 << 20, f).take(len))
    };
    let section = |at: u64| locate(at).and_then(checked);
    let first = section(sections_at)?;
    let next = first.0 + first.1;
    let mut lost = Lost::default();
    let snap: Snapshot = if magic == SNAP_MAGIC_V1 {
        let old: Snapshot<SourceEntryV1> =
            decode_limited(reader(first)?, first.1).map_err(undecodable)?;
        lift(old)
    } else {
        // Salvaging, a damaged postings section is read as none.
        let second = match section(next) {
            Ok(second) => Some(second),
            Err(_) if salvage => None,
            Err(e) => return Err(e),
        };
        // Format 8 on: the file is mapped, its chunk table read in place;
        // format 9 on: its postings copied from the map as they are laid.
        let map = if [SNAP_MAGIC, SNAP_MAGIC_V8].contains(&magic) {
            // SAFETY: snapshot files are written once, renamed into place
            // and never modified; a replaced file stays valid while mapped.
            let map =
                unsafe { memmap2::Mmap::map(&file) }.map_err(|e| io(&path, "cannot map", e))?;
            Some(std::sync::Arc::new(map))
        } else {
            None
        };
        let raw = magic == SNAP_MAGIC;
        let first_reader = reader(first)?;
        let second_reader = second.map(reader).transpose()?;
        let (head, postings) = std::thread::scope(|s| {
            let (map, corrupt, undecodable) = (&map, &corrupt, &undecodable);
            let postings = s.spawn(move || match (second_reader, second, map) {
                (_, Some((start, len)), Some(map)) if raw => {
                    let bytes = &map[start as usize..(start + len) as usize];
                    let bad = |why: String| corrupt(&format!("its postings have {why}"));
                    let (text, used) = Field::read_raw(bytes).map_err(bad)?;
                    let (title, _) = Field::read_raw(&bytes[used..]).map_err(bad)?;
                    Ok(Some((text, title)))
                }
                (Some(r), Some((_, len)), _) => decode_limited::<(Field, Field)>(r, len)
                    .map(Some)
                    .map_err(undecodable),
                _ => Ok(None),
            });
            let head = if magic == SNAP_MAGIC_V2 {
                decode_limited::<Head<Vec<SourceEntryV1>, Vec<(u32, DiskChunk)>, Vec<bool>>>(
                    first_reader,
                    first.1,
                )
                .map(|h| h.lift())
            } else {
                decode_limited::<Head<Vec<SourceEntry>, Vec<(u32, DiskChunk)>, Vec<bool>>>(
                    first_reader,
                    first.1,
                )
            };
            (head, postings.join())
        });
        let head = head.map_err(undecodable)?;
        let postings = match postings.map_err(|_| corrupt("the decoder crashed")) {
            Ok(Ok(p)) => p,
            Ok(Err(_)) | Err(_) if salvage => None,
            Ok(Err(e)) | Err(e) => return Err(e),
        };
        lost.postings = postings.is_none();
        let (text, title) = postings.unwrap_or_default();
        let mut chunks = head.chunks;
        let mut sources = head.sources;
        let mut quantized = None;
        let (mut table, mut repeats) = (None, None);
        // Each trailing section is found from the lengths in the headers
        // before it, whether or not their payloads' checksums hold, so one
        // damaged section is salvaged alone.
        let count = match magic {
            m if m == SNAP_MAGIC || m == SNAP_MAGIC_V8 => 7,
            m if m == SNAP_MAGIC_V7 => 5,
            m if m == SNAP_MAGIC_V6 => 4,
            m if m == SNAP_MAGIC_V5 || m == SNAP_MAGIC_V4 => 3,
            _ => 2,
        };
        let mut at: Vec<Option<(u64, u64)>> = vec![Some(first)];
        while at.len() < count {
            let after = at[at.len() - 1].and_then(|(start, len)| locate(start + len).ok());
            at.push(after);
        }
        let trailing_at = |i: usize| {
            (i < count).then(|| at[i].ok_or_else(|| corrupt("truncated")).and_then(checked))
        };
        if count >= 3 {
            // The chunks' locations, then (format 6) the sources'
            // attributes; salvaging, a damaged section is none, and the
            // sync that rebuilds the locations rebuilds the attributes.
            let (third, fourth, fifth) = (trailing_at(2), trailing_at(3), trailing_at(4));
            // Then (format 7) the int8 copy's file; salvaging, a damaged
            // record reads as none, and the copy is built from the f32 rows.
            quantized = trailing(fifth, salvage, &mut lost.derived, &undecodable, |at| {
                Ok(decode_limited::<Vec<QuantizedFile>>(reader(at)?, at.1))
            })?
            .pop();
            // Then (format 8) the chunk table, which nothing can stand in
            // for, and the sources' breadcrumb repeats, derived from it.
            if count == 7 {
                let (at, len) = checked(at[5].ok_or_else(|| corrupt("truncated"))?)?;
                let map = map.clone().ok_or_else(|| corrupt("not mapped"))?;
                table = Some(
                    ChunkTable::new(map, at as usize, len as usize)
                        .map_err(|why| bad_table(&path, &why))?,
                );
                let mut repeats_lost = false;
                let found = trailing(
                    trailing_at(6),
                    salvage,
                    &mut repeats_lost,
                    &undecodable,
                    |at| Ok(decode_limited::<Vec<DiskRepeats>>(reader(at)?, at.1)),
                )?;
                lost.derived |= repeats_lost;
                repeats = (!repeats_lost).then_some(found);
            }
            let located = trailing(third, salvage, &mut lost.locations, &undecodable, |at| {
                Ok(decode_limited::<Vec<(u32, DiskLocation)>>(
                    reader(at)?,
                    at.1,
                ))
            })?;
            for (slot, location) in located {
                if let Some((_, c)) = chunks.get_mut(slot as usize) {
                    c.location = location;
                }
            }
            let described = trailing(fourth, salvage, &mut lost.locations, &undecodable, |at| {
                Ok(decode_limited::<Vec<(u32, DiskAttributes)>>(
                    reader(at)?,
                    at.1,
                ))
            })?;
            for (at, attributes) in described {
                if let Some(entry) = sources.get_mut(at as usize) {
                    entry.record.attributes = attributes;
                }
            }
        }
        Snapshot {
            version: head.version,
            dim: head.dim,
            model_id: head.model_id,
            sources,
            chunks,
            present: head.present,
            text,
            title,
            vector_file: head.vector_file,
            vector_crc: head.vector_crc,
            vector_bytes: head.vector_bytes,
            quantized,
            table,
            repeats,
            outdated: magic != SNAP_MAGIC,
        }
    };
    if snap.version != FORMAT_VERSION {
        return Err(storage(
            &path,
            "has an unknown format version",
            snap.version,
        ));
    }
    Ok(Some((generation, snap, lost)))
}

/// A trailing section's entries: none where the file has no such section;
/// salvaging, a damaged or undecodable one reads as none and sets `lost`.
fn trailing<T>(
    found: Option<Result<(u64, u64), IndexError>>,
    salvage: bool,
    lost: &mut bool,
    undecodable: &dyn Fn(bincode::error::DecodeError) -> IndexError,
    decode: impl FnOnce((u64, u64)) -> Result<Result<Vec<T>, bincode::error::DecodeError>, IndexError>,
) -> Result<Vec<T>, IndexError> {
    let decoded = match found {
        None => return Ok(Vec::new()),
        Some(Ok(at)) => decode(at)?.map_err(undecodable),
        Some(Err(e)) => Err(e),
    };
    match decoded {
        Err(_) if salvage => {
            *lost = true;
            Ok(Vec::new())
        }
        other => other,
    }
}
