//! Errors that name the index file and what was being done to it.

use std::path::Path;

use minirag_core::ports::IndexError;

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
