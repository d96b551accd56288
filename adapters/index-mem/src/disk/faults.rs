//! Fail points for tests: every write, fsync, rename and link of the index
//! files asks [`check`] first, which fails the `n`-th such step after
//! [`arm`]`(n)`. Unarmed (always, outside tests) it is one atomic load per
//! step.

use std::sync::atomic::{AtomicU64, Ordering};

static FAIL_AT: AtomicU64 = AtomicU64::new(0);
static SEEN: AtomicU64 = AtomicU64::new(0);
static FAILED: AtomicU64 = AtomicU64::new(0);

/// Fails the `n`-th step from now (1-based); 0 disarms.
pub fn arm(n: u64) {
    SEEN.store(0, Ordering::SeqCst);
    FAILED.store(0, Ordering::SeqCst);
    FAIL_AT.store(n, Ordering::SeqCst);
}

/// Disarms; returns the kind of step that failed, if one did.
pub fn disarm() -> Option<&'static str> {
    FAIL_AT.store(0, Ordering::SeqCst);
    KINDS
        .get(FAILED.swap(0, Ordering::SeqCst) as usize)
        .copied()
        .filter(|k| !k.is_empty())
}

const KINDS: [&str; 5] = ["", "write", "fsync", "rename", "link"];

/// `Err` when this is the armed step. `kind`: 1 write, 2 fsync, 3
/// rename, 4 link.
pub(crate) fn check(kind: u64) -> std::io::Result<()> {
    let at = FAIL_AT.load(Ordering::Relaxed);
    if at == 0 || SEEN.fetch_add(1, Ordering::SeqCst) + 1 != at {
        return Ok(());
    }
    FAILED.store(kind, Ordering::SeqCst);
    Err(std::io::Error::other(format!(
        "injected {} failure",
        KINDS[kind as usize]
    )))
}

pub(crate) const WRITE: u64 = 1;
pub(crate) const FSYNC: u64 = 2;
pub(crate) const RENAME: u64 = 3;
pub(crate) const LINK: u64 = 4;

/// Points a compaction reports reaching, so a test can act while it is
/// there instead of guessing with a sleep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// The next snapshot is written and in place; the state serving
    /// queries is still the previous one.
    SnapshotWritten,
}

static WATCHER: std::sync::Mutex<Option<std::sync::mpsc::Sender<Point>>> =
    std::sync::Mutex::new(None);

/// Sends each point reached from now on to `tx`; `None` stops.
pub fn watch(tx: Option<std::sync::mpsc::Sender<Point>>) {
    *WATCHER.lock().unwrap_or_else(|p| p.into_inner()) = tx;
}

pub(crate) fn reached(point: Point) {
    if let Some(tx) = WATCHER.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
        let _ = tx.send(point);
    }
}
