//! The snapshot's chunks as a table read in place through a map (format
//! 8): opening decodes none of them, and a query decodes only the chunks
//! it shows. What hot loops need of every chunk (its source, its index in
//! that source, a key of its text) is fixed-width.
//!
//! Layout of the section's payload, little-endian: each chunk's blob
//! (bincode of the chunk and its location), one after the other; then `n`
//! source ids (u32), `n` chunk indexes (u32), `n` text keys (u64), `n`
//! blob ends (u64, from the payload's start); then `n` (u64). The blobs
//! come first so the writer streams them, keeping only the small columns.

use std::io::Write;
use std::sync::Arc;

use memmap2::Mmap;
use minirag_core::ports::IndexError;

use crate::records::{DiskChunk, DiskLocation};

use super::codec::config;

/// Bytes of the fixed columns per chunk.
const PER_CHUNK: usize = 4 + 4 + 8 + 8;

/// A stable key of a chunk's text (two CRC-32s): stored in the table, so it
/// must not change between builds as `std`'s hasher may.
pub fn text_key(text: &str) -> u64 {
    let mut low = crc32fast::Hasher::new();
    low.update(text.as_bytes());
    let mut high = crc32fast::Hasher::new_with_initial(0x9E37_79B9);
    high.update(text.as_bytes());
    u64::from(high.finalize()) << 32 | u64::from(low.finalize())
}

/// The chunk table of a mapped snapshot.
#[derive(Clone)]
pub struct ChunkTable {
    map: Arc<Mmap>,
    /// The payload's range in the map.
    start: usize,
    n: usize,
    /// Where each column starts, from `start`.
    sids: usize,
    indexes: usize,
    keys: usize,
    ends: usize,
}

impl std::fmt::Debug for ChunkTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ChunkTable({} chunks)", self.n)
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default())
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default())
}

impl ChunkTable {
    /// The table in `len` bytes of `map` from `start` (a section whose CRC
    /// held); its shape is checked here, so no read of it goes out of
    /// bounds: the blob ends rise and stay within the blobs.
    pub(crate) fn new(map: Arc<Mmap>, start: usize, len: usize) -> Result<Self, String> {
        let payload = map
            .get(start..start.checked_add(len).ok_or("a table past the file")?)
            .ok_or("a table past the file")?;
        if len < 8 {
            return Err("a chunk table too short".into());
        }
        let n = usize::try_from(u64_at(payload, len - 8)).map_err(|_| "a chunk count too large")?;
        let columns = n
            .checked_mul(PER_CHUNK)
            .filter(|c| c + 8 <= len)
            .ok_or("a chunk count larger than its table")?;
        let blobs = len - 8 - columns;
        let sids = blobs;
        let indexes = sids + 4 * n;
        let keys = indexes + 4 * n;
        let ends = keys + 8 * n;
        let mut last = 0u64;
        for i in 0..n {
            let end = u64_at(payload, ends + 8 * i);
            if end < last {
                return Err("chunk ends that fall back".into());
            }
            last = end;
        }
        if last != blobs as u64 {
            return Err("chunk ends that miss the end of the chunks".into());
        }
        Ok(Self {
            map,
            start,
            n,
            sids,
            indexes,
            keys,
            ends,
        })
    }

    fn payload(&self) -> &[u8] {
        &self.map[self.start..]
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The chunk's source id (inlined: the whole-document scores read it
    /// once per posting).
    #[inline]
    pub fn sid(&self, i: usize) -> u32 {
        u32_at(self.payload(), self.sids + 4 * i)
    }

    /// The chunk's index in its source.
    pub fn index(&self, i: usize) -> u32 {
        u32_at(self.payload(), self.indexes + 4 * i)
    }

    pub fn key(&self, i: usize) -> u64 {
        u64_at(self.payload(), self.keys + 8 * i)
    }

    /// Chunk `i`'s blob.
    fn blob(&self, i: usize) -> &[u8] {
        let p = self.payload();
        let start = match i {
            0 => 0,
            _ => u64_at(p, self.ends + 8 * (i - 1)) as usize,
        };
        &p[start..u64_at(p, self.ends + 8 * i) as usize]
    }

    /// Chunk `i`, decoded; `None` when its blob does not decode (damage
    /// past the CRC: the chunk reads as gone, never as a panic).
    pub fn chunk(&self, i: usize) -> Option<DiskChunk> {
        let limited = config().with_limit::<{ 1 << 28 }>();
        let ((mut chunk, location), _): ((DiskChunk, DiskLocation), usize) =
            bincode::serde::decode_from_slice(self.blob(i), limited).ok()?;
        chunk.location = location;
        Some(chunk)
    }

    /// Chunk `i`'s parent section: the blob's second field (a chunk encodes
    /// its index, then its parent), decoded alone.
    pub fn parent(&self, i: usize) -> Option<u32> {
        let ((_index, parent), _): ((u32, u32), usize) =
            bincode::serde::decode_from_slice(self.blob(i), config()).ok()?;
        Some(parent)
    }
}

/// Streams a table's payload into `w`: the blobs as `chunks` gives them
/// (`None`, a chunk that could not be read, fails the write), then the
/// columns.
pub(crate) fn write_chunk_table<'c>(
    w: &mut dyn Write,
    chunks: impl Iterator<Item = Option<(u32, std::borrow::Cow<'c, DiskChunk>)>>,
) -> std::io::Result<()> {
    let (mut sids, mut indexes, mut keys, mut ends) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut at = 0u64;
    let mut blob = Vec::new();
    for chunk in chunks {
        let (sid, chunk) = chunk.ok_or_else(|| {
            std::io::Error::other("a chunk that does not decode (damage past its checksum)")
        })?;
        blob.clear();
        bincode::serde::encode_into_std_write((&*chunk, &chunk.location), &mut blob, config())
            .map_err(std::io::Error::other)?;
        w.write_all(&blob)?;
        at += blob.len() as u64;
        sids.push(sid);
        indexes.push(chunk.index);
        keys.push(text_key(&chunk.text));
        ends.push(at);
    }
    // `w` is buffered: each value goes straight in, no column is copied.
    for v in sids.iter().chain(&indexes) {
        w.write_all(&v.to_le_bytes())?;
    }
    for v in keys.iter().chain(&ends) {
        w.write_all(&v.to_le_bytes())?;
    }
    w.write_all(&(sids.len() as u64).to_le_bytes())
}

/// A table that failed [`ChunkTable::new`], as the index's error.
pub(crate) fn bad_table(path: &std::path::Path, why: &str) -> IndexError {
    super::errors::storage(
        path,
        "is corrupt",
        format!("its chunk table has {why}; move it away and re-sync, or restore it from a backup"),
    )
}
