//! Sync as pure decisions: what a scanned file's index state is, and
//! which files a sync ingests, re-embeds, moves, deletes or skips. Sync,
//! `list_files` and any watcher use these, so they never disagree. Walking
//! the folders and reading files stay behind the [`crate::ports::Files`]
//! port; [`run`] carries a plan out through the engine.

mod failures;
pub mod run;

pub use crate::progress::{SyncCounts, SyncReport};

use std::collections::{HashMap, HashSet};

use crate::ports::{BlindFolder, Scan, ScannedFile, SourceRecord, SourceType};
use crate::search::is_under;
use crate::CHUNK_SCHEME;

/// An indexed file compared with the file on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    /// The bytes changed since the ingest.
    Changed,
    /// Same bytes, chunked by an older scheme: convert and chunk again.
    StaleScheme,
    /// Same bytes and chunks, but no vectors of the current model (another
    /// model, or none was loadable at ingest): embed the stored chunks again.
    StaleModel,
    /// Same bytes, chunks and vectors: nothing to do.
    Unchanged,
}

impl FileState {
    /// The `state` field of `list_files`.
    pub fn label(self) -> ListedState {
        match self {
            Self::Changed | Self::StaleModel => ListedState::Stale,
            Self::StaleScheme => ListedState::StaleScheme,
            Self::Unchanged => ListedState::Ingested,
        }
    }
}

/// A `list_files` row's state: [`FileState`] for a file the scan sees,
/// and what only the list knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListedState {
    /// Indexed and current.
    Ingested,
    /// The file changed, or its vectors are another model's.
    Stale,
    /// Chunked by an older scheme.
    StaleScheme,
    /// Seen by the scan, not in the index.
    NotIngested,
    /// In the index, but under a folder the scan could not list.
    Unlisted,
    /// An indexed image no OCR engine can read now.
    Unreadable,
}

impl ListedState {
    /// Every state, for schemas.
    pub const ALL: [ListedState; 6] = [
        Self::Ingested,
        Self::Stale,
        Self::StaleScheme,
        Self::NotIngested,
        Self::Unlisted,
        Self::Unreadable,
    ];

    /// The state's name in answers.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ingested => "ingested",
            Self::Stale => "stale",
            Self::StaleScheme => "stale_scheme",
            Self::NotIngested => "not_ingested",
            Self::Unlisted => "unlisted",
            Self::Unreadable => "unreadable",
        }
    }
}

/// What a plan needs that only the file system knows, asked lazily: a
/// file's hash is read only when its mtime moved or a move is suspected.
pub trait Hasher {
    /// The file's sha256 hex; `None` when it cannot be read.
    fn sha256(&self, path: &str) -> Option<String>;
}

impl<F: Fn(&str) -> Option<String>> Hasher for F {
    fn sha256(&self, path: &str) -> Option<String> {
        self(path)
    }
}

/// The one staleness rule. `model` is the id of the loadable model, `None`
/// when none can be loaded (vectors cannot be made, so they are not stale).
pub(crate) fn file_state(
    record: &SourceRecord,
    file: &ScannedFile,
    model: Option<&str>,
    hasher: &dyn Hasher,
) -> FileState {
    let same_bytes = record.mtime == file.mtime
        || hasher
            .sha256(&file.path)
            .is_some_and(|h| h == record.file_hash);
    if !same_bytes {
        FileState::Changed
    } else if record.scheme_version < CHUNK_SCHEME {
        FileState::StaleScheme
    } else if model.is_some_and(|m| record.embedded_with.as_deref() != Some(m)) {
        FileState::StaleModel
    } else {
        FileState::Unchanged
    }
}

/// A source (scan-visible or not) for data and URL sources, by scheme only.
pub(crate) fn stored_state(record: &SourceRecord) -> ListedState {
    if record.scheme_version < CHUNK_SCHEME {
        ListedState::StaleScheme
    } else {
        ListedState::Ingested
    }
}

/// What a plan is made from.
pub struct PlanInput<'a> {
    /// What the walk of the roots found.
    pub scan: &'a Scan,
    /// Indexed sources (any type; only files under `scope` are planned).
    pub indexed: &'a [SourceRecord],
    /// Only sources under this folder or file are planned (`None`: all).
    pub scope: Option<&'a str>,
    /// The roots, to tell a blind root from a blind subfolder.
    pub roots: &'a [String],
    /// The index is shared with processes that have other roots: a sync
    /// plans only the files under its own roots, and never deletes another
    /// machine's files because it cannot see them.
    pub shared: bool,
    /// The model whose vectors the index holds.
    pub model: Option<&'a str>,
    /// Larger files are skipped.
    pub max_file_size: u64,
    /// Images are read (an OCR engine is available). Without one, indexed
    /// images whose files still exist are kept, not deleted.
    pub images: bool,
}

/// A move: the same name and bytes found at a new path.
#[derive(Debug, Clone, PartialEq)]
pub struct Move {
    /// The indexed path.
    pub from: String,
    /// The path it moved to.
    pub to: String,
    /// The new path's mtime.
    pub mtime: f64,
}

/// Every decision of one sync, before anything is written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncPlan {
    /// Files the scan found.
    pub scanned: u64,
    /// New, changed or stale-scheme files: read, convert, chunk, embed.
    pub ingest: Vec<String>,
    /// Unchanged files whose vectors are missing or of another model.
    pub reembed: Vec<String>,
    /// Files this sync ingested keyword-only (the model was still loading):
    /// embedded now, but new to the index, so not counted re-embedded.
    pub embed_fresh: Vec<String>,
    /// Tried in order; a move the index refuses becomes an ingest.
    pub moves: Vec<Move>,
    /// Sources to remove.
    pub delete: Vec<String>,
    /// Indexed images kept while no OCR engine can read them.
    pub kept_unreadable: Vec<String>,
    /// Files left alone.
    pub skipped: u64,
    /// Files over `MAX_FILE_SIZE`, with their size.
    pub too_large: Vec<(String, u64)>,
    /// Folders that could not be listed, and whether they count as a
    /// failure (a root, or a folder holding indexed files).
    pub blind: Vec<(BlindFolder, bool)>,
}

/// Decides a sync. Files are compared with their records by
/// [`file_state`]; a vanished source and a new path with the same file name
/// and bytes (and a current scheme) are a move; sources under a blind
/// folder are held, not deleted.
pub fn plan(input: &PlanInput<'_>, hasher: &dyn Hasher) -> SyncPlan {
    let in_scope = |s: &str| match input.scope {
        Some(p) => is_under(s, p),
        None => !input.shared || input.roots.iter().any(|r| is_under(s, r)),
    };
    let indexed: HashMap<&str, &SourceRecord> = input
        .indexed
        .iter()
        .filter(|r| r.source_type == SourceType::File && in_scope(&r.source))
        .map(|r| (r.source.as_str(), r))
        .collect();
    let mut out = SyncPlan::default();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut new_files: Vec<&ScannedFile> = Vec::new();
    for file in &input.scan.files {
        seen.insert(&file.path);
        out.scanned += 1;
        if file.size > input.max_file_size {
            out.too_large.push((file.path.clone(), file.size));
            continue;
        }
        match indexed.get(file.path.as_str()) {
            None => new_files.push(file),
            Some(r) => match file_state(r, file, input.model, hasher) {
                FileState::Unchanged => out.skipped += 1,
                FileState::StaleModel => out.reembed.push(file.path.clone()),
                FileState::Changed | FileState::StaleScheme => out.ingest.push(file.path.clone()),
            },
        }
    }
    let held = |s: &str| input.scan.blind.iter().any(|b| is_under(s, &b.path));
    for b in &input.scan.blind {
        let counts = input.roots.contains(&b.path) || indexed.keys().any(|s| is_under(s, &b.path));
        out.blind.push((b.clone(), counts));
    }
    let mut vanished: Vec<&str> = Vec::new();
    for s in indexed.keys().copied() {
        if seen.contains(s) || held(s) {
            continue;
        }
        // Not scanned because unreadable here, yet still on disk: kept.
        if !input.images && crate::formats::is_image_path(s) && hasher.sha256(s).is_some() {
            out.kept_unreadable.push(s.to_string());
        } else {
            vanished.push(s);
        }
    }
    out.kept_unreadable.sort();
    vanished.sort_unstable();

    let mut moved_from: HashSet<&str> = HashSet::new();
    for file in new_files {
        let from = (!vanished.is_empty())
            .then(|| {
                let name = file_name(&file.path);
                let hash = hasher.sha256(&file.path)?;
                vanished.iter().copied().find(|d| {
                    !moved_from.contains(d)
                        && file_name(d) == name
                        && indexed[d].file_hash == hash
                        && indexed[d].scheme_version == CHUNK_SCHEME
                })
            })
            .flatten();
        match from {
            Some(from) => {
                moved_from.insert(from);
                out.moves.push(Move {
                    from: from.to_string(),
                    to: file.path.clone(),
                    mtime: file.mtime,
                });
            }
            None => out.ingest.push(file.path.clone()),
        }
    }
    out.ingest.sort();
    out.delete = vanished
        .into_iter()
        .filter(|d| !moved_from.contains(d))
        .map(str::to_string)
        .collect();
    out
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// How one file of a sync ended, for the counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Converted, chunked and stored.
    Ingested,
    /// An unchanged source embedded again (another model, or none before).
    Reembedded,
    /// A source this sync ingested keyword-only, embedded in phase 2.
    Embedded,
    /// Recognised but not readable by this build (a scan needing OCR):
    /// reported, kept out of `failed`, as the reference treats files whose
    /// reader is a missing extra.
    Unreadable,
    /// It failed; the error is reported.
    Failed,
}

#[cfg(test)]
mod tests;
