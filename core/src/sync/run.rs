//! Carrying a [`SyncPlan`] out: moves, then ingests as a bounded pipeline,
//! then re-embeds, then deletions. Each file is committed on its own, so an
//! interrupted sync keeps what it finished; the sync holds the index's sync
//! lock from its scan to its last write.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{plan, Outcome, PlanInput, SyncPlan, SyncReport};
use crate::engine::Engine;
use crate::error::EngineError;
use crate::ports::{ConvertError, EmbedError, Readiness, SourceRecord, SourceType, SyncLease};
pub use crate::progress::{Phase, Progress, Step};
use crate::progress::{SyncControl, EMBED_BATCH};
use crate::search::{is_under, Scope};

/// Files converted and chunked ahead of the one being embedded.
const PREPARED_AHEAD: usize = 2;

/// Reports an error about `source` that is no file's outcome (too large,
/// kept, a folder that cannot be read): in the report, and as a line, as
/// every error is.
fn failed(progress: Progress<'_>, report: &mut SyncReport, source: String, message: String) {
    say(
        progress,
        Phase::Indexing,
        0,
        0,
        &format!("failed {source}: {message}"),
    );
    report.errors.push((source, message));
}

fn say(progress: Progress<'_>, phase: Phase, done: u64, total: u64, line: &str) {
    progress(Step {
        phase,
        done,
        total,
        line,
    });
}

/// How a pass of the sync gets vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Embedding {
    /// The model is there: new files are stored keyword-only first and
    /// embedded in the pass's second phase.
    Deferred,
    /// No model can load: stored without vectors for the next sync.
    Without,
    /// The model is loading (a download): every file keyword-only; a second
    /// pass embeds them once it is there.
    AfterTheModel,
}

/// Notes that the sync runs without the model, and why.
fn without_model(report: &mut SyncReport, e: &EmbedError) -> Embedding {
    report.notices.push(format!(
        "This sync ran without the embedding model ({e}). Keyword search finds the files now; \
         the next sync with a working model adds their vectors without converting them again. \
         Offline, point MODEL_PATH at a local copy of the model folder."
    ));
    Embedding::Without
}

/// A sync that holds the index's sync lock and has not run yet.
pub struct SyncSession {
    lease: SyncLease,
    scope: Option<String>,
}

impl SyncSession {
    /// The lock is really held (not skipped for a read-only folder).
    pub(crate) fn holds_lock(&self) -> bool {
        self.lease.warning.is_none()
    }
}

/// One row of `list_files`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedFile {
    /// The source.
    pub source: String,
    /// File, data or URL.
    pub source_type: SourceType,
    /// Its title.
    pub title: String,
    /// Its state against the files.
    pub state: super::ListedState,
    /// Chunks stored.
    pub chunk_count: u32,
    /// The OCR engine that read part of it, or empty.
    pub ocr_engine: String,
    /// Language and declared fields (empty until it is indexed).
    pub attributes: crate::ports::SourceAttributes,
    /// Why the last sync that tried it could not index it.
    pub error: Option<String>,
}

/// A folder `list_files` could not see into, with the indexed files it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct UnlistedFolder {
    /// The folder.
    pub path: String,
    /// The OS error; `None` for an empty root.
    pub error: Option<String>,
    /// Indexed files under it, kept.
    pub indexed_count: usize,
    /// What to do about it.
    pub message: String,
}

/// What `list_files` answers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileListing {
    /// Sources, by source.
    pub files: Vec<ListedFile>,
    /// Folders the scan could not see into.
    pub unlisted: Vec<UnlistedFolder>,
}

/// Whether an error means "unreadable by this build" rather than "failed".
pub(crate) fn outcome_of_error(e: &EngineError) -> Outcome {
    match e {
        EngineError::Convert(ConvertError::NeedsOcr { .. })
        | EngineError::ScannedPdf { .. }
        | EngineError::Image { .. } => Outcome::Unreadable,
        _ => Outcome::Failed,
    }
}

impl Engine {
    /// The id of the model when it can be loaded (loading it now), so a plan
    /// knows whether stored vectors are current.
    fn usable_model(&self) -> Result<String, EmbedError> {
        let embedder = &self.ports().embedder;
        embedder.ready().map(|()| embedder.model_id().to_string())
    }

    /// Brings the index in line with the roots, or with `scope` (a folder or
    /// file under them). Stops between files once `cancel` is set.
    pub fn sync(
        &self,
        scope: Option<&str>,
        progress: Progress<'_>,
        cancel: &AtomicBool,
    ) -> Result<SyncReport, EngineError> {
        let session = self.begin_sync(scope)?;
        self.run_sync(session, progress, cancel)
    }

    /// Takes the index's sync lock for a sync of `scope`, or fails at once
    /// ([`crate::ports::IndexError::Busy`] names the holder), so a caller that
    /// runs the sync in the background can refuse before it answers.
    pub(crate) fn begin_sync(&self, scope: Option<&str>) -> Result<SyncSession, EngineError> {
        Ok(SyncSession {
            lease: self.ports().index.lock_sync()?,
            scope: scope.map(str::to_string),
        })
    }

    /// Scans, plans and carries the plan out; the lock is released at the end.
    pub(crate) fn run_sync(
        &self,
        session: SyncSession,
        progress: Progress<'_>,
        cancel: &AtomicBool,
    ) -> Result<SyncReport, EngineError> {
        self.run_sync_leased(session, progress, cancel).0
    }

    /// [`Engine::run_sync`], handing the sync lock back to the caller, who
    /// publishes the end before other processes may sync.
    pub(crate) fn run_sync_leased(
        &self,
        session: SyncSession,
        progress: Progress<'_>,
        cancel: &AtomicBool,
    ) -> (Result<SyncReport, EngineError>, SyncLease) {
        let SyncSession { lease, scope } = session;
        let scope = scope.as_deref();
        let roots = &self.settings().roots;
        let limit: Vec<String> = scope.map(|s| vec![s.to_string()]).unwrap_or_default();
        // Asked once: the answer decides both what is scanned and what is kept.
        let images = self.reads_images();
        let scan = self.ports().files.scan(roots, &limit, images);
        let indexed = match self
            .ports()
            .index
            .read()
            .and_then(|view| view.sources(&Scope::all()))
        {
            Ok(indexed) => indexed,
            Err(e) => return (Err(e.into()), lease),
        };
        let mut report = SyncReport::default();
        report.notices.extend(lease.warning.clone());
        // A model that must be downloaded first loads in the background:
        // every file is made keyword-searchable meanwhile, and embedded by a
        // second pass once it is there.
        let (model, mode) = match self.ports().embedder.start() {
            Readiness::Ready => match self.usable_model() {
                Ok(id) => (Some(id), Embedding::Deferred),
                Err(e) => (None, without_model(&mut report, &e)),
            },
            Readiness::Pending => (None, Embedding::AfterTheModel),
            Readiness::Failed(e) => (None, without_model(&mut report, &e)),
        };
        let files = &self.ports().files;
        let input = |indexed, model| PlanInput {
            scan: &scan,
            indexed,
            scope,
            roots,
            shared: self.ports().index.shared(),
            model,
            max_file_size: self.settings().max_file_size,
            images,
        };
        let hasher = |p: &str| files.sha256(p);
        let first = plan(&input(&indexed, model.as_deref()), &hasher);
        let fresh: std::collections::HashSet<String> = first.ingest.iter().cloned().collect();
        let mut result = self.execute(first, &indexed, mode, progress, cancel, &mut report);
        if mode == Embedding::AfterTheModel && result.is_ok() && !cancel.load(Ordering::Relaxed) {
            say(
                progress,
                Phase::Embedding,
                0,
                0,
                "waiting for the embedding model to load",
            );
            result = match self.usable_model() {
                Err(e) => {
                    without_model(&mut report, &e);
                    Ok(())
                }
                Ok(id) => match self
                    .ports()
                    .index
                    .read()
                    .and_then(|view| view.sources(&Scope::all()))
                {
                    Err(e) => Err(e.into()),
                    Ok(now) => {
                        // The same plan with the model: what the first pass
                        // stored keyword-only is now unchanged but vectorless.
                        let mut second = plan(&input(&now, Some(&id)), &hasher);
                        let (new, old) =
                            second.reembed.into_iter().partition(|s| fresh.contains(s));
                        (second.embed_fresh, second.reembed) = (new, old);
                        let mut embedded = SyncReport::default();
                        let r = self.execute(
                            second,
                            &now,
                            Embedding::Deferred,
                            progress,
                            cancel,
                            &mut embedded,
                        );
                        report.add_embedding_pass(embedded);
                        r
                    }
                },
            };
        }
        // A cancelled sync leaves the deferred work to the next one.
        if result.is_ok() && !cancel.load(Ordering::Relaxed) {
            let index = &self.ports().index;
            if let Err(e) = index.settle(&mut |line| say(progress, Phase::Indexing, 0, 0, line)) {
                report.notices.push(format!(
                    "The index could not finish its upkeep after this sync ({e}); it answers correctly, \
                     perhaps slower, and the next sync tries again."
                ));
            }
        }
        if result.is_ok() {
            self.remember_failures(scope, &report);
        }
        (result.map(|()| report), lease)
    }

    fn execute(
        &self,
        plan: SyncPlan,
        indexed: &[SourceRecord],
        mode: Embedding,
        progress: Progress<'_>,
        cancel: &AtomicBool,
        report: &mut SyncReport,
    ) -> Result<(), EngineError> {
        let index = &self.ports().index;
        let max = self.settings().max_file_size;
        report.counts.scanned = plan.scanned;
        report.counts.skipped = plan.skipped;
        for (path, size) in plan.too_large {
            report.counts.failed += 1;
            let e = EngineError::TooLarge {
                path: path.clone(),
                size,
                max,
            };
            failed(progress, report, path, e.to_string());
        }
        for path in plan.kept_unreadable {
            report.counts.unreadable += 1;
            let hint = self
                .ocr_engine()
                .err()
                .map_or_else(String::new, |why| why.to_string());
            let message = format!(
                "kept in the index: this installation cannot read this file type now ({hint})"
            );
            failed(progress, report, path, message);
        }
        for (blind, counts) in plan.blind {
            if counts {
                report.counts.failed += 1;
            }
            failed(progress, report, blind.path.clone(), blind.message());
        }
        let mut ingest = plan.ingest;
        let mut delete = plan.delete;
        for m in plan.moves {
            if index.move_source(&m.from, &m.to, m.mtime)? > 0 {
                let line = format!("moved {} -> {}", m.from, m.to);
                say(progress, Phase::Indexing, 0, 0, &line);
                report.counts.moved += 1;
            } else {
                // Refused (the target appeared meanwhile): ingest the new
                // path, and the old one is gone all the same.
                ingest.push(m.to);
                delete.push(m.from);
            }
        }
        ingest.sort();
        delete.sort();
        // Phase 1. New files are stored keyword-only when a model is there
        // to embed them in phase 2, so every file is searchable by keyword
        // within the time it takes to convert them; a changed file keeps
        // being embedded here, where its unchanged chunks reuse their
        // stored vectors (a text-only replace would drop them).
        let known: std::collections::HashSet<&str> =
            indexed.iter().map(|r| r.source.as_str()).collect();
        let mut later: Vec<(String, u64)> = Vec::new();
        let total = ingest.len() as u64;
        let mut done = 0u64;
        // A bounded pipeline: one thread reads, converts and chunks ahead
        // while this one embeds and writes, with at most PREPARED_AHEAD files
        // waiting between them, so memory stays flat whatever the corpus
        // size; each file is committed (durable) before the next is written.
        let (tx, rx) = std::sync::mpsc::sync_channel(PREPARED_AHEAD);
        let queue = &ingest;
        let mut embedded = 0u64;
        std::thread::scope(|s| {
            s.spawn(move || {
                for path in queue {
                    let control = SyncControl { progress, cancel };
                    if cancel.load(Ordering::Relaxed)
                        || tx
                            .send((path, self.prepare_path_controlled(path, Some(control))))
                            .is_err()
                    {
                        break;
                    }
                }
            });
            // Owned here, so a cancelled sync drops it on return: the
            // reader blocked on a full queue then gets an error instead of
            // waiting forever for this scope to take its file.
            let rx = rx;
            for (path, prepared) in rx.iter() {
                if cancel.load(Ordering::Relaxed) {
                    return;
                }
                let keyword_only = match mode {
                    Embedding::Deferred => !known.contains(path.as_str()),
                    Embedding::Without => false,
                    Embedding::AfterTheModel => true,
                };
                let result = prepared
                    .and_then(|p| {
                        if keyword_only {
                            self.commit_keyword_only(p)
                        } else {
                            self.commit(p)
                        }
                    })
                    .map(|out| {
                        embedded += out.embedded as u64;
                        report.notices.extend(out.unreadable.clone());
                        if keyword_only {
                            later.push((out.source, out.chunk_count as u64));
                        }
                        Outcome::Ingested
                    });
                record(
                    report,
                    progress,
                    (Phase::Indexing, &mut done, total),
                    path,
                    result,
                );
            }
        });
        report.counts.embedded_chunks += embedded;
        if cancel.load(Ordering::Relaxed) && done < total {
            return Err(EngineError::Cancelled {
                done,
                total,
                unit: "files",
            });
        }
        for source in delete {
            if index.delete_source(&source)? > 0 {
                report.counts.deleted += 1;
                say(
                    progress,
                    Phase::Indexing,
                    total,
                    total,
                    &format!("deleted {source}"),
                );
            }
        }

        // Phase 2: embed what has no vectors of the current model — the
        // sources phase 1 stored keyword-only, and unchanged sources of
        // another model or none. A killed sync leaves such sources behind,
        // and the next plan finds them again, so this resumes.
        let chunks_of: std::collections::HashMap<&str, u64> = indexed
            .iter()
            .map(|r| (r.source.as_str(), r.chunk_count as u64))
            .collect();
        let mut work: Vec<(String, u64, bool)> = plan
            .reembed
            .iter()
            .map(|s| {
                (
                    s.clone(),
                    chunks_of.get(s.as_str()).copied().unwrap_or(0),
                    true,
                )
            })
            .collect();
        if mode == Embedding::AfterTheModel {
            // The second pass embeds them, once the model is there.
            return Ok(());
        }
        work.extend(later.into_iter().map(|(s, n)| (s, n, false)));
        work.extend(plan.embed_fresh.iter().map(|s| {
            let chunks = chunks_of.get(s.as_str()).copied().unwrap_or(0);
            (s.clone(), chunks, false)
        }));
        let total = work.iter().map(|w| w.1).sum::<u64>();
        let mut done = 0u64;
        for (source, chunks, counted) in work {
            if cancel.load(Ordering::Relaxed) {
                return Err(EngineError::Cancelled {
                    done,
                    total,
                    unit: "chunks to embed",
                });
            }
            // A source of several batches reports each one, so progress
            // moves inside a large file and a cancel stops within a batch.
            let before = done;
            let mut after_batch = |embedded: u32, of: u32| {
                if of > EMBED_BATCH && embedded < of {
                    let line = format!("embedding {source}: {embedded} / {of} chunks");
                    say(
                        progress,
                        Phase::Embedding,
                        before + embedded as u64,
                        total,
                        &line,
                    );
                }
                !cancel.load(Ordering::Relaxed)
            };
            let result = self.reembed(&source, &mut after_batch).map(|out| {
                report.counts.embedded_chunks += out.embedded as u64;
                if counted {
                    Outcome::Reembedded
                } else {
                    Outcome::Embedded
                }
            });
            if let Err(EngineError::Cancelled { done: embedded, .. }) = result {
                return Err(EngineError::Cancelled {
                    done: before + embedded,
                    total,
                    unit: "chunks to embed",
                });
            }
            done += chunks;
            record(
                report,
                progress,
                (Phase::Embedding, &mut done, total),
                &source,
                result,
            );
        }
        Ok(())
    }

    /// Files under the roots (scan rules) with their index state by the
    /// sync's own rule, plus every indexed data or URL source; indexed files
    /// under folders that cannot be listed are shown `unlisted`.
    /// `filter` narrows the rows as it narrows a query (a file not yet
    /// indexed by its path and modification time).
    pub fn list_files(
        &self,
        scope: &[String],
        filter: crate::search::FilterRequest<'_>,
    ) -> Result<FileListing, EngineError> {
        let filter = crate::search::Filter::new(filter, &self.settings().roots)
            .map_err(crate::search::QueryError::from)?;
        let images = self.reads_images();
        let scan = self.ports().files.scan(&self.settings().roots, &[], images);
        let model = self.usable_model().ok();
        // One read of the records; the view is not held while files are
        // hashed or the model loads, so writers in this process never wait.
        let records = self.ports().index.read()?.sources(&Scope::all())?;
        filter
            .check_fields(records.iter().flat_map(|r| &r.attributes.meta))
            .map_err(crate::search::QueryError::from)?;
        let scope_filter = Scope::new(scope.iter().cloned()).with_filter(filter);
        let failures = self.failures();
        let by_source: std::collections::HashMap<&str, &SourceRecord> = records
            .iter()
            .filter(|r| r.source_type == SourceType::File)
            .map(|r| (r.source.as_str(), r))
            .collect();
        let files = &self.ports().files;
        let hasher = |p: &str| files.sha256(p);
        let mut rows = Vec::new();
        for file in scan.files.iter() {
            let indexed = by_source.get(file.path.as_str()).copied();
            if !scope_filter.admits(on_disk(file, indexed)) {
                continue;
            }
            let row = match indexed.cloned() {
                None => ListedFile {
                    source: file.path.clone(),
                    source_type: SourceType::File,
                    title: String::new(),
                    state: super::ListedState::NotIngested,
                    chunk_count: 0,
                    ocr_engine: String::new(),
                    attributes: Default::default(),
                    error: failures.get(&file.path).cloned(),
                },
                Some(r) => {
                    let state = super::file_state(&r, file, model.as_deref(), &hasher).label();
                    let mut row = listed(r, state);
                    if state != super::ListedState::Ingested {
                        // The old version is kept; say why the new one is not.
                        row.error = failures.get(&file.path).cloned();
                    }
                    row
                }
            };
            rows.push(row);
        }
        let seen: std::collections::HashSet<&str> =
            scan.files.iter().map(|f| f.path.as_str()).collect();
        let mut held = vec![0usize; scan.blind.len()];
        for r in records.iter().filter(|r| scope_filter.admits(*r)).cloned() {
            if r.source_type != SourceType::File {
                let state = super::stored_state(&r);
                rows.push(listed(r, state));
                continue;
            }
            // An indexed file the scan could not see because its folder is
            // unlistable (or its root empty) is kept and shown `unlisted`;
            // one that simply vanished is not listed (sync deletes it).
            if seen.contains(r.source.as_str()) {
                continue;
            }
            // An indexed image on disk that no OCR engine can read now: kept.
            if !images && crate::formats::is_image_path(&r.source) && hasher(&r.source).is_some() {
                rows.push(listed(r, super::ListedState::Unreadable));
                continue;
            }
            if let Some(b) = scan.blind.iter().position(|b| is_under(&r.source, &b.path)) {
                held[b] += 1;
                rows.push(listed(r, super::ListedState::Unlisted));
            }
        }
        rows.sort_by(|a, b| a.source.cmp(&b.source));
        let related =
            |p: &str| scope.is_empty() || scope.iter().any(|s| is_under(p, s) || is_under(s, p));
        let unlisted = scan
            .blind
            .iter()
            .zip(held)
            // An empty root with nothing indexed under it is just empty.
            .filter(|(b, n)| b.error.is_some() || *n > 0)
            .filter(|(b, _)| related(&b.path))
            .map(|(b, n)| UnlistedFolder {
                path: b.path.clone(),
                error: b.error.clone(),
                indexed_count: n,
                message: b.message(),
            })
            .collect();
        Ok(FileListing {
            files: rows,
            unlisted,
        })
    }
}

fn listed(r: SourceRecord, state: super::ListedState) -> ListedFile {
    ListedFile {
        source: r.source,
        source_type: r.source_type,
        title: r.title,
        state,
        chunk_count: r.chunk_count,
        ocr_engine: r.ocr_engine,
        attributes: r.attributes,
        error: None,
    }
}

/// Counts one finished file and reports it. In the embedding phase the
/// count is of chunks: the caller advances it by the file's chunks.
fn record(
    report: &mut SyncReport,
    progress: Progress<'_>,
    (phase, done, total): (Phase, &mut u64, u64),
    source: &str,
    result: Result<Outcome, EngineError>,
) {
    if phase == Phase::Indexing {
        *done += 1;
    }
    let (outcome, line) = match result {
        Ok(o @ (Outcome::Reembedded | Outcome::Embedded)) => (o, format!("embedded {source}")),
        Ok(o) => (o, format!("ingested {source}")),
        Err(e) => {
            let o = outcome_of_error(&e);
            let word = if o == Outcome::Unreadable {
                "unreadable"
            } else {
                "failed"
            };
            let line = format!("{word} {source}: {e}");
            report.errors.push((source.to_string(), e.to_string()));
            (o, line)
        }
    };
    let c = &mut report.counts;
    match outcome {
        Outcome::Ingested => c.ingested += 1,
        Outcome::Reembedded => c.reembedded += 1,
        Outcome::Embedded => {}
        Outcome::Unreadable => c.unreadable += 1,
        Outcome::Failed => c.failed += 1,
    }
    say(progress, phase, *done, total, &line);
}

/// What a filter reads of a file not indexed yet: its path and mtime.
/// A file as a filter sees it: its path and modification time on disk, and
/// the language and fields its indexed record holds (none if not indexed).
fn on_disk<'a>(
    f: &'a crate::ports::ScannedFile,
    indexed: Option<&'a SourceRecord>,
) -> crate::search::SourceFacts<'a> {
    crate::search::SourceFacts {
        source: &f.path,
        source_type: SourceType::File,
        mtime: f.mtime,
        ingested_at: "",
        language: indexed.and_then(|r| r.attributes.language.as_deref()),
        meta: indexed.map_or(&[], |r| &r.attributes.meta),
    }
}
