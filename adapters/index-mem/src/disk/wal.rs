//! `wal.log`: appending records, reading them back past damage, and the
//! noted end that tells a torn tail from lost records.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use minirag_core::ports::IndexError;

use crate::legacy::OpV1;
use crate::records::Op;

use super::codec::decode_limited;
use super::errors::io;
use super::faults::{self, FSYNC, RENAME};
use super::framing::{crc_of_range, stream_record, sync_dir, write_atomic};
use super::paths::Paths;

/// WAL format 1: records without `ocr_engine`; format 2: with it.
pub(crate) const WAL_MAGIC_V1: &[u8; 8] = b"MRWAL001";
pub(crate) const WAL_MAGIC: &[u8; 8] = b"MRWAL002";
pub const WAL_HEADER: u64 = 16;
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
pub(crate) const RESYNC_WINDOW: u64 = 4 << 20;

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
    // A short header is a torn or foreign file (below); a header that
    // cannot be read is an error, never "no log": a writer would start the
    // log afresh over records it could not read.
    let read = match f.read_exact(&mut head) {
        Err(e) if e.kind() != std::io::ErrorKind::UnexpectedEof => {
            return Err(io(&path, "cannot read", e))
        }
        read => read,
    };
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
pub(crate) fn records_from(
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
pub(crate) fn wal_record_at(
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
pub(crate) fn next_valid_record(
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
/// `end`, in `wal.end` (generation, end and their CRC-32, 20 bytes).
/// Written after the log's fsync and not synced itself: whatever survives
/// a crash is never past the log's durable end, so a log found shorter
/// than it was cut short after the fact, which a torn write cannot do.
pub fn note_wal_end(paths: &Paths, generation: u64, end: u64) {
    use std::os::unix::fs::FileExt;
    let mut bytes = [0u8; 20];
    bytes[..8].copy_from_slice(&generation.to_le_bytes());
    bytes[8..16].copy_from_slice(&end.to_le_bytes());
    let crc = crc32fast::hash(&bytes[..16]);
    bytes[16..].copy_from_slice(&crc.to_le_bytes());
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

/// The acknowledged end `wal.end` notes for `generation`, if it notes one
/// whose checksum holds: a damaged note says nothing, rather than a loss
/// that never happened. Read before the log itself, so a write racing the
/// read only makes it smaller than what the log is then found to hold.
pub fn noted_wal_end(paths: &Paths, generation: u64) -> Option<u64> {
    let bytes = fs::read(paths.wal_end()).ok()?;
    let bytes: [u8; 20] = bytes.get(..20)?.try_into().ok()?;
    let crc = u32::from_le_bytes(bytes[16..].try_into().ok()?);
    if crc32fast::hash(&bytes[..16]) != crc {
        eprintln!(
            "warn: {} is damaged and was not read; the log is read as it is",
            paths.wal_end().display()
        );
        return None;
    }
    let noted = u64::from_le_bytes(bytes[8..16].try_into().ok()?);
    (u64::from_le_bytes(bytes[..8].try_into().ok()?) == generation).then_some(noted)
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
