//! Sync job records in the index folder (`jobs/<id>`), so every process of
//! this index can follow a job another one runs. Each record is replaced
//! whole by a rename; the newest few are kept. They are not part of the
//! index's data: a lost or damaged record only makes its job unknown.

use std::path::{Path, PathBuf};

use minirag_core::jobs::{Job, JobProgress, JobState};
use minirag_core::ports::IndexError;
use minirag_core::progress::Phase;
use minirag_core::sync::{SyncCounts, SyncReport};
use serde::{Deserialize, Serialize};

// Records kept: the rule core sets for every index.
use minirag_core::jobs::JOBS_KEPT as KEPT;

#[derive(Serialize, Deserialize)]
struct DiskJob {
    id: String,
    state: u8,
    started_at: i64,
    finished_at: Option<i64>,
    phase: u8,
    done: u64,
    total: u64,
    /// scanned, ingested, reembedded, skipped, moved, deleted, unreadable,
    /// failed, embedded chunks
    counts: Option<Vec<u64>>,
    errors: Vec<(String, String)>,
    notices: Vec<String>,
    error: Option<String>,
}

fn folder(dir: &Path) -> PathBuf {
    dir.join("jobs")
}

/// Ids are minted by core as 32 hex digits; anything else names no file.
fn file_of(dir: &Path, id: &str) -> Option<PathBuf> {
    (id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| folder(dir).join(id))
}

fn storage(what: &str, e: impl std::error::Error + Send + Sync + 'static) -> IndexError {
    IndexError::storage_caused(format!("cannot {what} a sync job record"), e)
}

pub(crate) fn put(dir: &Path, job: &Job) -> Result<(), IndexError> {
    let Some(path) = file_of(dir, &job.id) else {
        return Ok(());
    };
    let folder = folder(dir);
    std::fs::create_dir_all(&folder).map_err(|e| storage("store", e))?;
    if !path.exists() {
        prune(&folder);
    }
    let bytes = bincode::serde::encode_to_vec(to_disk(job), bincode::config::standard())
        .map_err(|e| storage("encode", e))?;
    let tmp = folder.join(format!("{}.tmp", job.id));
    std::fs::write(&tmp, bytes).map_err(|e| storage("store", e))?;
    std::fs::rename(&tmp, &path).map_err(|e| storage("store", e))
}

pub(crate) fn get(dir: &Path, id: &str) -> Result<Option<Job>, IndexError> {
    let Some(path) = file_of(dir, id) else {
        return Ok(None);
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(storage("read", e)),
    };
    // A damaged record is an unknown job, not a broken index.
    Ok(
        bincode::serde::decode_from_slice::<DiskJob, _>(&bytes, bincode::config::standard())
            .ok()
            .map(|(d, _)| from_disk(d)),
    )
}

/// Keeps the newest `KEPT - 1` records, so the new one makes `KEPT`.
fn prune(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let mut records: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            Some((e.metadata().ok()?.modified().ok()?, e.path()))
        })
        .collect();
    records.sort();
    let excess = records.len().saturating_sub(KEPT - 1);
    for (_, path) in records.into_iter().take(excess) {
        let _ = std::fs::remove_file(path);
    }
}

fn to_disk(j: &Job) -> DiskJob {
    let (counts, errors, notices) = match &j.report {
        Some(r) => {
            let c = &r.counts;
            (
                Some(c.to_list().to_vec()),
                r.errors.clone(),
                r.notices.clone(),
            )
        }
        None => (None, Vec::new(), Vec::new()),
    };
    DiskJob {
        id: j.id.clone(),
        state: match j.state {
            JobState::Running => 0,
            JobState::Succeeded => 1,
            JobState::Failed => 2,
        },
        started_at: j.started_at,
        finished_at: j.finished_at,
        phase: match j.progress.phase {
            Phase::Indexing => 0,
            Phase::Embedding => 1,
            Phase::Recognising => 2,
        },
        done: j.progress.done,
        total: j.progress.total,
        counts,
        errors,
        notices,
        error: j.error.clone(),
    }
}

fn from_disk(d: DiskJob) -> Job {
    // A record with fewer counts (or a damaged one) reads the rest as 0.
    let report = d.counts.map(|c| SyncReport {
        counts: SyncCounts::from_list(&c),
        errors: d.errors,
        notices: d.notices,
    });
    Job {
        id: d.id,
        state: match d.state {
            0 => JobState::Running,
            1 => JobState::Succeeded,
            _ => JobState::Failed,
        },
        started_at: d.started_at,
        finished_at: d.finished_at,
        progress: JobProgress {
            phase: match d.phase {
                1 => Phase::Embedding,
                2 => Phase::Recognising,
                _ => Phase::Indexing,
            },
            done: d.done,
            total: d.total,
        },
        report,
        error: d.error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: &str, state: JobState) -> Job {
        Job {
            id: id.into(),
            state,
            started_at: 10,
            finished_at: (state != JobState::Running).then_some(20),
            progress: JobProgress {
                phase: Phase::Embedding,
                done: 3,
                total: 7,
            },
            report: (state == JobState::Succeeded).then(|| SyncReport {
                counts: SyncCounts {
                    scanned: 9,
                    ingested: 2,
                    failed: 1,
                    ..SyncCounts::default()
                },
                errors: vec![("/d/x.pdf".into(), "broken".into())],
                notices: vec!["n".into()],
            }),
            error: None,
        }
    }

    #[test]
    fn records_round_trip_and_the_newest_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let id = |i: usize| format!("{i:032x}");
        let first = job(&id(0), JobState::Succeeded);
        put(dir.path(), &first).unwrap();
        let back = get(dir.path(), &first.id).unwrap().unwrap();
        assert_eq!(back.report, first.report);
        assert_eq!(back.progress, first.progress);
        assert_eq!(
            (back.state, back.finished_at),
            (JobState::Succeeded, Some(20))
        );
        for i in 1..=KEPT + 2 {
            put(dir.path(), &job(&id(i), JobState::Running)).unwrap();
        }
        let kept = std::fs::read_dir(folder(dir.path())).unwrap().count();
        assert_eq!(kept, KEPT);
        assert!(get(dir.path(), &id(KEPT + 2)).unwrap().is_some());
    }

    #[test]
    fn ids_that_are_not_minted_ones_name_no_file() {
        let dir = tempfile::tempdir().unwrap();
        assert!(get(dir.path(), "../../etc/passwd").unwrap().is_none());
        assert!(get(dir.path(), &"0".repeat(32)).unwrap().is_none());
        std::fs::create_dir_all(folder(dir.path())).unwrap();
        std::fs::write(folder(dir.path()).join("f".repeat(32)), b"\xff\xff junk").unwrap();
        assert!(get(dir.path(), &"f".repeat(32)).unwrap().is_none());
    }
}
