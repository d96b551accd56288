//! On-disk layout of one index folder (DB_PATH):
//!
//! - `snapshot.meta`: magic `MRSNAP06`, generation (u64), the CRC-32 of
//!   those 16 bytes (u32), then four records
//!   `[len u64][crc32 u32][bincode]`: the head (sources, chunks, which rows
//!   have vectors, the vector file's name, length and CRC-32) and the
//!   postings, so opening decodes them on two threads; then the chunks'
//!   locations; then the sources' languages and declared fields.
//! - `vectors-<generation>.f32`: the vector matrix, raw little-endian f32,
//!   row-major, memory-mapped and scanned in place; its CRC-32 is in the head.
//! - `wal.log`: magic `MRWAL002` + generation (u64), then records
//!   `[len u32][crc32 u32][bincode Op]`, each fsynced before the write returns.
//!
//! Older magics (`MRSNAP01`/`02`, `MRWAL001`) are still read, through
//! [`crate::legacy`].
//! - `LOCK`: writers hold an exclusive OS lock on it while they append or compact.
//!
//! A snapshot is written to temporary files, fsynced, and renamed into
//! place; `snapshot.meta` is the switch point. The WAL's generation says
//! which snapshot its records follow; a WAL older than the snapshot was
//! folded into it and is ignored.

use std::borrow::Cow;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use minirag_core::ports::IndexError;
use serde::{Deserialize, Serialize};

use crate::bm25::Field;
use crate::legacy::{OpV1, SourceEntryV1};
use crate::records::{DiskAttributes, DiskChunk, DiskLocation, Op};
use crate::state::SourceEntry;

pub const FORMAT_VERSION: u32 = 1;
/// Format 1: one payload. Format 2: two payloads (everything but the
/// postings; the postings), each with its own length and CRC, so opening
/// decodes them on two threads. Format 3: format 2 with sources carrying
/// `ocr_engine`. Format 4: format 3 and a third section, the chunks'
/// locations by slot. Format 5: format 4 with the header (magic and
/// generation) under a CRC of its own, as every byte that decides what is
/// kept must be: the generation says which log records follow. Format 6:
/// format 5 and a fourth section, the sources' attributes by position.
/// Formats 1 and 2 are read through [`crate::legacy`].
const SNAP_MAGIC_V1: &[u8; 8] = b"MRSNAP01";
const SNAP_MAGIC_V2: &[u8; 8] = b"MRSNAP02";
const SNAP_MAGIC_V3: &[u8; 8] = b"MRSNAP03";
const SNAP_MAGIC_V4: &[u8; 8] = b"MRSNAP04";
const SNAP_MAGIC_V5: &[u8; 8] = b"MRSNAP05";
const SNAP_MAGIC: &[u8; 8] = b"MRSNAP06";
/// WAL format 1: records without `ocr_engine`; format 2: with it.
const WAL_MAGIC_V1: &[u8; 8] = b"MRWAL001";
const WAL_MAGIC: &[u8; 8] = b"MRWAL002";
pub const WAL_HEADER: u64 = 16;
const SNAP_HEADER: usize = 28;

/// The snapshot without its postings: what format 2 stores first.
#[derive(Serialize, Deserialize)]
struct Head<S, C, P> {
    version: u32,
    dim: u32,
    model_id: Option<String>,
    sources: S,
    chunks: C,
    present: P,
    vector_file: String,
    vector_crc: u32,
    vector_bytes: u64,
}

#[derive(Serialize, Deserialize)]
pub struct Snapshot<S = SourceEntry> {
    pub version: u32,
    pub dim: u32,
    pub model_id: Option<String>,
    pub sources: Vec<S>,
    /// Dense: slot i is chunk i.
    pub chunks: Vec<(u32, DiskChunk)>,
    pub present: Vec<bool>,
    pub text: Field,
    pub title: Field,
    pub vector_file: String,
    pub vector_crc: u32,
    pub vector_bytes: u64,
}

/// A format 1 snapshot with its sources in today's layout.
fn lift(old: Snapshot<SourceEntryV1>) -> Snapshot {
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

/// The OS refused `what` on `path`; the OS error is kept as the source.
pub fn io(path: &Path, what: &str, e: std::io::Error) -> IndexError {
    IndexError::Io {
        context: format!("{what} {}", path.display()),
        source: minirag_core::error::Cause::new(e),
    }
}

/// Something is wrong with `path` that is not an OS error (corrupt, unknown version).
pub fn storage(path: &Path, what: &str, e: impl std::fmt::Display) -> IndexError {
    IndexError::storage(format!("{what} {}: {e}", path.display()))
}

/// As [`storage`], keeping the decoder's or encoder's error as the cause.
pub fn storage_by(
    path: &Path,
    what: &str,
    e: impl std::error::Error + Send + Sync + 'static,
) -> IndexError {
    IndexError::storage_caused(format!("{what} {}: {e}", path.display()), e)
}

/// Decodes `len` bytes from `r` with an allocation limit that fits them:
/// bincode claims a container's memory before it allocates it, so a damaged
/// length fails there, named, instead of asking the allocator for
/// petabytes (which aborts the process). The limit allows 64 bytes of
/// memory for every byte read (varints and empty strings expand that much
/// at most), rounded up to a power of 16.
fn decode_limited<T: serde::de::DeserializeOwned>(
    mut r: impl std::io::Read,
    len: u64,
) -> Result<T, bincode::error::DecodeError> {
    use bincode::serde::decode_from_std_read as decode;
    let need = len.saturating_mul(64).max(1 << 24);
    let c = config();
    if need <= 1 << 24 {
        decode(&mut r, c.with_limit::<{ 1 << 24 }>())
    } else if need <= 1 << 28 {
        decode(&mut r, c.with_limit::<{ 1 << 28 }>())
    } else if need <= 1 << 32 {
        decode(&mut r, c.with_limit::<{ 1 << 32 }>())
    } else if need <= 1 << 36 {
        decode(&mut r, c.with_limit::<{ 1 << 36 }>())
    } else {
        decode(&mut r, c.with_limit::<{ 1 << 40 }>())
    }
}

fn config() -> bincode::config::Configuration {
    bincode::config::standard()
}

pub struct Paths {
    pub dir: PathBuf,
}

impl Paths {
    pub fn meta(&self) -> PathBuf {
        self.dir.join("snapshot.meta")
    }
    pub fn wal(&self) -> PathBuf {
        self.dir.join("wal.log")
    }
    pub fn lock(&self) -> PathBuf {
        self.dir.join("LOCK")
    }
    /// The snapshot before the current one, kept with the log that leads
    /// from it to the current one, so a corrupt current snapshot can be
    /// rebuilt from them plus the current log.
    pub fn prev_meta(&self) -> PathBuf {
        self.dir.join("snapshot.prev.meta")
    }
    pub fn prev_wal(&self) -> PathBuf {
        self.dir.join("wal.prev.log")
    }
    pub fn wal_end(&self) -> PathBuf {
        self.dir.join("wal.end")
    }
    pub fn vectors(&self, generation: u64) -> PathBuf {
        self.dir.join(format!("vectors-{generation}.f32"))
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
fn snapshot_was_written(paths: &Paths) -> bool {
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
}

/// What can still be read of a damaged snapshot: its head (sources and
/// chunks) must be sound; damaged postings come back empty, to be rebuilt
/// from the chunks' text, and damaged locations as none.
pub fn salvage_snapshot(path: &Path) -> Result<Option<(u64, Snapshot, Lost)>, IndexError> {
    read_snapshot_parts(path, true)
}

fn read_snapshot_parts(
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
    let magic: &[u8] = &header[..8];
    let known: [&[u8]; 6] = [
        SNAP_MAGIC,
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
    let sections_at = if magic == SNAP_MAGIC || magic == SNAP_MAGIC_V5 {
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
    let section = |at: u64| -> Result<(u64, u64), IndexError> {
        let mut head = [0u8; 12];
        file.read_exact_at(&mut head, at)
            .map_err(|_| corrupt("truncated"))?;
        let len = u64::from_le_bytes(head[..8].try_into().unwrap());
        let crc = u32::from_le_bytes(head[8..12].try_into().unwrap());
        let start = at + 12;
        if start.checked_add(len).is_none_or(|end| end > file_len) {
            return Err(corrupt("truncated"));
        }
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
        let first_reader = reader(first)?;
        let second_reader = second.map(reader).transpose()?;
        let (head, postings) = std::thread::scope(|s| {
            let postings = s.spawn(move || match (second_reader, second) {
                (Some(r), Some((_, len))) => decode_limited::<(Field, Field)>(r, len).map(Some),
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
            Ok(Err(e)) => return Err(undecodable(e)),
            Err(e) => return Err(e),
        };
        lost.postings = postings.is_none();
        let (text, title) = postings.unwrap_or_default();
        let mut chunks = head.chunks;
        let mut sources = head.sources;
        let mut third = None;
        if magic == SNAP_MAGIC || magic == SNAP_MAGIC_V5 || magic == SNAP_MAGIC_V4 {
            // The chunks' locations; salvaging, a damaged section is none.
            third = second.map(|(start, len)| section(start + len));
            let located = match &third {
                Some(Ok(third)) => {
                    match decode_limited::<Vec<(u32, DiskLocation)>>(reader(*third)?, third.1) {
                        Ok(l) => l,
                        Err(_) if salvage => {
                            lost.locations = true;
                            Vec::new()
                        }
                        Err(e) => return Err(undecodable(e)),
                    }
                }
                Some(Err(_)) if salvage => {
                    lost.locations = true;
                    Vec::new()
                }
                Some(Err(e)) => return Err(e.clone()),
                None => Vec::new(),
            };
            for (slot, location) in located {
                if let Some((_, c)) = chunks.get_mut(slot as usize) {
                    c.location = location;
                }
            }
        }
        if magic == SNAP_MAGIC {
            // The sources' attributes; salvaging, a damaged section is
            // none, and the sync that rebuilds the locations rebuilds them.
            let fourth = match third {
                Some(Ok((start, len))) => Some(section(start + len)),
                _ => None,
            };
            let described = match fourth {
                Some(Ok(fourth)) => {
                    match decode_limited::<Vec<(u32, DiskAttributes)>>(reader(fourth)?, fourth.1) {
                        Ok(d) => d,
                        Err(_) if salvage => {
                            lost.locations = true;
                            Vec::new()
                        }
                        Err(e) => return Err(undecodable(e)),
                    }
                }
                Some(Err(_)) if salvage => {
                    lost.locations = true;
                    Vec::new()
                }
                Some(Err(e)) => return Err(e),
                // Salvaging past damaged postings: the sections after them
                // are read as none, as the locations are.
                None => Vec::new(),
            };
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

/// bincode encoding behind a trait object, so one closure encodes both parts.
mod erased {
    pub trait Encode {
        fn encode_into(
            &self,
            out: &mut dyn std::io::Write,
        ) -> Result<usize, bincode::error::EncodeError>;
    }
    impl<T: serde::Serialize> Encode for T {
        fn encode_into(
            &self,
            mut out: &mut dyn std::io::Write,
        ) -> Result<usize, bincode::error::EncodeError> {
            bincode::serde::encode_into_std_write(self, &mut out, super::config())
        }
    }
}

/// The CRC-32 of `len` bytes of `file` from `start`, read through `buf`;
/// a range no longer than `buf` is left in it whole.
fn crc_of_range(file: &File, start: u64, len: u64, buf: &mut [u8]) -> std::io::Result<u32> {
    use std::os::unix::fs::FileExt;
    let mut hasher = crc32fast::Hasher::new();
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        file.read_exact_at(&mut buf[..n], start + done)?;
        hasher.update(&buf[..n]);
        done += n as u64;
    }
    Ok(hasher.finalize())
}

/// Counts and checksums what passes through, so a record's length and
/// CRC are known without holding its bytes.
struct CrcWriter<W: Write> {
    inner: W,
    crc: crc32fast::Hasher,
    len: u64,
}

impl<W: Write> CrcWriter<W> {
    fn new(inner: W) -> Self {
        Self {
            inner,
            crc: crc32fast::Hasher::new(),
            len: 0,
        }
    }
}

impl<W: Write> Write for CrcWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Streams `value` into `f` at its current end as `[len][crc][payload]`
/// (`len` as u32 or u64 bytes): a placeholder header first, patched once the
/// payload is written, so no copy of the payload is held in memory. A write
/// cut short leaves a header that does not match, which readers treat as a
/// torn tail.
fn stream_record(
    f: &mut File,
    path: &Path,
    value: &dyn erased::Encode,
    wide_len: bool,
) -> Result<u64, IndexError> {
    let start = f
        .stream_position()
        .map_err(|e| io(path, "cannot seek in", e))?;
    let head_len = if wide_len { 12 } else { 8 };
    faults::check(WRITE)
        .and_then(|()| f.write_all(&[0u8; 12][..head_len]))
        .map_err(|e| io(path, "cannot write", e))?;
    let mut w = CrcWriter::new(std::io::BufWriter::with_capacity(1 << 20, &mut *f));
    value
        .encode_into(&mut w)
        .map_err(|e| storage_by(path, "cannot encode a record for", e))?;
    w.flush().map_err(|e| io(path, "cannot write", e))?;
    let (len, crc) = (w.len, w.crc.clone().finalize());
    drop(w);
    let mut head = Vec::with_capacity(head_len);
    if wide_len {
        head.extend_from_slice(&len.to_le_bytes());
    } else {
        let len = u32::try_from(len).map_err(|_| {
            storage(
                path,
                "cannot hold a record of",
                format!("{len} bytes (over 4 GiB)"),
            )
        })?;
        head.extend_from_slice(&len.to_le_bytes());
    }
    head.extend_from_slice(&crc.to_le_bytes());
    f.seek(SeekFrom::Start(start))
        .map_err(|e| io(path, "cannot seek in", e))?;
    faults::check(WRITE)
        .and_then(|()| f.write_all(&head))
        .map_err(|e| io(path, "cannot write", e))?;
    let end = start + head_len as u64 + len;
    f.seek(SeekFrom::Start(end))
        .map_err(|e| io(path, "cannot seek in", e))?;
    Ok(end)
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// CRC-32 of the first `len` bytes of a file, read in 1 MiB blocks.
pub fn file_crc(path: &Path, len: u64) -> std::io::Result<u32> {
    crc_of_range(&File::open(path)?, 0, len, &mut vec![0u8; 1 << 20])
}

/// Writes the vector file and then the meta (the switch point), both
/// through temporary files that are fsynced and renamed.
/// `rows` gives each chunk's vector in slot order (`None`: zeros), read
/// from wherever the vectors live, so none is copied on the way.
pub fn write_snapshot<'v>(
    paths: &Paths,
    generation: u64,
    snap: &mut Snapshot,
    mut rows: impl Iterator<Item = Option<Cow<'v, [f32]>>>,
) -> Result<(), IndexError> {
    let zeros = vec![0f32; snap.dim as usize];
    let vec_path = paths.vectors(generation);
    snap.vector_file = vec_path.file_name().unwrap().to_string_lossy().into_owned();
    // Both files are streamed: a copy of the vectors or of the encoded
    // chunks would double the memory a large index needs to compact.
    let (crc, len) = write_atomic_with(&vec_path, |f, tmp| {
        let mut w = CrcWriter::new(std::io::BufWriter::with_capacity(1 << 20, f));
        rows.try_for_each(|row| {
            row.as_deref()
                .unwrap_or(&zeros)
                .iter()
                .try_for_each(|v| w.write_all(&v.to_le_bytes()))
        })
        .and_then(|()| w.flush())
        .map_err(|e| io(tmp, "cannot write", e))?;
        Ok((w.crc.clone().finalize(), w.len))
    })?;
    snap.vector_crc = crc;
    snap.vector_bytes = len;

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
    let located: Vec<(u32, &DiskLocation)> = snap
        .chunks
        .iter()
        .enumerate()
        .filter(|(_, (_, c))| !c.location.is_empty())
        .map(|(slot, (_, c))| (slot as u32, &c.location))
        .collect();
    let described: Vec<(u32, &DiskAttributes)> = snap
        .sources
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.record.attributes.is_empty())
        .map(|(at, e)| (at as u32, &e.record.attributes))
        .collect();
    write_atomic_with(&meta, |f, tmp| {
        let mut header = SNAP_MAGIC.to_vec();
        header.extend_from_slice(&generation.to_le_bytes());
        let crc = crc32fast::hash(&header);
        f.write_all(&header)
            .and_then(|()| f.write_all(&crc.to_le_bytes()))
            .map_err(|e| io(tmp, "cannot write", e))?;
        stream_record(f, tmp, &head, true)?;
        stream_record(f, tmp, &postings, true)?;
        stream_record(f, tmp, &located, true)?;
        stream_record(f, tmp, &described, true)
    })?;
    sync_dir(&paths.dir);
    Ok(())
}

/// Writes a file through a temporary one (named to `write` for its errors)
/// that is fsynced and renamed.
fn write_atomic_with<T>(
    path: &Path,
    write: impl FnOnce(&mut File, &Path) -> Result<T, IndexError>,
) -> Result<T, IndexError> {
    let tmp = path.with_extension("tmp");
    let mut f = faults::check(WRITE)
        .and_then(|()| File::create(&tmp))
        .map_err(|e| io(&tmp, "cannot create", e))?;
    let out = write(&mut f, &tmp)?;
    faults::check(FSYNC)
        .and_then(|()| f.sync_all())
        .map_err(|e| io(&tmp, "cannot fsync", e))?;
    faults::check(RENAME)
        .and_then(|()| fs::rename(&tmp, path))
        .map_err(|e| io(path, "cannot rename into", e))?;
    Ok(out)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), IndexError> {
    write_atomic_with(path, |f, tmp| {
        f.write_all(bytes).map_err(|e| io(tmp, "cannot write", e))
    })
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

/// After a compaction switched snapshots: the log that led to it becomes the
/// previous log (a fresh log is started next).
pub fn keep_previous_wal(paths: &Paths) -> Result<(), IndexError> {
    match faults::check(RENAME).and_then(|()| fs::rename(paths.wal(), paths.prev_wal())) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(io(&paths.wal(), "cannot rename", e))
        }
        _ => Ok(()),
    }
}

/// Removes vector files of older generations (readers that still map one
/// keep their mapping: the file lives until unmapped).
pub fn remove_old_vectors(paths: &Paths, keep: &[u64]) {
    let Ok(entries) = fs::read_dir(&paths.dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(g) = name
            .strip_prefix("vectors-")
            .and_then(|n| n.strip_suffix(".f32"))
            .and_then(|n| n.parse::<u64>().ok())
        {
            if !keep.contains(&g) {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

/// Starts a fresh WAL for `generation` (atomically replacing any old one).
pub fn reset_wal(paths: &Paths, generation: u64) -> Result<(), IndexError> {
    let mut head = Vec::with_capacity(WAL_HEADER as usize);
    head.extend_from_slice(WAL_MAGIC);
    head.extend_from_slice(&generation.to_le_bytes());
    write_atomic(&paths.wal(), &head)?;
    sync_dir(&paths.dir);
    note_wal_end(paths, generation, WAL_HEADER);
    Ok(())
}

/// Records read from a WAL.
pub struct WalRead {
    /// Generation in the header; `None` when the file is missing or its header is torn.
    pub generation: Option<u64>,
    pub ops: Vec<Op>,
    /// Where each of `ops` starts.
    pub offsets: Vec<u64>,
    /// Offset after the last whole, valid record.
    pub end: u64,
    /// Bytes past `end` (a torn or corrupt tail).
    pub tail: u64,
    /// Written by an older build (WAL format 1): fold it into a snapshot
    /// before appending, so one log never mixes layouts.
    pub legacy: bool,
    /// A bad record with whole, valid records after it: damage, not a torn
    /// tail (only the last record can be cut by a crash).
    pub damage: Option<WalDamage>,
}

/// Where a log is damaged, and what came after.
#[derive(Debug, Clone, PartialEq)]
pub struct WalDamage {
    /// Offset of the bad record (`end` of the read).
    pub at: u64,
    /// Valid records found after it, not applied.
    pub records_after: usize,
    /// The sources those records wrote, sorted and distinct.
    pub sources_after: Vec<String>,
}

/// How far past a bad record to look for the next valid one when the bad
/// record's own length cannot be trusted.
const RESYNC_WINDOW: u64 = 4 << 20;

impl Op {
    /// The sources this record writes.
    fn sources(&self) -> Vec<String> {
        match self {
            Op::Replace { source, .. }
            | Op::ReplaceLocated { source, .. }
            | Op::ReplaceDescribed { source, .. } => {
                vec![source.source.clone()]
            }
            Op::Delete { source } | Op::SetVectors { source, .. } => vec![source.clone()],
            Op::Move { from, to, .. } => vec![from.clone(), to.clone()],
        }
    }
}

/// Reads WAL records from `from` (0 = from the start, header included).
pub fn read_wal(paths: &Paths, from: u64) -> Result<WalRead, IndexError> {
    read_wal_at(&paths.wal(), from)
}

pub fn read_wal_at(path: &Path, from: u64) -> Result<WalRead, IndexError> {
    let path = path.to_path_buf();
    let mut f = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(WalRead {
                generation: None,
                ops: Vec::new(),
                offsets: Vec::new(),
                end: 0,
                tail: 0,
                legacy: false,
                damage: None,
            })
        }
        Err(e) => return Err(io(&path, "cannot open", e)),
    };
    let mut head = [0u8; 16];
    let read = f.read_exact(&mut head);
    let legacy = &head[..8] == WAL_MAGIC_V1;
    if read.is_err() || (&head[..8] != WAL_MAGIC && !legacy) {
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        // The header is written whole, through a rename: a bad one with
        // valid records after it is damage, not a torn write.
        let mut buf = vec![0u8; 1 << 20];
        let (records_after, sources_after) =
            records_from(&mut f, &path, WAL_HEADER, len, false, &mut buf)?;
        return Ok(WalRead {
            generation: None,
            ops: Vec::new(),
            offsets: Vec::new(),
            end: 0,
            tail: len,
            legacy: false,
            damage: (records_after > 0).then_some(WalDamage {
                at: 0,
                records_after,
                sources_after,
            }),
        });
    }
    let generation = u64::from_le_bytes(head[8..16].try_into().unwrap());
    let start = from.max(WAL_HEADER);
    let file_len = f.metadata().map_err(|e| io(&path, "cannot stat", e))?.len();
    // Records are checked and decoded in place, one at a time: a large
    // source's record is never held as bytes next to its decoded chunks.
    let mut buf = vec![0u8; 1 << 20];
    let mut ops = Vec::new();
    let mut offsets = Vec::new();
    let mut pos = start;
    while let Some((op, next)) = wal_record_at(&mut f, &path, pos, file_len, legacy, &mut buf)? {
        ops.push(op);
        offsets.push(pos);
        pos = next;
    }
    // A bad record is a torn tail only when nothing valid follows it.
    let mut damage = None;
    if file_len.saturating_sub(pos) >= 8 {
        if let Some(mut at) = next_valid_record(&mut f, &path, pos, file_len, legacy, &mut buf)? {
            let mut sources = Vec::new();
            let mut records_after = 0;
            while let Some((op, next)) =
                wal_record_at(&mut f, &path, at, file_len, legacy, &mut buf)?
            {
                records_after += 1;
                sources.extend(op.sources());
                at = next;
            }
            sources.sort();
            sources.dedup();
            damage = Some(WalDamage {
                at: pos,
                records_after,
                sources_after: sources,
            });
        }
    }
    Ok(WalRead {
        generation: Some(generation),
        ops,
        offsets,
        end: pos,
        tail: file_len.saturating_sub(pos),
        legacy,
        damage,
    })
}

/// How many valid records follow one another from `at`, and the sources
/// they write (sorted, distinct).
fn records_from(
    f: &mut File,
    path: &Path,
    mut at: u64,
    file_len: u64,
    legacy: bool,
    buf: &mut [u8],
) -> Result<(usize, Vec<String>), IndexError> {
    let mut sources = Vec::new();
    let mut n = 0;
    while let Some((op, next)) = wal_record_at(f, path, at, file_len, legacy, buf)? {
        n += 1;
        sources.extend(op.sources());
        at = next;
    }
    sources.sort();
    sources.dedup();
    Ok((n, sources))
}

/// Records that cannot be applied: the log's header (its generation) is
/// damaged, so it is not known which snapshot they follow.
pub fn header_damage(paths: &Paths) -> Result<Option<WalDamage>, IndexError> {
    let path = paths.wal();
    let mut f = match File::open(&path) {
        Ok(f) => f,
        Err(_) => return Ok(None),
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let mut buf = vec![0u8; 1 << 20];
    let (records_after, sources_after) =
        records_from(&mut f, &path, WAL_HEADER, len, false, &mut buf)?;
    Ok((records_after > 0).then_some(WalDamage {
        at: 0,
        records_after,
        sources_after,
    }))
}

/// The record at `pos` and the offset after it; `None` when there is no
/// whole record there whose checksum holds and which decodes.
fn wal_record_at(
    f: &mut File,
    path: &Path,
    pos: u64,
    file_len: u64,
    legacy: bool,
    buf: &mut [u8],
) -> Result<Option<(Op, u64)>, IndexError> {
    use std::os::unix::fs::FileExt;
    if file_len.saturating_sub(pos) < 8 {
        return Ok(None);
    }
    let mut head = [0u8; 8];
    if f.read_exact_at(&mut head, pos).is_err() {
        return Ok(None);
    }
    let len = u32::from_le_bytes(head[..4].try_into().unwrap()) as u64;
    let crc = u32::from_le_bytes(head[4..8].try_into().unwrap());
    let body = pos + 8;
    if body + len > file_len {
        return Ok(None);
    }
    if crc_of_range(f, body, len, buf).map_err(|e| io(path, "cannot read", e))? != crc {
        return Ok(None);
    }
    let op = if len as usize <= buf.len() {
        // Small records (all but a large source's) decode from the
        // buffer the checksum pass just filled.
        let payload = &buf[..len as usize];
        if legacy {
            decode_limited::<OpV1>(payload, len).map(Into::into)
        } else {
            decode_limited::<Op>(payload, len)
        }
    } else {
        f.seek(SeekFrom::Start(body))
            .map_err(|e| io(path, "cannot seek in", e))?;
        let r = std::io::BufReader::with_capacity(1 << 20, &mut *f).take(len);
        if legacy {
            decode_limited::<OpV1>(r, len).map(Into::into)
        } else {
            decode_limited::<Op>(r, len)
        }
    };
    Ok(op.ok().map(|op| (op.merged(), body + len)))
}

/// The first valid record after the bad one at `bad`: where the bad
/// record's length says the next one starts, else the first offset within
/// [`RESYNC_WINDOW`] that holds one (its length may be the damaged part).
fn next_valid_record(
    f: &mut File,
    path: &Path,
    bad: u64,
    file_len: u64,
    legacy: bool,
    buf: &mut [u8],
) -> Result<Option<u64>, IndexError> {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; 8];
    if f.read_exact_at(&mut head, bad).is_ok() {
        let len = u32::from_le_bytes(head[..4].try_into().unwrap()) as u64;
        let hop = bad + 8 + len;
        if hop < file_len && wal_record_at(f, path, hop, file_len, legacy, buf)?.is_some() {
            return Ok(Some(hop));
        }
    }
    let last = file_len.saturating_sub(8).min(bad + RESYNC_WINDOW);
    let mut window = vec![0u8; (last + 8 - bad) as usize];
    if f.read_exact_at(&mut window, bad).is_err() {
        return Ok(None);
    }
    for p in bad + 1..=last {
        let i = (p - bad) as usize;
        let len = u32::from_le_bytes(window[i..i + 4].try_into().unwrap()) as u64;
        // Only a length that fits the file can start a record.
        if p + 8 + len <= file_len && wal_record_at(f, path, p, file_len, legacy, buf)?.is_some() {
            return Ok(Some(p));
        }
    }
    Ok(None)
}

/// Notes that the log of `generation` holds acknowledged records up to
/// `end`, in `wal.end` (generation and end, 16 bytes). Written after the
/// log's fsync and not synced itself: whatever survives a crash is never
/// past the log's durable end, so a log found shorter than it was cut
/// short after the fact, which a torn write cannot do.
pub fn note_wal_end(paths: &Paths, generation: u64, end: u64) {
    use std::os::unix::fs::FileExt;
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&generation.to_le_bytes());
    bytes[8..].copy_from_slice(&end.to_le_bytes());
    let written = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(paths.wal_end())
        .and_then(|f| f.write_all_at(&bytes, 0));
    if let Err(e) = written {
        eprintln!(
            "warn: cannot note the log's end in {}: {e}",
            paths.wal_end().display()
        );
    }
}

/// The acknowledged end `wal.end` notes for `generation`, if it notes one.
/// Read before the log itself, so a write racing the read only makes it
/// smaller than what the log is then found to hold.
pub fn noted_wal_end(paths: &Paths, generation: u64) -> Option<u64> {
    let bytes = fs::read(paths.wal_end()).ok()?;
    let bytes: [u8; 16] = bytes.get(..16)?.try_into().ok()?;
    (u64::from_le_bytes(bytes[..8].try_into().ok()?) == generation)
        .then(|| u64::from_le_bytes(bytes[8..].try_into().unwrap()))
}

/// Appends one record and makes it durable; `end` is where the valid log
/// ends (a torn tail past it is cut off first). Returns the new end.
pub fn append_wal(paths: &Paths, end: u64, op: &Op) -> Result<u64, IndexError> {
    let path = paths.wal();
    let mut f = OpenOptions::new()
        .write(true)
        .open(&path)
        .map_err(|e| io(&path, "cannot open", e))?;
    let len = f.metadata().map_err(|e| io(&path, "cannot stat", e))?.len();
    if len > end {
        eprintln!(
            "warn: {}: cut a torn tail of {} byte(s) left by an interrupted write",
            path.display(),
            len - end
        );
        f.set_len(end)
            .map_err(|e| io(&path, "cannot truncate", e))?;
    }
    f.seek(SeekFrom::Start(end))
        .map_err(|e| io(&path, "cannot seek in", e))?;
    // Streamed: a large source's record is never held as bytes in memory.
    let new_end = stream_record(&mut f, &path, op, false)?;
    faults::check(FSYNC)
        .and_then(|()| f.sync_data())
        .map_err(|e| io(&path, "cannot fsync", e))?;
    Ok(new_end)
}

/// Fail points for tests: every write, fsync, rename and link of the index
/// files asks [`faults::check`] first, which fails the `n`-th such step after
/// [`faults::arm`]`(n)`. Unarmed (always, outside tests) it is one atomic
/// load per step.
#[doc(hidden)]
pub mod faults {
    use std::sync::atomic::{AtomicU64, Ordering};

    static FAIL_AT: AtomicU64 = AtomicU64::new(0);
    static SEEN: AtomicU64 = AtomicU64::new(0);
    static FAILED: AtomicU64 = AtomicU64::new(0);

    /// Fails the `n`-th step from now (1-based); 0 disarms.
    pub fn arm(n: u64) {
        SEEN.store(0, Ordering::SeqCst);
        FAILED.store(0, Ordering::SeqCst);
        FAIL_AT.store(n, Ordering::SeqCst);
    }

    /// Disarms; returns the kind of step that failed, if one did.
    pub fn disarm() -> Option<&'static str> {
        FAIL_AT.store(0, Ordering::SeqCst);
        KINDS
            .get(FAILED.swap(0, Ordering::SeqCst) as usize)
            .copied()
            .filter(|k| !k.is_empty())
    }

    const KINDS: [&str; 5] = ["", "write", "fsync", "rename", "link"];

    /// `Err` when this is the armed step. `kind`: 1 write, 2 fsync, 3
    /// rename, 4 link.
    pub(crate) fn check(kind: u64) -> std::io::Result<()> {
        let at = FAIL_AT.load(Ordering::Relaxed);
        if at == 0 || SEEN.fetch_add(1, Ordering::SeqCst) + 1 != at {
            return Ok(());
        }
        FAILED.store(kind, Ordering::SeqCst);
        Err(std::io::Error::other(format!(
            "injected {} failure",
            KINDS[kind as usize]
        )))
    }
}

const WRITE: u64 = 1;
const FSYNC: u64 = 2;
const RENAME: u64 = 3;
const LINK: u64 = 4;

/// Holds the writer lock until dropped.
pub struct WriterLock(File);

impl WriterLock {
    pub fn take(paths: &Paths) -> Result<Self, IndexError> {
        let path = paths.lock();
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io(&path, "cannot open", e))?;
        f.lock().map_err(|e| io(&path, "cannot lock", e))?;
        Ok(Self(f))
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty(model: &str) -> Snapshot {
        Snapshot {
            version: FORMAT_VERSION,
            dim: 0,
            model_id: Some(model.into()),
            sources: Vec::new(),
            chunks: Vec::new(),
            present: Vec::new(),
            text: Field::default(),
            title: Field::default(),
            vector_file: String::new(),
            vector_crc: 0,
            vector_bytes: 0,
        }
    }

    #[test]
    fn format_1_snapshots_still_open() {
        let dir = tempfile::tempdir().unwrap();
        let payload = bincode::serde::encode_to_vec(empty("old-model"), config()).unwrap();
        let mut bytes = SNAP_MAGIC_V1.to_vec();
        bytes.extend_from_slice(&7u64.to_le_bytes());
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        bytes.extend_from_slice(&payload);
        let path = dir.path().join("snapshot.meta");
        fs::write(&path, bytes).unwrap();
        let (generation, snap) = read_snapshot_at(&path).unwrap().unwrap();
        assert_eq!(generation, 7);
        assert_eq!(snap.model_id.as_deref(), Some("old-model"));
    }

    #[test]
    fn format_2_round_trips_and_checks_each_part() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths {
            dir: dir.path().to_path_buf(),
        };
        write_snapshot(&paths, 3, &mut empty("m"), std::iter::empty()).unwrap();
        let (generation, snap) = read_snapshot(&paths).unwrap().unwrap();
        assert_eq!((generation, snap.model_id.as_deref()), (3, Some("m")));
        let mut bytes = fs::read(paths.meta()).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1; // inside the postings part
        fs::write(paths.meta(), bytes).unwrap();
        let err = read_snapshot(&paths).err().unwrap().to_string();
        assert!(err.contains("checksum mismatch"), "{err}");
    }

    #[test]
    fn format_2_snapshots_open_with_their_sources_lifted() {
        let dir = tempfile::tempdir().unwrap();
        let source = crate::legacy::DiskSourceV1 {
            source: "/docs/a.md".into(),
            source_type: 0,
            title: "A".into(),
            title_seeded: false,
            file_hash: "h".into(),
            mtime: 1.0,
            ingested_at: "2026-11-01T00:00:00Z".into(),
            chunk_count: 0,
            scheme_version: 3,
            embedded_with: None,
        };
        let head = Head {
            version: FORMAT_VERSION,
            dim: 0,
            model_id: None::<String>,
            sources: vec![SourceEntryV1 {
                record: source,
                slots: Vec::new(),
            }],
            chunks: Vec::<(u32, DiskChunk)>::new(),
            present: Vec::<bool>::new(),
            vector_file: String::new(),
            vector_crc: 0,
            vector_bytes: 0,
        };
        let first = bincode::serde::encode_to_vec(&head, config()).unwrap();
        let second =
            bincode::serde::encode_to_vec((Field::default(), Field::default()), config()).unwrap();
        let mut bytes = SNAP_MAGIC_V2.to_vec();
        bytes.extend_from_slice(&4u64.to_le_bytes());
        for payload in [&first, &second] {
            bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
            bytes.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
            bytes.extend_from_slice(payload);
        }
        let path = dir.path().join("snapshot.meta");
        fs::write(&path, bytes).unwrap();
        let (generation, snap) = read_snapshot_at(&path).unwrap().unwrap();
        assert_eq!(generation, 4);
        assert_eq!(snap.sources[0].record.source, "/docs/a.md");
        assert_eq!(snap.sources[0].record.ocr_engine, "");
    }
}
