//! The MCP server: 11 tools over the same payloads as the CLI, on stdio or
//! (one `Server` clone per session) over Streamable HTTP. Nothing is loaded
//! before the first tool call, so `initialize` is answered at once.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Result;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{
    schemars, tool, tool_handler, tool_router, ErrorData as McpError, RoleServer, ServerHandler,
    ServiceExt,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::app::App;
use crate::changes::{Changes, Listener};
use crate::instructions::{instructions, QUERY_DESCRIPTION};
use crate::payload::{
    counts, notice_of, source_errors, value, Counts, Deleted, Document, FileList, Ingested,
    Neighbors, QueryAnswer, SourceError, Status,
};
use crate::reqlog::{Outcome, RequestLog};
use crate::resources;
use crate::revision::{is_modern, server_meta, speaks_modern, Hints};
use crate::schema::Side;
use minirag_core::jobs::{Job, Jobs};
use minirag_core::progress::Step;
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

/// One value or several (a string or a list of strings): the scope's
/// prefixes, and the format and path filters; each field says what it holds.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum ScopeArg {
    One(String),
    Many(Vec<String>),
}

impl ScopeArg {
    pub(crate) fn list(scope: Option<ScopeArg>) -> Vec<String> {
        match scope {
            None => Vec::new(),
            Some(ScopeArg::One(s)) => vec![s],
            Some(ScopeArg::Many(v)) => v,
        }
    }
}

/// Declares a tool's arguments with the search filters after its own
/// fields, written once for `query_documents` and `list_files` (serde's
/// `flatten` cannot be combined with `deny_unknown_fields`).
macro_rules! with_filters {
    ($(#[$meta:meta])* pub(crate) struct $name:ident { $($fields:tt)* }) => {
        $(#[$meta])*
        pub(crate) struct $name {
            $($fields)*
            /// Only documents of this format, or of any of several: a format key or extension (`pdf`, `md`, `docx`, `html`, `txt`, `csv`, `xlsx`, `pptx`, `epub`, `ipynb`, `vtt`, `image`). Data ids have no format.
            #[serde(default)]
            pub(crate) format: Option<ScopeArg>,
            /// Only documents changed at or after this time: a date (`2026-12-01`, UTC) or RFC 3339 (`2026-12-01T09:30:00+02:00`). A file's modification time; data and URL sources count from their ingest.
            #[serde(default)]
            pub(crate) modified_after: Option<String>,
            /// Only documents changed before this time (the same forms as modifiedAfter).
            #[serde(default)]
            pub(crate) modified_before: Option<String>,
            /// Only documents whose path below its root matches this glob, or any of several: `**/specs/**`, `docs/*.md`; a pattern without `/` (`*.md`) matches the file name in any folder. URLs and data ids are matched as they are.
            #[serde(default)]
            pub(crate) path: Option<ScopeArg>,
            /// Leave out documents whose path below its root matches this glob, or any of several (the same forms as path).
            #[serde(default)]
            pub(crate) exclude_path: Option<ScopeArg>,
            /// Only documents whose main language is this ISO 639-1 code, or any of several (`en`, `ru`, `de`); detected from each document's text when it is indexed.
            #[serde(default)]
            pub(crate) language: Option<ScopeArg>,
            /// Only documents that declare every one of these fields with that value, compared without case: `{"author": "Ada Lovelace", "tags": "incident"}`. Fields come from Markdown front matter, Office document properties (title, author, subject, keywords, category), PDF Info and HTML `<meta name>`; a list field matches when one of its items does. list_files shows each document's fields.
            #[serde(default)]
            pub(crate) meta: Option<std::collections::BTreeMap<String, String>>,
        }

        impl $name {
            fn filters(&mut self) -> crate::payload::Filters {
                crate::payload::Filters {
                    formats: ScopeArg::list(self.format.take()),
                    modified_after: self.modified_after.take(),
                    modified_before: self.modified_before.take(),
                    paths: ScopeArg::list(self.path.take()),
                    exclude_paths: ScopeArg::list(self.exclude_path.take()),
                    languages: ScopeArg::list(self.language.take()),
                    meta: self.meta.take().unwrap_or_default().into_iter().collect(),
                }
            }
        }
    };
}

with_filters! {
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct QueryArgs {
    /// What to search for: words, an identifier, or a question.
    pub query: String,
    /// Number of hits, 1-100 (larger values are clamped to 100).
    #[serde(default = "default_top_k")]
    pub top_k: i64,
    /// Absolute folder path(s), URL(s) or id prefix(es) to search under (a result's `source`).
    #[serde(default)]
    pub scope: Option<ScopeArg>,
    /// Add to each result its rank and score in the vector and keyword lists and the fused score.
    #[serde(default)]
    pub explain: bool,
}
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct PathArg {
    /// Absolute path of a file under a configured root.
    pub file_path: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SourceArgs {
    /// Absolute path of a file under a configured root.
    #[serde(default)]
    pub file_path: Option<String>,
    /// A source id as returned in results (path, URL or data id).
    #[serde(default)]
    pub source: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ReadArgs {
    /// Absolute path of a file under a configured root.
    #[serde(default)]
    pub file_path: Option<String>,
    /// A source id as returned in results (path, URL or data id).
    #[serde(default)]
    pub source: Option<String>,
    /// Only the part at a place, as a result's `location` names it:
    /// `page=12`, `page=3-4`, `lines=40-52`, `slide=3`, `rows=4-9`, `cell=2`, or a heading's anchor.
    #[serde(default)]
    pub part: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct NeighborArgs {
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
pub(crate) struct DataArgs {
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
pub(crate) struct UrlArgs {
    pub url: String,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SyncArgs {
    /// Optional absolute folder or file under a root; default: every root.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct JobArgs {
    pub job_id: String,
}

with_filters! {
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ListArgs {
    #[serde(default)]
    pub scope: Option<ScopeArg>,
}
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArgs {}

/// Files while indexing, chunks while embedding.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct JobProgress {
    /// `indexing` (every new or changed file, keyword-searchable as soon as
    /// it is written), `recognising` (pages of a scan, inside indexing) or
    /// `embedding` (chunks without vectors).
    pub phase: PhaseName,
    pub done: u64,
    pub total: u64,
}

/// A sync job's state, counts and errors.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobBody {
    pub state: JobStateName,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub counts: Counts,
    pub errors: Vec<SourceError>,
    /// Why the job failed as a whole.
    pub error: Option<String>,
    pub progress: JobProgress,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// `sync_status`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SyncJob {
    pub job_id: String,
    #[serde(flatten)]
    pub body: JobBody,
}

/// `sync_start`: the job id, and the finished job when the call carried a
/// progress token (the sync then ran inside the call).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SyncStarted {
    pub job_id: String,
    #[serde(flatten)]
    pub finished: Option<JobBody>,
}

/// A sync job's state on the wire: an enum, so `outputSchema` lists the
/// values a client can meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum JobStateName {
    Running,
    Succeeded,
    Failed,
}

impl From<minirag_core::progress::JobState> for JobStateName {
    fn from(s: minirag_core::progress::JobState) -> Self {
        use minirag_core::progress::JobState;
        match s {
            JobState::Running => Self::Running,
            JobState::Succeeded => Self::Succeeded,
            JobState::Failed => Self::Failed,
        }
    }
}

/// What a running sync is doing, on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum PhaseName {
    Indexing,
    Recognising,
    Embedding,
}

impl From<minirag_core::progress::Phase> for PhaseName {
    fn from(p: minirag_core::progress::Phase) -> Self {
        use minirag_core::progress::Phase;
        match p {
            Phase::Indexing => Self::Indexing,
            Phase::Recognising => Self::Recognising,
            Phase::Embedding => Self::Embedding,
        }
    }
}

/// The protocol's view of a core job.
fn job_payload(j: &Job) -> SyncJob {
    let (counts, errors, notice) = match &j.report {
        Some(r) => (counts(&r.counts), source_errors(r), notice_of(r)),
        None => (Counts::default(), Vec::new(), None),
    };
    SyncJob {
        job_id: j.id.clone(),
        body: JobBody {
            state: j.state.into(),
            started_at: iso_utc(j.started_at),
            finished_at: j.finished_at.map(iso_utc),
            counts,
            errors,
            error: j.error.clone(),
            progress: JobProgress {
                phase: j.progress.phase.into(),
                done: j.progress.done,
                total: j.progress.total,
            },
            notice,
        },
    }
}

#[derive(Clone)]
pub(crate) struct Server {
    app: Arc<App>,
    jobs: Arc<Jobs>,
    /// Wakes `subscriptions/listen` streams when the documents may have changed.
    changes: Arc<Changes>,
    /// Stops the `RAG_WATCH` watcher.
    watch_stop: Arc<AtomicBool>,
    tool_router: ToolRouter<Self>,
    /// Set in HTTP mode: one line per tool call.
    log: Option<RequestLog>,
}

/// The payload as structured content, and as the same JSON in a text block
/// for clients that read only text.
fn ok(v: Value) -> Result<CallToolResult, McpError> {
    Ok(CallToolResult::structured(v))
}

fn fail(msg: impl std::fmt::Display) -> Result<CallToolResult, McpError> {
    Ok(CallToolResult::error(vec![ContentBlock::text(
        msg.to_string(),
    )]))
}

/// Runs `f` on the blocking pool; its answer or its error as the tool's
/// result. The answer is typed to here and serialised once, at the edge.
async fn blocking<T, F>(f: F) -> Result<CallToolResult, McpError>
where
    T: serde::Serialize + Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    match off_thread(f).await {
        Ok(v) => ok(value(&v)),
        Err(e) => fail(e),
    }
}

/// `f` on the blocking pool; a panic there is an internal error.
async fn off_thread<T, F>(f: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(e) => Err(format!("internal error: {e}")),
    }
}

#[tool_router]
impl Server {
    pub(crate) fn new(app: App) -> Self {
        Self {
            app: Arc::new(app),
            jobs: Arc::new(Jobs::default()),
            changes: Arc::default(),
            watch_stop: Arc::default(),
            tool_router: Self::tool_router(),
            log: None,
        }
    }

    /// The search page's backend: this server's app and jobs.
    pub(crate) fn page_backend(&self) -> crate::page::PageBackend {
        crate::page::PageBackend {
            app: self.app.clone(),
            jobs: self.jobs.clone(),
            changes: self.changes.clone(),
        }
    }

    /// Logs every tool call (HTTP mode).
    pub(crate) fn with_log(mut self, log: RequestLog) -> Self {
        self.log = Some(log);
        self
    }

    /// Under `RAG_WATCH=1`, keeps the index current on a background thread
    /// (its first sync catches up); `status.watch` shows it.
    pub(crate) fn start_watching(&self) {
        let on = self.app.config().is_ok_and(|c| c.watch);
        if !on {
            return;
        }
        let app = self.app.clone();
        let stop = self.watch_stop.clone();
        let changes = self.changes.clone();
        std::thread::spawn(move || {
            if let Err(e) = crate::watch::run(&app, &|_| changes.nudge(), &stop) {
                eprintln!("minirag-mcp: RAG_WATCH: {e:#}");
            }
        });
    }

    /// Stops the watcher, ends the listen streams and drains the sync job
    /// shared by every clone of this server (see [`Jobs::drain`]).
    pub(crate) fn drain(&self) {
        self.watch_stop
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.changes.stop();
        self.jobs.drain();
    }

    #[tool(
        description = QUERY_DESCRIPTION,
        title = "Search documents",
        output_schema = rmcp::handler::server::common::schema_for_output::<QueryAnswer>(),
        annotations(title = "Search documents", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn query_documents(
        &self,
        Parameters(mut a): Parameters<QueryArgs>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        let found = off_thread(move || {
            let filters = a.filters();
            app.query(
                &a.query,
                a.top_k,
                &ScopeArg::list(a.scope.take()),
                &filters,
                a.explain,
            )
        })
        .await;
        let found = match found {
            Ok(found) => found,
            Err(e) => return fail(e),
        };
        // Each hit also as a link to its place, for clients that open resources.
        let links: Vec<ContentBlock> = found
            .results
            .iter()
            .map(|r| {
                let name = r.citation.as_deref().unwrap_or(&r.source);
                ContentBlock::resource_link(
                    Resource::new(&r.link, name)
                        .with_title(&r.title)
                        .with_mime_type("text/markdown"),
                )
            })
            .collect();
        let mut answer = ok(value(&found))?;
        answer.content.extend(links);
        Ok(answer)
    }

    #[tool(
        description = "Index one file (absolute path under a configured root); re-ingesting replaces its previous chunks atomically. Returns source, chunkCount and title.",
        title = "Index a file",
        output_schema = rmcp::handler::server::common::schema_for_output::<Ingested>(),
        annotations(title = "Index a file", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
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
        description = "Index text you pass in (format text, markdown or html) under any source id; re-using an id replaces its content. Returns source, chunkCount and title.",
        title = "Index text",
        output_schema = rmcp::handler::server::common::schema_for_output::<Ingested>(),
        annotations(title = "Index text", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn ingest_data(
        &self,
        Parameters(a): Parameters<DataArgs>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || app.ingest_data(&a.source, &a.data, &a.format, a.title.as_deref())).await
    }

    #[tool(
        description = "Fetch an http(s) URL, convert it to Markdown and index it (source defaults to the URL). The only tool that touches the network.",
        title = "Index a web page",
        output_schema = rmcp::handler::server::common::schema_for_output::<Ingested>(),
        annotations(title = "Index a web page", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = true)
    )]
    async fn ingest_url(
        &self,
        Parameters(a): Parameters<UrlArgs>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || app.ingest_url(&a.url, a.source.as_deref(), a.title.as_deref())).await
    }

    #[tool(
        description = "Read chunks around a hit: chunkIndex-before .. chunkIndex+after of one document (filePath or source), in order.",
        title = "Read neighbouring chunks",
        output_schema = rmcp::handler::server::common::schema_for_output::<Neighbors>(),
        annotations(title = "Read neighbouring chunks", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn read_chunk_neighbors(
        &self,
        Parameters(a): Parameters<NeighborArgs>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || {
            let key = app.key(a.file_path.as_deref(), a.source.as_deref(), true)?;
            app.neighbors(&key, a.chunk_index, a.before, a.after)
        })
        .await
    }

    #[tool(
        description = "Read a whole indexed document back as Markdown, rebuilt from its chunks with its headings (filePath or source); with part (page=12, lines=40-52, slide=3, rows=4-9, cell=2, as a result's location names it) only that part.",
        title = "Read a document",
        output_schema = rmcp::handler::server::common::schema_for_output::<Document>(),
        annotations(title = "Read a document", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn read_file(
        &self,
        Parameters(a): Parameters<ReadArgs>,
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
            let key = app.key(a.file_path.as_deref(), a.source.as_deref(), true)?;
            app.read_file(&key, a.part.as_deref())
        })
        .await
    }

    #[tool(
        description = "List files under the configured roots with their index state (ingested, stale, stale_scheme, not_ingested) plus indexed data and URL sources; optional scope.",
        title = "List files and their index state",
        output_schema = rmcp::handler::server::common::schema_for_output::<FileList>(),
        annotations(title = "List files and their index state", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_files(
        &self,
        Parameters(mut a): Parameters<ListArgs>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || {
            let filters = a.filters();
            app.list_files(&ScopeArg::list(a.scope.take()), &filters)
        })
        .await
    }

    #[tool(
        description = "Remove one document from the index (filePath or source). The file itself is untouched and comes back on the next sync if it is still under a root.",
        title = "Remove a document from the index",
        output_schema = rmcp::handler::server::common::schema_for_output::<Deleted>(),
        annotations(title = "Remove a document from the index", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_file(
        &self,
        Parameters(a): Parameters<SourceArgs>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || {
            let key = app.key(a.file_path.as_deref(), a.source.as_deref(), true)?;
            app.delete(&key)
        })
        .await
    }

    #[tool(
        description = "Index status: roots, index path, model, chunk and source counts, and any configuration or index error. Always answers.",
        title = "Index status",
        output_schema = rmcp::handler::server::common::schema_for_output::<Status>(),
        annotations(title = "Index status", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn status(&self, Parameters(_): Parameters<NoArgs>) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        blocking(move || Ok(app.status())).await
    }

    #[tool(
        description = "Start a background sync of the roots (or of one folder or file under them): new and changed files are indexed, moved files re-pathed, deleted files removed. Returns a jobId for sync_status. When the request carries a progress token, the sync runs to the end inside the call, reports progress per file, honours cancellation, and returns the finished job.",
        title = "Sync the folders",
        output_schema = rmcp::handler::server::common::schema_for_output::<SyncStarted>(),
        annotations(title = "Sync the folders", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn sync_start(
        &self,
        Parameters(a): Parameters<SyncArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        let jobs = self.jobs.clone();
        // Whoever listens hears it through the one poller (`changes.rs`).
        let on_change = {
            let changes = self.changes.clone();
            move || changes.nudge()
        };
        let Some(token) = ctx.meta.get_progress_token() else {
            return blocking(move || start_job(app, jobs, a.path, None, on_change)).await;
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
        let result =
            blocking(move || start_job(app, jobs, a.path, Some((notify, cancel)), on_change)).await;
        let _ = forward.await;
        watcher.abort();
        result
    }

    #[tool(
        description = "State of a sync job started by sync_start: state, counts, errors and progress (files done / total).",
        title = "Sync job status",
        output_schema = rmcp::handler::server::common::schema_for_output::<SyncJob>(),
        annotations(title = "Sync job status", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn sync_status(
        &self,
        Parameters(a): Parameters<JobArgs>,
    ) -> Result<CallToolResult, McpError> {
        let app = self.app.clone();
        let jobs = self.jobs.clone();
        blocking(move || {
            // Another process of the same index may run the job.
            match jobs.find(&*app.engine()?, &a.job_id)? {
                Some(j) => Ok(value(&job_payload(&j))),
                None => anyhow::bail!(
                    "Unknown sync job '{}' (this index keeps the latest 8 jobs)",
                    a.job_id
                ),
            }
        })
        .await
    }
}

/// Progress sink of a sync: (files done, files total, line for humans).
type Notify = Box<dyn Fn(u64, u64, &str) + Send + Sync>;

/// Admits a sync job (see [`Jobs::admit`]). Without `notify` it runs on a
/// background thread and the caller gets its jobId at once; with `notify`
/// (the client asked for progress) it runs to the end on this thread,
/// reporting each file, and stops between files once `cancel` is set.
fn start_job(
    app: Arc<App>,
    jobs: Arc<Jobs>,
    path: Option<String>,
    notify: Option<(Notify, Arc<AtomicBool>)>,
    on_change: impl FnOnce() + Send + 'static,
) -> Result<SyncStarted> {
    let scope = match &path {
        Some(p) => Some(app.contain(p, true)?.display().to_string()),
        None => None,
    };
    let cancel = notify
        .as_ref()
        .map_or_else(Arc::default, |(_, c)| c.clone());
    let admitted = jobs.admit(app.engine()?, scope.as_deref(), cancel)?;
    let end = move |j: &Job| {
        if j.changed_documents() {
            on_change();
        }
    };
    match notify {
        Some((n, _)) => {
            let job = admitted.run(&|s: Step<'_>| n(s.done, s.total, s.line));
            end(&job);
            let job = job_payload(&job);
            Ok(SyncStarted {
                job_id: job.job_id,
                finished: Some(job.body),
            })
        }
        None => Ok(SyncStarted {
            job_id: admitted.spawn(end),
            finished: None,
        }),
    }
}

/// The tools that may change the document list (`sync_start` nudges when
/// its job ends).
const WRITERS: [&str; 4] = ["ingest_file", "ingest_data", "ingest_url", "delete_file"];

#[tool_handler]
impl ServerHandler for Server {
    /// Tools by name, a fixed order; cache hints at 2026-07-28.
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, McpError> {
        let mut tools = self.tool_router.list_all();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        for tool in &mut tools {
            let input = std::sync::Arc::make_mut(&mut tool.input_schema);
            crate::schema::portable(input, Side::Input);
            if let Some(output) = &mut tool.output_schema {
                crate::schema::portable(std::sync::Arc::make_mut(output), Side::Output);
            }
        }
        let hints = Hints::fixed(&ctx);
        let mut out = rmcp::model::ListToolsResult::with_all_items(tools);
        (out.ttl_ms, out.cache_scope, out.meta) = (hints.ttl_ms, hints.cache_scope, hints.meta);
        Ok(out)
    }

    /// `subscriptions/listen`: the resource list's changes only (the tool
    /// list never changes).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.resources_list_changed = requested.resources_list_changed;
        Some(accepted)
    }

    /// A session from before 2026-07-28 hears every change on the session
    /// itself, for as long as it lasts.
    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        let info = context.peer.peer_info();
        if speaks_modern(info.as_ref().map(|i| &i.protocol_version)) {
            return; // it listens with `subscriptions/listen`
        }
        let changes = self.changes.clone();
        let app = self.app.clone();
        let listener = Listener::Session(context.peer);
        tokio::spawn(async move { changes.serve(app, listener, CancellationToken::new()).await });
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let cancelled = context.request_context().ct.clone();
        let listener = Listener::Stream(context.sink().clone());
        self.changes
            .serve(self.app.clone(), listener, cancelled)
            .await;
        Ok(())
    }

    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, McpError> {
        let started = std::time::Instant::now();
        let tool = request.name.to_string();
        let query = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("query"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let modern = is_modern(&context);
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let mut response = self.tool_router.call(tcc).await;
        let succeeded = matches!(
            &response,
            Ok(rmcp::model::CallToolResponse::Complete(r)) if r.is_error != Some(true)
        );
        if WRITERS.contains(&tool.as_str()) && succeeded {
            self.changes.nudge();
        }
        if let (true, Ok(rmcp::model::CallToolResponse::Complete(r))) = (modern, &mut response) {
            r.meta.get_or_insert_with(server_meta);
        }
        if let Some(log) = &self.log {
            let outcome = match &response {
                Ok(rmcp::model::CallToolResponse::Complete(r)) if r.is_error == Some(true) => {
                    Outcome::ToolError
                }
                Ok(_) => Outcome::Ok,
                Err(_) => Outcome::Refused,
            };
            log.tool(&tool, started.elapsed(), outcome, query.as_deref());
        }
        response
    }

    fn get_info(&self) -> ServerConfig {
        let append = self
            .app
            .config
            .as_ref()
            .ok()
            .and_then(|c| c.instructions_append.clone());
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("minirag-mcp", crate::app::VERSION))
            .with_instructions(instructions(append.as_deref()))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let app = self.app.clone();
        let cursor = request.and_then(|r| r.cursor);
        let page = tokio::task::spawn_blocking(move || resources::list(&app, cursor.as_deref()))
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?
            .map_err(|e| McpError::invalid_params(e.to_string(), None))?;
        let (items, next) = page;
        let items = items
            .into_iter()
            .map(|l| {
                Resource::new(l.uri, l.source)
                    .with_title(l.title)
                    .with_mime_type("text/markdown")
            })
            .collect();
        let mut out = ListResourcesResult::with_all_items(items);
        out.next_cursor = next;
        let hints = Hints::documents(&ctx);
        (out.ttl_ms, out.cache_scope, out.meta) = (hints.ttl_ms, hints.cache_scope, hints.meta);
        Ok(out)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let hints = Hints::fixed(&ctx);
        let mut out = ListResourceTemplatesResult::with_all_items(vec![ResourceTemplate::new(
            resources::TEMPLATE,
            "document",
        )
        .with_title("An indexed document as Markdown")
        .with_description(
            "source: a document's source (absolute path, URL or data id), percent-encoded",
        )
        .with_mime_type("text/markdown")]);
        (out.ttl_ms, out.cache_scope, out.meta) = (hints.ttl_ms, hints.cache_scope, hints.meta);
        Ok(out)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let app = self.app.clone();
        let uri = request.uri.clone();
        let text = tokio::task::spawn_blocking(move || resources::read(&app, &uri))
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?
            .map_err(|e| McpError::resource_not_found(e.to_string(), None))?;
        let mut out = ReadResourceResult::new(vec![
            ResourceContents::text(text, request.uri).with_mime_type("text/markdown")
        ]);
        let hints = Hints::documents(&ctx);
        (out.ttl_ms, out.cache_scope, out.meta) = (hints.ttl_ms, hints.cache_scope, hints.meta);
        Ok(out.into())
    }
}

pub(crate) async fn serve(app: App) -> Result<()> {
    let server = Server::new(app);
    server.start_watching();
    let (transport, stdout) = crate::stdio::transport();
    let service = server.serve(transport).await?;
    service.waiting().await?;
    let _ = stdout.await;
    Ok(())
}
