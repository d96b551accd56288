//! The MCP server on stdio: 11 tools over the same payloads as the CLI.
//! Nothing is loaded before the first tool call, so `initialize` is answered
//! at once.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ProgressNotificationParam, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{
    schemars, tool, tool_handler, tool_router, ErrorData as McpError, RoleServer, ServerHandler,
    ServiceExt,
};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::app::{now_unix, App};
use crate::instructions::{instructions, QUERY_DESCRIPTION};
use crate::payload::{counts_json, errors_json};
use minirag_core::time::iso_utc;

fn default_top_k() -> i64 {
    8
}
fn one() -> u32 {
    1
}
fn text_format() -> String {
    "text".into()
}

/// A folder/URL prefix, or several.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum ScopeArg {
    One(String),
    Many(Vec<String>),
}

impl ScopeArg {
    fn list(scope: Option<ScopeArg>) -> Vec<String> {
        match scope {
            None => Vec::new(),
            Some(ScopeArg::One(s)) => vec![s],
            Some(ScopeArg::Many(v)) => v,
        }
    }
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct QueryArgs {
    /// What to search for: words, an identifier, or a question.
    pub query: String,
    /// Number of hits, 1-100 (larger values are clamped to 100).
    #[serde(default = "default_top_k")]
    pub top_k: i64,
    /// Absolute folder path(s), URL(s) or id prefix(es) to search under (a result's `source`).
    #[serde(default)]
    pub scope: Option<ScopeArg>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PathArg {
    /// Absolute path of a file under a configured root.
    pub file_path: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SourceArgs {
    /// Absolute path of a file under a configured root.
    #[serde(default)]
    pub file_path: Option<String>,
    /// A source id as returned in results (path, URL or data id).
    #[serde(default)]
    pub source: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NeighborArgs {
    pub chunk_index: u32,
    #[serde(default)]
    pub file_path: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default = "one")]
    pub before: u32,
    #[serde(default = "one")]
    pub after: u32,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DataArgs {
    pub data: String,
    /// Any id; re-using it replaces the content.
    pub source: String,
    /// text, markdown or html.
    #[serde(default = "text_format")]
    pub format: String,
    #[serde(default)]
    pub title: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UrlArgs {
    pub url: String,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SyncArgs {
    /// Optional absolute folder or file under a root; default: every root.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JobArgs {
    pub job_id: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListArgs {
    #[serde(default)]
    pub scope: Option<ScopeArg>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// The one retained sync job.
#[derive(Default)]
pub struct Jobs {
    current: Mutex<Option<Value>>,
}

#[derive(Clone)]
pub struct Server {
    app: Arc<App>,
    jobs: Arc<Jobs>,
    #[allow(dead_code)]
    tool_router: ToolRouter<Self>,
}

fn ok(v: Value) -> Result<CallToolResult, McpError> {
    Ok(CallToolResult::success(vec![ContentBlock::text(
        serde_json::to_string(&v).unwrap_or_default(),
    )]))
}

fn fail(msg: impl std::fmt::Display) -> Result<CallToolResult, McpError> {
    Ok(CallToolResult::error(vec![ContentBlock::text(
        msg.to_string(),
    )]))
}

async fn blocking<F>(f: F) -> Result<CallToolResult, McpError>
where
    F: FnOnce() -> Result<Value> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => ok(v),
        Ok(Err(e)) => fail(e),
        Err(e) => fail(format!("internal error: {e}")),
    }
}

impl Server {
    /// The key of a file or source argument (files are containment-checked).
    fn key(app: &App, file_path: Option<String>, source: Option<String>) -> Result<String> {
        match (file_path, source) {
            (Some(p), _) => Ok(app.contain(&p, true)?.display().to_string()),
            (None, Some(s)) => Ok(s),
            (None, None) => anyhow::bail!("Provide filePath or source"),
        }
    }
}

#[tool_router]
impl Server {
    pub fn new(app: App) -> Self {
        Self {
            app: Arc::new(app),
            jobs: Arc::new(Jobs::default()),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = QUERY_DESCRIPTION)]
    async fn query_documents(
        &self,
        Parameters(a): Parameters<QueryArgs>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || app.query(&a.query, a.top_k, &ScopeArg::list(a.scope))).await
    }

    #[tool(
        description = "Index one file (absolute path under a configured root); re-ingesting replaces its previous chunks atomically. Returns source, chunkCount and title."
    )]
    async fn ingest_file(
        &self,
        Parameters(a): Parameters<PathArg>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || {
            let path = app.contain(&a.file_path, true)?;
            app.ingest_file(&path)
        })
        .await
    }

    #[tool(
        description = "Index text you pass in (format text, markdown or html) under any source id; re-using an id replaces its content. Returns source, chunkCount and title."
    )]
    async fn ingest_data(
        &self,
        Parameters(a): Parameters<DataArgs>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || app.ingest_data(&a.source, &a.data, &a.format, a.title.as_deref())).await
    }

    #[tool(
        description = "Fetch an http(s) URL, convert it to Markdown and index it (source defaults to the URL). The only tool that touches the network."
    )]
    async fn ingest_url(
        &self,
        Parameters(a): Parameters<UrlArgs>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || app.ingest_url(&a.url, a.source.as_deref(), a.title.as_deref())).await
    }

    #[tool(
        description = "Read chunks around a hit: chunkIndex-before .. chunkIndex+after of one document (filePath or source), in order."
    )]
    async fn read_chunk_neighbors(
        &self,
        Parameters(a): Parameters<NeighborArgs>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || {
            let key = Self::key(&app, a.file_path, a.source)?;
            app.neighbors(&key, a.chunk_index, a.before, a.after)
        })
        .await
    }

    #[tool(
        description = "Read a whole indexed document back as Markdown, rebuilt from its chunks with its headings (filePath or source)."
    )]
    async fn read_file(
        &self,
        Parameters(a): Parameters<SourceArgs>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || {
            if let Some(p) = &a.file_path {
                let path = app.contain(p, true)?;
                if !path.exists() {
                    anyhow::bail!("File does not exist: {}", path.display());
                }
                if !path.is_file() {
                    anyhow::bail!("Not a file: {}", path.display());
                }
            }
            let key = Self::key(&app, a.file_path, a.source)?;
            app.read_file(&key)
        })
        .await
    }

    #[tool(
        description = "List files under the configured roots with their index state (ingested, stale, stale_scheme, not_ingested) plus indexed data and URL sources; optional scope."
    )]
    async fn list_files(
        &self,
        Parameters(a): Parameters<ListArgs>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || app.list_files(&ScopeArg::list(a.scope))).await
    }

    #[tool(
        description = "Remove one document from the index (filePath or source). The file itself is untouched and comes back on the next sync if it is still under a root."
    )]
    async fn delete_file(
        &self,
        Parameters(a): Parameters<SourceArgs>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || {
            let key = Self::key(&app, a.file_path, a.source)?;
            app.delete(&key)
        })
        .await
    }

    #[tool(
        description = "Index status: roots, index path, model, chunk and source counts, and any configuration or index error. Always answers."
    )]
    async fn status(&self, Parameters(_): Parameters<NoArgs>) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || Ok(app.status())).await
    }

    #[tool(
        description = "Start a background sync of the roots (or of one folder or file under them): new and changed files are indexed, moved files re-pathed, deleted files removed. Returns a jobId for sync_status. When the request carries a progress token, the sync runs to the end inside the call, reports progress per file, honours cancellation, and returns the finished job."
    )]
    async fn sync_start(
        &self,
        Parameters(a): Parameters<SyncArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        let jobs = self.jobs.clone();
        let Some(token) = ctx.meta.get_progress_token() else {
            return blocking(move || start_job(app, jobs, a.path, None)).await;
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(u64, u64, String)>();
        let peer = ctx.peer.clone();
        let forward = tokio::spawn(async move {
            while let Some((done, total, line)) = rx.recv().await {
                let mut p =
                    ProgressNotificationParam::new(token.clone(), done as f64).with_message(line);
                if total > 0 {
                    p = p.with_total(total as f64);
                }
                let _ = peer.notify_progress(p).await;
            }
        });
        let watcher = {
            let cancel = cancel.clone();
            let ct = ctx.ct.clone();
            tokio::spawn(async move {
                ct.cancelled().await;
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            })
        };
        let notify: Notify = Box::new(move |done, total, line: &str| {
            let _ = tx.send((done, total, line.to_string()));
        });
        let result = blocking(move || start_job(app, jobs, a.path, Some((notify, cancel)))).await;
        let _ = forward.await;
        watcher.abort();
        result
    }

    #[tool(
        description = "State of a sync job started by sync_start: state, counts, errors and progress (files done / total)."
    )]
    async fn sync_status(
        &self,
        Parameters(a): Parameters<JobArgs>,
    ) -> Result<CallToolResult, McpError> {
        let job = self
            .jobs
            .current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match job {
            Some(j) if j["jobId"] == json!(a.job_id) => ok(j),
            _ => fail(format!(
                "Unknown sync job '{}' (only the latest job is retained)",
                a.job_id
            )),
        }
    }
}

/// Progress sink of a sync: (files done, files total, line for humans).
type Notify = Box<dyn Fn(u64, u64, &str) + Send + Sync>;

/// Checks and starts a sync job. Without `notify` it runs on a background
/// thread and the caller gets its jobId at once; with `notify` (the client
/// asked for progress) it runs to the end on this thread, reporting each
/// file, and stops between files once `cancel` is set. Admission is one
/// critical section: no other job runs, the index's sync lock is taken, and
/// the job is published as running, or nothing happens.
fn start_job(
    app: Arc<App>,
    jobs: Arc<Jobs>,
    path: Option<String>,
    notify: Option<(Notify, Arc<AtomicBool>)>,
) -> Result<Value> {
    let scope = match &path {
        Some(p) => Some(app.contain(p, true)?.display().to_string()),
        None => None,
    };
    let engine = app.engine()?;
    let id = format!(
        "{:032x}",
        (now_unix() as u128) << 64 | std::process::id() as u128 ^ rand_bits()
    );
    let session = {
        let mut current = jobs.current.lock().unwrap_or_else(|p| p.into_inner());
        if current.as_ref().is_some_and(|j| j["state"] == "running") {
            anyhow::bail!("A sync job is already running");
        }
        let session = engine.begin_sync(scope.as_deref())?;
        *current = Some(json!({
            "jobId": id, "state": "running", "startedAt": iso_utc(now_unix()), "finishedAt": null,
            "counts": counts_json(&Default::default()), "errors": [], "error": null,
            "progress": {"done": 0, "total": 0},
        }));
        session
    };
    let run = move |notify: Option<Notify>, cancel: Arc<AtomicBool>| {
        let progress = |done: u64, total: u64, line: &str| {
            if let Some(j) = jobs
                .current
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_mut()
            {
                if total > 0 {
                    j["progress"] = json!({"done": done, "total": total});
                }
            }
            if let Some(n) = &notify {
                n(done, total, line);
            }
        };
        // The session's lock is released inside, before the end is published.
        let result = engine.run_sync(session, &progress, &cancel);
        let mut current = jobs.current.lock().unwrap_or_else(|p| p.into_inner());
        let Some(j) = current.as_mut() else {
            return Value::Null;
        };
        j["finishedAt"] = json!(iso_utc(now_unix()));
        match result {
            Ok(r) => {
                j["counts"] = counts_json(&r.counts);
                j["errors"] = errors_json(&r);
                if !r.notices.is_empty() {
                    j["notice"] = json!(r.notices.join(" "));
                }
                j["state"] = json!("succeeded");
            }
            Err(e) => {
                j["error"] = json!(e.to_string());
                j["state"] = json!("failed");
            }
        }
        j.clone()
    };
    match notify {
        Some((n, cancel)) => Ok(run(Some(n), cancel)),
        None => {
            std::thread::spawn(move || run(None, Arc::new(AtomicBool::new(false))));
            Ok(json!({"jobId": id}))
        }
    }
}

fn rand_bits() -> u128 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(now_unix() as u64);
    h.finish() as u128
}

#[tool_handler]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let append = self
            .app
            .config
            .as_ref()
            .ok()
            .and_then(|c| c.instructions_append.clone());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("minirag-mcp", crate::app::VERSION))
            .with_instructions(instructions(append.as_deref()))
    }
}

pub async fn serve(app: App) -> Result<()> {
    let service = Server::new(app).serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}
