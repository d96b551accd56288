//! The checksums of a snapshot's vector files too large to read at open,
//! read by `verify` (`doctor --deep`) instead.

use std::path::PathBuf;

use super::Matrix;
use crate::disk;

/// A file and the length and CRC-32 its snapshot records.
#[derive(Clone, Debug)]
pub struct FileCheck {
    path: PathBuf,
    bytes: u64,
    crc: u32,
}

impl FileCheck {
    pub fn new(path: PathBuf, bytes: u64, crc: u32) -> Self {
        Self { path, bytes, crc }
    }

    /// `None` when the file holds its checksum, else what is wrong and the fix.
    fn problem(&self) -> Option<String> {
        let found = disk::file_crc(&self.path, self.bytes);
        if found.as_ref().is_ok_and(|crc| *crc == self.crc) {
            return None;
        }
        let why = match found {
            Err(e) => format!("cannot be read ({e})"),
            Ok(_) => "is corrupt (checksum mismatch)".into(),
        };
        Some(format!(
            "{} {why}; vector search may rank the chunks it holds wrongly: \
             move the index folder away and sync again",
            self.path.display()
        ))
    }
}

impl Matrix {
    /// Leaves `check` to [`Matrix::verify_files`].
    pub fn defer_check(&mut self, check: FileCheck) {
        self.deferred.push(check);
    }

    /// The checks open left, read now: each file that fails is named.
    pub fn verify_files(&self) -> Vec<String> {
        self.deferred
            .iter()
            .filter_map(FileCheck::problem)
            .collect()
    }
}
