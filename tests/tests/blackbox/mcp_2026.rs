//! MCP 2026-07-28: no `initialize` and no session. On the raw HTTP wire:
//! `server/discover`, `resultType`, cache hints, `_meta.serverInfo`, the
//! `Mcp-Method` / `Mcp-Name` checks, an unsupported version, -32602 for an
//! unknown resource, `subscriptions/listen` through a sync and a SIGTERM,
//! and the HTTP guards for requests without a session. Then rmcp's own
//! client at 2026-07-28 over stdio and HTTP drives every tool.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use minirag_blackbox::http_server::HttpServer;
use minirag_blackbox::mcp_client::{call_json, every_other_tool, transport, TOOLS};
use minirag_blackbox::modern::{body, call_tool, messages, post, VERSION};
use minirag_blackbox::{serve_page, Corpus};
use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(60);
const TOKEN: &str = "test-token-0123456789abcdef";

fn corpus() -> Corpus {
    Corpus::new(&[
        ("a.md", "# Alpha\n\nThe alpha service listens on port 8080."),
        (
            "b/b.md",
            "# Beta\n\nBeta stores invoices for the accounting team.",
        ),
    ])
}

/// The JSON-RPC error message of an answer ("" when it has none).
fn error_message(a: &minirag_blackbox::modern::Answer) -> &str {
    a.response["error"]["message"].as_str().unwrap_or_default()
}

fn server_info(result: &Value) -> &Value {
    &result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
}

#[tokio::test(flavor = "multi_thread")]
async fn every_answer_has_its_2026_fields_and_no_session() {
    let c = corpus();
    let server = HttpServer::start(&c.env, &c.root, &[]);
    let http = reqwest::Client::new();
    let url = &server.url;

    let a = post(&http, url, &body(1, "server/discover", json!({})), &[]).await;
    let r = &a.response["result"];
    assert_eq!(a.status, 200, "{a:?}");
    let versions = r["supportedVersions"].as_array().unwrap();
    for v in ["2024-11-05", "2025-06-18", "2025-11-25", VERSION] {
        assert!(versions.contains(&json!(v)), "{v} in {r}");
    }
    assert_eq!(server_info(r), "minirag-mcp", "{r}");
    assert_eq!(r["capabilities"]["resources"]["listChanged"], true, "{r}");

    // (method, params, ttlMs, cacheScope)
    for (id, method, params, ttl, scope) in [
        (2, "tools/list", json!({}), 3_600_000, "public"),
        (
            3,
            "resources/templates/list",
            json!({}),
            3_600_000,
            "public",
        ),
        (4, "resources/list", json!({}), 0, "private"),
    ] {
        let a = post(&http, url, &body(id, method, params), &[]).await;
        let r = &a.response["result"];
        assert_eq!(
            (a.status, a.session_header),
            (200, false),
            "{method}: {a:?}"
        );
        assert_eq!(r["resultType"], "complete", "{method}: {r}");
        assert_eq!(
            (r["ttlMs"].as_u64(), r["cacheScope"].as_str()),
            (Some(ttl), Some(scope)),
            "{method}: {r}"
        );
        assert_eq!(server_info(r), "minirag-mcp", "{method}: {r}");
    }
    let a = post(&http, url, &body(5, "tools/list", json!({})), &[]).await;
    let names: Vec<&str> = a.response["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, TOOLS, "a fixed order, by name");

    let a = post(
        &http,
        url,
        &body(6, "tools/call", json!({"name": "status", "arguments": {}})),
        &[],
    )
    .await;
    let r = &a.response["result"];
    assert_eq!(
        (r["resultType"].as_str(), r["isError"].as_bool()),
        (Some("complete"), Some(false)),
        "{r}"
    );
    assert_eq!(server_info(r), "minirag-mcp", "{r}");
    assert_eq!(
        r["structuredContent"]["roots"][0],
        json!(c.root.display().to_string()),
        "{r}"
    );

    // An unknown resource is invalid params at 2026-07-28.
    let a = post(
        &http,
        url,
        &body(
            7,
            "resources/read",
            json!({"uri": "minirag://doc/%2Fetc%2Fpasswd"}),
        ),
        &[],
    )
    .await;
    assert_eq!(a.response["error"]["code"], -32602, "{a:?}");
    assert!(error_message(&a).contains("not found"), "{a:?}");

    // Headers that contradict the body, or are missing: HeaderMismatch (-32020).
    let list = body(8, "tools/list", json!({}));
    let call = body(9, "tools/call", json!({"name": "status", "arguments": {}}));
    for (request, extra, words) in [
        (&list, ("mcp-method", "tools/call"), "does not match"),
        (&list, ("mcp-method", ""), "missing required Mcp-Method"),
        (&call, ("mcp-name", "query_documents"), "does not match"),
        (&call, ("mcp-name", ""), "missing required Mcp-Name"),
    ] {
        let a = post(&http, url, request, &[extra]).await;
        assert_eq!(
            (a.status, a.response["error"]["code"].as_i64()),
            (400, Some(-32020)),
            "{a:?}"
        );
        assert!(error_message(&a).contains(words), "{a:?}");
    }

    // A version this server does not serve: UnsupportedProtocolVersion, with the list.
    let mut future = body(10, "tools/list", json!({}));
    future["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2027-01-01");
    let a = post(
        &http,
        url,
        &future,
        &[("mcp-protocol-version", "2027-01-01")],
    )
    .await;
    assert_eq!(a.response["error"]["code"], -32022, "{a:?}");
    assert!(
        a.response["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!(VERSION)),
        "{a:?}"
    );

    // ping is gone from 2026-07-28.
    let a = post(&http, url, &body(11, "ping", json!({})), &[]).await;
    assert_eq!(a.response["error"]["code"], -32601, "{a:?}");
}

/// An SSE response read as it arrives; `seen` keeps every message so far.
struct Sse {
    response: reqwest::Response,
    text: String,
}

impl Sse {
    /// Reads until `done` holds for all the messages so far; returns them.
    async fn until(&mut self, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        // Keep-alive comments arrive while nothing else does: the limit is
        // on the whole wait, not per chunk.
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let seen = messages(&self.text);
            if done(&seen) {
                return seen;
            }
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Ok(Ok(Some(bytes))) => self.text.push_str(&String::from_utf8_lossy(&bytes)),
                other => panic!(
                    "the stream ended or stalled ({other:?}) after: {}",
                    self.text
                ),
            }
        }
    }
}

fn listen_body(id: u64) -> Value {
    body(
        id,
        "subscriptions/listen",
        json!({"notifications": {"resourcesListChanged": true, "toolsListChanged": true}}),
    )
}

async fn open_listen(http: &reqwest::Client, url: &str, id: u64, extra: &[(&str, &str)]) -> Sse {
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSION)
        .header("mcp-method", "subscriptions/listen");
    for (k, v) in extra {
        request = request.header(*k, *v);
    }
    let response = request
        .body(listen_body(id).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "listen");
    Sse {
        response,
        text: String::new(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_listener_hears_the_sync_and_sigterm_ends_its_stream() {
    let c = corpus();
    let mut server = HttpServer::start(&c.env, &c.root, &[]);
    let http = reqwest::Client::new();
    let mut listen = open_listen(&http, &server.url, 1, &[]).await;
    // The acknowledgment names what was accepted: the resource list only.
    let ack = listen.until(|m| !m.is_empty()).await;
    assert_eq!(
        ack[0]["method"], "notifications/subscriptions/acknowledged",
        "{ack:?}"
    );
    assert_eq!(
        ack[0]["params"]["notifications"],
        json!({"resourcesListChanged": true}),
        "{ack:?}"
    );

    // A sync with a progress token: progress on its own response stream.
    let mut sync = body(
        2,
        "tools/call",
        json!({"name": "sync_start", "arguments": {}}),
    );
    sync["params"]["_meta"]["progressToken"] = json!("p-1");
    let a = post(&http, &server.url, &sync, &[]).await;
    assert_eq!(
        a.response["result"]["structuredContent"]["state"], "succeeded",
        "{a:?}"
    );
    let progress: Vec<&Value> = a
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert!(
        !progress.is_empty()
            && progress
                .iter()
                .all(|n| n["params"]["progressToken"] == "p-1"),
        "{a:?}"
    );
    assert!(
        a.notifications
            .iter()
            .all(|n| n["method"] != "notifications/message"),
        "no log messages without a log level: {a:?}"
    );

    let heard = listen.until(|m| m.len() >= 2).await;
    assert_eq!(
        heard[1]["method"], "notifications/resources/list_changed",
        "{heard:?}"
    );
    assert_eq!(
        heard[1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1,
        "{heard:?}"
    );

    // A sync that changes nothing says nothing; an ingest does.
    call_tool(&http, &server.url, 3, "sync_start", json!({})).await;
    call_tool(
        &http,
        &server.url,
        4,
        "ingest_data",
        json!({"source": "memo", "data": "Herons fish at dawn."}),
    )
    .await;
    let heard = listen.until(|m| m.len() >= 3).await;
    assert_eq!(
        heard[2]["method"], "notifications/resources/list_changed",
        "{heard:?}"
    );

    // SIGTERM: the stream ends with the listen request's final result.
    server.signal(libc::SIGTERM);
    let end = listen.until(|m| m.iter().any(|v| v["id"] == 1)).await;
    let last = end.iter().find(|v| v["id"] == 1).unwrap();
    assert!(last.get("result").is_some(), "{last}");
    assert!(server.child.wait().unwrap().success());
    let shutdown = server
        .log_line(WAIT, |v| v["event"] == "shutdown")
        .expect("a shutdown line");
    assert_eq!(shutdown["drained"], true, "{shutdown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_without_a_session_meet_every_guard() {
    let c = corpus();
    let mut env = c.env.clone();
    env.push(("MINIRAG_TOKEN".into(), TOKEN.into()));
    let server = HttpServer::start(
        &env,
        &c.root,
        &["--max-body-bytes", "4096", "--max-inflight-per-client", "1"],
    );
    let http = reqwest::Client::new();
    let bearer = format!("Bearer {TOKEN}");
    let auth = ("authorization", bearer.as_str());
    let list = body(1, "tools/list", json!({}));

    assert_eq!(
        post(&http, &server.url, &list, &[]).await.status,
        401,
        "no token"
    );
    for (header, want) in [
        (("origin", "http://evil.example"), 403),
        (("host", "evil.example:80"), 403),
        (("origin", "http://localhost:3000"), 200),
    ] {
        let a = post(&http, &server.url, &list, &[auth, header]).await;
        assert_eq!(a.status, want, "{header:?}: {a:?}");
    }
    let big = body(
        2,
        "tools/call",
        json!({"name": "ingest_data", "arguments": {"source": "x", "data": "a".repeat(10_000)}}),
    );
    let a = post(&http, &server.url, &big, &[auth]).await;
    assert_eq!(a.status, 413, "{a:?}");

    // With no session, the client is its address: an open listen stream
    // holds its one slot, and the next request is refused by name.
    let mut listen = open_listen(&http, &server.url, 3, &[auth]).await;
    listen.until(|m| !m.is_empty()).await;
    let a = post(&http, &server.url, &list, &[auth]).await;
    assert_eq!(a.status, 429, "{a:?}");
    assert!(
        error_message(&a).contains("--max-inflight-per-client"),
        "{a:?}"
    );
    drop(listen);
}

/// Counts the progress notifications a client hears.
#[derive(Clone, Default)]
struct Progress(Arc<AtomicUsize>);

impl rmcp::ClientHandler for Progress {
    async fn on_progress(
        &self,
        _params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// The whole round at 2026-07-28 through rmcp's client: every tool, its
/// structuredContent against its outputSchema, listen through a sync with
/// progress, resources.
async fn drive_every_tool(
    client: rmcp::service::RunningService<rmcp::RoleClient, Progress>,
    c: &Corpus,
    heard: Arc<AtomicUsize>,
) {
    let info = client.peer_info().expect("discovered");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, TOOLS);
    let validators: std::collections::HashMap<String, jsonschema::Validator> = tools
        .iter()
        .map(|t| {
            let schema = Value::Object(t.output_schema.as_deref().expect("outputSchema").clone());
            (
                t.name.to_string(),
                jsonschema::validator_for(&schema).unwrap(),
            )
        })
        .collect();
    let check = |tool: &str, v: &Value| {
        let errors: Vec<String> = validators[tool]
            .iter_errors(v)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{tool}: {errors:?} in {v}");
    };

    let mut sub = client
        .listen(
            SubscriptionFilter::builder()
                .resources_list_changed()
                .build(),
        )
        .await
        .expect("listen is acknowledged");
    assert_eq!(sub.acknowledged().resources_list_changed, Some(true));
    let done = minirag_blackbox::mcp_client::sync_with_progress_token(&client).await;
    let done = done.await_response().await.expect("the sync answers");
    let rmcp::model::ServerResult::CallToolResult(done) = done else {
        panic!("{done:?}")
    };
    let job = done.structured_content.clone().expect("structured");
    check("sync_start", &job);
    assert_eq!(
        (job["state"].as_str(), job["counts"]["ingested"].as_u64()),
        (Some("succeeded"), Some(2)),
        "{job}"
    );
    assert!(
        heard.load(Ordering::SeqCst) > 0,
        "progress on the sync's own stream"
    );
    let event = tokio::time::timeout(WAIT, sub.next())
        .await
        .expect("heard within a minute")
        .unwrap();
    assert!(
        matches!(
            event,
            Some(ServerNotification::ResourceListChangedNotification(_))
        ),
        "{event:?}"
    );

    let (page, _) = serve_page(
        "<html><head><title>Kites</title></head><body><p>Kites need steady wind.</p></body></html>",
    );
    for (tool, args) in every_other_tool(&c.path("a.md"), &page, &job) {
        let v = call_json(&client, tool, args).await;
        check(tool, &v);
    }
    let resources = client.list_all_resources().await.unwrap();
    assert!(
        resources.iter().any(|r| r.uri.ends_with("%2Fa.md")),
        "{resources:?}"
    );
    let missing = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "minirag://doc/%2Fetc%2Fpasswd",
        ))
        .await
        .unwrap_err();
    assert!(
        missing.to_string().contains("-32602") || missing.to_string().contains("not found"),
        "{missing}"
    );
    sub.cancel().await.ok();
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn rmcp_client_at_2026_07_28_over_stdio() {
    let c = corpus();
    let heard = Progress::default();
    let count = heard.0.clone();
    let client = heard
        .serve_with_lifecycle(transport(&c, &[("ALLOW_PRIVATE_URLS", "1")]), modern())
        .await
        .expect("discover over stdio");
    drive_every_tool(client, &c, count).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rmcp_client_at_2026_07_28_over_http() {
    let c = corpus();
    let mut env = c.env.clone();
    env.push(("ALLOW_PRIVATE_URLS".into(), "1".into()));
    let server = HttpServer::start(&env, &c.root, &[]);
    let config = StreamableHttpClientTransportConfig::with_uri(server.url.clone());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let heard = Progress::default();
    let count = heard.0.clone();
    let client = heard
        .serve_with_lifecycle(transport, modern())
        .await
        .expect("discover over HTTP");
    drive_every_tool(client, &c, count).await;
}
