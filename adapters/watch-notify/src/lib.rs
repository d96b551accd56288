//! The [`ChangeFeed`] port on the `notify` crate: OS events for the roots,
//! settled by a quiet period, and a polling watcher when the OS runs out of
//! watches (inotify's `max_user_watches`).
//!
//! Events for paths that cannot matter (outside the roots, hidden or tool
//! folders, other extensions) are dropped as they arrive, so they cost one
//! check each. A burst never queues work: paths are kept as a set, and past
//! [`MAX_PATHS`] the set collapses to parent folders.

#![forbid(unsafe_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use minirag_core::watch::{Batch, ChangeFeed, WatchMode};
use notify::{Config, ErrorKind, Event, EventKind, PollWatcher, RecursiveMode, Watcher};

/// Changed paths kept per batch before they collapse to their folders.
pub const MAX_PATHS: usize = 1024;

/// Timing of a feed.
#[derive(Debug, Clone)]
pub struct FeedOptions {
    /// A batch is delivered once no relevant event came for this long.
    pub quiet: Duration,
    /// …or once its first event is this old, however busy the folder.
    pub max_wait: Duration,
    /// Rescan interval in polling mode.
    pub poll_interval: Duration,
    /// Behave as if the OS refused every watch (tests of the fallback).
    pub simulate_watch_limit: bool,
}

impl Default for FeedOptions {
    fn default() -> Self {
        Self {
            quiet: Duration::from_millis(500),
            max_wait: Duration::from_secs(5),
            poll_interval: Duration::from_secs(2),
            simulate_watch_limit: false,
        }
    }
}

type Relevant = Box<dyn Fn(&str) -> bool + Send>;

/// The [`ChangeFeed`] port by notify: OS events where they work, polling where they do not.
pub struct NotifyFeed {
    roots: Vec<PathBuf>,
    options: FeedOptions,
    relevant: Relevant,
    events: Receiver<notify::Result<Event>>,
    watcher: Box<dyn Watcher + Send>,
    mode: WatchMode,
    notice: Option<String>,
    paths: BTreeSet<String>,
    rescan: bool,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl NotifyFeed {
    /// Watches `roots` recursively; `relevant` says which paths matter.
    pub fn start(
        roots: &[PathBuf],
        relevant: impl Fn(&str) -> bool + Send + 'static,
        options: FeedOptions,
    ) -> notify::Result<Self> {
        let (tx, events) = channel();
        let mut feed = Self {
            roots: roots.to_vec(),
            relevant: Box::new(relevant),
            events,
            watcher: Box::new(PollWatcher::new(tx.clone(), poll_config(&options))?),
            options,
            mode: WatchMode::Polling,
            notice: None,
            paths: BTreeSet::new(),
            rescan: false,
            first: None,
            last: None,
        };
        match feed.watch_with_events(tx.clone()) {
            Ok(()) => feed.mode = WatchMode::Events,
            Err(e) if matches!(e.kind, ErrorKind::MaxFilesWatch) => feed.fall_back(tx)?,
            Err(e) => return Err(e),
        }
        Ok(feed)
    }

    fn watch_with_events(
        &mut self,
        tx: std::sync::mpsc::Sender<notify::Result<Event>>,
    ) -> notify::Result<()> {
        if self.options.simulate_watch_limit {
            return Err(notify::Error::new(ErrorKind::MaxFilesWatch));
        }
        let mut watcher = notify::recommended_watcher(tx)?;
        for root in &self.roots {
            watcher.watch(root, RecursiveMode::Recursive)?;
        }
        self.watcher = Box::new(watcher);
        Ok(())
    }

    /// Replaces the event watcher by a polling one over the same roots.
    fn fall_back(
        &mut self,
        tx: std::sync::mpsc::Sender<notify::Result<Event>>,
    ) -> notify::Result<()> {
        let mut poller = PollWatcher::new(tx, poll_config(&self.options))?;
        for root in &self.roots {
            poller.watch(root, RecursiveMode::Recursive)?;
        }
        self.watcher = Box::new(poller);
        self.mode = WatchMode::Polling;
        self.notice = Some(format!(
            "the OS file watch limit was reached (Linux: raise fs.inotify.max_user_watches); rescanning every {} s instead",
            self.options.poll_interval.as_secs_f64()
        ));
        // Changes between the limit and the first poll are caught up.
        self.rescan = true;
        self.touch();
        Ok(())
    }

    fn touch(&mut self) {
        let now = Instant::now();
        self.first.get_or_insert(now);
        self.last = Some(now);
    }

    fn absorb(&mut self, event: notify::Result<Event>) {
        let event = match event {
            Ok(e) => e,
            Err(e)
                if matches!(e.kind, ErrorKind::MaxFilesWatch) && self.mode == WatchMode::Events =>
            {
                let (tx, events) = channel();
                self.events = events;
                if self.fall_back(tx).is_err() {
                    self.rescan = true;
                    self.touch();
                }
                return;
            }
            // A lost watch or an unreadable folder: look again.
            Err(_) => {
                self.rescan = true;
                self.touch();
                return;
            }
        };
        if event.need_rescan() {
            self.rescan = true;
            self.touch();
            return;
        }
        if matches!(event.kind, EventKind::Access(_)) {
            return;
        }
        let mut any = false;
        for path in &event.paths {
            let Some(p) = path.to_str() else { continue };
            if (self.relevant)(p) {
                self.paths.insert(p.to_string());
                any = true;
            }
        }
        if any {
            if self.paths.len() > MAX_PATHS {
                self.paths = collapse(&self.paths);
            }
            self.touch();
        }
    }

    fn due(&self) -> Option<Instant> {
        let (first, last) = (self.first?, self.last?);
        Some((last + self.options.quiet).min(first + self.options.max_wait))
    }

    fn take(&mut self) -> Batch {
        self.first = None;
        self.last = None;
        let paths = std::mem::take(&mut self.paths);
        if std::mem::take(&mut self.rescan) {
            Batch::Rescan
        } else {
            Batch::Paths(paths.into_iter().collect())
        }
    }
}

fn poll_config(options: &FeedOptions) -> Config {
    Config::default().with_poll_interval(options.poll_interval)
}

/// Each path replaced by its parent folder, until few enough remain.
fn collapse(paths: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = paths
        .iter()
        .map(|p| {
            Path::new(p)
                .parent()
                .map_or_else(|| p.clone(), |d| d.display().to_string())
        })
        .collect();
    if out.len() > MAX_PATHS && out != *paths {
        out = collapse(&out);
    }
    out
}

impl ChangeFeed for NotifyFeed {
    fn mode(&self) -> WatchMode {
        self.mode
    }

    fn notice(&self) -> Option<String> {
        self.notice.clone()
    }

    fn pending(&self) -> usize {
        self.paths.len() + usize::from(self.rescan)
    }

    fn next(&mut self, timeout_ms: u64) -> Option<Batch> {
        let deadline = Instant::now() + Duration::from_millis(timeout_ms);
        loop {
            let now = Instant::now();
            if let Some(due) = self.due() {
                if now >= due {
                    return Some(self.take());
                }
            } else if now >= deadline {
                return None;
            }
            let until = self.due().unwrap_or(deadline);
            match self
                .events
                .recv_timeout(until.saturating_duration_since(now))
            {
                Ok(event) => self.absorb(event),
                Err(RecvTimeoutError::Timeout) => {}
                // The watcher is gone (it never is while the feed lives).
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(dir: &Path, options: FeedOptions) -> NotifyFeed {
        NotifyFeed::start(&[dir.to_path_buf()], |p| p.ends_with(".md"), options).unwrap()
    }

    /// Waits for the next batch (events arrive on the OS's schedule).
    fn next_batch(f: &mut NotifyFeed) -> Batch {
        for _ in 0..40 {
            if let Some(b) = f.next(500) {
                return b;
            }
        }
        panic!("no batch within 20 s");
    }

    #[test]
    fn a_save_is_one_batch_of_relevant_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mut f = feed(&root, FeedOptions::default());
        assert_eq!(f.mode(), WatchMode::Events);
        // An editor's save: temp file, write, rename over the original.
        std::fs::write(root.join(".a.md.tmp"), "draft").unwrap();
        std::fs::rename(root.join(".a.md.tmp"), root.join("a.md")).unwrap();
        std::fs::write(root.join("ignored.txt"), "x").unwrap();
        let b = next_batch(&mut f);
        assert_eq!(
            b,
            Batch::Paths(vec![root.join("a.md").display().to_string()])
        );
    }

    #[test]
    fn the_watch_limit_falls_back_to_polling() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let options = FeedOptions {
            simulate_watch_limit: true,
            poll_interval: Duration::from_millis(200),
            ..Default::default()
        };
        let mut f = feed(&root, options);
        assert_eq!(f.mode(), WatchMode::Polling);
        assert!(f.notice().unwrap().contains("max_user_watches"));
        assert_eq!(next_batch(&mut f), Batch::Rescan, "catch up first");
        std::fs::write(root.join("b.md"), "new").unwrap();
        let b = next_batch(&mut f);
        assert_eq!(
            b,
            Batch::Paths(vec![root.join("b.md").display().to_string()])
        );
    }

    #[test]
    fn a_burst_collapses_to_folders() {
        let many: BTreeSet<String> = (0..3000)
            .map(|i| format!("/r/d{}/f{i}.md", i % 3))
            .collect();
        let c = collapse(&many);
        assert_eq!(c.len(), 3);
        assert!(c.contains("/r/d0"));
    }
}
