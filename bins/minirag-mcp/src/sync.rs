//! Sync (§6): scan, diff against the index, then moves, ingests and
//! deletes, file by file (each one is committed on its own, so an
//! interrupted sync keeps what it finished). One sync per index at a time,
//! across processes, through an OS lock that dies with its process.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{anyhow, bail, Result};
use minirag_core::ports::SourceType;
use minirag_core::search::Scope;
use minirag_core::time::iso_utc;
use minirag_core::CHUNK_SCHEME;
use serde_json::{json, Value};

use crate::app::{sha256_file, App};
use crate::scan::scan;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub scanned: u64,
    pub ingested: u64,
    pub skipped: u64,
    pub moved: u64,
    pub deleted: u64,
    pub unreadable: u64,
    pub failed: u64,
}

impl Counts {
    pub fn json(&self) -> Value {
        json!({
            "scanned": self.scanned, "ingested": self.ingested, "skipped": self.skipped, "moved": self.moved,
            "deleted": self.deleted, "relabelled": 0, "unreadable": self.unreadable, "failed": self.failed,
        })
    }
}

#[derive(Debug, Clone, Default)]
pub struct Report {
    pub counts: Counts,
    pub errors: Vec<(String, String)>,
}

impl Report {
    pub fn errors_json(&self) -> Value {
        json!(self
            .errors
            .iter()
            .map(|(s, e)| json!({"source": s, "error": e}))
            .collect::<Vec<_>>())
    }
}

pub fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// `9s`, `4m12s`, `2h03m04s`.
pub fn duration(secs: i64) -> String {
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    if h > 0 {
        format!("{h}h{m:02}m{s:02}s")
    } else if m > 0 {
        format!("{m}m{s:02}s")
    } else {
        format!("{s}s")
    }
}

/// The cross-process sync lock: `<DB_PATH>/.sync.lock` holding the pid and start time.
pub struct SyncLock {
    file: Option<File>,
}

impl SyncLock {
    /// Takes the lock or explains who holds it. A lock that cannot be taken
    /// for any other reason is a warning: the sync runs unlocked.
    pub fn take(db_path: &Path) -> Result<Self> {
        let path = db_path.join(".sync.lock");
        let open = std::fs::create_dir_all(db_path).and_then(|_| {
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .open(&path)
        });
        let mut file = match open {
            Ok(f) => f,
            Err(e) => {
                eprintln!(
                    "warn: Could not take the sync lock at {} ({e}), so this sync runs unlocked",
                    path.display()
                );
                return Ok(Self { file: None });
            }
        };
        match file.try_lock() {
            Ok(()) => {
                file.set_len(0)?;
                file.rewind()?;
                write!(
                    file,
                    "{}",
                    json!({"pid": std::process::id(), "startedAt": iso_utc(now_unix()), "started": now_unix()})
                )?;
                file.sync_data()?;
                Ok(Self { file: Some(file) })
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                let holder: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let pid = holder.get("pid").and_then(Value::as_u64);
                let started = holder.get("started").and_then(Value::as_i64);
                Err(anyhow!(match (pid, started) {
                    (Some(pid), Some(t)) if t <= now_unix() => format!(
                        "Another minirag-mcp process (PID {pid}) has been syncing this index for {}. Wait for it to finish, or use a different DB_PATH.",
                        duration(now_unix() - t)
                    ),
                    (Some(pid), _) => format!(
                        "Another minirag-mcp process (PID {pid}) is syncing this index. Wait for it to finish, or use a different DB_PATH."
                    ),
                    _ => format!(
                        "Another minirag-mcp process is syncing this index (lock: {}). Wait for it to finish, or use a different DB_PATH.",
                        path.display()
                    ),
                }))
            }
            Err(std::fs::TryLockError::Error(e)) => {
                eprintln!(
                    "warn: Could not take the sync lock at {} ({e}), so this sync runs unlocked",
                    path.display()
                );
                Ok(Self { file: None })
            }
        }
    }
}

impl Drop for SyncLock {
    fn drop(&mut self) {
        if let Some(f) = &self.file {
            let _ = f.set_len(0);
            let _ = f.unlock();
        }
    }
}

/// Files converted and chunked ahead of the one being embedded.
const PREPARED_AHEAD: usize = 2;

/// A scanned PDF (no text layer) needs OCR, which this build does not have:
/// such a file is `unreadable` (reported, kept, not a failure), as the
/// reference reports files whose reader is a missing extra.
fn needs_ocr(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<minirag_core::error::EngineError>(),
        Some(minirag_core::error::EngineError::Convert(
            minirag_core::ports::ConvertError::NeedsOcr { .. }
        ))
    )
}

/// Progress callback: (files done, files total, line for humans).
pub type Progress<'a> = &'a (dyn Fn(u64, u64, &str) + Sync);

/// Runs one sync over the roots, or over `scope` (a folder or file under them).
pub fn run(
    app: &App,
    scope: Option<&Path>,
    progress: Progress<'_>,
    cancel: &AtomicBool,
) -> Result<Report> {
    let engine = app.engine()?;
    let index = engine.ports().index.clone();
    let max_size = engine.settings().max_file_size;
    let limit: Vec<PathBuf> = scope.map(|s| vec![s.to_path_buf()]).unwrap_or_default();
    let scanned = scan(&app.roots, &limit)?;
    let scope_str = scope.map(|s| s.display().to_string());
    let in_scope = |s: &str| {
        scope_str
            .as_deref()
            .is_none_or(|p| minirag_core::search::is_under(s, p))
    };

    let indexed: HashMap<String, minirag_core::ports::SourceRecord> = index
        .sources(&Scope::all())?
        .into_iter()
        .filter(|r| r.source_type == SourceType::File && in_scope(&r.source))
        .map(|r| (r.source.clone(), r))
        .collect();
    let model_ok = app.model_available();
    let model_id = app.embedder_id();

    let mut report = Report::default();
    let mut to_ingest: Vec<PathBuf> = Vec::new();
    let mut seen: std::collections::HashSet<String> = Default::default();
    for f in &scanned.files {
        let source = f.path.display().to_string();
        seen.insert(source.clone());
        report.counts.scanned += 1;
        if f.size > max_size {
            report.counts.failed += 1;
            report.errors.push((
                source,
                format!("exceeds MAX_FILE_SIZE ({max_size}); raise MAX_FILE_SIZE to index it"),
            ));
            continue;
        }
        match indexed.get(&source) {
            None => to_ingest.push(f.path.clone()),
            Some(r) => {
                let stale =
                    r.scheme_version < CHUNK_SCHEME || (model_ok && r.embedded_with != model_id);
                let unchanged =
                    r.mtime == f.mtime || sha256_file(&f.path).is_ok_and(|h| h == r.file_hash);
                if stale || !unchanged {
                    to_ingest.push(f.path.clone());
                } else {
                    report.counts.skipped += 1;
                }
            }
        }
    }
    for b in &scanned.blind {
        report
            .errors
            .push((b.path.display().to_string(), b.message()));
        if app.roots.contains(&b.path) || indexed.keys().any(|s| Path::new(s).starts_with(&b.path))
        {
            report.counts.failed += 1;
        }
    }
    let held = |s: &str| {
        scanned
            .blind
            .iter()
            .any(|b| Path::new(s).starts_with(&b.path))
    };
    let mut to_delete: Vec<String> = indexed
        .keys()
        .filter(|s| !seen.contains(*s) && !held(s))
        .cloned()
        .collect();
    to_delete.sort();

    // Moves: a vanished source and a new path with the same name and bytes.
    let mut moved_from: Vec<String> = Vec::new();
    let mut remaining: Vec<PathBuf> = Vec::new();
    for path in to_ingest {
        let source = path.display().to_string();
        let candidate = (!indexed.contains_key(&source))
            .then(|| {
                let name = path.file_name()?;
                let hash = sha256_file(&path).ok()?;
                to_delete
                    .iter()
                    .find(|d| {
                        !moved_from.contains(d)
                            && Path::new(d).file_name() == Some(name)
                            && indexed[*d].file_hash == hash
                            && indexed[*d].scheme_version == CHUNK_SCHEME
                    })
                    .cloned()
            })
            .flatten();
        match candidate {
            Some(from) => {
                let mtime = std::fs::metadata(&path)
                    .map(|m| crate::app::mtime_of(&m))
                    .unwrap_or(0.0);
                if index.move_source(&from, &source, mtime).unwrap_or(0) > 0 {
                    progress(0, 0, &format!("moved {from} -> {source}"));
                    report.counts.moved += 1;
                    moved_from.push(from);
                } else {
                    remaining.push(path);
                }
            }
            None => remaining.push(path),
        }
    }
    to_delete.retain(|d| !moved_from.contains(d));

    let total = remaining.len() as u64;
    // A bounded pipeline: one thread reads, converts and chunks ahead while
    // this one embeds and writes, with at most PREPARED_AHEAD files waiting
    // between them, so memory stays flat whatever the corpus size; each file
    // is committed (durable) before the next one is written.
    let (tx, rx) = std::sync::mpsc::sync_channel(PREPARED_AHEAD);
    let queue = &remaining;
    let cancelled = std::thread::scope(|s| -> Result<Option<usize>> {
        s.spawn(move || {
            for path in queue {
                if cancel.load(Ordering::Relaxed)
                    || tx.send((path, app.prepare_file(path))).is_err()
                {
                    break;
                }
            }
        });
        let mut processed = 0;
        for (done, (path, prepared)) in rx.iter().enumerate() {
            if cancel.load(Ordering::Relaxed) {
                return Ok(Some(done));
            }
            processed = done + 1;
            let source = path.display().to_string();
            match prepared.and_then(|p| app.commit(p)) {
                Ok(_) => {
                    report.counts.ingested += 1;
                    progress(done as u64 + 1, total, &format!("ingested {source}"));
                }
                Err(e) if needs_ocr(&e) => {
                    report.counts.unreadable += 1;
                    progress(done as u64 + 1, total, &format!("unreadable {source}: {e}"));
                    report.errors.push((source, e.to_string()));
                }
                Err(e) => {
                    report.counts.failed += 1;
                    progress(done as u64 + 1, total, &format!("failed {source}: {e}"));
                    report.errors.push((source, e.to_string()));
                }
            }
        }
        Ok((processed < queue.len()).then_some(processed))
    })?;
    if let Some(done) = cancelled {
        bail!("sync cancelled after {done} of {total} files; what was done is kept");
    }
    for source in to_delete {
        if index.delete_source(&source)? > 0 {
            report.counts.deleted += 1;
            progress(total, total, &format!("deleted {source}"));
        }
    }
    Ok(report)
}
