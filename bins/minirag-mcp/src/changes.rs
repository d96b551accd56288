//! One announcement path for every writer: whenever the visible document
//! list changes, each client hears `notifications/resources/list_changed`.
//! A 2026-07-28 client hears it on its `subscriptions/listen` stream, an
//! earlier one on its session.
//!
//! Writers never notify a client themselves. A sync, ingest or delete in
//! this process (MCP, the search page, the watcher) only nudges; one poller
//! per process re-reads core's documents fingerprint after a nudge, or
//! slowly without one (other processes that share the index), and every
//! listener announces each move of the fingerprint.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::service::{Peer, SubscriptionSink};
use rmcp::RoleServer;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::app::App;

/// How often the poller re-reads the fingerprint without a nudge.
const POLL: Duration = Duration::from_secs(2);

/// The least time between two reads: a sync nudges once per file, and a
/// large index's fingerprint reads every source record.
const MIN_GAP: Duration = Duration::from_millis(250);

/// One per server process, shared by every session and request.
pub(crate) struct Changes {
    nudges: watch::Sender<u64>,
    /// The documents fingerprint as the poller last read it.
    seen: watch::Sender<Option<u64>>,
    /// Started by the first listener.
    poller: OnceLock<()>,
    /// Cancelled by the drain: every listener and the poller end.
    stop: CancellationToken,
}

impl Default for Changes {
    fn default() -> Self {
        Self {
            nudges: watch::Sender::new(0),
            seen: watch::Sender::new(None),
            poller: OnceLock::new(),
            stop: CancellationToken::new(),
        }
    }
}

/// Who hears a change.
pub(crate) enum Listener {
    /// A `subscriptions/listen` stream (2026-07-28 on).
    Stream(SubscriptionSink),
    /// A session that began with `initialize` (before 2026-07-28).
    Session(Peer<RoleServer>),
}

impl Listener {
    /// False once the listener is gone.
    async fn announce(&self) -> bool {
        match self {
            Self::Stream(sink) => sink.notify_resource_list_changed().await.is_ok(),
            Self::Session(peer) => peer.notify_resource_list_changed().await.is_ok(),
        }
    }

    fn is_gone(&self) -> bool {
        matches!(self, Self::Session(peer) if peer.is_transport_closed())
    }
}

impl Changes {
    /// Something in this process may have changed the document list.
    /// Callable from any thread.
    pub(crate) fn nudge(&self) {
        self.nudges.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Ends every listener and the poller (the server is shutting down).
    pub(crate) fn stop(&self) {
        self.stop.cancel();
    }

    /// Announces each change to `listener` until it is gone, `cancelled`
    /// fires, or the server stops.
    pub(crate) async fn serve(
        self: &Arc<Self>,
        app: Arc<App>,
        listener: Listener,
        cancelled: CancellationToken,
    ) {
        self.start_poller(app).await;
        let mut seen = self.seen.subscribe();
        let mut last = *seen.borrow_and_update();
        loop {
            tokio::select! {
                _ = cancelled.cancelled() => return,
                _ = self.stop.cancelled() => return,
                changed = seen.changed() => if changed.is_err() { return },
                // A session has no cancellation of its own: look now and then.
                _ = tokio::time::sleep(POLL) => {
                    if listener.is_gone() { return }
                    continue;
                }
            }
            // A move from nothing is the first read, not a change.
            let now = *seen.borrow_and_update();
            if last.is_some() && !listener.announce().await {
                return;
            }
            last = now;
        }
    }

    /// Starts the one poller, after a first read, so that a listener hears
    /// only the changes made after it began listening.
    async fn start_poller(self: &Arc<Self>, app: Arc<App>) {
        if self.poller.set(()).is_err() {
            return;
        }
        self.seen.send_replace(fingerprint(&app).await);
        let changes = self.clone();
        tokio::spawn(async move { changes.poll(app).await });
    }

    async fn poll(&self, app: Arc<App>) {
        let mut nudges = self.nudges.subscribe();
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => return,
                _ = nudges.changed() => {}
                _ = tokio::time::sleep(POLL) => {}
            }
            tokio::select! {
                _ = self.stop.cancelled() => return,
                _ = tokio::time::sleep(MIN_GAP) => {}
            }
            nudges.borrow_and_update();
            if let Some(now) = fingerprint(&app).await {
                self.seen.send_if_modified(|last| {
                    let moved = *last != Some(now);
                    *last = Some(now);
                    moved
                });
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
