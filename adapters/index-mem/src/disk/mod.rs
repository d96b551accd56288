//! On-disk layout of one index folder (DB_PATH):
//!
//! - `snapshot.meta`: magic `MRSNAP09`, generation (u64), the CRC-32 of
//!   those 16 bytes (u32), then seven sections `[len u64][crc32 u32][payload]`:
//!   the head (sources, which rows have vectors, the vector file's name,
//!   length and CRC-32; bincode) and the postings (as laid in memory),
//!   read at open on two threads; the chunks' locations (empty, kept for the layout); the
//!   sources' languages and declared fields; the int8 copy's file, if any;
//!   the chunk table, read in place ([`ChunkTable`]); each source's
//!   breadcrumb repeats.
//! - `vectors-<generation>.f32`: the vector matrix, raw little-endian f32,
//!   row-major, memory-mapped and scanned in place; its CRC-32 is in the head.
//! - `vectors-<generation>.i8`: a large snapshot's int8 copy of that matrix
//!   (see [`QuantizedFile`]), memory-mapped too.
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

pub(crate) mod chunk_table;
mod codec;
mod errors;
#[doc(hidden)]
pub mod faults;
mod framing;
mod lock;
mod paths;
mod quantized;
mod snapshot;
mod snapshot_read;
mod wal;

pub use chunk_table::{text_key, ChunkTable};
pub use errors::{io, storage, storage_by};
pub use framing::file_crc;
pub(crate) use framing::remove_temporaries;
pub use lock::WriterLock;
pub use paths::{Paths, CHECKED_AT_OPEN};
pub use quantized::{Quantize, QuantizedFile};
pub use snapshot::*;
pub use snapshot_read::*;
pub use wal::*;

#[cfg(test)]
mod tests;
