//! `snapshot.meta`: its formats and writing (reading is in
//! `snapshot_read`), and the previous generation kept beside it.

use std::borrow::Cow;
use std::fs::{self, File};
use std::io::Write;

use minirag_core::ports::IndexError;
use serde::{Deserialize, Serialize};

use crate::bm25::Field;
use crate::legacy::SourceEntryV1;
use crate::records::SourceEntry;
use crate::records::{DiskAttributes, DiskChunk, DiskLocation};

use super::chunk_table::{bad_table, write_chunk_table, ChunkTable};
use super::errors::io;
use super::faults::{self, LINK};
use super::framing::stream_section;
use super::framing::{stream_record, sync_dir, write_atomic_with, CrcWriter};
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
    /// Read from an older format (rewritten at the next `settle`).
    #[serde(skip)]
    pub outdated: bool,
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
        outdated: true,
    }
}

impl<C, P> Head<Vec<SourceEntryV1>, C, P> {
    /// A format 2 head with its sources in today's layout.
    pub(crate) fn lift(self) -> Head<Vec<SourceEntry>, C, P> {
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
        // The checksum under the buffer: it runs fast over the buffer's
        // megabyte, not over each float's four bytes.
        let mut w = std::io::BufWriter::with_capacity(1 << 20, CrcWriter::new(f));
        for row in rows {
            let row = row.as_deref().unwrap_or(&zeros);
            row.iter()
                .try_for_each(|v| w.write_all(&v.to_le_bytes()))
                .map_err(|e| io(tmp, "cannot write", e))?;
            if let Some(q) = quantized.as_mut() {
                q.push(row)?;
            }
        }
        let w = w
            .into_inner()
            .map_err(|e| io(tmp, "cannot write", e.into_error()))?;
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
