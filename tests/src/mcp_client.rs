//! rmcp client helpers shared by the stdio and HTTP tests.

use rmcp::model::CallToolRequestParams;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::ServiceExt;
use serde_json::Value;

/// An MCP client session over stdio.
pub type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// The real binary as a child process speaking MCP on stdio, with the
/// corpus' environment plus `extra`.
pub fn transport(c: &crate::Corpus, extra: &[(&str, &str)]) -> TokioChildProcess {
    let env: Vec<(String, String)> = c
        .env
        .iter()
        .cloned()
        .chain(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())))
        .collect();
    let root = c.root.clone();
    TokioChildProcess::new(
        tokio::process::Command::new(crate::binary()).configure(|cmd| {
            cmd.env_clear().current_dir(&root);
            for (k, v) in &env {
                cmd.env(k, v);
            }
        }),
    )
    .unwrap()
}

/// An MCP client of a fresh server over stdio.
pub async fn connect(c: &crate::Corpus, extra: &[(&str, &str)]) -> Client {
    ().serve(transport(c, extra)).await.expect("initialize")
}

/// Connects to `serve --http` at `url`, with a bearer token if given.
pub async fn connect_http<H: rmcp::ClientHandler>(
    handler: H,
    url: &str,
    token: Option<&str>,
) -> rmcp::service::RunningService<rmcp::RoleClient, H> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(t) = token {
        config = config.auth_header(t.to_string());
    }
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    handler
        .serve(transport)
        .await
        .expect("initialize over HTTP")
}

/// (is_error, text)
pub async fn call(
    client: &rmcp::Peer<rmcp::RoleClient>,
    tool: &str,
    args: Value,
) -> (bool, String) {
    let params = CallToolRequestParams::new(tool.to_string())
        .with_arguments(args.as_object().cloned().unwrap_or_default());
    match client.call_tool(params).await {
        Ok(r) => {
            let text = r
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect::<Vec<_>>()
                .join("");
            (r.is_error.unwrap_or(false), text)
        }
        Err(e) => (true, e.to_string()),
    }
}

/// Calls `tool` with `args` and parses its text answer as JSON, asserting it is no error.
pub async fn call_json(client: &rmcp::Peer<rmcp::RoleClient>, tool: &str, args: Value) -> Value {
    let (err, text) = call(client, tool, args).await;
    assert!(!err, "{tool} failed: {text}");
    serde_json::from_str(&text).unwrap()
}

/// Polls `sync_status` for a job `sync_start` returned until it ends.
pub async fn finished_job(client: &rmcp::Peer<rmcp::RoleClient>, job: &Value) -> Value {
    let id = job["jobId"].as_str().unwrap().to_string();
    loop {
        let s = call_json(client, "sync_status", serde_json::json!({"jobId": id})).await;
        if s["state"] == "succeeded" || s["state"] == "failed" {
            return s;
        }
        tokio::task::yield_now().await;
    }
}

/// Starts a background sync as soon as the index's sync lock is free (a
/// cancelled sync lets go of it on its own thread).
pub async fn sync_when_free(client: &rmcp::Peer<rmcp::RoleClient>) -> Value {
    loop {
        let (err, text) = call(client, "sync_start", serde_json::json!({})).await;
        if !err {
            return serde_json::from_str(&text).unwrap();
        }
        assert!(text.contains("already running"), "{text}");
        tokio::task::yield_now().await;
    }
}

/// Sends `sync_start` as a request that carries a progress token (rmcp adds
/// one to every cancellable request), so the server runs it in the call.
pub async fn sync_with_progress_token(
    client: &rmcp::Peer<rmcp::RoleClient>,
) -> rmcp::service::RequestHandle<rmcp::RoleClient> {
    use rmcp::model::{ClientRequest, Request};
    let request =
        ClientRequest::CallToolRequest(Request::new(CallToolRequestParams::new("sync_start")));
    client
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .unwrap()
}

/// A client that wakes the test at the first progress notification.
#[derive(Clone)]
pub struct FirstProgress(pub std::sync::Arc<tokio::sync::Notify>);

impl rmcp::ClientHandler for FirstProgress {
    async fn on_progress(
        &self,
        _params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.notify_one();
    }
}

/// Note `i` of a few hundred words: `Corpus::generated(n, note)` gives
/// enough files that a sync is still running when a test acts on its first
/// progress report.
pub fn note(i: usize) -> (String, String) {
    let para = format!("Paragraph about shipment {i} and the pallets it carried. ");
    (
        format!("f{i:02}.md"),
        format!("# Note {i}\n\n{}", para.repeat(16)),
    )
}

/// The 11 tools, by name: the order `tools/list` gives.
pub const TOOLS: [&str; 11] = [
    "delete_file",
    "ingest_data",
    "ingest_file",
    "ingest_url",
    "list_files",
    "query_documents",
    "read_chunk_neighbors",
    "read_file",
    "status",
    "sync_start",
    "sync_status",
];

/// One successful call of every tool but `sync_start`, in an order that
/// works: `file` is an indexed file, `page` a loopback page for
/// `ingest_url`, `job` an answer of `sync_start`.
pub fn every_other_tool(file: &str, page: &str, job: &Value) -> Vec<(&'static str, Value)> {
    use serde_json::json;
    vec![
        ("status", json!({})),
        ("list_files", json!({})),
        ("query_documents", json!({"query": "invoices accounting"})),
        ("read_file", json!({"filePath": file})),
        (
            "read_chunk_neighbors",
            json!({"filePath": file, "chunkIndex": 0}),
        ),
        ("ingest_file", json!({"filePath": file})),
        (
            "ingest_data",
            json!({"source": "note-1", "data": "Pelicans nest on the pier."}),
        ),
        ("delete_file", json!({"source": "note-1"})),
        ("ingest_url", json!({"url": page})),
        ("sync_status", json!({"jobId": job["jobId"]})),
    ]
}

/// Counts the server's `notifications/resources/list_changed`, on a session
/// that began with `initialize` at `version` (rmcp's default when `None`).
pub struct ListChanged {
    /// Moves by one for each notification.
    pub heard: tokio::sync::watch::Sender<u64>,
    /// The revision the session asks for.
    pub version: Option<rmcp::model::ProtocolVersion>,
}

impl rmcp::ClientHandler for ListChanged {
    async fn on_resource_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.heard.send_modify(|n| *n += 1);
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        let config = rmcp::model::ClientConfig::default();
        match &self.version {
            Some(v) => config.with_protocol_version(v.clone()),
            None => config,
        }
    }
}
