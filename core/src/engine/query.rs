//! Query: validate → embed → candidates from every list → fuse → filter
//! → shape, all read from one index view.

use std::collections::HashMap;

use super::Engine;
use crate::chunk::{parent_id, Chunk};
use crate::error::EngineError;
use crate::ports::{EmbedError, IndexError, IndexView, Readiness};
use crate::reconstruct::join_chunks;
use crate::search::fusion::{apply_grouping, apply_max_files, filter_max_distance};
use crate::search::shape::sources_of;
use crate::search::{
    candidate_window, clamp_top_k, fuse_documents, validate_query, Candidate, DocumentHit, Explain,
    Filter, FilterRequest, ListRank, QueryError, QueryResponse, ResultItem, Scope,
};

/// A query as the tools receive it.
#[derive(Debug, Clone, Copy)]
pub struct QueryRequest<'a> {
    /// What to look for.
    pub query: &'a str,
    /// Results wanted, before grouping; checked against the bounds.
    pub top_k: i64,
    /// Source prefixes (folders or ids) to search under; empty for all.
    pub scope: &'a [String],
    /// Format, dates and path patterns a hit's source must match, applied
    /// with the scope inside every list before its cut.
    pub filter: FilterRequest<'a>,
    /// Carry each result's rank and score in every list, and the fused score.
    pub explain: bool,
}

impl Engine {
    /// Hybrid search: both lists, fused, shaped into results.
    pub fn query(&self, request: QueryRequest<'_>) -> Result<QueryResponse, EngineError> {
        let query = validate_query(request.query)?;
        let top_k = clamp_top_k(request.top_k)?;
        if request.scope.iter().any(|s| s.trim().is_empty()) {
            return Err(QueryError::EmptyScope.into());
        }
        let filter = Filter::new(request.filter, &self.settings.roots).map_err(QueryError::from)?;
        // The roots bound a query on an index this process owns; an index
        // shared between machines (README: Scaling out) answers from every
        // machine's files.
        let reach: &[String] = match self.ports.index.shared() {
            true => &[],
            false => &self.settings.roots,
        };
        let scope = Scope::new(request.scope.iter().map(|s| s.trim().to_string()))
            .with_filter(filter)
            .within_roots(reach);
        let window = candidate_window(top_k);
        let s = &self.settings;
        // The model is loaded before the view is taken, so a first query's
        // model load (seconds) holds no index generation; a model that
        // cannot load is reported by `embed_query` below.
        // A model still downloading is not waited for: keywords answer.
        let pending = self.ports.embedder.start() == Readiness::Pending;
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
            let embedded = if pending {
                Err(
                    "the embedding model is still loading (status shows how far its download is); \
                     vectors join the results once it is ready"
                        .to_string(),
                )
            } else {
                // An embedder that panics costs the vectors, not the query.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    embedder.embed_query(query)
                }))
                .unwrap_or_else(|panic| {
                    Err(EmbedError::Failed {
                        reason: format!(
                            "the embedder stopped on an internal error ({})",
                            crate::error::panic_message(&*panic)
                        ),
                        cause: None,
                    })
                })
                .map_err(|e| e.to_string())
            };
            let query_vector = embedded.and_then(|v| match index.vector_model() {
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
                location: chunk.location(),
                prefix_len: chunk.layout.prefix_len as usize,
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
                let (waiting, are) = match waiting {
                    1 => ("1 chunk".to_string(), "is"),
                    n => (format!("{n} chunks"), "are"),
                };
                notices.push(format!(
                    "{waiting} {are} not embedded yet (a sync is embedding them, or the next one will); \
                     until then they are found by their words only."
                ));
            }
        }
        if results.is_empty() && scope.filter().has_meta() {
            // A field no document declares matches nothing: checked only
            // then, so a search that finds something reads no records.
            let records = index.sources(&Scope::all())?;
            scope
                .filter()
                .check_fields(records.iter().flat_map(|r| &r.attributes.meta))
                .map_err(QueryError::from)?;
        }
        if results.is_empty() {
            if index.stats()?.chunk_count == 0 {
                notices.push(
                    "The index is empty: nothing has been ingested yet. Run sync_start (CLI: `minirag-mcp sync`) \
                     to index the configured folders, or ingest_file for one file."
                        .into(),
                );
            } else if !scope.is_all() && index.sources(&scope)?.is_empty() {
                notices.push(nothing_in_reach(&scope, &s.roots, index)?);
            } else if !index
                .keyword_search(query, 1, &scope.anywhere())?
                .is_empty()
            {
                notices.push(outside_roots(&s.roots));
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
}

/// A key's 1-based rank and score in one side's list.
fn list_rank(list: &[crate::search::Candidate], key: &crate::search::ChunkKey) -> Option<ListRank> {
    list.iter().position(|c| &c.key == key).map(|i| ListRank {
        rank: i + 1,
        score: list[i].value as f64,
    })
}

/// The documents a search would find are files another process indexed
/// under other roots (an index shared between machines or configurations).
fn outside_roots(roots: &[String]) -> String {
    let roots: Vec<String> = roots.iter().map(|r| format!("'{r}'")).collect();
    format!(
        "The documents this search would find are files outside the configured roots ({}): \
         a process reads only files under its own roots. Add their folder to BASE_DIRS \
         (CLI: --base-dir) to search them.",
        roots.join(", ")
    )
}

/// Why a scoped or filtered query found nothing: the documents it would
/// find are files outside this process's roots, its filter matches no
/// document (under the scope's folders), or no document is under them.
fn nothing_in_reach(
    scope: &Scope,
    roots: &[String],
    index: &dyn IndexView,
) -> Result<String, IndexError> {
    if !index.sources(&scope.anywhere())?.is_empty() {
        return Ok(outside_roots(roots));
    }
    let folders = Scope::new(scope.prefixes().to_vec());
    if !scope.filter().is_none() && !index.sources(&folders)?.is_empty() {
        let under = if folders.is_all() {
            ""
        } else {
            " under the scope"
        };
        return Ok(format!(
            "No indexed document{under} matches the filter ({}); widen or drop it.",
            scope.filter().describe()
        ));
    }
    let prefixes: Vec<String> = scope.prefixes().iter().map(|p| format!("'{p}'")).collect();
    Ok(format!(
        "No indexed document is under scope {}. Scopes match the absolute `source` of a document \
         (a path, URL or id), not its `displayPath`; pass an absolute folder such as a result's `source` folder.",
        prefixes.join(", ")
    ))
}
