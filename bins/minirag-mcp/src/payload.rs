//! One function per tool that builds its answer, shared by the MCP server
//! and the CLI (`--json` prints the same payload the tool returns).

use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::{anyhow, Result};
use minirag_core::engine::{IngestOutcome, QueryRequest};
use minirag_core::search::{QueryResponse, ResultItem};
use minirag_core::sync::run::Progress;
use minirag_core::sync::{SyncCounts, SyncReport};
use minirag_core::CHUNK_SCHEME;
use serde_json::{json, Map, Value};

use crate::app::{App, VERSION};

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

/// What every ingest tool answers: source, chunk count, title, and the
/// notice when the chunks were stored without vectors.
pub fn ingest_json(out: &IngestOutcome) -> Value {
    let mut v = json!({ "source": out.source, "chunkCount": out.chunk_count, "title": out.title });
    if let Some(n) = &out.notice {
        v["notice"] = json!(n);
    }
    v
}

pub fn counts_json(c: &SyncCounts) -> Value {
    json!({
        "scanned": c.scanned, "ingested": c.ingested, "reembedded": c.reembedded,
        "skipped": c.skipped, "moved": c.moved, "deleted": c.deleted, "relabelled": 0,
        "unreadable": c.unreadable, "failed": c.failed,
    })
}

pub fn errors_json(r: &SyncReport) -> Value {
    json!(r
        .errors
        .iter()
        .map(|(s, e)| json!({"source": s, "error": e}))
        .collect::<Vec<_>>())
}

/// The CLI's `sync --json` answer (the MCP job carries the same fields).
pub fn sync_json(r: &SyncReport) -> Value {
    let mut v = json!({"counts": counts_json(&r.counts), "errors": errors_json(r)});
    if !r.notices.is_empty() {
        v["notice"] = json!(r.notices.join(" "));
    }
    v
}

impl App {
    pub fn query(&self, query: &str, top_k: i64, scope: &[String]) -> Result<Value> {
        let r = self.engine()?.query(QueryRequest {
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
        let stats = self.engine().and_then(|e| {
            let view = e.ports().index.read()?;
            Ok((view.stats()?, view.vector_model()))
        });
        match stats {
            Ok((s, vector_model)) => {
                out["chunkCount"] = json!(s.chunk_count);
                out["sourceCount"] = json!(s.source_count);
                out["staleChunkCount"] = json!(s.stale_chunk_count);
                out["vectorlessChunkCount"] = json!(s.vectorless_chunk_count);
                out["vectorModel"] = json!(vector_model);
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
        let out = self.engine()?.ingest_path(&path.display().to_string())?;
        Ok(ingest_json(&out))
    }

    pub fn ingest_data(
        &self,
        source: &str,
        data: &str,
        format: &str,
        title: Option<&str>,
    ) -> Result<Value> {
        let out = self.engine()?.ingest_data(source, data, format, title)?;
        Ok(ingest_json(&out))
    }

    pub fn ingest_url(
        &self,
        url: &str,
        source: Option<&str>,
        title: Option<&str>,
    ) -> Result<Value> {
        let out = self.engine()?.ingest_url(url, source, title)?;
        Ok(ingest_json(&out))
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

    pub fn list_files(&self, scope: &[String]) -> Result<Value> {
        let listing = self.engine()?.list_files(scope)?;
        let files: Vec<Value> = listing
            .files
            .iter()
            .map(|f| {
                json!({"source": f.source, "sourceType": f.source_type.as_str(), "title": f.title,
                       "state": f.state, "chunkCount": f.chunk_count, "ocrEngine": ""})
            })
            .collect();
        let unlisted: Vec<Value> = listing
            .unlisted
            .iter()
            .map(|u| {
                json!({"path": u.path, "error": u.error, "indexedCount": u.indexed_count, "message": u.message})
            })
            .collect();
        Ok(json!({ "files": files, "unlistedFolders": unlisted }))
    }

    /// Runs one sync over the roots, or over `scope` (a folder or file under them).
    pub fn sync(
        &self,
        scope: Option<&Path>,
        progress: Progress<'_>,
        cancel: &AtomicBool,
    ) -> Result<SyncReport> {
        let scope = scope.map(|s| s.display().to_string());
        self.engine()?
            .sync(scope.as_deref(), progress, cancel)
            .map_err(|e| anyhow!(e))
    }
}
