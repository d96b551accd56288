//! The writer lock: an OS lock on `LOCK`, held while appending or
//! compacting.

use std::fs::{File, OpenOptions};

use minirag_core::ports::IndexError;

use super::errors::io;
use super::paths::Paths;

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
