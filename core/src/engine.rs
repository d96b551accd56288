//! The use cases, written once over the ports: ingest (convert → title →
//! chunk → embed → replace) and query (validate → embed → candidates → fuse
//! → filter → shape). The MCP server and the CLI only parse, call and format.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

pub use crate::progress::{SyncControl, EMBED_BATCH};

use crate::chunk::{pack_sections, parent_id, section_markdown, Chunk, ChunkOptions};
use crate::config::Config;
use crate::datauri::strip_data_uri_images;
use crate::error::EngineError;
use crate::formats::{self, FormatKind};
use crate::ports::{
    Clock, ConvertRequest, Converted, Converter, EmbedError, Embedder, Embeddings, Fetcher,
    FileError, Files, Index, IndexError, IndexView, Ocr, SourceRecord, SourceType, TokenCounter,
};
use crate::reconstruct::{document, join_chunks};
use crate::search::fusion::{apply_grouping, apply_max_files, filter_max_distance};
use crate::search::shape::sources_of;
use crate::search::{
    candidate_window, clamp_top_k, fuse_documents, validate_query, Candidate, DocumentHit, Explain,
    Grouping, ListRank, QueryError, QueryResponse, ResultItem, Scope,
};
use crate::time::iso_utc;
use crate::title::{content_title, file_title, image_title};
use crate::CHUNK_SCHEME;

/// The settings the use cases need, taken from [`Config`].
#[derive(Debug, Clone)]
pub struct Settings {
    pub roots: Vec<String>,
    pub budget: usize,
    pub hybrid_weight: f64,
    pub grouping: Option<Grouping>,
    pub max_distance: Option<f64>,
    pub max_files: Option<usize>,
    pub max_file_size: u64,
    /// A PDF page with fewer non-whitespace characters is OCRed (0: never).
    pub ocr_min_chars_per_page: u32,
}

impl From<&Config> for Settings {
    fn from(c: &Config) -> Self {
        Self {
            roots: c.roots.clone(),
            budget: c.chunk_token_budget,
            hybrid_weight: c.hybrid_weight,
            grouping: c.grouping,
            max_distance: c.max_distance,
            max_files: c.max_files,
            max_file_size: c.max_file_size,
            ocr_min_chars_per_page: c.ocr_min_chars_per_page,
        }
    }
}

/// The adapters the engine runs on.
#[derive(Clone)]
pub struct Ports {
    pub converter: Arc<dyn Converter>,
    pub embedder: Arc<dyn Embedder>,
    pub tokens: Arc<dyn TokenCounter>,
    pub index: Arc<dyn Index>,
    pub fetcher: Arc<dyn Fetcher>,
    pub files: Arc<dyn Files>,
    pub clock: Arc<dyn Clock>,
    pub ocr: Arc<dyn Ocr>,
}

/// What an ingest stored.
#[derive(Debug, Clone, PartialEq)]
pub struct IngestOutcome {
    pub source: String,
    pub chunk_count: usize,
    pub title: String,
    /// Set when the chunks were stored without vectors (model unavailable).
    pub notice: Option<String>,
}

/// A converted and chunked document waiting to be embedded and written.
#[derive(Debug, Clone)]
pub struct PreparedIngest {
    source: String,
    source_type: SourceType,
    title: String,
    title_seeded: bool,
    chunks: Vec<Chunk>,
    file_hash: String,
    mtime: f64,
    ocr_engine: String,
}

impl PreparedIngest {
    pub fn source(&self) -> &str {
        &self.source
    }
}

/// A query as the tools receive it.
#[derive(Debug, Clone, Copy)]
pub struct QueryRequest<'a> {
    pub query: &'a str,
    pub top_k: i64,
    pub scope: &'a [String],
    /// Carry each result's rank and score in every list, and the fused score.
    pub explain: bool,
}

/// A document rebuilt from the index.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadDocument {
    pub record: SourceRecord,
    pub text: String,
}

pub struct Engine {
    settings: Settings,
    ports: Ports,
}

/// Title decision for one ingest.
struct Titled {
    title: String,
    seed: bool,
}

impl Engine {
    pub fn new(settings: Settings, ports: Ports) -> Self {
        Self { settings, ports }
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn ports(&self) -> &Ports {
        &self.ports
    }

    // ------------------------------------------------------------ ingest

    /// Ingests a file already read by the caller. `path` is the resolved
    /// absolute path (the source id); `file_hash` the sha256 hex of `bytes`.
    pub fn ingest_file(
        &self,
        path: &str,
        bytes: &[u8],
        file_hash: &str,
        mtime: f64,
    ) -> Result<IngestOutcome, EngineError> {
        self.commit(self.prepare_file(path, bytes, file_hash, mtime)?)
    }

    /// Reads a file through the [`Files`] port and ingests it.
    pub fn ingest_path(&self, path: &str) -> Result<IngestOutcome, EngineError> {
        self.commit(self.prepare_path(path)?)
    }

    /// [`Engine::prepare_path`], reporting OCR pages to a sync's progress
    /// and stopping between pages once its `cancel` is set.
    pub fn prepare_path_controlled(
        &self,
        path: &str,
        control: Option<SyncControl<'_>>,
    ) -> Result<PreparedIngest, EngineError> {
        let max = self.settings.max_file_size;
        let read = self.ports.files.read(path, max).map_err(|e| match e {
            FileError::TooLarge { path, size } => EngineError::TooLarge { path, size, max },
            e => EngineError::File(e),
        })?;
        let converted = self.convert_file(path, &read.bytes, control)?;
        // The file's bytes go before chunking: a big file's bytes, Markdown
        // and chunks are never all in memory at once.
        drop(read.bytes);
        self.prepare_converted(path, converted, &read.sha256, read.mtime)
    }

    /// Reads (refusing files over `MAX_FILE_SIZE` before reading them),
    /// converts and chunks a file: what a sync runs ahead of the embedder.
    pub fn prepare_path(&self, path: &str) -> Result<PreparedIngest, EngineError> {
        self.prepare_path_controlled(path, None)
    }

    /// The CPU-light first half of a file ingest (checks, convert, title,
    /// chunk), so a sync can prepare the next files while this one embeds.
    pub fn prepare_file(
        &self,
        path: &str,
        bytes: &[u8],
        file_hash: &str,
        mtime: f64,
    ) -> Result<PreparedIngest, EngineError> {
        self.prepare_file_controlled(path, bytes, file_hash, mtime, None)
    }

    /// Checks a file's format and size, converts it (OCR where needed) and
    /// finds its title: (converted, title, OCR engine).
    fn convert_file(
        &self,
        path: &str,
        bytes: &[u8],
        control: Option<SyncControl<'_>>,
    ) -> Result<(Converted, String, String), EngineError> {
        let extension = file_extension(path);
        let format = match formats::by_extension(&extension) {
            Some(f) => f,
            None => {
                return Err(EngineError::UnsupportedExtension {
                    path: path.into(),
                    extension,
                })
            }
        };
        let size = bytes.len() as u64;
        if size > self.settings.max_file_size {
            return Err(EngineError::TooLarge {
                path: path.into(),
                size,
                max: self.settings.max_file_size,
            });
        }
        Ok(match format.kind {
            FormatKind::Image => {
                let (markdown, engine) = self.recognise_image(path, bytes)?;
                let converted = Converted {
                    markdown,
                    ..Default::default()
                };
                (converted, image_title(path), engine)
            }
            FormatKind::Document => {
                let (converted, engine) =
                    self.convert_with_ocr(path, format.key, bytes, control)?;
                let title = file_title(
                    path,
                    converted.metadata_title.as_deref(),
                    &converted.markdown,
                );
                (converted, title, engine)
            }
        })
    }

    fn prepare_file_controlled(
        &self,
        path: &str,
        bytes: &[u8],
        file_hash: &str,
        mtime: f64,
        control: Option<SyncControl<'_>>,
    ) -> Result<PreparedIngest, EngineError> {
        let converted = self.convert_file(path, bytes, control)?;
        self.prepare_converted(path, converted, file_hash, mtime)
    }

    /// A converted file (Markdown, title, OCR engine) → its chunks.
    fn prepare_converted(
        &self,
        path: &str,
        (converted, title, ocr_engine): (Converted, String, String),
        file_hash: &str,
        mtime: f64,
    ) -> Result<PreparedIngest, EngineError> {
        let titled = Titled { title, seed: true };
        let prepared = self.prepare(
            path,
            SourceType::File,
            converted.markdown,
            titled,
            file_hash,
            mtime,
        )?;
        Ok(PreparedIngest {
            ocr_engine,
            ..prepared
        })
    }

    /// Ingests caller-supplied content under an arbitrary id.
    pub fn ingest_data(
        &self,
        source: &str,
        data: &str,
        format: &str,
        title: Option<&str>,
    ) -> Result<IngestOutcome, EngineError> {
        let (markdown, metadata_title) = match format {
            "text" | "markdown" => (data.to_string(), None),
            "html" => {
                let c = self.ports.converter.convert(ConvertRequest {
                    name: source,
                    format: "html",
                    bytes: data.as_bytes(),
                })?;
                (c.markdown, c.metadata_title)
            }
            other => {
                return Err(EngineError::BadFormat {
                    format: other.into(),
                })
            }
        };
        let titled = titled_or_id(
            content_title(title, metadata_title.as_deref(), &markdown),
            source,
        );
        self.commit(self.prepare(source, SourceType::Data, markdown, titled, "", 0.0)?)
    }

    /// Fetches a URL through the [`Fetcher`] (which enforces the URL rules)
    /// and ingests it under `source` (default: the URL).
    pub fn ingest_url(
        &self,
        url: &str,
        source: Option<&str>,
        title: Option<&str>,
    ) -> Result<IngestOutcome, EngineError> {
        let fetched = self.ports.fetcher.fetch(url)?;
        let format = format_for_content_type(fetched.content_type.as_deref(), &fetched.final_url);
        let converted = self.ports.converter.convert(ConvertRequest {
            name: url,
            format,
            bytes: &fetched.bytes,
        })?;
        let source = source
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .unwrap_or(url);
        let titled = titled_or_id(
            content_title(
                title,
                converted.metadata_title.as_deref(),
                &converted.markdown,
            ),
            source,
        );
        self.commit(self.prepare(source, SourceType::Url, converted.markdown, titled, "", 0.0)?)
    }

    fn prepare(
        &self,
        source: &str,
        source_type: SourceType,
        markdown: String,
        titled: Titled,
        file_hash: &str,
        mtime: f64,
    ) -> Result<PreparedIngest, EngineError> {
        let stripped = match strip_data_uri_images(&markdown) {
            Cow::Owned(s) => Some(s),
            Cow::Borrowed(_) => None,
        };
        let markdown = stripped.unwrap_or(markdown);
        if markdown.trim().is_empty() {
            return Err(EngineError::Empty {
                source: source.into(),
            });
        }
        let options = ChunkOptions {
            budget: self.settings.budget,
            title: titled.seed.then_some(titled.title.as_str()),
            counter: self.ports.tokens.as_ref(),
        };
        let sectioned = section_markdown(&markdown, options);
        // The sections own their text: the Markdown goes before packing.
        drop(markdown);
        let chunked = pack_sections(sectioned, options);
        if chunked.chunks.is_empty() {
            return Err(EngineError::Empty {
                source: source.into(),
            });
        }
        Ok(PreparedIngest {
            source: source.into(),
            source_type,
            title: titled.title,
            title_seeded: chunked.title_seeded,
            chunks: chunked.chunks,
            file_hash: file_hash.into(),
            mtime,
            ocr_engine: String::new(),
        })
    }

    /// The second half of an ingest without embedding: the chunks are
    /// stored keyword-searchable and vector-less, for a later
    /// [`Engine::reembed`] (a sync's second phase).
    pub fn commit_keyword_only(
        &self,
        prepared: PreparedIngest,
    ) -> Result<IngestOutcome, EngineError> {
        self.store(prepared, None, None)
    }

    /// The second half of an ingest: embed (reusing unchanged chunks'
    /// vectors) and replace the source's chunks in one index write.
    pub fn commit(&self, prepared: PreparedIngest) -> Result<IngestOutcome, EngineError> {
        let texts: Vec<&str> = prepared.chunks.iter().map(|c| c.text.as_str()).collect();
        let embedded = self.embed_chunks(&texts);
        // Freed before the write: a Vec is dropped at the end of its scope,
        // and a big file's list of texts would outlive the index write
        // (and a compaction inside it) otherwise.
        drop(texts);
        let (vectors, notice) = match embedded {
            Ok(v) => (Some(v), None),
            Err(EmbedError::Unavailable { reason, .. }) => (
                None,
                Some(format!(
                    "stored without vectors because the embedding model could not be loaded ({reason}); \
                     keyword search finds it now, and the next sync with a working model adds the vectors"
                )),
            ),
            Err(e) => return Err(EngineError::Embed(e)),
        };
        self.store(prepared, vectors, notice)
    }

    /// Replaces the source's chunks (and vectors, when given) in one write.
    fn store(
        &self,
        prepared: PreparedIngest,
        vectors: Option<Embeddings>,
        notice: Option<String>,
    ) -> Result<IngestOutcome, EngineError> {
        let PreparedIngest {
            source,
            source_type,
            title,
            title_seeded,
            chunks,
            file_hash,
            mtime,
            ocr_engine,
        } = prepared;
        let chunk_count = chunks.len();
        let record = SourceRecord {
            source: source.clone(),
            source_type,
            title: title.clone(),
            title_seeded,
            file_hash,
            mtime,
            ingested_at: iso_utc(self.ports.clock.now_unix_seconds()),
            chunk_count: chunk_count as u32,
            scheme_version: CHUNK_SCHEME,
            embedded_with: vectors
                .as_ref()
                .map(|_| self.ports.embedder.model_id().to_string()),
            ocr_engine,
        };
        self.ports.index.replace_source(record, chunks, vectors)?;
        Ok(IngestOutcome {
            source,
            chunk_count,
            title,
            notice,
        })
    }

    /// Embeds a source's stored chunks again with the current model (its
    /// bytes and scheme are current; its vectors are missing or of another
    /// model). Nothing is converted or chunked. It runs in batches of
    /// [`EMBED_BATCH`] chunks, each stored (durable) on its own: memory stays
    /// bounded by the batch whatever the source's size, and a killed run
    /// keeps what it finished, which the next run reuses through the
    /// embedding cache. After each batch `after_batch(embedded, total)` is
    /// told the source's progress; it returns `false` to stop there (a cancel).
    pub fn reembed(
        &self,
        source: &str,
        after_batch: &mut dyn FnMut(u32, u32) -> bool,
    ) -> Result<IngestOutcome, EngineError> {
        let record = self
            .ports
            .index
            .source(source)?
            .ok_or_else(|| EngineError::NotFound {
                source: source.into(),
            })?;
        let total = record.chunk_count;
        let model = self.ports.embedder.model_id().to_string();
        let mut first = 0u32;
        while first < total {
            let last = first.saturating_add(EMBED_BATCH).min(total) - 1;
            let chunks = self.ports.index.chunks(source, first..=last)?;
            if chunks.len() as u32 != last - first + 1 {
                // Replaced or deleted meanwhile: the next sync plans it anew.
                return Err(EngineError::NotFound {
                    source: source.into(),
                });
            }
            let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
            let vectors = self.embed_chunks(&texts)?;
            let complete = last + 1 == total;
            self.ports
                .index
                .set_vectors(source, &model, first, &texts, vectors, complete)?;
            first = last + 1;
            if !after_batch(first, total) && first < total {
                return Err(EngineError::Cancelled {
                    done: first as u64,
                    total: total as u64,
                    unit: "chunks to embed",
                });
            }
        }
        Ok(IngestOutcome {
            source: source.into(),
            chunk_count: total as usize,
            title: record.title,
            notice: None,
        })
    }

    /// Embeds chunk texts in one batch, reusing stored vectors of unchanged texts.
    fn embed_chunks(&self, texts: &[&str]) -> Result<Embeddings, EmbedError> {
        let embedder = &self.ports.embedder;
        let cached = self.ports.index.cached_vectors(embedder.model_id(), texts);
        let missing: Vec<&str> = texts
            .iter()
            .zip(&cached)
            .filter(|(_, c)| c.is_none())
            .map(|(t, _)| *t)
            .collect();
        let fresh = if missing.is_empty() {
            Embeddings::new(embedder.dimension())
        } else {
            embedder.embed_documents(&missing)?
        };
        let mut out = Embeddings::new(embedder.dimension());
        let mut next = 0;
        for c in &cached {
            match c {
                Some(v) if v.len() == out.dim => out.push(v),
                _ => {
                    out.push(fresh.row(next));
                    next += 1;
                }
            }
        }
        Ok(out)
    }

    // ------------------------------------------------------------ query

    pub fn query(&self, request: QueryRequest<'_>) -> Result<QueryResponse, EngineError> {
        let query = validate_query(request.query)?;
        let top_k = clamp_top_k(request.top_k)?;
        if request.scope.iter().any(|s| s.trim().is_empty()) {
            return Err(QueryError::EmptyScope.into());
        }
        let scope = Scope::new(request.scope.iter().map(|s| s.trim().to_string()));
        let window = candidate_window(top_k);
        let s = &self.settings;
        // One view for every read of this query: searches, chunks, titles
        // and parents all come from the same index generation.
        let view = self.ports.index.read()?;
        let index: &dyn IndexView = view.as_ref();

        let mut notices: Vec<String> = Vec::new();
        // The keyword side runs on a second thread while the query is
        // embedded and the vectors are scanned: on a large index the two
        // sides cost about the same, and the cores are otherwise idle.
        let embedder = &self.ports.embedder;
        let (query_vector, vector_hits, keyword_hits) = std::thread::scope(|t| {
            // Chunks by keyword, then whole documents by keyword.
            let keyword_side = || -> Result<(Vec<Candidate>, Vec<DocumentHit>), IndexError> {
                let chunks = index.keyword_search(query, window, &scope)?;
                let documents = index.document_search(query, window, &scope)?;
                Ok((chunks, documents))
            };
            let keyword = (s.hybrid_weight > 0.0).then(|| t.spawn(keyword_side));
            // Stored vectors of another model are never compared with this
            // model's query vector: until sync re-embeds them, keyword only.
            let query_vector = embedder
                .embed_query(query)
                .map_err(|e| e.to_string())
                .and_then(|v| match index.vector_model() {
                    Some(stored) if stored != embedder.model_id() => Err(format!(
                        "the index holds vectors of another model ({stored}); \
                         run sync_start (CLI: `minirag-mcp sync`) to embed them with the configured one"
                    )),
                    _ => Ok(v),
                });
            let vector_hits = match &query_vector {
                Ok(v) => index.vector_search(v, window, &scope),
                Err(_) => Ok(Vec::new()),
            };
            let keyword_hits = match keyword {
                Some(h) => h.join().unwrap_or_else(|_| {
                    Err(IndexError::Storage {
                        cause: None,
                        reason: "the keyword search crashed".into(),
                    })
                }),
                // No vectors to rank by: keyword order even at weight 0.
                None if query_vector.is_err() => keyword_side(),
                None => Ok((Vec::new(), Vec::new())),
            };
            (query_vector, vector_hits, keyword_hits)
        });
        let query_vector = match query_vector {
            Ok(v) => Some(v),
            Err(e) => {
                notices.push(format!("keyword-only results: {e}"));
                None
            }
        };
        let vector_hits = vector_hits?;
        // A failing keyword side degrades to vector order, said in the
        // notice; with no vector side either, the query fails.
        let (keyword_hits, documents) = match keyword_hits {
            Ok(h) => h,
            Err(e) if query_vector.is_some() => {
                notices.push(format!(
                    "vector-only results: the keyword search failed ({e})"
                ));
                (Vec::new(), Vec::new())
            }
            Err(e) => return Err(e.into()),
        };
        let weight = if query_vector.is_some() {
            crate::search::blind::keyword_weight_for(
                query,
                s.hybrid_weight,
                self.ports.tokens.as_ref(),
            )
        } else {
            1.0
        };

        let mut hits = fuse_documents(&vector_hits, &keyword_hits, &documents, weight);
        if query_vector.is_some() {
            if let Some(max) = s.max_distance {
                hits = filter_max_distance(hits, max);
            }
            if let Some(mode) = s.grouping {
                hits = apply_grouping(hits, mode);
            }
        }
        if let Some(max) = s.max_files {
            hits = apply_max_files(hits, max);
        }
        hits.truncate(top_k);

        let keys: Vec<_> = hits.iter().map(|h| h.key.clone()).collect();
        let chunks = index.get_chunks(&keys)?;
        let mut titles: HashMap<String, String> = HashMap::new();
        let mut results = Vec::with_capacity(hits.len());
        let mut explained = Vec::new();
        let mut parent_keys: Vec<(String, u32)> = Vec::new();
        for (hit, chunk) in hits.iter().zip(chunks) {
            let Some(chunk) = chunk else { continue };
            if request.explain {
                explained.push(Explain {
                    vector: list_rank(&vector_hits, &hit.key),
                    keyword: list_rank(&keyword_hits, &hit.key),
                    document: documents
                        .iter()
                        .position(|d| d.source == hit.key.source)
                        .map(|i| ListRank {
                            rank: i + 1,
                            score: documents[i].score as f64,
                        }),
                    keyword_weight: weight,
                    fused: hit.score,
                });
            }
            let source = &hit.key.source;
            if !titles.contains_key(source) {
                let title = index
                    .source(source)?
                    .map(|r| r.title)
                    .unwrap_or_else(|| source.clone());
                titles.insert(source.clone(), title);
            }
            if !parent_keys
                .iter()
                .any(|(s, p)| s == source && *p == chunk.parent)
            {
                parent_keys.push((source.clone(), chunk.parent));
            }
            results.push(ResultItem {
                text: chunk.text,
                source: source.clone(),
                title: titles[source].clone(),
                chunk_index: chunk.index,
                score: hit.score,
                distance: hit.distance,
                parent_id: Some(parent_id(source, chunk.parent)),
            });
        }
        let mut parents = Vec::with_capacity(parent_keys.len());
        for (source, parent) in parent_keys {
            let units = index.parent_chunks(&source, parent)?;
            let units: Vec<&Chunk> = units.iter().collect();
            parents.push((parent_id(&source, parent), join_chunks(&units)));
        }

        if query_vector.is_some() {
            let waiting = index.vectorless_chunks()?;
            if waiting > 0 {
                notices.push(format!(
                    "{waiting} chunks are not embedded yet (a sync is embedding them, or the next one will); \
                     until then they are found by their words only."
                ));
            }
        }
        if results.is_empty() {
            if index.stats()?.chunk_count == 0 {
                notices.push(
                    "The index is empty: nothing has been ingested yet. Run sync_start (CLI: `minirag-mcp sync`) \
                     to index the configured folders, or ingest_file for one file."
                        .into(),
                );
            } else if !scope.is_all() && index.sources(&scope)?.is_empty() {
                notices.push(format!(
                    "No indexed document is under scope {}. Scopes match the absolute `source` of a document \
                     (a path, URL or id), not its `displayPath`; pass an absolute folder such as a result's `source` folder.",
                    scope.prefixes().iter().map(|p| format!("'{p}'")).collect::<Vec<_>>().join(", ")
                ));
            }
        }
        let sources = sources_of(&results, &s.roots);
        Ok(QueryResponse {
            results,
            sources,
            parents,
            notice: (!notices.is_empty()).then(|| notices.join(" ")),
            explain: request.explain.then_some(explained),
        })
    }

    // ------------------------------------------------------------ reads

    /// Chunks `chunk_index - before ..= chunk_index + after` of a source, as
    /// result items with score 0 and no distance. Unknown source → empty.
    pub fn neighbors(
        &self,
        source: &str,
        chunk_index: u32,
        before: u32,
        after: u32,
    ) -> Result<Vec<ResultItem>, EngineError> {
        let view = self.ports.index.read()?;
        let Some(record) = view.source(source)? else {
            return Ok(Vec::new());
        };
        let range = chunk_index.saturating_sub(before)..=chunk_index.saturating_add(after);
        let chunks = view.chunks(source, range)?;
        Ok(chunks
            .into_iter()
            .map(|c: Chunk| ResultItem {
                parent_id: Some(parent_id(source, c.parent)),
                text: c.text,
                source: source.into(),
                title: record.title.clone(),
                chunk_index: c.index,
                score: 0.0,
                distance: None,
            })
            .collect())
    }

    /// The whole document rebuilt from its chunks, headings restored.
    pub fn read_document(&self, source: &str) -> Result<ReadDocument, EngineError> {
        let view = self.ports.index.read()?;
        let record = view.source(source)?.ok_or_else(|| EngineError::NotFound {
            source: source.into(),
        })?;
        let chunks = view.chunks(source, 0..=u32::MAX)?;
        let seeded = record.title_seeded.then_some(record.title.as_str());
        let text = document(&chunks, seeded);
        Ok(ReadDocument { record, text })
    }

    /// Removes a source from the index; unknown sources are an error.
    pub fn delete(&self, source: &str) -> Result<usize, EngineError> {
        match self.ports.index.delete_source(source)? {
            0 => Err(EngineError::NotFound {
                source: source.into(),
            }),
            n => Ok(n),
        }
    }
}

/// A key's 1-based rank and score in one side's list.
fn list_rank(list: &[crate::search::Candidate], key: &crate::search::ChunkKey) -> Option<ListRank> {
    list.iter().position(|c| &c.key == key).map(|i| ListRank {
        rank: i + 1,
        score: list[i].value as f64,
    })
}

/// Explicit or derived title; without one the id is stored and nothing seeded.
fn titled_or_id(title: Option<String>, source: &str) -> Titled {
    match title {
        Some(title) => Titled { title, seed: true },
        None => Titled {
            title: source.into(),
            seed: false,
        },
    }
}

/// Lower-case extension of the last path segment, without the dot.
pub fn file_extension(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((base, ext)) if !base.is_empty() => ext.to_lowercase(),
        _ => String::new(),
    }
}

/// Converter format for a fetched body: by media type, else by the URL's
/// extension, else HTML.
fn format_for_content_type(content_type: Option<&str>, url: &str) -> &'static str {
    if let Some(f) = content_type.and_then(formats::by_content_type) {
        return f.key;
    }
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.rsplit('/')
        .next()
        .and_then(|n| n.rsplit_once('.'))
        .and_then(|(_, e)| formats::by_extension(&e.to_ascii_lowercase()))
        .filter(|f| f.kind == FormatKind::Document)
        .map_or("html", |f| f.key)
}

#[cfg(test)]
mod tests;

pub mod ocr;
