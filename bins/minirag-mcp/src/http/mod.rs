//! `serve --http`: MCP over Streamable HTTP at `/mcp` for many clients at
//! once, each with its own session, all over one engine and one sync job.
//! Security model (README, HTTP mode): loopback by default; elsewhere only
//! with `--allow-remote` and a bearer token; `Host` and `Origin` checked
//! against allow-lists against DNS rebinding; TLS left to a reverse proxy.

mod batch;
mod connections;
mod gate;
mod options;
mod sessions;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::routing::get;
use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

pub(crate) use options::{Options, ServeArgs};

use crate::app::App;
use crate::server::Server;
use gate::{admit, Gate, DRAIN_PERMITS};

/// Serves until SIGTERM or SIGINT, then drains (see [`shutdown`]).
pub(crate) async fn serve(app: App, options: Options) -> Result<()> {
    let gate = Arc::new(Gate::new(options.clone()));
    let server = Server::new(app).with_log(gate.log);
    server.start_watching();
    let page = minirag_web::router(Arc::new(server.page_backend()), gate.page_guard()).layer(
        axum::middleware::from_fn_with_state(gate.clone(), gate::bounded_page_body),
    );
    let draining = server.clone();
    let stop = CancellationToken::new();

    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(options.session_idle);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(options.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(stop.child_token());
    let sessions =
        sessions::BoundedSessions::new(sessions, options.max_sessions, options.max_sessions_per_ip);
    let mcp = StreamableHttpService::new(move || Ok(server.clone()), sessions.into(), config);

    let connections = connections::Connections::new(options.connections);
    let router = Router::new()
        .route_service("/mcp", mcp)
        .route_layer(axum::middleware::from_fn_with_state(gate.clone(), admit))
        .route("/healthz", get(healthz))
        .merge(page)
        .layer(axum::middleware::from_fn_with_state(
            connections.clone(),
            connections::track,
        ));

    let listener = tokio::net::TcpListener::bind(options.bind)
        .await
        .with_context(|| format!("cannot listen on {}", options.bind))?;
    let local = listener.local_addr()?;
    // The first line on stderr: where clients connect (port 0 resolved).
    eprintln!(
        "{}",
        serde_json::json!({"event": "listening", "url": format!("http://{local}/mcp"), "page": format!("http://{local}/")})
    );
    if let Some(open) = options.page_opens {
        announce_page(&format!("http://{local}/"), open);
    }
    let drained = shutdown(gate, draining, stop, options.drain);
    // The bounds of connections::Bounded; nodelay is set on each stream
    // there (with Nagle on, each small answer waits for a delayed ACK).
    // The no-op tap gives the listener axum's `SocketAddr` connect info.
    let listener = axum::serve::ListenerExt::tap_io(
        connections::Bounded {
            listener,
            connections,
        },
        |_| {},
    );
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(drained)
    .await?;
    Ok(())
}

/// `ui`: the page's URL for the person, and a browser when one is present
/// (a desktop session); failing to open one is not an error.
fn announce_page(url: &str, open: bool) {
    println!("minirag: the search page is at {url}  (Ctrl-C stops it)");
    let desktop = std::env::var_os("DISPLAY").is_some()
        || std::env::var_os("WAYLAND_DISPLAY").is_some()
        || cfg!(target_os = "macos");
    if open && desktop {
        let opener = if cfg!(target_os = "macos") {
            "open"
        } else {
            "xdg-open"
        };
        let _ = std::process::Command::new(opener)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
}

/// Liveness only: no version, no roots, no counts.
async fn healthz() -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({"status": "ok"}))
}

/// Waits for SIGTERM or SIGINT, then: refuse new requests, let those in
/// flight finish (up to `drain`), stop a running sync between files (each
/// written file is durable), and close the sessions' streams. The listener
/// closes when this returns.
async fn shutdown(
    gate: Arc<Gate>,
    server: Server,
    stop: CancellationToken,
    drain: std::time::Duration,
) {
    wait_for_signal().await;
    gate.start_draining();
    let stopping = tokio::task::spawn_blocking(move || server.drain());
    let finished = gate.posts.acquire_many(DRAIN_PERMITS);
    let drained = tokio::time::timeout(drain, finished).await.is_ok();
    let _ = stopping.await;
    stop.cancel();
    eprintln!(
        "{}",
        serde_json::json!({"event": "shutdown", "drained": drained})
    );
}

async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
