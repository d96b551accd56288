//! The CLI: the same payloads as the MCP tools, printed as JSON (`--json`)
//! or for people. Errors go to stderr as `error: …` with exit code 1.

use minirag_core::plural::counted;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use crate::config_env::CliOverrides;
use anyhow::{bail, Result};
use clap::{Args, Parser, Subcommand};
use serde::Serialize;
use serde_json::Value;

use crate::app::App;
use crate::download_progress::while_downloading;
use crate::payload::{
    synced, Explained, FileList, Hit, ListedFile, QueryAnswer, SourceError, Synced,
};
use crate::{doctor, setup};
use minirag_core::sync::run::{Phase, Step};

#[derive(Parser)]
#[command(
    name = "minirag-mcp",
    version,
    about = "Hybrid search over your documents. No arguments: MCP server on stdio."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Which documents, index and model a command works on: flattened into
/// every command that opens them (not into `man` or `completions`).
#[derive(Args, Clone, Default)]
pub(crate) struct Settings {
    /// Document root (repeatable); replaces BASE_DIRS / BASE_DIR.
    #[arg(long = "base-dir")]
    pub base_dir: Vec<String>,
    /// Index folder (default: <first root>/.minirag/index); replaces DB_PATH.
    #[arg(long = "db-path")]
    pub db_path: Option<String>,
    /// Where downloaded models are kept; replaces CACHE_DIR.
    #[arg(long = "cache-dir")]
    pub cache_dir: Option<String>,
    /// Hugging Face model id or local model folder; replaces MODEL_NAME.
    #[arg(long = "model-name")]
    pub model_name: Option<String>,
    /// An OpenAI-compatible embedding server's base URL; replaces EMBED_URL.
    /// Chunk text and queries are sent there.
    #[arg(long = "embed-url")]
    pub embed_url: Option<String>,
    /// The model name that server serves; replaces EMBED_MODEL.
    #[arg(long = "embed-model")]
    pub embed_model: Option<String>,
}

/// [`Settings`] and `--json`, for the commands that print an answer.
#[derive(Args, Clone, Default)]
pub(crate) struct Common {
    #[command(flatten)]
    pub settings: Settings,
    /// Print the JSON payload the MCP tool returns.
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Index files or folders (folders are scanned like sync).
    Ingest {
        paths: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Fetch and index a URL.
    IngestUrl {
        url: String,
        /// The key to store it under (default: the URL).
        #[arg(long)]
        source: Option<String>,
        /// The title to give it (default: the page's own).
        #[arg(long)]
        title: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Bring the index in line with the roots (or one folder or file under them).
    Sync {
        path: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Search the index.
    Query {
        text: String,
        /// Only documents under this folder or file (repeatable; relative to
        /// the working directory).
        #[arg(long)]
        scope: Vec<String>,
        /// How many chunks to return (at least 1; large values are capped).
        #[arg(long = "top-k", default_value_t = 8, allow_negative_numbers = true)]
        top_k: i64,
        /// Show each result's rank and score in the vector and keyword lists and the fused score.
        #[arg(long)]
        explain: bool,
        #[command(flatten)]
        filters: FilterFlags,
        #[command(flatten)]
        common: Common,
    },
    /// Chunks around one chunk of a document.
    ReadNeighbors {
        /// The chunk's index in its document (a result's chunkIndex).
        #[arg(long = "chunk-index")]
        chunk_index: u32,
        /// The document, as a file under the roots.
        #[arg(long = "file-path")]
        file_path: Option<String>,
        /// The document by its source key (ingest-url and ingest_data sources).
        #[arg(long)]
        source: Option<String>,
        /// Chunks before it.
        #[arg(long, default_value_t = 1)]
        before: u32,
        /// Chunks after it.
        #[arg(long, default_value_t = 1)]
        after: u32,
        #[command(flatten)]
        common: Common,
    },
    /// A whole document rebuilt from the index.
    Read {
        path: Option<String>,
        /// The document by its source key instead of a path (ingest-url and
        /// ingest_data sources).
        #[arg(long)]
        source: Option<String>,
        /// Only the part at a place: page=12, lines=40-52, slide=3, rows=4-9, cell=2.
        #[arg(long)]
        part: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Files under the roots and their index state.
    List {
        /// Only files under this folder (repeatable; relative to the
        /// working directory).
        #[arg(long)]
        scope: Vec<String>,
        #[command(flatten)]
        filters: FilterFlags,
        #[command(flatten)]
        common: Common,
    },
    /// Configuration and index counts.
    Status {
        #[command(flatten)]
        common: Common,
    },
    /// Remove a document from the index.
    Delete {
        path: Option<String>,
        /// The document by its source key instead of a path.
        #[arg(long)]
        source: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Serve MCP: on stdio (as with no arguments), or with --http over
    /// Streamable HTTP for many clients (README: HTTP mode).
    Serve {
        #[command(flatten)]
        http: crate::http::ServeArgs,
        #[command(flatten)]
        settings: Settings,
    },
    /// Open the search page: serve it on loopback, print its URL, and open a
    /// browser when one is present. The same server also answers MCP at /mcp.
    Ui {
        /// Port on 127.0.0.1 (0 picks a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Do not open a browser.
        #[arg(long)]
        no_open: bool,
        #[command(flatten)]
        settings: Settings,
    },
    /// Keep the index current as files change: a full sync to catch up, then
    /// one sync per settled batch of changes, a line each, until Ctrl-C.
    Watch {
        #[command(flatten)]
        common: Common,
    },
    /// Check the set-up: configuration, model, index, sync lock, disk space.
    Doctor {
        /// Also read the whole index and cross-check it: postings, vectors
        /// and counts against the chunks they belong to, and any damage it
        /// has kept; fails on any problem, naming it.
        #[arg(long)]
        deep: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Print (or with --write merge) an MCP client's configuration for this binary.
    Setup {
        client: setup::Client,
        /// Merge into the client's configuration file instead of printing.
        #[arg(long)]
        write: bool,
        /// Open the index the written entry names, as the client's server
        /// would, and say whether it is the one these settings name (roots,
        /// index, model) and how many chunks it holds; exit 1 if not.
        #[arg(long, conflicts_with = "write")]
        check: bool,
        /// The configuration file (default: the client's usual one).
        #[arg(long)]
        file: Option<PathBuf>,
        #[command(flatten)]
        settings: Settings,
    },
    /// Print a shell completion script.
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff): the whole tool's, or one command's
    /// (`man query`).
    Man {
        /// A command, for its own page (minirag-mcp-query(1)).
        command: Option<String>,
    },
}

impl Command {
    /// The settings and `--json` of this command (defaults where it has none).
    fn common(&self) -> Common {
        match self {
            Self::Ingest { common, .. }
            | Self::IngestUrl { common, .. }
            | Self::Sync { common, .. }
            | Self::Query { common, .. }
            | Self::ReadNeighbors { common, .. }
            | Self::Read { common, .. }
            | Self::List { common, .. }
            | Self::Status { common }
            | Self::Delete { common, .. }
            | Self::Watch { common }
            | Self::Doctor { common, .. } => common.clone(),
            Self::Serve { settings, .. }
            | Self::Ui { settings, .. }
            | Self::Setup { settings, .. } => Common {
                settings: settings.clone(),
                json: false,
            },
            Self::Completions { .. } | Self::Man { .. } => Common::default(),
        }
    }
}

/// `--scope` arguments as the index keys them: each a folder or file,
/// relative to the working directory or absolute, checked to lie under a
/// root (as `sync PATH` is).
fn scope_paths(app: &App, raw: &[String]) -> Result<Vec<String>> {
    raw.iter()
        .map(|s| Ok(app.contain(s, false)?.display().to_string()))
        .collect()
}

fn print<T: Serialize>(json_out: bool, payload: &T, human: impl FnOnce(&T) -> String) {
    // Through a Value, as the MCP side serialises: the same numbers (an
    // f32 widened to f64) in both, so CLI and MCP answers compare equal.
    let text = if json_out {
        serde_json::to_string_pretty(&crate::payload::value(payload)).unwrap_or_default()
    } else {
        human(payload)
    };
    out(&format!("{text}\n"));
}

/// Writes to stdout. A reader that went away (`… | head -1`) ends the
/// process quietly, as for other Unix tools, instead of `println!`'s panic.
fn out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {e}");
        std::process::exit(1);
    }
}

/// Runs one subcommand; returns the process exit code.
pub(crate) fn run(cli: Cli) -> Result<i32> {
    let common = cli.command.common();
    let settings = &common.settings;
    let flags = CliOverrides {
        base_dirs: settings.base_dir.clone(),
        db_path: settings.db_path.clone(),
        cache_dir: settings.cache_dir.clone(),
        model_name: settings.model_name.clone(),
    };
    let variables: Vec<(&str, String)> = [
        ("EMBED_URL", settings.embed_url.clone()),
        ("EMBED_MODEL", settings.embed_model.clone()),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k, v?)))
    .collect();
    let app = App::load_with(&flags, &variables);
    let j = common.json;
    match cli.command {
        Command::Serve { http, .. } => {
            let options = match &http.http {
                Some(bind) => Some(crate::http::Options::check(
                    &http,
                    bind,
                    std::env::var("MINIRAG_TOKEN").ok(),
                )?),
                None => None,
            };
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            match options {
                Some(o) => runtime.block_on(crate::http::serve(app, o))?,
                None => runtime.block_on(crate::server::serve(app))?,
            }
            Ok(0)
        }
        Command::Ui { port, no_open, .. } => {
            let args = crate::http::ServeArgs {
                drain_secs: 5,
                ..crate::http::ServeArgs::defaults()
            };
            let mut options = crate::http::Options::check(
                &args,
                &format!("127.0.0.1:{port}"),
                std::env::var("MINIRAG_TOKEN").ok(),
            )?;
            options.page_opens = Some(!no_open);
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            runtime.block_on(crate::http::serve(app, options))?;
            Ok(0)
        }
        Command::Watch { .. } => {
            app.config()?;
            let stop = std::sync::Arc::new(AtomicBool::new(false));
            stop_on_signal(stop.clone())?;
            let line = |e: minirag_core::watch::WatchEvent<'_>| {
                let state = app.watch.lock().unwrap_or_else(|p| p.into_inner()).clone();
                let Some(v) = watch_line(&e, &state) else {
                    return;
                };
                // One compact JSON object per line with --json: a stream.
                out(&format!(
                    "{}\n",
                    if j {
                        crate::payload::value(&v).to_string()
                    } else {
                        human_watch(&v)
                    }
                ));
            };
            crate::watch::run(&app, &line, &stop)?;
            Ok(0)
        }
        Command::Doctor { deep, .. } => {
            let report = doctor::run(&app, deep);
            print(j, &crate::payload::value(&report), |_| {
                doctor::human(&report)
            });
            Ok(if report.ok { 0 } else { 1 })
        }
        Command::Setup {
            client,
            write,
            check,
            file,
            ..
        } => {
            let config = app.config()?;
            if check {
                let file = match file {
                    Some(f) => f,
                    None => setup::default_file(client, &app.cwd)?,
                };
                let given =
                    crate::setup_check::Given::from(&flags, &variables, &crate::app::env_map());
                let report = crate::setup_check::run(client, &file, &app, given)?;
                print(j, &crate::payload::value(&report), |_| {
                    crate::setup_check::human(&report)
                });
                return Ok(if report.ok { 0 } else { 1 });
            }
            let remote: Vec<(String, String)> = app
                .remote_settings
                .iter()
                .filter(|(k, _)| k != "EMBED_API_KEY")
                .cloned()
                .collect();
            if remote.len() < app.remote_settings.len() {
                eprintln!(
                    "note: EMBED_API_KEY is not written into the client's file; put the key in a \
                     file only you can read and set EMBED_API_KEY_FILE to its path"
                );
            }
            let entry = setup::Entry::new(&app.root_strings(), config, &remote)?;
            let file = match file {
                Some(f) => f,
                None => setup::default_file(client, &app.cwd)?,
            };
            if write {
                setup::write(client, &entry, &file)?;
                eprintln!("wrote the {} entry into {}", setup::NAME, file.display());
            } else {
                out(&setup::merged(client, &entry, "", &file)?);
            }
            Ok(0)
        }
        Command::Completions { shell, .. } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            // Into a buffer first: the generator panics on a closed pipe.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cmd, "minirag-mcp", &mut script);
            out(&String::from_utf8_lossy(&script));
            Ok(0)
        }
        Command::Man { command } => {
            out(&crate::manpage::render(
                <Cli as clap::CommandFactory>::command(),
                command.as_deref(),
            )?);
            Ok(0)
        }
        Command::Status { .. } => {
            let v = crate::payload::value(&app.status());
            print(j, &v, |v| {
                v.as_object().map_or(String::new(), |o| {
                    o.iter()
                        .map(|(k, v)| format!("{k}: {}", plain(v)))
                        .collect::<Vec<_>>()
                        .join("\n")
                })
            });
            Ok(0)
        }
        Command::Query {
            text,
            scope,
            top_k,
            explain,
            filters,
            ..
        } => {
            if top_k < 1 {
                bail!("--top-k must be at least 1, got {top_k}");
            }
            let scope = scope_paths(&app, &scope)?;
            let v = app.query(&text, top_k, &scope, &filters.into(), explain)?;
            print(j, &v, human_query);
            Ok(0)
        }
        Command::Read {
            path, source, part, ..
        } => {
            let key = app.key(path.as_deref(), source.as_deref(), false)?;
            let v = app.read_file(&key, part.as_deref())?;
            print(j, &v, |v| v.text.clone());
            Ok(0)
        }
        Command::ReadNeighbors {
            chunk_index,
            file_path,
            source,
            before,
            after,
            ..
        } => {
            let key = app.key(file_path.as_deref(), source.as_deref(), false)?;
            let v = app.neighbors(&key, chunk_index, before, after)?;
            print(j, &v, |v| {
                if v.chunks.is_empty() {
                    return "no chunks".into();
                }
                v.chunks
                    .iter()
                    .map(|c| format!("[{}] {} — {}\n{}", c.chunk_index, c.source, c.title, c.text))
                    .collect::<Vec<_>>()
                    .join("\n\n")
            });
            Ok(0)
        }
        Command::Delete { path, source, .. } => {
            let key = app.key(path.as_deref(), source.as_deref(), false)?;
            let v = app.delete(&key)?;
            print(j, &v, |v| {
                let chunks = counted(v.deleted_chunks as u64, "chunk", "chunks");
                format!("deleted {chunks} of {}", v.source)
            });
            Ok(0)
        }
        Command::List { scope, filters, .. } => {
            let scope = scope_paths(&app, &scope)?;
            let v = app.list_files(&scope, &filters.into())?;
            for u in &v.unlisted_folders {
                eprintln!("warn: {}: {}", u.path, u.message);
            }
            print(j, &v, human_list);
            Ok(0)
        }
        Command::IngestUrl {
            url, source, title, ..
        } => {
            let v = app.ingest_url(&url, source.as_deref(), title.as_deref())?;
            if let Some(n) = &v.notice {
                eprintln!("note: {n}");
            }
            print(j, &v, |v| {
                let chunks = counted(v.chunk_count as u64, "chunk", "chunks");
                format!("ingested {} ({chunks})", v.source)
            });
            Ok(0)
        }
        Command::Ingest { paths, .. } => ingest(&app, &paths, j),
        Command::Sync { path, .. } => {
            let scope = path.map(|p| app.contain(&p, false)).transpose()?;
            let bar = progress_bar();
            let progress = |s: Step<'_>| {
                if let Some(bar) = &bar {
                    bar.set_prefix(s.phase.as_str());
                    bar.set_style(sync_style(s.phase));
                }
                report_progress(&bar, s.done, s.total, s.line)
            };
            let sync = || app.sync(scope.as_deref(), &progress);
            let report = match app.embedder() {
                Some(encoder) => while_downloading(encoder.embedder(), &bar, sync).0,
                None => sync(),
            }?;
            // Without a bar, each error was printed as its progress line.
            if let Some(bar) = &bar {
                bar.finish_and_clear();
                for (s, e) in &report.errors {
                    eprintln!("warn: {s}: {e}");
                }
            }
            for n in &report.notices {
                eprintln!("note: {n}");
            }
            let v = synced(&report);
            print(j, &v, |v| {
                let c = &v.counts;
                format!(
                    "scanned: {}, ingested: {}, re-embedded: {}, skipped: {}, moved: {}, deleted: {}, unreadable: {}, failed: {}, chunks embedded: {}",
                    c.scanned, c.ingested, c.reembedded, c.skipped, c.moved, c.deleted, c.unreadable, c.failed, c.embedded_chunks
                )
            });
            Ok(if report.counts.failed > 0 { 1 } else { 0 })
        }
    }
}

/// The sync bar: files while indexing, chunks while embedding.
fn sync_style(phase: Phase) -> indicatif::ProgressStyle {
    let unit = match phase {
        Phase::Indexing => "files",
        Phase::Embedding => "chunks",
        Phase::Recognising => "pages",
    };
    indicatif::ProgressStyle::with_template(&format!(
        "{{prefix:>9}} {{bar:30}} {{pos}}/{{len}} {unit}  {{wide_msg}}"
    ))
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
}

/// A bar for people at a terminal; `None` (plain lines) for logs and pipes.
fn progress_bar() -> Option<indicatif::ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} files  {wide_msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    })
}

fn report_progress(bar: &Option<indicatif::ProgressBar>, done: u64, total: u64, line: &str) {
    match bar {
        Some(bar) => {
            if total > 0 {
                bar.set_length(total);
                bar.set_position(done);
            }
            bar.set_message(line.to_string());
        }
        None => eprintln!("{line}"),
    }
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn human_query(v: &QueryAnswer) -> String {
    if v.results.is_empty() {
        return match &v.notice {
            Some(n) => format!("no results — {n}"),
            None => "no results".into(),
        };
    }
    let mut out: Vec<String> = v.results.iter().map(human_hit).collect();
    out.push(String::new());
    out.push("Sources:".into());
    for s in &v.sources {
        let n = s.hits;
        out.push(format!(
            "  {} ({n} {})",
            s.source,
            if n == 1 { "hit" } else { "hits" }
        ));
    }
    if let Some(n) = &v.notice {
        out.push(format!("note: {n}"));
    }
    out.join("\n")
}

fn human_hit(r: &Hit) -> String {
    let text: String = r.text.chars().take(160).collect();
    let mut line = format!(
        "[{:.3}] {}#{} — {}\n    {}",
        r.score,
        r.source,
        r.chunk_index,
        r.title,
        text.replace('\n', " ")
    );
    if let Some(c) = &r.citation {
        line.push_str(&format!("\n    at: {c}"));
    }
    if let Some(e) = &r.explain {
        line.push_str(&format!("\n    why: {}", human_explain(e)));
        if let Some(l) = &r.location {
            line.push_str(&format!("\n    place: {}", crate::payload::value(l)));
        }
    }
    line
}

/// `vector #3 (distance 0.512) · keyword #1 (bm25 7.20) · fused 0.01639 at keyword weight 0.6`
fn human_explain(e: &Explained) -> String {
    let side =
        |name: &str, list: &Option<crate::payload::Ranked>, what: &str, digits: usize| match list {
            Some(s) => format!("{name} #{} ({what} {:.digits$})", s.rank, s.score),
            None => format!("{name}: not in its list"),
        };
    format!(
        "{} · {} · {} · fused {:.5} at keyword weight {}",
        side("vector", &e.vector, "distance", 3),
        side("keyword", &e.keyword, "bm25", 2),
        side("document", &e.document, "score", 2),
        e.fused,
        crate::payload::value(&e.keyword_weight)
    )
}

fn human_list(v: &FileList) -> String {
    if v.files.is_empty() {
        return "no files found".into();
    }
    v.files
        .iter()
        .map(|f| {
            let ocr = if f.ocr_engine.is_empty() {
                String::new()
            } else {
                format!(" [ocr:{}]", f.ocr_engine)
            };
            let why = f
                .error
                .as_ref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default();
            format!(
                "[{}] {} ({}){ocr}{}{why}",
                plain(&crate::payload::value(&f.state)),
                f.source,
                counted(f.chunk_count as u64, "chunk", "chunks"),
                described(f)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn ingest(app: &App, paths: &[String], j: bool) -> Result<i32> {
    let mut contained = Vec::new();
    for p in paths {
        contained.push(app.contain(p, false)?.display().to_string());
    }
    let targets = app.engine()?.ingest_targets(&contained);
    let mut failed: Vec<SourceError> = Vec::new();
    for b in &targets.blind {
        eprintln!("warn: {}: {}", b.path, b.message());
        failed.push(SourceError {
            source: b.path.clone(),
            error: b.message(),
        });
    }
    let files: Vec<PathBuf> = targets.files.into_iter().map(PathBuf::from).collect();
    let mut ingested = Vec::new();
    let bar = progress_bar();
    let total = files.len() as u64;
    for (done, f) in files.iter().enumerate() {
        match app.ingest_file(f) {
            Ok(v) => {
                report_progress(
                    &bar,
                    done as u64 + 1,
                    total,
                    &format!("ingested {}", f.display()),
                );
                ingested.push(IngestedFile {
                    source: v.source,
                    chunk_count: v.chunk_count,
                })
            }
            Err(e) => {
                if let Some(bar) = &bar {
                    bar.suspend(|| eprintln!("warn: {}: {e}", f.display()));
                } else {
                    eprintln!("warn: {}: {e}", f.display());
                }
                failed.push(SourceError {
                    source: f.display().to_string(),
                    error: e.to_string(),
                });
            }
        }
    }
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let v = IngestRun { ingested, failed };
    print(j, &v, |v| {
        let files = counted(v.ingested.len() as u64, "file", "files");
        let mut out = vec![format!("ingested {files}:")];
        out.extend(v.ingested.iter().map(|i| {
            let chunks = counted(i.chunk_count as u64, "chunk", "chunks");
            format!("  {} ({chunks})", i.source)
        }));
        out.join("\n")
    });
    Ok(if v.failed.is_empty() { 0 } else { 1 })
}

/// What `ingest` of several paths answers.
#[derive(Serialize)]
struct IngestRun {
    ingested: Vec<IngestedFile>,
    failed: Vec<SourceError>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct IngestedFile {
    source: String,
    chunk_count: usize,
}

/// Sets `stop` on SIGINT or SIGTERM (a thread with a small runtime).
fn stop_on_signal(stop: std::sync::Arc<AtomicBool>) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::spawn(move || {
        runtime.block_on(async {
            use tokio::signal::unix::{signal, SignalKind};
            if let Ok(mut term) = signal(SignalKind::terminate()) {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            } else {
                let _ = tokio::signal::ctrl_c().await;
            }
        });
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    Ok(())
}

/// One `watch` line.
#[derive(Serialize)]
#[serde(tag = "event", rename_all = "camelCase")]
enum WatchLine {
    #[serde(rename_all = "camelCase")]
    Applied {
        #[serde(flatten)]
        synced: Synced,
        scope: Option<String>,
        mode: Option<&'static str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        watch_notice: Option<String>,
    },
    Waiting {
        reason: String,
        mode: Option<&'static str>,
    },
    /// A step of a sync under way, naming its file.
    Working {
        phase: &'static str,
        done: u64,
        total: u64,
        line: String,
    },
    Failed {
        error: String,
        mode: Option<&'static str>,
    },
}

/// Whether a sync's step gets a line of its own: every file, and the
/// embedding's progress at each tenth (not each batch of chunks).
fn worth_a_line(step: &Step<'_>) -> bool {
    let tenth = (step.total / 10).max(1);
    step.phase != Phase::Embedding || step.total == 0 || step.done.is_multiple_of(tenth)
}

fn watch_line(
    e: &minirag_core::watch::WatchEvent<'_>,
    state: &minirag_core::watch::WatchState,
) -> Option<WatchLine> {
    use minirag_core::watch::WatchEvent;
    let mode = state.mode.map(|m| m.as_str());
    Some(match e {
        WatchEvent::Working { step } if !worth_a_line(step) => return None,
        WatchEvent::Working { step } => WatchLine::Working {
            phase: step.phase.as_str(),
            done: step.done,
            total: step.total,
            line: step.line.to_string(),
        },
        WatchEvent::Applied { scope, report } => WatchLine::Applied {
            synced: synced(report),
            scope: scope.map(String::from),
            mode,
            watch_notice: state.notice.clone(),
        },
        WatchEvent::Waiting { reason } => WatchLine::Waiting {
            reason: reason.to_string(),
            mode,
        },
        WatchEvent::Failed { error } => WatchLine::Failed {
            error: error.to_string(),
            mode,
        },
    })
}

fn human_watch(v: &WatchLine) -> String {
    match v {
        WatchLine::Applied {
            synced,
            scope,
            mode,
            watch_notice,
        } => {
            let c = &synced.counts;
            let mut line = format!(
                "synced {} ({}): {} ingested, {} re-embedded, {} moved, {} deleted, {} failed",
                scope.as_deref().unwrap_or("all roots"),
                mode.unwrap_or_default(),
                c.ingested,
                c.reembedded,
                c.moved,
                c.deleted,
                c.failed
            );
            if let Some(n) = watch_notice {
                line.push_str(&format!("\nnote: {n}"));
            }
            line
        }
        WatchLine::Waiting { reason, .. } => format!("waiting: {reason}"),
        WatchLine::Working {
            line, done, total, ..
        } if *total > 0 => format!("  {line} ({done}/{total})"),
        WatchLine::Working { line, .. } => format!("  {line}"),
        WatchLine::Failed { error, .. } => format!("sync failed: {error}"),
    }
}

/// A listed file's language and declared fields, as ` [ru] author: Ada;
/// tags: db, incident` (empty when it has neither).
fn described(f: &ListedFile) -> String {
    let mut out = String::new();
    if let Some(lang) = &f.language {
        out.push_str(&format!(" [{lang}]"));
    }
    let fields: Vec<String> = f
        .meta
        .iter()
        .map(|(k, values)| format!("{k}: {}", values.join(", ")))
        .collect();
    if !fields.is_empty() {
        out.push_str(&format!(" {}", fields.join("; ")));
    }
    out
}

/// The search's filters, as flags (the MCP arguments' names in CLI form).
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct FilterFlags {
    /// Only documents of this format: a key or extension (pdf, md, docx, html, txt, csv, …; repeatable).
    #[arg(long = "format")]
    formats: Vec<String>,
    /// Only documents changed at or after this date or RFC 3339 time (2026-12-01, 2026-12-01T09:30:00Z).
    #[arg(long)]
    since: Option<String>,
    /// Only documents changed before this date or RFC 3339 time.
    #[arg(long)]
    until: Option<String>,
    /// Only documents whose path below its root matches this glob (**/specs/**, *.md; repeatable).
    #[arg(long = "path")]
    paths: Vec<String>,
    /// Leave out documents whose path below its root matches this glob (repeatable).
    #[arg(long = "exclude-path")]
    exclude_paths: Vec<String>,
    /// Only documents whose main language is this ISO 639-1 code (en, ru, …; repeatable).
    #[arg(long = "lang")]
    languages: Vec<String>,
    /// Only documents that declare this field with this value, as field=value (author=Ada, tags=incident; repeatable, all must match).
    #[arg(long = "meta", value_name = "FIELD=VALUE")]
    meta: Vec<String>,
}

impl From<FilterFlags> for crate::payload::Filters {
    fn from(f: FilterFlags) -> Self {
        Self {
            formats: f.formats,
            modified_after: f.since,
            modified_before: f.until,
            paths: f.paths,
            exclude_paths: f.exclude_paths,
            languages: f.languages,
            // A flag without `=` goes on as a field without a value, which
            // core refuses with the form to use.
            meta: f
                .meta
                .iter()
                .map(|m| match m.split_once('=') {
                    Some((k, v)) => (k.to_string(), v.to_string()),
                    None => (m.clone(), String::new()),
                })
                .collect(),
        }
    }
}
