//! What every `/mcp` request passes before rmcp sees it: the drain flag,
//! the bearer token, the per-client in-flight cap and the body cap. It also
//! writes the request's log line, unless a tool call writes its own.
//! (`Host` and `Origin` are checked by rmcp's service, configured in
//! [`super::serve`].)

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use subtle::ConstantTimeEq;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::options::{digest, Options};
use crate::reqlog::{HttpLine, Outcome, RequestLog};

/// Permits of the drain semaphore: more than any server has requests.
pub(super) const DRAIN_PERMITS: u32 = 1 << 20;
/// Client entries kept before idle ones are swept.
const CLIENTS_SWEEP_AT: usize = 4096;

pub(super) struct Gate {
    options: Options,
    pub log: RequestLog,
    draining: AtomicBool,
    /// One permit per POST in flight; the drain takes them all.
    pub posts: Arc<Semaphore>,
    clients: Mutex<HashMap<ClientKey, Arc<Semaphore>>>,
}

impl Gate {
    pub(super) fn new(options: Options) -> Self {
        Self {
            log: RequestLog {
                log_queries: options.log_queries,
            },
            options,
            draining: AtomicBool::new(false),
            posts: Arc::new(Semaphore::new(DRAIN_PERMITS as usize)),
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// New requests are refused from now on.
    pub(super) fn start_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// The search page's checks: the same hosts and token. Its POSTs take
    /// only its own origin and `--allowed-origin`s: a page another local
    /// server serves (any loopback port) must not start a sync.
    pub(super) fn page_guard(&self) -> minirag_web::Guard {
        let token = self.options.token.map(|expected| {
            Arc::new(move |presented: &str| -> bool { digest(presented).ct_eq(&expected).into() })
                as minirag_web::TokenCheck
        });
        minirag_web::Guard {
            allowed_hosts: self.options.allowed_hosts.clone(),
            allowed_origins: self.options.extra_origins.clone(),
            token,
            signed_in: Arc::default(),
            trust_proxy: self.options.trust_proxy,
        }
    }

    fn authorized(&self, value: Option<&HeaderValue>) -> bool {
        let Some(expected) = &self.options.token else {
            return true;
        };
        let presented = minirag_web::bearer_token(value).unwrap_or("");
        // Digests of equal length: the comparison time says nothing of the
        // token's length or of how many leading bytes matched.
        digest(presented).ct_eq(expected).into()
    }

    fn client_permit(&self, client: ClientKey, limit: usize) -> Option<OwnedSemaphorePermit> {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if clients.len() >= CLIENTS_SWEEP_AT {
            clients.retain(|_, s| Arc::strong_count(s) > 1);
        }
        let slot = clients
            .entry(client)
            .or_insert_with(|| Arc::new(Semaphore::new(limit)))
            .clone();
        drop(clients);
        slot.try_acquire_owned().ok()
    }
}

/// Who a request counts against: its MCP session when it names one (many
/// clients may share an address, e.g. behind a proxy or on one machine),
/// else its address (`initialize`, and the sessionless 2026 protocol).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ClientKey {
    Session(String),
    Address(IpAddr),
    /// Every request from an address, sessions included: new sessions
    /// cannot get around the per-session cap.
    AllOf(IpAddr),
}

impl ClientKey {
    fn of(request: &Request, peer: SocketAddr) -> Self {
        match request
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            Some(id) => Self::Session(id.to_string()),
            None => Self::Address(peer.ip()),
        }
    }
}

/// A JSON-RPC error as an HTTP response: clients show `message`.
fn rpc_error(status: StatusCode, code: i64, message: String) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    (status, axum::Json(body)).into_response()
}

pub(super) async fn admit(
    State(gate): State<Arc<Gate>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let (response, rpc) = pass(&gate, peer, request, next).await;
    let status = response.status();
    // A tool call that reached the tool is logged by the tool layer.
    let tool_logged = rpc.as_deref() == Some("tools/call") && status.is_success();
    if !tool_logged {
        let outcome = if status.is_success() {
            Outcome::Ok
        } else {
            Outcome::Refused
        };
        let line = HttpLine {
            method: method.as_str(),
            path: &path,
            rpc: rpc.as_deref(),
            status: status.as_u16(),
        };
        gate.log.http(&line, started.elapsed(), outcome);
    }
    response
}

/// The checks in order; returns the response and the JSON-RPC method.
async fn pass(
    gate: &Gate,
    peer: SocketAddr,
    request: Request,
    next: Next,
) -> (Response, Option<String>) {
    if gate.draining.load(Ordering::SeqCst) {
        let r = rpc_error(
            StatusCode::SERVICE_UNAVAILABLE,
            -32000,
            "the server is shutting down; retry against its replacement".into(),
        );
        return (r, None);
    }
    if !gate.authorized(request.headers().get(header::AUTHORIZATION)) {
        let r = (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
        )
            .into_response();
        return (r, None);
    }
    let per_client = gate.options.max_inflight_per_client;
    let Some(client) = gate.client_permit(ClientKey::of(&request, peer), per_client) else {
        let r = rpc_error(
            StatusCode::TOO_MANY_REQUESTS,
            -32000,
            format!("too many requests in flight from this client (limit {per_client}, the server's --max-inflight-per-client); wait for one to finish"),
        );
        return (r, None);
    };
    let per_ip = gate.options.max_inflight_per_ip;
    let Some(address) = gate.client_permit(ClientKey::AllOf(peer.ip()), per_ip) else {
        let r = rpc_error(
            StatusCode::TOO_MANY_REQUESTS,
            -32000,
            format!("too many requests in flight from this address across its sessions (limit {per_ip}, the server's --max-inflight-per-ip); wait for one to finish"),
        );
        return (r, None);
    };
    let mut rpc = None;
    let mut post = None;
    let request = if request.method() == Method::POST {
        let (parts, body) = request.into_parts();
        let batches = super::batch::allowed(&parts.headers);
        let read = read_body(body, gate.options.max_body_bytes, batches);
        let Ok(read) = tokio::time::timeout(gate.options.body_timeout, read).await else {
            let secs = gate.options.body_timeout.as_secs();
            let r = rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                -32600,
                format!("the request body did not arrive within {secs} s (the server's --body-timeout-secs)"),
            );
            return (r, None);
        };
        let bytes = match read {
            Ok(Posted::One(b, method)) => {
                rpc = method;
                b
            }
            Ok(Posted::Batch(messages)) => {
                let _held = gate.posts.clone().try_acquire_owned().ok();
                let r = super::batch::serve(parts.uri, parts.headers, messages, next).await;
                return (r, Some("batch".into()));
            }
            Err(r) => return (r, None),
        };
        // Held until the response body ends: the drain waits for it.
        post = gate.posts.clone().try_acquire_owned().ok();
        Request::from_parts(parts, Body::from(bytes))
    } else {
        request
    };
    let deleting = request.method() == Method::DELETE;
    // The session manager learns whose a new session is from this.
    let mut response = super::sessions::PEER
        .scope(peer.ip(), next.run(request))
        .await;
    // rmcp answers a session's DELETE with 202; nothing is pending, and the
    // official Python client warns on anything but 200/204.
    if deleting && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    let (parts, body) = response.into_parts();
    // The permits live as long as the response streams (SSE included).
    let body = body.map_frame(move |frame| {
        let _held = (&client, &address, &post);
        frame
    });
    (Response::from_parts(parts, Body::new(body)), rpc)
}

/// The body under the cap and its JSON-RPC method, or the JSON-RPC error
/// that says what is wrong with it.
/// A POST's body: one message (and its method), or a batch.
enum Posted {
    One(Bytes, Option<String>),
    Batch(Vec<Value>),
}

/// The most a page form posts (a token, a job id).
const MAX_PAGE_BODY: usize = 16 * 1024;

/// The search page's requests: the whole body read first, within the
/// server's `--body-timeout-secs` and [`MAX_PAGE_BODY`], so a body
/// trickled a byte at a time (to `/login`, which needs no token) holds its
/// connection no longer than a slow MCP post may.
pub(crate) async fn bounded_page_body(
    State(gate): State<Arc<Gate>>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(
        gate.options.body_timeout,
        axum::body::to_bytes(body, MAX_PAGE_BODY),
    );
    match read.await {
        Ok(Ok(bytes)) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Ok(Err(_)) => (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the page's forms post at most {MAX_PAGE_BODY} bytes"),
        )
            .into_response(),
        Err(_) => (
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request body did not arrive within {} s (the server's --body-timeout-secs)",
                gate.options.body_timeout.as_secs()
            ),
        )
            .into_response(),
    }
}

async fn read_body(body: Body, max: usize, batches: bool) -> Result<Posted, Response> {
    let bytes = axum::body::to_bytes(body, max).await.map_err(|e| {
        let too_large = e
            .into_inner()
            .downcast_ref::<http_body_util::LengthLimitError>()
            .is_some();
        if too_large {
            rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                -32600,
                format!("the request body is over {max} bytes (the server's --max-body-bytes); send less text per call"),
            )
        } else {
            rpc_error(
                StatusCode::BAD_REQUEST,
                -32600,
                "the request body could not be read to its end".into(),
            )
        }
    })?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Array(messages)) if batches && !messages.is_empty() => {
            Ok(Posted::Batch(messages))
        }
        Ok(Value::Array(_)) => Err(rpc_error(
            StatusCode::BAD_REQUEST,
            -32600,
            "a JSON-RPC batch is not served: MCP revisions from 2025-06-18 on have no batches; \
             send each request in a POST of its own"
                .into(),
        )),
        Ok(v) => {
            let method = v.get("method").and_then(Value::as_str).map(str::to_string);
            Ok(Posted::One(bytes, method))
        }
        Err(e) => Err(rpc_error(
            StatusCode::BAD_REQUEST,
            -32700,
            format!("parse error: the request body is not JSON ({e})"),
        )),
    }
}
