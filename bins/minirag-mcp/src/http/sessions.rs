//! MCP sessions, bounded: at most `--max-sessions` in all and
//! `--max-sessions-per-ip` opened from one address. A new session at a cap
//! closes the one used longest ago (of that address, at its cap), so a
//! flood of `initialize` calls costs at most the cap's memory and live
//! clients keep theirs. rmcp's `LocalSessionManager` does the rest.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Instant;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

tokio::task_local! {
    /// The address of the request being served (set by the gate), so a
    /// new session knows whose it is.
    pub static PEER: IpAddr;
}

pub(super) struct BoundedSessions {
    inner: LocalSessionManager,
    max_total: usize,
    max_per_ip: usize,
    known: Mutex<HashMap<SessionId, Known>>,
}

struct Known {
    ip: Option<IpAddr>,
    used: Instant,
}

impl BoundedSessions {
    pub(super) fn new(inner: LocalSessionManager, max_total: usize, max_per_ip: usize) -> Self {
        Self {
            inner,
            max_total,
            max_per_ip,
            known: Mutex::new(HashMap::new()),
        }
    }

    fn touch(&self, id: &SessionId) {
        if let Some(k) = self.lock().get_mut(id) {
            k.used = Instant::now();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Known>> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The sessions to close so one more from `ip` fits both caps.
    async fn to_evict(&self, ip: Option<IpAddr>) -> Vec<SessionId> {
        let live = self.inner.sessions.read().await;
        let mut known = self.lock();
        // Sessions that expired or were deleted are forgotten.
        known.retain(|id, _| live.contains_key(id));
        let mut out = Vec::new();
        let oldest = |known: &HashMap<SessionId, Known>, of: Option<IpAddr>, skip: &[SessionId]| {
            known
                .iter()
                .filter(|(id, k)| (of.is_none() || k.ip == of) && !skip.contains(id))
                .min_by_key(|(_, k)| k.used)
                .map(|(id, _)| id.clone())
        };
        if let Some(ip) = ip {
            let from_ip = known.values().filter(|k| k.ip == Some(ip)).count();
            if from_ip >= self.max_per_ip {
                let evicted = oldest(&known, Some(ip), &out);
                out.extend(evicted);
            }
        }
        if known.len() - out.len() >= self.max_total {
            let evicted = oldest(&known, None, &out);
            out.extend(evicted);
        }
        for id in &out {
            known.remove(id);
        }
        out
    }
}

impl SessionManager for BoundedSessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let ip = PEER.try_with(|ip| *ip).ok();
        for id in self.to_evict(ip).await {
            let _ = self.inner.close_session(&id).await;
        }
        let (id, transport) = self.inner.create_session().await?;
        self.lock().insert(
            id.clone(),
            Known {
                ip,
                used: Instant::now(),
            },
        );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.lock().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        <LocalSessionManager as SessionManager>::create_stream(&self.inner, id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        <LocalSessionManager as SessionManager>::create_standalone_stream(&self.inner, id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        <LocalSessionManager as SessionManager>::resume(&self.inner, id, last_event_id).await
    }
}
