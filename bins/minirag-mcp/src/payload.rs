//! One function per tool that builds its answer, shared by the MCP server
//! and the CLI (`--json` prints the same payload the tool returns). Each
//! answer is a typed struct: the MCP `outputSchema` is derived from the same
//! type that builds the payload, so the two cannot drift apart.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, Result};
use minirag_core::engine::{IndexState, IngestOutcome, QueryRequest};
use minirag_core::jobs::Jobs;
use minirag_core::location::Location;
use minirag_core::ports::EmbedderState;
use minirag_core::search::{FilterRequest, ListRank, QueryResponse, ResultItem};
use minirag_core::sync::run::Progress;
use minirag_core::sync::{SyncCounts, SyncReport};
use minirag_core::time::iso_utc;
use minirag_core::CHUNK_SCHEME;
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use serde_json::Value;

use crate::app::{App, VERSION};

/// A search's filters as the shells collect them, for core's [`FilterRequest`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Filters {
    pub formats: Vec<String>,
    pub modified_after: Option<String>,
    pub modified_before: Option<String>,
    pub paths: Vec<String>,
    pub exclude_paths: Vec<String>,
    pub languages: Vec<String>,
    /// `(field, value)`, every one to be declared.
    pub meta: Vec<(String, String)>,
}

impl Filters {
    pub(crate) fn request(&self) -> FilterRequest<'_> {
        FilterRequest {
            formats: &self.formats,
            modified_after: self.modified_after.as_deref(),
            modified_before: self.modified_before.as_deref(),
            paths: &self.paths,
            exclude_paths: &self.exclude_paths,
            languages: &self.languages,
            meta: &self.meta,
        }
    }
}

/// A payload as the JSON both shells print.
pub(crate) fn value(payload: &impl Serialize) -> Value {
    serde_json::to_value(payload).unwrap_or(Value::Null)
}

/// One hit (or one neighbouring chunk).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Hit {
    pub text: String,
    /// Absolute path, URL or data id of the document.
    pub source: String,
    pub title: String,
    pub chunk_index: u32,
    /// Fused rank score (higher is better); 0 for neighbours.
    pub score: f64,
    /// Squared L2 distance of the unit vectors, when the vector side matched.
    pub distance: Option<f32>,
    /// Id of the parent section in `parents`.
    pub parent_id: Option<String>,
    /// Where in the document the passage is (absent when not known, as for
    /// a document indexed before places were kept: the next sync adds them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Place>,
    /// A short citation of the place: `report.pdf, p. 12`, `notes.md, lines 40–52`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub citation: Option<String>,
    /// The resource that opens the passage's place (`resources/read` returns
    /// that part): `minirag://doc/{source}#page=12`.
    pub link: String,
    /// Only with `explain`: why the hit ranked where it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explained>,
}

/// A passage's place in its document; only the fields that apply are present.
#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Place {
    /// The page (PDF, scans), when the passage is on one page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// First and last page, when the passage crosses a page break.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<[u32; 2]>,
    /// The slide (PPTX).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slide: Option<u32>,
    /// The sheet (XLSX).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
    /// First and last row as the sheet numbers them (CSV: record numbers, header = 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<[u32; 2]>,
    /// First and last line of the file (text passed in and web pages: of the stored Markdown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<[u32; 2]>,
    /// The slug of the passage's heading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    /// The notebook cell (from 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell: Option<u32>,
    /// A transcript passage's cue time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
}

pub(crate) fn place(l: &Location) -> Place {
    let pair = |(a, b): (u32, u32)| [a, b];
    Place {
        page: l.pages.filter(|(a, b)| a == b).map(|(a, _)| a),
        pages: l.pages.filter(|(a, b)| a != b).map(pair),
        slide: l.slide,
        sheet: l.sheet.clone(),
        rows: l.rows.map(pair),
        lines: l.lines.map(pair),
        anchor: l.anchor.clone(),
        cell: l.cell,
        start: l.start.clone(),
    }
}

/// A hit's rank (1-based) and score in one list.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Ranked {
    pub rank: usize,
    pub score: f64,
}

/// The hit's place in each ranked list, and the fused score.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Explained {
    /// Rank and squared L2 distance in the vector list (absent: not in it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector: Option<Ranked>,
    /// Rank and BM25 score in the keyword list (absent: not in it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyword: Option<Ranked>,
    /// Rank and score of the hit's document in the whole-document list
    /// (BM25 over the whole document).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<Ranked>,
    /// The keyword share of the fusion.
    pub keyword_weight: f64,
    /// The fused score the hits are ordered by: the document's score
    /// (normalised vector similarity and whole-document BM25), halved for
    /// each chunk of the same document ranked before this one.
    pub fused: f64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SourceHits {
    pub source: String,
    pub title: String,
    pub hits: usize,
    /// The source relative to its root, for people.
    pub display_path: String,
}

/// `query_documents`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueryAnswer {
    pub results: Vec<Hit>,
    pub sources: Vec<SourceHits>,
    /// Parent id → the whole parent section, once per section.
    pub parents: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// `ingest_file`, `ingest_data`, `ingest_url`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Ingested {
    pub source: String,
    pub chunk_count: usize,
    pub title: String,
    /// Set when the chunks were stored without vectors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// `read_chunk_neighbors`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Neighbors {
    pub chunks: Vec<Hit>,
}

/// `read_file`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Document {
    pub source: String,
    /// `file`, `data` or `url`.
    pub source_type: String,
    pub title: String,
    pub chunk_count: u32,
    /// ISO 639-1 code of the document's main language; null when its text
    /// was too short or mixed to tell.
    pub language: Option<String>,
    /// The fields the document declares about itself (front matter,
    /// document properties, PDF Info, HTML `<meta>`), each with its values.
    pub meta: BTreeMap<String, Vec<String>>,
    /// The document as Markdown, rebuilt from its chunks (with `part`: the
    /// chunks at that place only).
    pub text: String,
    /// With `part`: the place the text spans.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Place>,
}

/// `delete_file`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Deleted {
    pub source: String,
    pub deleted_chunks: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListedFile {
    pub source: String,
    pub source_type: String,
    pub title: String,
    pub state: ListedStateName,
    pub chunk_count: u32,
    /// The OCR engine that read part of the document, or empty.
    pub ocr_engine: String,
    /// ISO 639-1 code of the main language; null when unknown or not indexed.
    pub language: Option<String>,
    /// Declared fields with their values; empty until indexed.
    pub meta: BTreeMap<String, Vec<String>>,
    /// Why the last sync that tried it could not index it (a file not
    /// indexed, or whose old version is kept); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Pairs as one map, field → values in stored order.
fn meta_map(pairs: Vec<(String, String)>) -> BTreeMap<String, Vec<String>> {
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (field, value) in pairs {
        map.entry(field).or_default().push(value);
    }
    map
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UnlistedFolder {
    pub path: String,
    /// The OS error; null for a root that is an empty folder.
    pub error: Option<String>,
    pub indexed_count: usize,
    pub message: String,
}

/// A listed file's state on the wire: an enum, so `outputSchema` lists the
/// values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ListedStateName {
    Ingested,
    /// The file changed, or its vectors are another model's.
    Stale,
    /// Chunked by an older scheme: the next sync chunks it again.
    StaleScheme,
    /// Seen, not in the index.
    NotIngested,
    /// In the index, under a folder that could not be listed.
    Unlisted,
    /// An indexed image no OCR engine can read now.
    Unreadable,
}

impl From<minirag_core::sync::ListedState> for ListedStateName {
    fn from(s: minirag_core::sync::ListedState) -> Self {
        use minirag_core::sync::ListedState as S;
        match s {
            S::Ingested => Self::Ingested,
            S::Stale => Self::Stale,
            S::StaleScheme => Self::StaleScheme,
            S::NotIngested => Self::NotIngested,
            S::Unlisted => Self::Unlisted,
            S::Unreadable => Self::Unreadable,
        }
    }
}

/// `list_files`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileList {
    pub files: Vec<ListedFile>,
    pub unlisted_folders: Vec<UnlistedFolder>,
}

/// `status`: always answers; without a configuration only `version` and
/// `configError`.
#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Status {
    pub version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roots: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db_path: Option<String>,
    /// The shared index's server (DB_URL), its password masked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db_url: Option<String>,
    /// The shared index's schema (DB_SCHEMA).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db_schema: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What goes in front of every query and every passage the model
    /// embeds (the e5 family's `query: ` / `passage: `); empty for none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_prefix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passage_prefix: Option<String>,
    /// Why the model in use is not the default (an index that keeps the
    /// model its vectors came from), and how to switch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_notice: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hybrid_weight: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_scheme: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_chunk_count: Option<u64>,
    /// Chunks without vectors: stored while no model loaded, or waiting to be
    /// re-embedded after a model change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vectorless_chunk_count: Option<u64>,
    /// The model whose vectors the index holds (its content id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheme_warning: Option<String>,
    /// Damage the index found in its files and contained, each naming the
    /// file it set aside; absent when the index is sound.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub damage: Vec<String>,
    /// Bytes of log the next cold open replays (a sync that leaves a long
    /// one folds it into a snapshot when it ends).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedder: Option<String>,
    /// The embedding server chunk text and queries are sent to (EMBED_URL,
    /// host only); absent when the encoder runs in this process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed_endpoint: Option<String>,
    /// The OCR engine (`tesseract 5.3.0 (rus+eng)`), or `unavailable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ocr: Option<String>,
    /// What to install (or fix) for OCR, when it is unavailable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ocr_hint: Option<String>,
    /// The live index (`RAG_WATCH=1`, or `minirag-mcp watch` in this process).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchStatus>,
}

/// `status.watch`.
#[derive(Debug, Default, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WatchStatus {
    pub active: bool,
    /// `events` (OS notifications) or `polling` (periodic rescans).
    pub mode: Option<String>,
    /// Changes seen and not yet applied.
    pub pending: u64,
    /// When the last change was applied (ISO 8601, UTC).
    pub last_change_at: Option<String>,
    /// Why the mode is what it is (the OS watch limit), when that is news.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

#[derive(Debug, Default, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Counts {
    pub scanned: u64,
    pub ingested: u64,
    pub reembedded: u64,
    pub skipped: u64,
    pub moved: u64,
    pub deleted: u64,
    /// Always 0: document labels are out of scope.
    pub relabelled: u64,
    pub unreadable: u64,
    pub failed: u64,
    /// Chunks the model embedded; unchanged chunks reuse their vectors.
    pub embedded_chunks: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct SourceError {
    pub source: String,
    pub error: String,
}

/// The CLI's `sync --json`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Synced {
    pub counts: Counts,
    pub errors: Vec<SourceError>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

pub(crate) fn counts(c: &SyncCounts) -> Counts {
    Counts {
        scanned: c.scanned,
        ingested: c.ingested,
        reembedded: c.reembedded,
        skipped: c.skipped,
        moved: c.moved,
        deleted: c.deleted,
        relabelled: 0,
        unreadable: c.unreadable,
        failed: c.failed,
        embedded_chunks: c.embedded_chunks,
    }
}

pub(crate) fn source_errors(r: &SyncReport) -> Vec<SourceError> {
    r.errors
        .iter()
        .map(|(s, e)| SourceError {
            source: s.clone(),
            error: e.clone(),
        })
        .collect()
}

pub(crate) fn notice_of(r: &SyncReport) -> Option<String> {
    (!r.notices.is_empty()).then(|| r.notices.join(" "))
}

pub(crate) fn synced(r: &SyncReport) -> Synced {
    Synced {
        counts: counts(&r.counts),
        errors: source_errors(r),
        notice: notice_of(r),
    }
}

fn ranked(r: &ListRank) -> Ranked {
    Ranked {
        rank: r.rank,
        score: r.score,
    }
}

fn hit(r: &ResultItem) -> Hit {
    Hit {
        explain: None,
        text: r.text.clone(),
        source: r.source.clone(),
        title: r.title.clone(),
        chunk_index: r.chunk_index,
        score: r.score,
        distance: r.distance,
        parent_id: r.parent_id.clone(),
        location: r.location.as_ref().map(place),
        citation: r.citation(),
        link: crate::resources::link_of(&r.source, r.location.as_ref()),
    }
}

pub(crate) fn query_answer(r: &QueryResponse) -> QueryAnswer {
    let explain = |i: usize| {
        let e = r.explain.as_ref()?.get(i)?;
        Some(Explained {
            vector: e.vector.as_ref().map(ranked),
            keyword: e.keyword.as_ref().map(ranked),
            document: e.document.as_ref().map(ranked),
            keyword_weight: e.keyword_weight,
            fused: e.fused,
        })
    };
    QueryAnswer {
        results: r
            .results
            .iter()
            .enumerate()
            .map(|(i, item)| Hit {
                explain: explain(i),
                ..hit(item)
            })
            .collect(),
        sources: r
            .sources
            .iter()
            .map(|s| SourceHits {
                source: s.source.clone(),
                title: s.title.clone(),
                hits: s.hits,
                display_path: s.display_path.clone(),
            })
            .collect(),
        parents: r.parents.iter().cloned().collect(),
        notice: r.notice.clone(),
    }
}

/// What every ingest tool answers.
pub(crate) fn ingested(out: &IngestOutcome) -> Ingested {
    Ingested {
        source: out.source.clone(),
        chunk_count: out.chunk_count,
        title: out.title.clone(),
        notice: out.notice.clone(),
    }
}

impl App {
    pub(crate) fn query(
        &self,
        query: &str,
        top_k: i64,
        scope: &[String],
        filters: &Filters,
        explain: bool,
    ) -> Result<QueryAnswer> {
        let r = self.engine()?.query(QueryRequest {
            query,
            top_k,
            scope,
            filter: filters.request(),
            explain,
        })?;
        Ok(query_answer(&r))
    }

    pub(crate) fn status(&self) -> Status {
        let config = match &self.config {
            Ok(c) => c,
            Err(e) => {
                return Status {
                    version: VERSION.into(),
                    config_error: Some(e.to_string()),
                    ..Status::default()
                }
            }
        };
        let mut out = Status {
            version: VERSION.into(),
            roots: Some(self.root_strings()),
            db_path: config.database.is_none().then(|| config.db_path.clone()),
            db_url: config
                .database
                .as_ref()
                .map(|d| minirag_index_pg::mask_password(&d.url)),
            db_schema: config.database.as_ref().map(|d| d.schema.clone()),
            model: Some(
                config
                    .model_path
                    .clone()
                    .unwrap_or_else(|| config.model_name.clone()),
            ),
            model_notice: self.model_notice.clone(),
            hybrid_weight: Some(config.hybrid_weight),
            chunk_scheme: Some(CHUNK_SCHEME),
            ..Status::default()
        };
        match self.engine().and_then(|e| Ok(e.index_state()?)) {
            Ok(IndexState {
                stats: s,
                vector_model,
            }) => {
                out.chunk_count = Some(s.chunk_count);
                out.source_count = Some(s.source_count);
                out.stale_chunk_count = Some(s.stale_chunk_count);
                out.vectorless_chunk_count = Some(s.vectorless_chunk_count);
                out.vector_model = vector_model;
                let damaged = !s.damage.is_empty();
                out.damage = s.damage;
                out.log_bytes = (s.log_bytes > 0).then_some(s.log_bytes);
                if s.stale_chunk_count > 0 {
                    out.scheme_warning = Some(format!(
                        "{} wait to be rebuilt from their files ({}). Re-sync to rebuild them: sync_start (CLI: `minirag-mcp sync`).",
                        minirag_core::plural::counted(s.stale_chunk_count, "chunk", "chunks"),
                        if damaged {
                            "marked after the damage `damage` names, or an older chunking scheme"
                        } else {
                            "an older chunking scheme"
                        }
                    ));
                }
            }
            Err(e) => out.index_error = Some(e.to_string()),
        }
        out.watch = self.watch_status();
        if let Ok(engine) = self.engine() {
            match engine.ocr_engine() {
                Ok(name) => out.ocr = Some(name),
                Err(hint) => {
                    out.ocr = Some("unavailable".into());
                    out.ocr_hint = Some(hint.to_string());
                }
            }
        }
        if let Some(embedder) = self.embedder() {
            out.embedder = Some(embedder_state(&embedder.embedder().state()));
            out.embed_endpoint = embedder.endpoint();
            if out.embed_endpoint.is_some() {
                out.model = Some(embedder.name());
            } else if let Some(prompts) = embedder.prompts(&config.prompts) {
                out.query_prefix = Some(prompts.query);
                out.passage_prefix = Some(prompts.passage);
            }
        }
        out
    }

    fn watch_status(&self) -> Option<WatchStatus> {
        let s = self.watch.lock().unwrap_or_else(|p| p.into_inner()).clone();
        s.mode.map(|mode| WatchStatus {
            active: s.active,
            mode: Some(mode.as_str().into()),
            pending: s.pending as u64,
            last_change_at: s.last_change_at.map(iso_utc),
            notice: s.notice,
        })
    }

    pub(crate) fn ingest_file(&self, path: &Path) -> Result<Ingested> {
        let out = self.engine()?.ingest_path(&path.display().to_string())?;
        Ok(ingested(&out))
    }

    pub(crate) fn ingest_data(
        &self,
        source: &str,
        data: &str,
        format: &str,
        title: Option<&str>,
    ) -> Result<Ingested> {
        let out = self.engine()?.ingest_data(source, data, format, title)?;
        Ok(ingested(&out))
    }

    pub(crate) fn ingest_url(
        &self,
        url: &str,
        source: Option<&str>,
        title: Option<&str>,
    ) -> Result<Ingested> {
        let out = self.engine()?.ingest_url(url, source, title)?;
        Ok(ingested(&out))
    }

    /// A document, or with `part` (`page=12`, `lines=40-52`, `slide=3`,
    /// `rows=4-9`, `cell=2` or a heading's anchor) the part at that place.
    pub(crate) fn read_file(&self, source: &str, part: Option<&str>) -> Result<Document> {
        let engine = self.engine()?;
        let (doc, location) = match part {
            None => (engine.read_document(source)?, None),
            Some(p) => {
                let (doc, at) = engine.read_part(source, &crate::resources::wanted(p)?)?;
                (doc, Some(place(&at)))
            }
        };
        Ok(Document {
            source: doc.record.source,
            source_type: doc.record.source_type.as_str().into(),
            title: doc.record.title,
            chunk_count: doc.record.chunk_count,
            language: doc.record.attributes.language,
            meta: meta_map(doc.record.attributes.meta),
            text: doc.text,
            location,
        })
    }

    pub(crate) fn neighbors(
        &self,
        source: &str,
        chunk_index: u32,
        before: u32,
        after: u32,
    ) -> Result<Neighbors> {
        let items = self
            .engine()?
            .neighbors(source, chunk_index, before, after)?;
        Ok(Neighbors {
            chunks: items.iter().map(hit).collect(),
        })
    }

    pub(crate) fn delete(&self, source: &str) -> Result<Deleted> {
        let n = self.engine()?.delete(source)?;
        Ok(Deleted {
            source: source.into(),
            deleted_chunks: n,
        })
    }

    pub(crate) fn list_files(&self, scope: &[String], filters: &Filters) -> Result<FileList> {
        let listing = self.engine()?.list_files(scope, filters.request())?;
        Ok(FileList {
            files: listing
                .files
                .into_iter()
                .map(|f| ListedFile {
                    source: f.source,
                    source_type: f.source_type.as_str().into(),
                    title: f.title,
                    state: f.state.into(),
                    chunk_count: f.chunk_count,
                    ocr_engine: f.ocr_engine,
                    language: f.attributes.language,
                    meta: meta_map(f.attributes.meta),
                    error: f.error,
                })
                .collect(),
            unlisted_folders: listing
                .unlisted
                .into_iter()
                .map(|u| UnlistedFolder {
                    path: u.path,
                    error: u.error,
                    indexed_count: u.indexed_count,
                    message: u.message,
                })
                .collect(),
        })
    }

    /// Runs one sync job over the roots, or over `scope` (a folder or file
    /// under them), to its end on this thread.
    pub(crate) fn sync(&self, scope: Option<&Path>, progress: Progress<'_>) -> Result<SyncReport> {
        let scope = scope.map(|s| s.display().to_string());
        let jobs = Arc::new(Jobs::default());
        let job = jobs
            .admit(self.engine()?, scope.as_deref(), Arc::default())?
            .run(progress);
        job.report
            .ok_or_else(|| anyhow!(job.error.unwrap_or_else(|| "the sync failed".into())))
    }
}

/// The embedder's state as `status` words it.
fn embedder_state(state: &EmbedderState) -> String {
    match state {
        EmbedderState::NotLoaded => "loads on first use".into(),
        EmbedderState::Loading { done, total: 0 } if *done == 0 => "loading".into(),
        EmbedderState::Loading { done, total } => format!(
            "downloading {}% ({} of {} MB)",
            (done * 100).checked_div(*total).unwrap_or(0),
            done >> 20,
            total >> 20
        ),
        EmbedderState::Ready => "loaded".into(),
        EmbedderState::Failed { reason } => format!("failed: {reason}"),
    }
}
