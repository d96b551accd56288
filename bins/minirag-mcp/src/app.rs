//! The wiring: configuration, the lazily built engine, path containment, and
//! the payloads both shells print (so MCP and CLI answers are identical).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, bail, Result};
use minirag_convert::Converters;
use minirag_core::config::{CliOverrides, Config, ConfigContext, ConfigError};
use minirag_core::engine::{Engine, Ports, PreparedIngest, QueryRequest, Settings};
use minirag_core::ports::{Clock, Embedder, SourceType};
use minirag_core::search::{QueryResponse, ResultItem, Scope};
use minirag_core::CHUNK_SCHEME;
use minirag_embed_candle::{LazyEmbedder, ModelSource};
use minirag_fetch_http::HttpFetcher;
use minirag_index_mem::MemIndex;
use serde_json::{json, Map, Value};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

struct SystemClock;

impl Clock for SystemClock {
    fn now_unix_seconds(&self) -> i64 {
        crate::sync::now_unix()
    }
}

/// Everything a tool call needs; cheap to build (nothing is loaded until used).
pub struct App {
    pub config: Result<Config, ConfigError>,
    /// Roots with symlinks resolved, in configured order.
    pub roots: Vec<PathBuf>,
    pub cwd: PathBuf,
    embedder: Option<Arc<LazyEmbedder>>,
    engine: Mutex<Option<Arc<Engine>>>,
}

pub fn env_map() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

fn default_cache_dir() -> String {
    directories::ProjectDirs::from("", "", "minirag-mcp")
        .map(|d| d.cache_dir().join("models").display().to_string())
        .unwrap_or_else(|| "/tmp/minirag-mcp/models".into())
}

impl App {
    pub fn load(flags: &CliOverrides) -> Self {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let ctx = ConfigContext {
            cwd: cwd.display().to_string(),
            home: std::env::var("HOME").ok(),
            default_cache_dir: default_cache_dir(),
        };
        let config = Config::load(&env_map(), flags, &ctx);
        let roots = config
            .as_ref()
            .map(|c| {
                c.roots
                    .iter()
                    .map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| PathBuf::from(r)))
                    .collect()
            })
            .unwrap_or_default();
        let embedder = config.as_ref().ok().map(|c| {
            let source = ModelSource::choose(
                &c.model_name,
                c.model_path.as_deref().map(Path::new),
                Path::new(&c.cache_dir),
            );
            Arc::new(LazyEmbedder::new(source))
        });
        Self {
            config,
            roots,
            cwd,
            embedder,
            engine: Mutex::new(None),
        }
    }

    pub fn config(&self) -> Result<&Config> {
        self.config
            .as_ref()
            .map_err(|e| anyhow!("Configuration error: {e}"))
    }

    pub fn root_strings(&self) -> Vec<String> {
        self.roots.iter().map(|r| r.display().to_string()).collect()
    }

    /// The engine, opening the index on first use.
    pub fn engine(&self) -> Result<Arc<Engine>> {
        let config = self.config()?;
        let mut slot = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = slot.as_ref() {
            return Ok(e.clone());
        }
        let index = MemIndex::open(&config.db_path).map_err(|e| anyhow!("{e}"))?;
        let embedder = self
            .embedder
            .clone()
            .expect("embedder exists when config loads");
        let ports = Ports {
            converter: Arc::new(Converters),
            embedder: embedder.clone(),
            tokens: embedder,
            index: Arc::new(index),
            fetcher: Arc::new(HttpFetcher::new(
                minirag_fetch_http::DEFAULT_BODY_CAP,
                config.allow_private_urls,
            )),
            clock: Arc::new(SystemClock),
        };
        let mut settings = Settings::from(config);
        settings.roots = self.root_strings();
        let engine = Arc::new(Engine::new(settings, ports));
        *slot = Some(engine.clone());
        Ok(engine)
    }

    pub fn embedder(&self) -> Option<&LazyEmbedder> {
        self.embedder.as_deref()
    }

    // ------------------------------------------------------------ paths

    /// Resolves a path argument and checks it lies under a root (§7).
    /// `require_absolute`: MCP paths must be absolute; CLI paths may be relative.
    pub fn contain(&self, raw: &str, require_absolute: bool) -> Result<PathBuf> {
        self.config()?;
        let expanded = match (raw.strip_prefix('~'), std::env::var("HOME")) {
            (Some(rest), Ok(home)) if rest.is_empty() || rest.starts_with('/') => {
                format!("{home}{rest}")
            }
            _ => raw.to_string(),
        };
        let path = Path::new(&expanded);
        if !path.is_absolute() && require_absolute {
            bail!("Path must be absolute: {raw} (pass a result's `source`, which is an absolute path)");
        }
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        };
        let resolved = resolve(&joined);
        if self.roots.iter().any(|r| resolved.starts_with(r)) {
            Ok(resolved)
        } else {
            bail!(
                "Path outside configured document roots: {raw}. Roots: {}. To index another folder, add it to BASE_DIRS and restart.",
                self.root_strings().join(", ")
            )
        }
    }
}

/// Symlinks resolved as far as the path exists; the rest normalised lexically.
pub fn resolve(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    while !existing.exists() {
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = std::fs::canonicalize(&existing).unwrap_or(existing);
    for part in rest.iter().rev() {
        match Path::new(part).components().next() {
            Some(Component::ParentDir) => {
                out.pop();
            }
            Some(Component::CurDir) => {}
            _ => out.push(part),
        }
    }
    out
}

// ------------------------------------------------------------ payloads

pub fn result_json(r: &ResultItem) -> Value {
    json!({
        "text": r.text,
        "source": r.source,
        "title": r.title,
        "chunkIndex": r.chunk_index,
        "score": r.score,
        "distance": r.distance,
        "parentId": r.parent_id,
    })
}

pub fn query_json(r: &QueryResponse) -> Value {
    let mut parents = Map::new();
    for (id, text) in &r.parents {
        parents.insert(id.clone(), Value::String(text.clone()));
    }
    let mut out = json!({
        "results": r.results.iter().map(result_json).collect::<Vec<_>>(),
        "sources": r.sources.iter().map(|s| json!({
            "source": s.source, "title": s.title, "hits": s.hits, "displayPath": s.display_path,
        })).collect::<Vec<_>>(),
        "parents": parents,
    });
    if let Some(n) = &r.notice {
        out["notice"] = json!(n);
    }
    out
}

impl App {
    pub fn query(&self, query: &str, top_k: i64, scope: &[String]) -> Result<Value> {
        let engine = self.engine()?;
        let r = engine.query(QueryRequest {
            query,
            top_k,
            scope,
        })?;
        Ok(query_json(&r))
    }

    pub fn status(&self) -> Value {
        let config = match &self.config {
            Ok(c) => c,
            Err(e) => return json!({ "version": VERSION, "configError": e.to_string() }),
        };
        let mut out = json!({
            "version": VERSION,
            "roots": self.root_strings(),
            "dbPath": config.db_path,
            "model": config.model_path.clone().unwrap_or_else(|| config.model_name.clone()),
            "hybridWeight": config.hybrid_weight,
            "chunkScheme": CHUNK_SCHEME,
        });
        match self
            .engine()
            .and_then(|e| e.ports().index.stats().map_err(|e| anyhow!("{e}")))
        {
            Ok(s) => {
                out["chunkCount"] = json!(s.chunk_count);
                out["sourceCount"] = json!(s.source_count);
                out["staleChunkCount"] = json!(s.stale_chunk_count);
                out["vectorlessChunkCount"] = json!(s.vectorless_chunk_count);
                if s.stale_chunk_count > 0 {
                    out["schemeWarning"] = json!(format!(
                        "{} chunk(s) predate the current chunking scheme. Re-sync to rebuild them: sync_start (CLI: `minirag-mcp sync`).",
                        s.stale_chunk_count
                    ));
                }
            }
            Err(e) => out["indexError"] = json!(e.to_string()),
        }
        if let Some(embedder) = self.embedder() {
            out["embedder"] = json!(if embedder.is_loaded() {
                "loaded"
            } else {
                "loads on first use"
            });
        }
        out
    }

    pub fn ingest_file(&self, path: &Path) -> Result<Value> {
        self.commit(self.prepare_file(path)?)
    }

    /// Reads, converts and chunks a file: the part of an ingest a sync runs
    /// ahead of the embedder.
    pub fn prepare_file(&self, path: &Path) -> Result<PreparedIngest> {
        let engine = self.engine()?;
        let meta =
            std::fs::metadata(path).map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?;
        if meta.is_dir() {
            bail!(
                "{} is a folder; index folders with sync_start (CLI: `minirag-mcp sync {}`)",
                path.display(),
                path.display()
            );
        }
        let max = engine.settings().max_file_size;
        if meta.len() > max {
            bail!(
                "{} is {} bytes; MAX_FILE_SIZE is {max} (raise MAX_FILE_SIZE to index it)",
                path.display(),
                meta.len()
            );
        }
        let bytes =
            std::fs::read(path).map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?;
        let hash = sha256_hex(&bytes);
        let mtime = mtime_of(&meta);
        Ok(engine.prepare_file(&path.display().to_string(), &bytes, &hash, mtime)?)
    }

    /// Embeds and writes a prepared file; the payload `ingest_file` returns.
    pub fn commit(&self, prepared: PreparedIngest) -> Result<Value> {
        let out = self.engine()?.commit(prepared)?;
        let mut v =
            json!({ "source": out.source, "chunkCount": out.chunk_count, "title": out.title });
        if let Some(n) = out.notice {
            v["notice"] = json!(n);
        }
        Ok(v)
    }

    pub fn read_file(&self, source: &str) -> Result<Value> {
        let doc = self.engine()?.read_document(source)?;
        Ok(json!({
            "source": doc.record.source,
            "sourceType": doc.record.source_type.as_str(),
            "title": doc.record.title,
            "chunkCount": doc.record.chunk_count,
            "text": doc.text,
        }))
    }

    pub fn neighbors(
        &self,
        source: &str,
        chunk_index: u32,
        before: u32,
        after: u32,
    ) -> Result<Value> {
        let items = self
            .engine()?
            .neighbors(source, chunk_index, before, after)?;
        Ok(json!({ "chunks": items.iter().map(result_json).collect::<Vec<_>>() }))
    }

    pub fn delete(&self, source: &str) -> Result<Value> {
        let n = self.engine()?.delete(source)?;
        Ok(json!({ "source": source, "deletedChunks": n }))
    }

    /// Disk files under the roots (scan rules) with their index state, plus
    /// every indexed data or URL source.
    pub fn list_files(&self, scope: &[String]) -> Result<Value> {
        let engine = self.engine()?;
        let index = &engine.ports().index;
        let scope_filter = Scope::new(scope.iter().cloned());
        let scan = crate::scan::scan(&self.roots, &[])?;
        let mut rows: Vec<Value> = Vec::new();
        for file in scan
            .files
            .iter()
            .filter(|f| scope_filter.matches(&f.path.display().to_string()))
        {
            let source = file.path.display().to_string();
            let row = match index
                .source(&source)?
                .filter(|r| r.source_type == SourceType::File)
            {
                None => {
                    json!({"source": source, "sourceType": "file", "title": "", "state": "not_ingested", "chunkCount": 0, "ocrEngine": ""})
                }
                Some(r) => {
                    let unchanged = r.mtime == file.mtime
                        || sha256_file(&file.path).is_ok_and(|h| h == r.file_hash);
                    let state = if !unchanged {
                        "stale"
                    } else if r.scheme_version < CHUNK_SCHEME {
                        "stale_scheme"
                    } else {
                        "ingested"
                    };
                    json!({"source": source, "sourceType": "file", "title": r.title, "state": state, "chunkCount": r.chunk_count, "ocrEngine": ""})
                }
            };
            rows.push(row);
        }
        let seen: std::collections::HashSet<String> = scan
            .files
            .iter()
            .map(|f| f.path.display().to_string())
            .collect();
        let mut held: Vec<usize> = vec![0; scan.blind.len()];
        for r in index.sources(&scope_filter)? {
            if r.source_type == SourceType::File {
                // An indexed file the scan could not see because its folder is
                // unlistable (or its root empty) is kept and shown as `unlisted`;
                // one that simply vanished is not listed (sync deletes it).
                if seen.contains(&r.source) {
                    continue;
                }
                let Some(b) = scan
                    .blind
                    .iter()
                    .position(|b| Path::new(&r.source).starts_with(&b.path))
                else {
                    continue;
                };
                held[b] += 1;
                rows.push(json!({"source": r.source, "sourceType": "file", "title": r.title, "state": "unlisted", "chunkCount": r.chunk_count, "ocrEngine": ""}));
                continue;
            }
            let state = if r.scheme_version < CHUNK_SCHEME {
                "stale_scheme"
            } else {
                "ingested"
            };
            rows.push(json!({"source": r.source, "sourceType": r.source_type.as_str(), "title": r.title, "state": state, "chunkCount": r.chunk_count, "ocrEngine": ""}));
        }
        rows.sort_by(|a, b| a["source"].as_str().cmp(&b["source"].as_str()));
        let related = |p: &str| {
            scope.is_empty()
                || scope.iter().any(|s| {
                    minirag_core::search::is_under(p, s) || minirag_core::search::is_under(s, p)
                })
        };
        let unlisted: Vec<Value> = scan
            .blind
            .iter()
            .zip(&held)
            // An empty root with nothing indexed under it is just empty.
            .filter(|(b, n)| b.error.is_some() || **n > 0)
            .filter(|(b, _)| related(&b.path.display().to_string()))
            .map(|(b, n)| json!({"path": b.path.display().to_string(), "error": b.error, "indexedCount": n, "message": b.message()}))
            .collect();
        Ok(json!({ "files": rows, "unlistedFolders": unlisted }))
    }

    pub fn model_available(&self) -> bool {
        self.embedder().is_some_and(|e| e.get().is_ok())
    }

    pub fn embedder_id(&self) -> Option<String> {
        self.embedder().map(|e| e.model_id().to_string())
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    Ok(sha256_hex(&std::fs::read(path)?))
}

pub fn mtime_of(meta: &std::fs::Metadata) -> f64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0.0, |d| d.as_secs_f64())
}
