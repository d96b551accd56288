//! `serve --http`: the real binary over MCP's Streamable HTTP transport, on
//! loopback. rmcp's client drives every tool; raw requests check what a
//! client library would never send (wrong tokens, foreign Host and Origin
//! headers, oversized and malformed bodies); kills and SIGTERM leave an
//! index that reopens.

use std::time::Duration;

use minirag_blackbox::http_server::HttpServer;
use minirag_blackbox::mcp_client::{
    call, call_json, connect_http, every_other_tool, finished_job, note, sync_when_free,
    sync_with_progress_token, FirstProgress,
};
use minirag_blackbox::{serve_page, Corpus};
use serde_json::{json, Value};

const TOKEN: &str = "test-token-0123456789abcdef";
const LOG_WAIT: Duration = Duration::from_secs(30);

fn corpus() -> Corpus {
    Corpus::new(&[
        ("a.md", "# Alpha\n\nThe alpha service listens on port 8080.\n\n## Limits\n\nAt most 64 connections."),
        ("b/b.md", "# Beta\n\nBeta stores invoices for the accounting team."),
    ])
}

fn with_token(c: &Corpus) -> Vec<(String, String)> {
    let mut env = c.env.clone();
    env.push(("MINIRAG_TOKEN".into(), TOKEN.into()));
    env.push(("ALLOW_PRIVATE_URLS".into(), "1".into()));
    env
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// A raw POST to `/mcp`; (status, body).
async fn post(server: &HttpServer, body: String, headers: &[(&str, &str)]) -> (u16, String) {
    let mut request = reqwest::Client::new()
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// A session's open event stream (GET), checked to have opened.
async fn event_stream(server: &HttpServer, session: &str) -> reqwest::Response {
    let stream = reqwest::Client::new()
        .get(&server.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status().as_u16(), 200);
    stream
}

/// A raw `initialize`, read to its end; the session id it opened.
async fn initialize(server: &HttpServer) -> String {
    initialize_at(server, "2025-06-18").await.0
}

/// A raw `initialize` asking for `revision`; the session id and the answer.
async fn initialize_at(server: &HttpServer, revision: &str) -> (String, String) {
    let init = reqwest::Client::new()
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INITIALIZE.replace("2025-06-18", revision))
        .send()
        .await
        .unwrap();
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    (session, init.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn rmcp_client_drives_every_tool_over_http() {
    let c = corpus();
    let server = HttpServer::start(&with_token(&c), &c.root, &[]);
    let (page, _) = serve_page(
        "<html><head><title>Kites</title></head><body><p>Kites need steady wind.</p></body></html>",
    );
    let client = connect_http((), &server.url, Some(TOKEN)).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 11, "{tools:?}");

    let job = call_json(&client, "sync_start", json!({})).await;
    let done = finished_job(&client, &job).await;
    assert_eq!(done["state"], "succeeded", "{done}");
    assert_eq!(done["counts"]["ingested"], 2, "{done}");
    let q = call_json(
        &client,
        "query_documents",
        json!({"query": "invoices accounting"}),
    )
    .await;
    assert_eq!(q["results"][0]["source"], c.path("b/b.md"), "{q}");
    for (tool, args) in every_other_tool(&c.path("a.md"), &page, &job) {
        call_json(&client, tool, args).await;
    }

    // One log line per tool call: tool, duration, outcome; no query text.
    let line = server
        .log_line(LOG_WAIT, |v| v["tool"] == "query_documents")
        .expect("a log line for the query");
    assert_eq!(line["outcome"], "ok", "{line}");
    assert!(line["ms"].as_f64().is_some(), "{line}");
    assert!(line.get("query").is_none(), "query text leaked: {line}");

    // A query over the length cap is refused by name, and the server goes on.
    let (err, text) = call(
        &client,
        "query_documents",
        json!({"query": "x".repeat(5000)}),
    )
    .await;
    assert!(err && text.contains("too long"), "{text}");
    let line = server
        .log_line(LOG_WAIT, |v| {
            v["event"] == "tool" && v["outcome"] == "tool_error"
        })
        .expect("the refused query is logged");
    assert_eq!(line["tool"], "query_documents", "{line}");
    call_json(&client, "status", json!({})).await;
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_are_independent_and_share_one_sync() {
    let c = corpus();
    let server = HttpServer::start(&with_token(&c), &c.root, &["--log-queries"]);
    let one = connect_http((), &server.url, Some(TOKEN)).await;
    let two = connect_http((), &server.url, Some(TOKEN)).await;
    let job = call_json(&one, "sync_start", json!({})).await;
    // The other session sees the same job: one sync per index.
    let seen = finished_job(&two, &job).await;
    assert_eq!(seen["state"], "succeeded", "{seen}");
    let (a, b) = tokio::join!(
        call_json(&one, "query_documents", json!({"query": "alpha port"})),
        call_json(&two, "query_documents", json!({"query": "invoices"})),
    );
    assert_eq!(a["results"][0]["source"], c.path("a.md"));
    assert_eq!(b["results"][0]["source"], c.path("b/b.md"));
    // With --log-queries the text is logged.
    let line = server
        .log_line(LOG_WAIT, |v| v["query"] == "invoices")
        .expect("the query text is logged when asked");
    assert_eq!(line["tool"], "query_documents");

    // Another process's sync holds the index: a session's sync says so.
    let held = c.hold_sync_lock();
    let (err, text) = call(&one, "sync_start", json!({})).await;
    assert!(err && text.contains("4242"), "{text}");
    drop(held);
    one.cancel().await.unwrap();
    two.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn refusals_name_nothing_and_the_server_keeps_serving() {
    let c = corpus();
    let server = HttpServer::start(&with_token(&c), &c.root, &["--max-body-bytes", "4096"]);
    let bearer = format!("Bearer {TOKEN}");
    let auth = ("authorization", bearer.as_str());

    let (status, body) = post(&server, INITIALIZE.into(), &[]).await;
    assert_eq!((status, body.as_str()), (401, ""), "missing token");
    let wrong = format!("Bearer {}x", &TOKEN[..TOKEN.len() - 1]);
    let (status, body) = post(&server, INITIALIZE.into(), &[("authorization", &wrong)]).await;
    assert_eq!((status, body.as_str()), (401, ""), "wrong token");
    let (status, _) = post(&server, INITIALIZE.into(), &[("authorization", TOKEN)]).await;
    assert_eq!(status, 401, "a token without the Bearer scheme");
    // The scheme's name is case-insensitive.
    let lower = format!("bearer {TOKEN}");
    let (status, _) = post(&server, INITIALIZE.into(), &[("authorization", &lower)]).await;
    assert_eq!(status, 200, "a lower-case scheme");

    for (header, want, why) in [
        (
            ("origin", "http://evil.example"),
            403,
            "a foreign Origin (a web page driving a local server)",
        ),
        (
            ("host", "evil.example:80"),
            403,
            "a foreign Host (DNS rebinding)",
        ),
        (
            ("origin", "http://localhost:3000"),
            200,
            "a loopback Origin is allowed",
        ),
    ] {
        let (status, _) = post(&server, INITIALIZE.into(), &[auth, header]).await;
        assert_eq!(status, want, "{why}");
    }

    let big = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"ingest_data","arguments":{{"source":"x","data":"{}"}}}}}}"#,
        "a".repeat(10_000)
    );
    let (status, body) = post(&server, big, &[auth]).await;
    let v: Value = serde_json::from_str(&body).expect("a JSON-RPC error body");
    assert_eq!(status, 413);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--max-body-bytes"),
        "{v}"
    );
    let (status, body) = post(&server, "{not json".into(), &[auth]).await;
    let v: Value = serde_json::from_str(&body).expect("a JSON-RPC error body");
    assert_eq!(
        (status, v["error"]["code"].as_i64()),
        (400, Some(-32700)),
        "{v}"
    );
    // A batch: 400 with the reason, not an unexplained 415.
    let (status, body) = post(
        &server,
        r#"[{"jsonrpc":"2.0","id":5,"method":"tools/list"}]"#.into(),
        &[auth],
    )
    .await;
    let v: Value = serde_json::from_str(&body).expect("a JSON-RPC error body");
    assert_eq!(
        (status, v["error"]["code"].as_i64()),
        (400, Some(-32600)),
        "{v}"
    );
    assert!(
        v["error"]["message"].as_str().unwrap().contains("batch"),
        "{v}"
    );

    // Liveness needs no token and says nothing else.
    let health = reqwest::get(format!("{}/healthz", server.base()))
        .await
        .unwrap();
    assert_eq!(health.status().as_u16(), 200);
    assert_eq!(health.text().await.unwrap(), r#"{"status":"ok"}"#);

    // Still serving.
    let client = connect_http((), &server.url, Some(TOKEN)).await;
    call_json(&client, "status", json!({})).await;
    client.cancel().await.unwrap();
    let refused = server
        .log_line(LOG_WAIT, |v| v["status"] == 401)
        .expect("refusals are logged");
    assert_eq!(refused["outcome"], "refused", "{refused}");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_client_cannot_hold_more_than_its_share() {
    let c = corpus();
    let server = HttpServer::start(&c.env, &c.root, &["--max-inflight-per-client", "1"]);
    let session = initialize(&server).await;
    let (status, _) = post(
        &server,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(),
        &[("mcp-session-id", &session)],
    )
    .await;
    assert_eq!(status, 202);
    // The session's event stream stays open, and holds the client's one slot.
    let stream = event_stream(&server, &session).await;
    let (status, body) = post(
        &server,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#.into(),
        &[("mcp-session-id", &session)],
    )
    .await;
    let v: Value = serde_json::from_str(&body).expect("a JSON-RPC error body");
    assert_eq!(status, 429, "{body}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--max-inflight-per-client"),
        "{v}"
    );
    drop(stream);
}

#[tokio::test(flavor = "multi_thread")]
async fn new_sessions_cannot_get_around_the_cap_of_an_address() {
    let c = corpus();
    let server = HttpServer::start(&c.env, &c.root, &["--max-inflight-per-ip", "2"]);
    let mut streams = Vec::new();
    for _ in 0..2 {
        let session = initialize(&server).await;
        post(
            &server,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(),
            &[("mcp-session-id", &session)],
        )
        .await;
        streams.push(event_stream(&server, &session).await);
    }
    // Two open streams from two sessions hold the address's two slots.
    let (status, body) = post(&server, INITIALIZE.into(), &[]).await;
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("--max-inflight-per-ip"), "{body}");
    drop(streams);
}

#[test]
fn a_remote_address_needs_the_flag_and_a_token() {
    let c = corpus();
    let out = c.cli(&["serve", "--http", "0.0.0.0:0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("not a loopback address") && err.contains("--allow-remote"),
        "{err}"
    );
    let out = c.cli(&["serve", "--http", "0.0.0.0:0", "--allow-remote"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("MINIRAG_TOKEN") && err.contains("--token-file"),
        "{err}"
    );
    let out = c.cli(&["serve", "--http", "localhost"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("IP:PORT"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_session_expires() {
    let c = corpus();
    let server = HttpServer::start(&c.env, &c.root, &["--session-idle-secs", "1"]);
    let session = initialize(&server).await;
    // The feature under test is a timeout: waiting it out is the test. Any
    // request in between would count as activity.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (status, _) = post(
        &server,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#.into(),
        &[("mcp-session-id", &session)],
    )
    .await;
    assert_eq!(status, 404, "the idle session is gone");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sync_is_cancelled_per_request_over_http() {
    let c = Corpus::generated(30, note);
    let server = HttpServer::start(&c.env, &c.root, &[]);
    let woke = std::sync::Arc::new(tokio::sync::Notify::new());
    let client = connect_http(FirstProgress(woke.clone()), &server.url, None).await;
    let handle = sync_with_progress_token(&client).await;
    woke.notified().await;
    handle.cancel(Some("stop".into())).await.unwrap();
    // A new sync may start once the cancelled one let go; it finds what the
    // cancelled one kept.
    let job = sync_when_free(&client).await;
    let status = finished_job(&client, &job).await;
    let ingested = status["counts"]["ingested"].as_u64().unwrap();
    assert!(ingested < 30, "the cancelled sync kept nothing: {status}");
    client.cancel().await.unwrap();
}

type SyncingClient = (
    rmcp::service::RunningService<rmcp::RoleClient, FirstProgress>,
    rmcp::service::RequestHandle<rmcp::RoleClient>,
);

/// A client's sync (run in its call, with progress) that has written at
/// least one file: the first progress report comes after the first file.
async fn sync_under_way(server: &HttpServer) -> SyncingClient {
    let woke = std::sync::Arc::new(tokio::sync::Notify::new());
    let client = connect_http(FirstProgress(woke.clone()), &server.url, None).await;
    let handle = sync_with_progress_token(&client).await;
    woke.notified().await;
    (client, handle)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kill_during_a_clients_sync_leaves_an_index_that_reopens() {
    let c = Corpus::generated(40, note);
    let mut server = HttpServer::start(&c.env, &c.root, &[]);
    let _syncing = sync_under_way(&server).await;
    server.signal(libc::SIGKILL);
    server.child.wait().unwrap();

    let (code, status, err) = c.json(&["status"]);
    assert_eq!(code, 0, "{err}");
    assert!(status["chunkCount"].as_u64() >= Some(1), "{status}");
    let (code, q, err) = c.json(&["query", "shipment pallets"]);
    assert_eq!(code, 0, "{err}");
    assert!(!q["results"].as_array().unwrap().is_empty(), "{q}");
    let (code, done, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let counts = &done["counts"];
    let all = ["ingested", "skipped", "reembedded"]
        .iter()
        .map(|k| counts[k].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(all, 40, "{done}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_drains_and_keeps_every_acknowledged_write() {
    let c = Corpus::generated(40, note);
    let mut server = HttpServer::start(&c.env, &c.root, &[]);
    let client = connect_http((), &server.url, None).await;
    call_json(
        &client,
        "ingest_data",
        json!({"source": "memo-7", "data": "The heron counts fish at dawn."}),
    )
    .await;
    let (_syncing, handle) = sync_under_way(&server).await;
    server.signal(libc::SIGTERM);
    // The sync in flight is stopped between files and answered.
    let answer = handle.await_response().await;
    assert!(
        answer.is_ok(),
        "the in-flight sync got no answer: {answer:?}"
    );
    let exit = server.child.wait().unwrap();
    assert!(exit.success(), "serve --http after SIGTERM: {exit}");
    let shutdown = server
        .log_line(LOG_WAIT, |v| v["event"] == "shutdown")
        .expect("a shutdown line");
    assert_eq!(shutdown["drained"], true, "{shutdown}");

    let (code, q, err) = c.json(&["query", "heron fish dawn"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(q["results"][0]["source"], "memo-7", "{q}");
    let (code, done, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let counts = &done["counts"];
    let all = ["ingested", "skipped", "reembedded"]
        .iter()
        .map(|k| counts[k].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(all, 40, "{done}");
}

/// `GET /healthz` on a fresh connection; the status, or `None` when the
/// server closed it or sent nothing within 10 s.
fn healthz(base: &str) -> Option<u16> {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).ok()?;
    answer.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn idle_connections_cannot_lock_out_healthz() {
    let c = corpus();
    // 200 files in all: 250 idle sockets would take every one of them.
    let server = HttpServer::start_with_file_limit(&c.env, &c.root, &[], 200);
    let base = server.base();
    let addr = base.trim_start_matches("http://").to_string();
    let idle: Vec<std::net::TcpStream> = (0..250)
        .filter_map(|_| std::net::TcpStream::connect(&addr).ok())
        .collect();
    assert_eq!(idle.len(), 250, "the backlog takes them all");
    for round in 0..3 {
        assert_eq!(healthz(&base), Some(200), "round {round}");
    }
    drop(idle);
}

#[test]
fn a_slow_request_head_is_cut_and_an_idle_connection_closed() {
    use std::io::{Read, Write};
    let c = corpus();
    let server = HttpServer::start(
        &c.env,
        &c.root,
        &["--header-timeout-secs", "1", "--idle-timeout-secs", "2"],
    );
    let base = server.base();
    let addr = base.trim_start_matches("http://").to_string();
    let closed_within = |s: &mut std::net::TcpStream, limit: u64| {
        s.set_read_timeout(Some(Duration::from_secs(limit)))
            .unwrap();
        let started = std::time::Instant::now();
        let mut byte = [0u8; 1];
        let read = s.read(&mut byte);
        (
            matches!(read, Ok(0) | Err(_)) && started.elapsed() < Duration::from_secs(limit),
            read,
        )
    };
    // Half a request head, then silence: closed after the header timeout.
    let mut slow = std::net::TcpStream::connect(&addr).unwrap();
    write!(slow, "GET /healthz HTTP/1.1\r\nHost: {addr}\r\n").unwrap();
    let (closed, read) = closed_within(&mut slow, 8);
    assert!(closed, "a half head was kept open: {read:?}");
    // A whole request on a keep-alive connection, then nothing: answered,
    // then closed after the idle timeout.
    let mut idle = std::net::TcpStream::connect(&addr).unwrap();
    write!(idle, "GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut head = [0u8; 12];
    idle.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    let mut rest = vec![0u8; 4096];
    let _ = idle.read(&mut rest);
    let (closed, read) = closed_within(&mut idle, 10);
    assert!(closed, "an idle keep-alive connection was kept: {read:?}");
    assert_eq!(healthz(&base), Some(200));
}

/// The server's resident memory, from /proc.
fn rss_kb(server: &HttpServer) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.child.id())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_initialize_flood_is_bounded_by_the_session_cap() {
    let c = corpus();
    let server = HttpServer::start(&c.env, &c.root, &["--max-sessions-per-ip", "16"]);
    let first = initialize(&server).await;
    for _ in 0..499 {
        initialize(&server).await;
    }
    let after_500 = rss_kb(&server);
    let mut last = String::new();
    for _ in 0..2_500 {
        last = initialize(&server).await;
    }
    let after_3000 = rss_kb(&server);
    println!("RSS after 500 sessions {after_500} kB, after 3,000 {after_3000} kB");
    // Unbounded, 2,500 more sessions took about 135 MB.
    assert!(
        after_3000 < after_500 + 20 * 1024,
        "{after_500} kB -> {after_3000} kB"
    );
    let list = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
    let (status, _) = post(&server, list.into(), &[("mcp-session-id", &first)]).await;
    assert_eq!(status, 404, "the session used longest ago was closed");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    post(&server, initialized.into(), &[("mcp-session-id", &last)]).await;
    let (status, body) = post(&server, list.into(), &[("mcp-session-id", &last)]).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_is_answered_on_2025_03_26_and_refused_after_it() {
    let c = corpus();
    let server = HttpServer::start(&c.env, &c.root, &[]);
    let (session, text) = initialize_at(&server, "2025-03-26").await;
    assert!(
        text.contains("\"protocolVersion\":\"2025-03-26\""),
        "{text}"
    );
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    post(&server, initialized.into(), &[("mcp-session-id", &session)]).await;
    // 2025-03-26 sends no MCP-Protocol-Version header.
    let batch = r#"[{"jsonrpc":"2.0","id":5,"method":"tools/list"},
                    {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}},
                    {"jsonrpc":"2.0","id":6,"method":"ping"}]"#;
    let (status, body) = post(&server, batch.into(), &[("mcp-session-id", &session)]).await;
    assert_eq!(status, 200, "{body}");
    let answers: Value = serde_json::from_str(&body).expect("a JSON array");
    let ids: Vec<i64> = answers
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["id"].as_i64())
        .collect();
    assert_eq!(ids, [5, 6], "{answers}");
    assert!(answers[0]["result"]["tools"].is_array(), "{answers}");
    // The same session claiming a later revision: refused with the reason.
    let (status, body) = post(
        &server,
        batch.into(),
        &[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", "2025-06-18"),
        ],
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("batch"), "{body}");
}
