//! What a sync reports and how it is stopped: a leaf module, so the
//! engine's use cases and the sync runner both use it without importing
//! each other.

/// The two phases of a sync: every new or changed file is converted,
/// chunked and keyword-indexed first (searchable by keyword at once), then
/// the chunks without vectors are embedded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Counted in files.
    Indexing,
    /// Counted in chunks.
    Embedding,
    /// Counted in pages of one scanned document (OCR), inside indexing.
    Recognising,
}

impl Phase {
    /// The phase's name in answers.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Indexing => "indexing",
            Self::Embedding => "embedding",
            Self::Recognising => "recognising",
        }
    }
}

/// One progress report: `total` is 0 for lines that are not a step of the
/// count (moves, deletions).
#[derive(Debug, Clone, Copy)]
pub struct Step<'a> {
    /// The phase.
    pub phase: Phase,
    /// Steps done.
    pub done: u64,
    /// Steps in the phase.
    pub total: u64,
    /// What is being done, for a progress line.
    pub line: &'a str,
}

/// Progress sink of a sync.
pub type Progress<'a> = &'a (dyn Fn(Step<'_>) + Sync);

/// A sync's hold on a long conversion: its progress sink and stop flag.
#[derive(Clone, Copy)]
pub struct SyncControl<'a> {
    /// Where progress goes.
    pub progress: Progress<'a>,
    /// Set to stop the sync between files.
    pub cancel: &'a std::sync::atomic::AtomicBool,
}

/// Chunks a sync embeds and stores at a time (a second or a few of encoder
/// work on two cores): a cancel or a kill loses at most one batch.
pub(crate) const EMBED_BATCH: u32 = 256;

/// The counts a sync reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncCounts {
    /// Files the scan found.
    pub scanned: u64,
    /// Sources converted, chunked and stored.
    pub ingested: u64,
    /// Unchanged sources embedded again.
    pub reembedded: u64,
    /// Unchanged files left alone.
    pub skipped: u64,
    /// Files moved, their chunks kept.
    pub moved: u64,
    /// Sources removed because their files are gone.
    pub deleted: u64,
    /// Files recognised but not readable by this build.
    pub unreadable: u64,
    /// Files that failed.
    pub failed: u64,
    /// Chunks the encoder embedded (the others' vectors came from the
    /// chunk-text cache).
    pub embedded_chunks: u64,
}

impl SyncCounts {
    /// The counts in a fixed order, for a store that keeps them as a list:
    /// scanned, ingested, reembedded, skipped, moved, deleted, unreadable,
    /// failed, embedded chunks.
    pub fn to_list(&self) -> [u64; 9] {
        [
            self.scanned,
            self.ingested,
            self.reembedded,
            self.skipped,
            self.moved,
            self.deleted,
            self.unreadable,
            self.failed,
            self.embedded_chunks,
        ]
    }

    /// [`SyncCounts::to_list`] read back; missing counts (a shorter list
    /// from an older record) are 0.
    pub fn from_list(list: &[u64]) -> Self {
        let n = |i: usize| list.get(i).copied().unwrap_or(0);
        Self {
            scanned: n(0),
            ingested: n(1),
            reembedded: n(2),
            skipped: n(3),
            moved: n(4),
            deleted: n(5),
            unreadable: n(6),
            failed: n(7),
            embedded_chunks: n(8),
        }
    }
}

/// A finished sync: counts, per-source errors and notices.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncReport {
    /// Files by outcome.
    pub counts: SyncCounts,
    /// (source, message)
    pub errors: Vec<(String, String)>,
    /// What the user should know that is no failure (a blind folder, say).
    pub notices: Vec<String>,
}

impl SyncReport {
    /// Folds in a second pass that only embedded what the first stored
    /// keyword-only (while the model downloaded): its re-embeds, chunks and
    /// failures; what both passes found (blind folders, large files) once.
    pub(crate) fn add_embedding_pass(&mut self, pass: SyncReport) {
        self.counts.reembedded += pass.counts.reembedded;
        self.counts.embedded_chunks += pass.counts.embedded_chunks;
        for (source, message) in pass.errors {
            if !self.errors.iter().any(|(s, _)| *s == source) {
                self.counts.failed += 1;
                self.errors.push((source, message));
            }
        }
        for notice in pass.notices {
            if !self.notices.contains(&notice) {
                self.notices.push(notice);
            }
        }
    }
}

/// Where a sync job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Still going.
    Running,
    /// Ended without a failure of the whole sync.
    Succeeded,
    /// Ended with the sync failing as a whole.
    Failed,
}

impl JobState {
    /// The state's name in answers.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
        }
    }
}

/// Files while indexing, chunks while embedding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobProgress {
    /// The phase it is in.
    pub phase: Phase,
    /// Steps done in the phase.
    pub done: u64,
    /// Steps in the phase.
    pub total: u64,
}

/// A sync job as its status shows it.
#[derive(Debug, Clone)]
pub struct Job {
    /// The job's id.
    pub id: String,
    /// Where it is.
    pub state: JobState,
    /// Unix seconds, from the engine's clock.
    pub started_at: i64,
    /// Unix seconds when it ended.
    pub finished_at: Option<i64>,
    /// How far it got.
    pub progress: JobProgress,
    /// What a succeeded job did.
    pub report: Option<SyncReport>,
    /// Why a failed job failed as a whole.
    pub error: Option<String>,
}

impl Job {
    /// A job that has just started: running, nothing counted yet.
    pub fn started(id: &str, now: i64) -> Self {
        Self {
            id: id.into(),
            state: JobState::Running,
            started_at: now,
            finished_at: None,
            progress: JobProgress {
                phase: Phase::Indexing,
                done: 0,
                total: 0,
            },
            report: None,
            error: None,
        }
    }

    /// Whether the set of indexed documents changed (a client's list of
    /// resources is then stale).
    pub fn changed_documents(&self) -> bool {
        self.report
            .as_ref()
            .is_some_and(|r| r.counts.ingested + r.counts.moved + r.counts.deleted > 0)
    }
}
