//! Why a file is not indexed, after the process that tried is gone: each
//! sync's errors are kept in the index as the record of a job under a fixed
//! id (every Index adapter stores job records), merged with the errors of
//! earlier syncs outside its scope, so `list_files` can show the reason.

use std::collections::HashMap;

use super::SyncReport;
use crate::engine::Engine;
use crate::progress::{Job, JobState};
use crate::search::scope::is_under;

/// The record's id: 32 hex digits, as minted ids are, that no job gets
/// (a minted id is random).
const RECORD_ID: &str = "00000000000000000000000000000fa1";

/// At most this many reasons are kept, the newest first.
const MAX_KEPT: usize = 1_000;

impl Engine {
    /// Keeps this sync's errors, with the earlier ones outside its scope.
    /// Best effort: a record that cannot be written only loses reasons.
    pub(crate) fn remember_failures(&self, scope: Option<&str>, report: &SyncReport) {
        let index = &self.ports().index;
        let mut errors = report.errors.clone();
        let earlier = index.job(RECORD_ID).ok().flatten().and_then(|j| j.report);
        let earlier = earlier.map(|r| r.errors).unwrap_or_default();
        for (source, why) in &earlier {
            let redone = scope.is_none_or(|s| is_under(source, s));
            if !redone && !errors.iter().any(|(s, _)| s == source) {
                errors.push((source.clone(), why.clone()));
            }
        }
        errors.truncate(MAX_KEPT);
        if errors == earlier {
            return; // a watcher's quiet syncs write nothing
        }
        let now = self.ports().clock.now_unix_seconds();
        let mut record = Job::started(RECORD_ID, now);
        record.state = JobState::Succeeded;
        record.finished_at = Some(now);
        record.report = Some(SyncReport {
            errors,
            ..SyncReport::default()
        });
        let _ = index.put_job(&record);
    }

    /// The reasons kept by [`Engine::remember_failures`], by source.
    pub(crate) fn failures(&self) -> HashMap<String, String> {
        let record = self.ports().index.job(RECORD_ID).ok().flatten();
        record
            .and_then(|j| j.report)
            .map(|r| r.errors.into_iter().collect())
            .unwrap_or_default()
    }
}
