//! The live index: which file changes matter, which folder a batch of them
//! makes stale, and the loop that keeps the index current. Every change is
//! applied by an ordinary scoped sync, so containment, symlink escapes, the
//! size limit, moves (by hash) and deletions follow the sync's one rule set.
//!
//! Timing (the quiet period that coalesces an editor's save, the watch
//! limit and its polling fallback) belongs to the [`ChangeFeed`] adapter;
//! this module has no clock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::formats::is_document_extension;
use crate::ports::IndexError;
use crate::progress::Step;
use crate::scan_rules::{below_root, skipped_name};
use crate::search::scope::is_under;
use crate::sync::SyncReport;

/// A debounced batch of changes from a [`ChangeFeed`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Batch {
    /// Paths (files or folders, existing or gone) that changed.
    Paths(Vec<String>),
    /// The feed lost track (queue overflow, a fresh poll): rescan the roots.
    Rescan,
}

/// How a feed learns of changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchMode {
    /// OS notifications (inotify, FSEvents, ReadDirectoryChangesW).
    Events,
    /// Periodic rescans: the OS ran out of watches, or has none.
    Polling,
}

impl WatchMode {
    /// The mode's name in answers.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Events => "events",
            Self::Polling => "polling",
        }
    }
}

/// Port: debounced change notifications for the roots.
pub trait ChangeFeed: Send {
    /// How the feed watches: OS events or polling.
    fn mode(&self) -> WatchMode;
    /// Why the feed is in its mode, when that is news (the watch limit).
    fn notice(&self) -> Option<String>;
    /// Changes seen but not yet delivered (still settling).
    fn pending(&self) -> usize;
    /// The next settled batch, or `None` when nothing settled within
    /// `timeout_ms` (a batch still settling may take longer: at most the
    /// feed's longest wait).
    fn next(&mut self, timeout_ms: u64) -> Option<Batch>;
}

/// What the watcher is doing, for `status`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchState {
    /// Whether the watcher runs.
    pub active: bool,
    /// How it watches, once running.
    pub mode: Option<WatchMode>,
    /// Changes waiting to be applied.
    pub pending: usize,
    /// Unix seconds of the last change applied to the index.
    pub last_change_at: Option<i64>,
    /// Why it is not watching, or what went wrong last.
    pub notice: Option<String>,
}

/// What one turn of the loop did, for progress lines.
#[derive(Debug)]
pub enum WatchEvent<'a> {
    /// A sync of `scope` (`None`: every root) ran; the first one catches up
    /// on what changed while nothing watched.
    Applied {
        /// The folder or file the changes were under, when one.
        scope: Option<&'a str>,
        /// What the sync did.
        report: &'a SyncReport,
    },
    /// Another process holds the sync lock; the changes wait for it.
    Waiting {
        /// Names the holder.
        reason: &'a str,
    },
    /// A step of a sync under way: a file ingested, moved, deleted or
    /// failed, or chunks embedded. The first sync (catching up) may take
    /// minutes; these say what it does meanwhile, naming each file.
    Working {
        /// The step.
        step: Step<'a>,
    },
    /// A sync failed as a whole; the watcher goes on.
    Failed {
        /// Why.
        error: &'a EngineError,
    },
}

/// Whether a change to `path` can matter: under a root, not hidden or in a
/// tool folder, and a document extension, or no extension (a folder).
pub fn relevant(path: &str, roots: &[String]) -> bool {
    let Some(parts) = below_root(path, roots) else {
        return false;
    };
    let mut parts = parts.into_iter().peekable();
    while let Some(part) = parts.next() {
        let last = parts.peek().is_none();
        // An inner part is a folder; the last may be a file or a folder.
        if skipped_name(part, !last) {
            return false;
        }
        if last {
            return match part.rsplit_once('.') {
                Some((_, ext)) => is_document_extension(&ext.to_ascii_lowercase()),
                None => true,
            };
        }
    }
    true
}

/// What a sync must cover after some changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stale {
    /// Every root.
    All,
    /// One folder under a root (or a root).
    Under(String),
}

impl Stale {
    /// The folder that holds every changed path: their parents' common
    /// ancestor (a changed path itself may be gone). Across roots, or above
    /// them, every root.
    pub fn of(batch: &Batch, roots: &[String]) -> Option<Self> {
        let paths = match batch {
            Batch::Rescan => return Some(Self::All),
            Batch::Paths(p) => p,
        };
        paths
            .iter()
            .filter(|p| relevant(p, roots))
            .map(|p| Self::Under(parent(p).to_string()).within(roots))
            .reduce(|a, b| a.merge(&b, roots))
    }

    /// The smallest scope that covers both.
    pub fn merge(&self, other: &Self, roots: &[String]) -> Self {
        match (self, other) {
            (Self::Under(a), Self::Under(b)) => {
                Self::Under(common_ancestor(a, b).to_string()).within(roots)
            }
            _ => Self::All,
        }
    }

    /// Clamped to the roots: a folder above every root means them all.
    fn within(self, roots: &[String]) -> Self {
        match &self {
            Self::Under(p) if roots.iter().any(|r| is_under(p, r)) => self,
            _ => Self::All,
        }
    }

    /// The folder or file the changes are under, when one.
    pub fn scope(&self) -> Option<&str> {
        match self {
            Self::All => None,
            Self::Under(p) => Some(p),
        }
    }
}

fn parent(path: &str) -> &str {
    match path.trim_end_matches('/').rsplit_once('/') {
        Some(("", _)) => "/",
        Some((dir, _)) => dir,
        None => path,
    }
}

fn common_ancestor<'a>(a: &'a str, b: &str) -> &'a str {
    let mut end = 0;
    let mut ai = a.split('/');
    let mut bi = b.split('/');
    let mut first = true;
    loop {
        match (ai.next(), bi.next()) {
            (Some(x), Some(y)) if x == y => {
                end += x.len() + usize::from(!first);
                first = false;
            }
            _ => break,
        }
    }
    if end == 0 {
        "/"
    } else {
        &a[..end]
    }
}

/// How long to wait before retrying when another process holds the lock.
const BUSY_RETRY_MS: u64 = 1000;
/// How long one idle wait lasts before the stop flag is checked again.
const IDLE_WAIT_MS: u64 = 500;

impl Engine {
    /// Keeps the index current until `stop` is set: first a full sync (it
    /// catches up on changes made while nothing watched), then one scoped
    /// sync per settled batch. The sync lock is held only while a sync runs;
    /// when another process holds it, the changes wait and are applied
    /// after. A failed sync is reported and the loop goes on.
    pub fn watch(
        &self,
        feed: &mut dyn ChangeFeed,
        state: &Mutex<WatchState>,
        on: &(dyn Fn(WatchEvent<'_>) + Sync),
        stop: &AtomicBool,
    ) {
        let roots = self.settings().roots.clone();
        let mut stale = Some(Stale::All);
        let publish = |stale: &Option<Stale>, feed: &dyn ChangeFeed, applied: bool| {
            let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
            s.active = true;
            s.mode = Some(feed.mode());
            s.pending = feed.pending() + usize::from(stale.is_some());
            s.notice = feed.notice();
            if applied {
                s.last_change_at = Some(self.ports().clock.now_unix_seconds());
            }
        };
        publish(&stale, feed, false);
        while !stop.load(Ordering::Relaxed) {
            let mut wait = IDLE_WAIT_MS;
            if let Some(target) = stale.take() {
                match self.begin_sync(target.scope()) {
                    Ok(session) => {
                        let working = |step: Step<'_>| on(WatchEvent::Working { step });
                        let result = self.run_sync(session, &working, stop);
                        match &result {
                            Ok(report) => on(WatchEvent::Applied {
                                scope: target.scope(),
                                report,
                            }),
                            Err(EngineError::Cancelled { .. }) => break,
                            Err(error) => on(WatchEvent::Failed { error }),
                        }
                        publish(&stale, feed, result.is_ok());
                    }
                    Err(EngineError::Index(IndexError::Busy { reason, .. })) => {
                        on(WatchEvent::Waiting { reason: &reason });
                        stale = Some(target);
                        wait = BUSY_RETRY_MS;
                    }
                    Err(error) => on(WatchEvent::Failed { error: &error }),
                }
            }
            let batch = feed.next(wait);
            if let Some(fresh) = batch.as_ref().and_then(|b| Stale::of(b, &roots)) {
                stale = Some(match stale {
                    Some(old) => old.merge(&fresh, &roots),
                    None => fresh,
                });
            }
            publish(&stale, feed, false);
        }
        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
        s.active = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots() -> Vec<String> {
        vec!["/docs".into(), "/work/notes".into()]
    }

    #[test]
    fn only_documents_under_the_roots_matter() {
        let r = roots();
        assert!(relevant("/docs/a.md", &r));
        assert!(relevant("/docs/sub/Report.PDF", &r));
        assert!(relevant("/docs/new-folder", &r), "a folder moved in");
        assert!(!relevant("/elsewhere/a.md", &r));
        assert!(!relevant("/docs/.git/index", &r));
        assert!(!relevant("/docs/node_modules/x/readme.md", &r));
        assert!(!relevant("/docs/a.md.swp", &r));
        assert!(!relevant("/docs/.a.md.swp", &r));
        assert!(!relevant("/docs/~$report.docx", &r));
        assert!(!relevant("/docs/build.o", &r));
    }

    #[test]
    fn a_batch_makes_its_parents_common_folder_stale() {
        let r = roots();
        let b = |p: &[&str]| Batch::Paths(p.iter().map(|s| s.to_string()).collect());
        assert_eq!(
            Stale::of(&b(&["/docs/a/x.md", "/docs/a/b/y.md"]), &r),
            Some(Stale::Under("/docs/a".into()))
        );
        assert_eq!(
            Stale::of(&b(&["/docs/a/x.md", "/docs/c/y.md"]), &r),
            Some(Stale::Under("/docs".into()))
        );
        assert_eq!(
            Stale::of(&b(&["/docs/x.md", "/work/notes/y.md"]), &r),
            Some(Stale::All),
            "across roots"
        );
        assert_eq!(
            Stale::of(&b(&["/docs/x.md.swp", "/tmp/y.md"]), &r),
            None,
            "nothing relevant"
        );
        assert_eq!(Stale::of(&Batch::Rescan, &r), Some(Stale::All));
        // A prefix that is not a path boundary is not an ancestor.
        assert_eq!(common_ancestor("/docs/ab", "/docs/abc"), "/docs");
        assert_eq!(common_ancestor("/docs/a", "/docs/a"), "/docs/a");
        assert_eq!(common_ancestor("/x", "/y"), "/");
    }

    #[test]
    fn merging_keeps_the_smallest_cover() {
        let r = roots();
        let a = Stale::Under("/docs/a/b".into());
        assert_eq!(
            a.merge(&Stale::Under("/docs/a/c".into()), &r),
            Stale::Under("/docs/a".into())
        );
        assert_eq!(a.merge(&Stale::All, &r), Stale::All);
        assert_eq!(a.merge(&Stale::Under("/work/notes".into()), &r), Stale::All);
    }
}
