//! The files of one index folder.

use std::path::PathBuf;

/// Vector files up to this size have their checksums read at open; larger
/// ones (a 100k-chunk index's f32 rows are 154 MB) by
/// `MemIndex::verify` (`doctor --deep`), so opening a large index reads
/// neither whole. Their lengths are checked at open either way.
pub const CHECKED_AT_OPEN: u64 = 64 << 20;

pub struct Paths {
    pub dir: PathBuf,
    /// The largest vector file whose checksum open reads
    /// ([`CHECKED_AT_OPEN`]; tests lower it).
    pub checked_at_open: u64,
}

impl Paths {
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            checked_at_open: CHECKED_AT_OPEN,
        }
    }

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
    /// The int8 copy of [`Paths::vectors`], for large snapshots.
    pub fn quantized_vectors(&self, generation: u64) -> PathBuf {
        self.dir.join(format!("vectors-{generation}.i8"))
    }
}
