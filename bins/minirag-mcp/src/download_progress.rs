//! How far the model's download is, while a command waits on it: a line
//! every 2 s on the progress bar or stderr, and the last reading for the
//! command's own report (`doctor` names how much had arrived).

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use indicatif::ProgressBar;
use minirag_core::ports::{Embedder, EmbedderState};

/// Bytes downloaded of the total, as last read.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Downloaded {
    pub done: u64,
    pub total: u64,
}

impl Downloaded {
    /// `42% (197 of 470 MB)`.
    pub(crate) fn describe(self) -> String {
        let percent = (self.done * 100).checked_div(self.total).unwrap_or(0);
        format!(
            "{percent}% ({} of {} MB)",
            self.done >> 20,
            self.total >> 20
        )
    }
}

/// Runs `work` while another thread reads the embedder's state; returns
/// `work`'s result and the last download reading, if a download was seen.
pub(crate) fn while_downloading<T>(
    embedder: &dyn Embedder,
    bar: &Option<ProgressBar>,
    work: impl FnOnce() -> T,
) -> (T, Option<Downloaded>) {
    std::thread::scope(|s| {
        let (finished, ended) = mpsc::channel::<()>();
        let watcher = s.spawn(move || report(embedder, bar, &ended));
        let out = work();
        drop(finished);
        (out, watcher.join().ok().flatten())
    })
}

fn report(
    embedder: &dyn Embedder,
    bar: &Option<ProgressBar>,
    ended: &mpsc::Receiver<()>,
) -> Option<Downloaded> {
    let mut last = None;
    let mut tick = 0u32;
    while ended.recv_timeout(Duration::from_millis(500)) == Err(RecvTimeoutError::Timeout) {
        if let EmbedderState::Loading { done, total } = embedder.state() {
            if total == 0 {
                continue;
            }
            let now = Downloaded { done, total };
            last = Some(now);
            tick += 1;
            if tick.is_multiple_of(4) {
                let line = format!("downloading the model: {}", now.describe());
                match bar {
                    Some(bar) => bar.println(line),
                    None => eprintln!("{line}"),
                }
            }
        }
    }
    last
}
