//! Sync job records in the schema's `jobs` table, so every process of this
//! index, on any machine, can follow a job another one runs. The newest few
//! are kept.

use minirag_core::jobs::{Job, JobProgress, JobState};
use minirag_core::ports::IndexError;
use minirag_core::progress::Phase;
use minirag_core::sync::{SyncCounts, SyncReport};

use crate::PgIndex;

/// Records kept, the rule core sets for every index.
const KEPT: i64 = minirag_core::jobs::JOBS_KEPT as i64;

fn counts(c: &SyncCounts) -> Vec<i64> {
    c.to_list().iter().map(|n| *n as i64).collect()
}

pub(crate) fn put(index: &PgIndex, job: &Job) -> Result<(), IndexError> {
    let s = &index.schema;
    let state: i16 = match job.state {
        JobState::Running => 0,
        JobState::Succeeded => 1,
        JobState::Failed => 2,
    };
    let phase: i16 = match job.progress.phase {
        Phase::Indexing => 0,
        Phase::Embedding => 1,
        Phase::Recognising => 2,
    };
    let report = job.report.as_ref();
    let errors = report.map(|r| serde_json::to_string(&r.errors).unwrap_or_default());
    let notices = report.map(|r| serde_json::to_string(&r.notices).unwrap_or_default());
    let mut c = index.client()?;
    c.execute(
        &format!(
            "INSERT INTO {s}.jobs (id, state, started_at, finished_at, phase, done, total, counts, errors, notices, error) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
             ON CONFLICT (id) DO UPDATE SET state = $2, finished_at = $4, phase = $5, done = $6, total = $7, \
             counts = $8, errors = $9, notices = $10, error = $11, updated_at = now()"
        ),
        &[
            &job.id,
            &state,
            &job.started_at,
            &job.finished_at,
            &phase,
            &(job.progress.done as i64),
            &(job.progress.total as i64),
            &report.map(|r| counts(&r.counts)),
            &errors,
            &notices,
            &job.error,
        ],
    )
    .map_err(|e| index.db_error("storing a sync job record", e))?;
    if job.state == JobState::Running && job.progress.total == 0 {
        c.execute(
            &format!(
                "DELETE FROM {s}.jobs WHERE id NOT IN (SELECT id FROM {s}.jobs ORDER BY started_at DESC, updated_at DESC LIMIT $1)"
            ),
            &[&KEPT],
        )
        .map_err(|e| index.db_error("pruning sync job records", e))?;
    }
    Ok(())
}

pub(crate) fn get(index: &PgIndex, id: &str) -> Result<Option<Job>, IndexError> {
    let s = &index.schema;
    let mut c = index.client()?;
    let row = c
        .query_opt(
            &format!(
                "SELECT state, started_at, finished_at, phase, done, total, counts, errors, notices, error \
                 FROM {s}.jobs WHERE id = $1"
            ),
            &[&id],
        )
        .map_err(|e| index.db_error("reading a sync job record", e))?;
    let Some(row) = row else {
        return Ok(None);
    };
    let counts: Option<Vec<i64>> = row.get(6);
    let errors: Option<String> = row.get(7);
    let notices: Option<String> = row.get(8);
    let report = counts.map(|c| SyncReport {
        counts: SyncCounts::from_list(&c.iter().map(|n| *n as u64).collect::<Vec<_>>()),
        errors: errors
            .and_then(|v| serde_json::from_str(&v).ok())
            .unwrap_or_default(),
        notices: notices
            .and_then(|v| serde_json::from_str(&v).ok())
            .unwrap_or_default(),
    });
    Ok(Some(Job {
        id: id.into(),
        state: match row.get::<_, i16>(0) {
            0 => JobState::Running,
            1 => JobState::Succeeded,
            _ => JobState::Failed,
        },
        started_at: row.get(1),
        finished_at: row.get(2),
        progress: JobProgress {
            phase: match row.get::<_, i16>(3) {
                1 => Phase::Embedding,
                2 => Phase::Recognising,
                _ => Phase::Indexing,
            },
            done: row.get::<_, i64>(4) as u64,
            total: row.get::<_, i64>(5) as u64,
        },
        report,
        error: row.get(9),
    }))
}
