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
    pub phase: Phase,
    pub done: u64,
    pub total: u64,
    pub line: &'a str,
}

/// Progress sink of a sync.
pub type Progress<'a> = &'a (dyn Fn(Step<'_>) + Sync);

/// A sync's hold on a long conversion: its progress sink and stop flag.
#[derive(Clone, Copy)]
pub struct SyncControl<'a> {
    pub progress: Progress<'a>,
    pub cancel: &'a std::sync::atomic::AtomicBool,
}

/// Chunks a sync embeds and stores at a time (a second or a few of encoder
/// work on two cores): a cancel or a kill loses at most one batch.
pub const EMBED_BATCH: u32 = 256;
