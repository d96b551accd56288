//! Walking the roots: supported files only, no hidden or tool
//! folders, no symlinked folders, nothing whose real path leaves the roots,
//! each real file once. Folders that cannot be listed, and roots that are
//! empty, are reported ("blind"), so sync never mistakes them for deletions.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use minirag_core::formats::{is_document_extension, is_known_extension};
use minirag_core::ports::{BlindFolder, Scan, ScannedFile};
use minirag_core::scan_rules::skipped_name;

use crate::mtime_of;

/// A document, or with `images` (OCR is available) also an image.
pub fn is_supported(path: &Path, images: bool) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        if images {
            is_known_extension(e)
        } else {
            is_document_extension(e)
        }
    })
}

/// Scans `roots` (already resolved), or only `limit` paths under them when given.
pub fn scan(roots: &[PathBuf], limit: &[PathBuf], images: bool) -> Scan {
    let mut out = Scan::default();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let starts: Vec<PathBuf> = if limit.is_empty() {
        roots.to_vec()
    } else {
        limit.to_vec()
    };
    for start in &starts {
        if start.is_file() {
            add_file(start, roots, images, &mut seen, &mut out);
            continue;
        }
        let is_root = roots.contains(start);
        match std::fs::read_dir(start) {
            Ok(mut entries) => {
                if is_root && entries.next().is_none() {
                    out.blind.push(BlindFolder {
                        path: start.display().to_string(),
                        error: None,
                    });
                    continue;
                }
                walk(start, roots, images, &mut seen, &mut out);
            }
            Err(e) => out.blind.push(BlindFolder {
                path: start.display().to_string(),
                error: Some(e.to_string()),
            }),
        }
    }
    out.files.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

fn add_file(
    path: &Path,
    roots: &[PathBuf],
    images: bool,
    seen: &mut HashSet<PathBuf>,
    out: &mut Scan,
) {
    if !is_supported(path, images) {
        return;
    }
    let Ok(real) = std::fs::canonicalize(path) else {
        return;
    };
    if !roots.iter().any(|r| real.starts_with(r)) || !seen.insert(real.clone()) {
        return;
    }
    let Ok(meta) = std::fs::metadata(&real) else {
        return;
    };
    if meta.is_file() {
        out.files.push(ScannedFile {
            path: path.display().to_string(),
            size: meta.len(),
            mtime: mtime_of(&meta),
        });
    }
}

fn walk(dir: &Path, roots: &[PathBuf], images: bool, seen: &mut HashSet<PathBuf>, out: &mut Scan) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            out.blind.push(BlindFolder {
                path: dir.display().to_string(),
                error: Some(e.to_string()),
            });
            return;
        }
    };
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if !skipped_name(&name, true) {
                dirs.push(entry.path());
            }
        } else if (kind.is_file() || kind.is_symlink()) && !skipped_name(&name, false) {
            // A symlink to a folder is not followed; to a file it is checked like any file.
            if kind.is_symlink() && entry.path().is_dir() {
                continue;
            }
            files.push(entry.path());
        }
    }
    files.sort();
    dirs.sort();
    for f in files {
        add_file(&f, roots, images, seen, out);
    }
    for d in dirs {
        walk(&d, roots, images, seen, out);
    }
}
