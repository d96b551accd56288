//! `subscriptions/listen` (MCP 2026-07-28): a listening client hears
//! `notifications/resources/list_changed` whenever the visible document
//! list changed. A sync, ingest or delete in this process nudges every
//! listener at once; a slow poll of core's documents fingerprint catches
//! the rest (the watcher, and other processes that share the index).

use std::sync::Arc;
use std::time::Duration;

use rmcp::service::SubscriptionSink;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::app::App;

/// How often a listener re-reads the fingerprint without a nudge.
const POLL: Duration = Duration::from_secs(2);

/// The least time between two reads of one listener: a sync nudges once per
/// file, and a large index's fingerprint reads every source record.
const MIN_GAP: Duration = Duration::from_millis(250);

/// One per server process, shared by every session and request.
pub(crate) struct Changes {
    nudges: watch::Sender<u64>,
    /// Cancelled by the drain: every listen stream ends gracefully.
    stop: CancellationToken,
}

impl Default for Changes {
    fn default() -> Self {
        Self {
            nudges: watch::Sender::new(0),
            stop: CancellationToken::new(),
        }
    }
}

impl Changes {
    /// Something in this process may have changed the document list.
    /// Callable from any thread.
    pub(crate) fn nudge(&self) {
        self.nudges.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Ends every listen stream (the server is shutting down).
    pub(crate) fn stop(&self) {
        self.stop.cancel();
    }

    /// Runs one subscription until the client cancels it or the server
    /// stops: each time the fingerprint moves, one notification.
    pub(crate) async fn serve(
        &self,
        app: Arc<App>,
        sink: SubscriptionSink,
        cancelled: CancellationToken,
    ) {
        let mut nudges = self.nudges.subscribe();
        let mut last = fingerprint(&app).await;
        let mut read_at = tokio::time::Instant::now();
        loop {
            tokio::select! {
                _ = cancelled.cancelled() => return,
                _ = self.stop.cancelled() => return,
                _ = nudges.changed() => {}
                _ = tokio::time::sleep(POLL) => {}
            }
            tokio::select! {
                _ = cancelled.cancelled() => return,
                _ = self.stop.cancelled() => return,
                _ = tokio::time::sleep_until(read_at + MIN_GAP) => {}
            }
            read_at = tokio::time::Instant::now();
            let now = fingerprint(&app).await;
            if now.is_some() && now != last {
                last = now;
                if sink.notify_resource_list_changed().await.is_err() {
                    return;
                }
            }
        }
    }
}

/// `None` while the index cannot be read (a configuration error, say):
/// nothing is announced until it can.
async fn fingerprint(app: &Arc<App>) -> Option<u64> {
    let app = app.clone();
    tokio::task::spawn_blocking(move || app.engine().ok()?.documents_fingerprint().ok())
        .await
        .ok()
        .flatten()
}
