//! The files of one index folder.

use std::path::PathBuf;

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
    /// The int8 copy of [`Paths::vectors`], for large snapshots.
    pub fn quantized_vectors(&self, generation: u64) -> PathBuf {
        self.dir.join(format!("vectors-{generation}.i8"))
    }
}
