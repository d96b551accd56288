//! The `Files` port on the local file system: walking the roots by the scan
//! rules ([`scan`]), reading files with their sha256 and mtime.

#![forbid(unsafe_code)]

pub mod scan;

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use minirag_core::error::Cause;
use minirag_core::ports::{FileError, FileRead, Files, Scan};
use sha2::Digest;

/// The local file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalFiles;

/// The sha256 of `bytes`, lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = sha2::Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// st_mtime in seconds, 0.0 when the platform has none.
pub fn mtime_of(meta: &std::fs::Metadata) -> f64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0.0, |d| d.as_secs_f64())
}

fn unreadable(path: &str, e: std::io::Error) -> FileError {
    FileError::Unreadable {
        path: path.into(),
        source: Cause::new(e),
    }
}

impl Files for LocalFiles {
    fn scan(&self, roots: &[String], limit: &[String], images: bool) -> Scan {
        let roots: Vec<PathBuf> = roots.iter().map(PathBuf::from).collect();
        let limit: Vec<PathBuf> = limit.iter().map(PathBuf::from).collect();
        scan::scan(&roots, &limit, images)
    }

    fn read(&self, path: &str, max_bytes: u64) -> Result<FileRead, FileError> {
        let meta = std::fs::metadata(path).map_err(|e| unreadable(path, e))?;
        if meta.is_dir() {
            return Err(FileError::IsFolder { path: path.into() });
        }
        if meta.len() > max_bytes {
            return Err(FileError::TooLarge {
                path: path.into(),
                size: meta.len(),
            });
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        std::fs::File::open(path)
            // One byte past the limit tells a file that grew since the stat.
            .and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes))
            .map_err(|e| unreadable(path, e))?;
        if bytes.len() as u64 > max_bytes {
            return Err(FileError::TooLarge {
                path: path.into(),
                size: bytes.len() as u64,
            });
        }
        Ok(FileRead {
            sha256: sha256_hex(&bytes),
            bytes,
            mtime: mtime_of(&meta),
        })
    }

    fn sha256(&self, path: &str) -> Option<String> {
        std::fs::read(path).ok().map(|b| sha256_hex(&b))
    }
    fn is_folder(&self, path: &str) -> bool {
        Path::new(path).is_dir()
    }
    fn resolve(&self, path: &str) -> String {
        resolve(Path::new(path)).display().to_string()
    }
}

/// Symlinks resolved as far as the path exists; the rest normalised lexically.
pub fn resolve(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    while !existing.exists() {
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = std::fs::canonicalize(&existing).unwrap_or(existing);
    for part in rest.iter().rev() {
        match Path::new(part).components().next() {
            Some(Component::ParentDir) => {
                out.pop();
            }
            Some(Component::CurDir) => {}
            _ => out.push(part),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_hashes_and_refuses_folders_and_oversized_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.md");
        std::fs::write(&file, "abc").unwrap();
        let path = file.display().to_string();
        let read = LocalFiles.read(&path, 3).unwrap();
        assert_eq!(read.bytes, b"abc");
        assert_eq!(
            read.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(LocalFiles.sha256(&path), Some(read.sha256));
        assert!(read.mtime > 0.0);
        assert_eq!(
            LocalFiles.read(&path, 2),
            Err(FileError::TooLarge { path, size: 3 })
        );
        let folder = dir.path().display().to_string();
        let err = LocalFiles.read(&folder, 10).unwrap_err();
        assert!(err.to_string().contains("is a folder"), "{err}");
        let missing = dir.path().join("missing.md").display().to_string();
        let err = LocalFiles.read(&missing, 10).unwrap_err();
        let os = std::error::Error::source(&err).expect("the OS error is kept");
        assert_eq!(
            os.downcast_ref::<std::io::Error>().map(|e| e.kind()),
            Some(std::io::ErrorKind::NotFound)
        );
    }

    #[test]
    fn scans_follow_the_format_table_and_skip_hidden_folders() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/x.md"), "x").unwrap();
        std::fs::write(root.join("a.MD"), "x").unwrap();
        std::fs::write(root.join("b.py"), "x").unwrap();
        std::fs::write(root.join("c.png"), "x").unwrap();
        let scan = LocalFiles.scan(&[root.display().to_string()], &[], false);
        let names: Vec<String> = scan.files.iter().map(|f| f.path.clone()).collect();
        assert_eq!(names, [root.join("a.MD").display().to_string()]);
    }
}
