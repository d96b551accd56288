//! `snapshot.meta`: its formats, reading (whole or salvaged) and
//! writing, and the previous generation kept beside it.

use std::borrow::Cow;
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use minirag_core::ports::IndexError;
use serde::{Deserialize, Serialize};

use crate::bm25::Field;
use crate::legacy::SourceEntryV1;
use crate::records::SourceEntry;
use crate::records::{DiskAttributes, DiskChunk, DiskLocation};

use super::chunk_table::{bad_table, write_chunk_table, ChunkTable};
use super::codec::decode_limited;
use super::errors::{io, storage};
use super::faults::{self, LINK};
use super::framing::stream_section;
use super::framing::{crc_of_range, stream_record, sync_dir, write_atomic_with, CrcWriter};
use super::paths::Paths;
use super::quantized::{Quantize, QuantizedFile, QuantizedWriter};

pub const FORMAT_VERSION: u32 = 1;
/// Format 1: one payload. Format 2: two payloads (everything but the
/// postings; the postings), each with its own length and CRC, so opening
/// decodes them on two threads. Format 3: format 2 with sources carrying
/// `ocr_engine`. Format 4: format 3 and a third section, the chunks'
/// locations by slot. Format 5: format 4 with the header (magic and
/// generation) under a CRC of its own, as every byte that decides what is
/// kept must be: the generation says which log records follow. Format 6:
/// format 5 and a fourth section, the sources' attributes by position.
/// Format 7: format 6 and a fifth section, the int8 copy's file (see
/// [`QuantizedFile`]), empty for a small snapshot. Format 8: format 7 with
/// the chunks (and their locations) out of the head, in a sixth section
/// read in place ([`ChunkTable`]), and a seventh, each source's breadcrumb
/// repeats, so opening decodes no chunk. Format 9: format 8 with the
/// postings laid as they are in memory (`bm25/raw.rs`), copied at open
/// instead of decoded posting by posting.
/// Formats 1 and 2 are read through [`crate::legacy`].
pub(crate) const SNAP_MAGIC_V1: &[u8; 8] = b"MRSNAP01";
pub(crate) const SNAP_MAGIC_V2: &[u8; 8] = b"MRSNAP02";
pub(crate) const SNAP_MAGIC_V3: &[u8; 8] = b"MRSNAP03";
pub(crate) const SNAP_MAGIC_V4: &[u8; 8] = b"MRSNAP04";
pub(crate) const SNAP_MAGIC_V5: &[u8; 8] = b"MRSNAP05";
pub(crate) const SNAP_MAGIC_V6: &[u8; 8] = b"MRSNAP06";
pub(crate) const SNAP_MAGIC_V7: &[u8; 8] = b"MRSNAP07";
pub(crate) const SNAP_MAGIC_V8: &[u8; 8] = b"MRSNAP08";
pub(crate) const SNAP_MAGIC: &[u8; 8] = b"MRSNAP09";
pub(crate) const SNAP_HEADER: usize = 28;

/// The snapshot without its postings: what format 2 stores first.
#[derive(Serialize, Deserialize)]
pub(crate) struct Head<S, C, P> {
    pub(crate) version: u32,
    pub(crate) dim: u32,
    pub(crate) model_id: Option<String>,
    pub(crate) sources: S,
    pub(crate) chunks: C,
    pub(crate) present: P,
    pub(crate) vector_file: String,
    pub(crate) vector_crc: u32,
    pub(crate) vector_bytes: u64,
}

#[derive(Serialize, Deserialize)]
pub struct Snapshot<S = SourceEntry> {
    pub version: u32,
    pub dim: u32,
    pub model_id: Option<String>,
    pub sources: Vec<S>,
    /// Dense: slot i is chunk i. Empty when the chunks are in `table`.
    pub chunks: Vec<(u32, DiskChunk)>,
    pub present: Vec<bool>,
    pub text: Field,
    pub title: Field,
    pub vector_file: String,
    pub vector_crc: u32,
    pub vector_bytes: u64,
    /// The int8 copy of the vectors, when the snapshot has one.
    #[serde(skip)]
    pub quantized: Option<QuantizedFile>,
    /// The chunks, read in place (format 8).
    #[serde(skip)]
    pub table: Option<ChunkTable>,
    /// Each source's breadcrumb repeats (format 8), by source position:
    /// (source, each term and its extra count, extra length).
    #[serde(skip)]
    pub repeats: Option<Vec<DiskRepeats>>,
}

/// One source's breadcrumb repeats as the snapshot keeps them.
pub type DiskRepeats = (u32, Vec<(String, u32)>, u64);

impl Snapshot {
    /// Chunks, in the table or on the heap.
    pub fn chunk_count(&self) -> usize {
        self.table
            .as_ref()
            .map_or(self.chunks.len(), ChunkTable::len)
    }

    /// The source id of chunk `slot`.
    pub fn chunk_sid(&self, slot: usize) -> Option<u32> {
        match &self.table {
            Some(t) => (slot < t.len()).then(|| t.sid(slot)),
            None => self.chunks.get(slot).map(|(sid, _)| *sid),
        }
    }
}

/// A format 1 snapshot with its sources in today's layout.
pub(crate) fn lift(old: Snapshot<SourceEntryV1>) -> Snapshot {
    Snapshot {
        version: old.version,
        dim: old.dim,
        model_id: old.model_id,
        sources: old.sources.into_iter().map(SourceEntry::from).collect(),
        chunks: old.chunks,
        present: old.present,
        text: old.text,
        title: old.title,
        vector_file: old.vector_file,
        vector_crc: old.vector_crc,
        vector_bytes: old.vector_bytes,
        quantized: None,
        table: None,
        repeats: None,
    }
}

impl<C, P> Head<Vec<SourceEntryV1>, C, P> {
    /// A format 2 head with its sources in today's layout.
    fn lift(self) -> Head<Vec<SourceEntry>, C, P> {
        Head {
            version: self.version,
            dim: self.dim,
            model_id: self.model_id,
            sources: self.sources.into_iter().map(SourceEntry::from).collect(),
            chunks: self.chunks,
            present: self.present,
            vector_file: self.vector_file,
            vector_crc: self.vector_crc,
            vector_bytes: self.vector_bytes,
        }
    }
}

/// (inode, length, mtime ns) of `snapshot.meta`, or `None` when there is none.
pub fn snapshot_identity(paths: &Paths) -> Option<(u64, u64, i64)> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(paths.meta()).ok()?;
    Some((m.ino(), m.len(), m.mtime_nsec()))
}

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

/// Writes the vector file and then the meta (the switch point), both
/// through temporary files that are fsynced and renamed.
/// `rows` gives each chunk's vector in slot order (`None`: zeros), read
/// from wherever the vectors live, so none is copied on the way.
/// With `quantize`, an int8 copy of the rows is written beside them (both
/// before the meta). `chunks` gives each chunk in slot order (`None`: one
/// that cannot be read, which fails the write), streamed into the meta's
/// chunk table; `snap.chunks` must be empty. The table written is mapped
/// into `snap.table`.
pub fn write_snapshot<'v, 'c>(
    paths: &Paths,
    generation: u64,
    snap: &mut Snapshot,
    rows: impl Iterator<Item = Option<Cow<'v, [f32]>>>,
    quantize: Option<Quantize<'_>>,
    chunks: impl Iterator<Item = Option<(u32, Cow<'c, DiskChunk>)>>,
) -> Result<(), IndexError> {
    debug_assert!(snap.chunks.is_empty());
    let zeros = vec![0f32; snap.dim as usize];
    let vec_path = paths.vectors(generation);
    snap.vector_file = vec_path.file_name().unwrap().to_string_lossy().into_owned();
    let mut quantized = quantize
        .map(|q| QuantizedWriter::create(paths.quantized_vectors(generation), zeros.len(), q))
        .transpose()?;
    // Every file is streamed: a copy of the vectors or of the encoded
    // chunks would double the memory a large index needs to compact.
    let (crc, len) = write_atomic_with(&vec_path, |f, tmp| {
        let mut w = CrcWriter::new(std::io::BufWriter::with_capacity(1 << 20, f));
        for row in rows {
            let row = row.as_deref().unwrap_or(&zeros);
            row.iter()
                .try_for_each(|v| w.write_all(&v.to_le_bytes()))
                .map_err(|e| io(tmp, "cannot write", e))?;
            if let Some(q) = quantized.as_mut() {
                q.push(row)?;
            }
        }
        w.flush().map_err(|e| io(tmp, "cannot write", e))?;
        Ok(w.sums())
    })?;
    snap.vector_crc = crc;
    snap.vector_bytes = len;
    snap.quantized = quantized.map(QuantizedWriter::finish).transpose()?;

    let meta = paths.meta();
    let head = Head {
        version: snap.version,
        dim: snap.dim,
        model_id: snap.model_id.clone(),
        sources: &snap.sources,
        chunks: &snap.chunks,
        present: &snap.present,
        vector_file: snap.vector_file.clone(),
        vector_crc: snap.vector_crc,
        vector_bytes: snap.vector_bytes,
    };
    let postings = (&snap.text, &snap.title);
    // Format 8 keeps the chunks' locations in the chunk table.
    let located: Vec<(u32, &DiskLocation)> = Vec::new();
    let described: Vec<(u32, &DiskAttributes)> = snap
        .sources
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.record.attributes.is_empty())
        .map(|(at, e)| (at as u32, &e.record.attributes))
        .collect();
    let repeats = snap.repeats.take().unwrap_or_default();
    let mut chunks = Some(chunks);
    let table_at = write_atomic_with(&meta, |f, tmp| {
        let mut header = SNAP_MAGIC.to_vec();
        header.extend_from_slice(&generation.to_le_bytes());
        let crc = crc32fast::hash(&header);
        f.write_all(&header)
            .and_then(|()| f.write_all(&crc.to_le_bytes()))
            .map_err(|e| io(tmp, "cannot write", e))?;
        stream_record(f, tmp, &head, true)?;
        stream_section(f, tmp, true, &mut |w| {
            postings
                .0
                .write_raw(w)
                .and_then(|()| postings.1.write_raw(w))
                .map_err(|e| io(tmp, "cannot write", e))
        })?;
        stream_record(f, tmp, &located, true)?;
        stream_record(f, tmp, &described, true)?;
        let quantized: Vec<&QuantizedFile> = snap.quantized.iter().collect();
        let table_start = stream_record(f, tmp, &quantized, true)? + 12;
        let table_end = stream_section(f, tmp, true, &mut |w| {
            let chunks = chunks.take().into_iter().flatten();
            write_chunk_table(w, chunks).map_err(|e| io(tmp, "cannot write", e))
        })?;
        stream_record(f, tmp, &repeats, true)?;
        Ok((table_start, table_end - table_start))
    })?;
    sync_dir(&paths.dir);
    snap.repeats = Some(repeats);
    let file = File::open(&meta).map_err(|e| io(&meta, "cannot read", e))?;
    // SAFETY: snapshot files are written once, renamed into place and
    // never modified; a replaced file stays valid while mapped.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| io(&meta, "cannot map", e))?;
    let (start, len) = table_at;
    snap.table = Some(
        ChunkTable::new(std::sync::Arc::new(map), start as usize, len as usize)
            .map_err(|why| bad_table(&meta, &why))?,
    );
    sync_dir(&paths.dir);
    Ok(())
}

/// Before a compaction replaces the snapshot: the current one becomes the
/// previous one (none before the first snapshot: the previous state is empty).
pub fn keep_previous_snapshot(paths: &Paths) -> Result<(), IndexError> {
    let prev = paths.prev_meta();
    match fs::remove_file(&prev) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(io(&prev, "cannot remove", e))
        }
        _ => {}
    }
    // A hard link: no bytes copied, and the rename of the new snapshot over
    // snapshot.meta leaves the linked file as it was.
    match faults::check(LINK).and_then(|()| fs::hard_link(paths.meta(), &prev)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(&prev, "cannot link", e)),
        _ => Ok(()),
    }
}

/// Removes vector files (f32 and int8) of older generations (readers that
/// still map one keep their mapping: the file lives until unmapped).
pub fn remove_old_vectors(paths: &Paths, keep: &[u64]) {
    let Ok(entries) = fs::read_dir(&paths.dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(g) = name
            .strip_prefix("vectors-")
            .and_then(|n| n.strip_suffix(".f32").or_else(|| n.strip_suffix(".i8")))
            .and_then(|n| n.parse::<u64>().ok())
        {
            if !keep.contains(&g) {
                let _ = fs::remove_file(e.path());
            }
        }
    }
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
