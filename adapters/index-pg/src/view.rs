//! A read view: one `REPEATABLE READ READ ONLY` transaction on a pooled
//! connection, so every search, chunk and title of one use case sees the
//! same snapshot while other machines write. When two lists of one query
//! run at once (the engine runs the keyword side beside the vector
//! search), the second takes another pooled connection that imports the
//! first one's snapshot, so both run in the database at the same time and
//! still see the same rows.
//!
//! The keyword lists are scored in [`crate::keyword`].

use std::ops::RangeInclusive;
use std::sync::{Mutex, MutexGuard, TryLockError};

use minirag_core::chunk::Chunk;
use minirag_core::ports::{IndexError, IndexStats, IndexView, SourceRecord};
use minirag_core::search::{Candidate, ChunkKey, DocumentHit, Scope};
use pgvector::Vector;
use postgres::types::ToSql;

use crate::rows::{chunk, chunk_at, record, CHUNK_COLUMNS, SOURCE_COLUMNS};
use crate::PgIndex;

/// Below this many vectors in reach (all, or the scope's) a query scans
/// them all (exact); above, it asks the HNSW index, with an `ef_search` of
/// 4 k, widened by how little of the index the scope holds (200 to 1,000).
pub const EXACT_BELOW: i64 = 20_000;

struct Snapshot {
    sources: i64,
    chunks: i64,
    chunk_len: i64,
    doc_len: i64,
    title_len: i64,
    vectorless: i64,
}

type Conn = r2d2::PooledConnection<crate::connect::Manager>;

pub(crate) struct PgView<'a> {
    ix: &'a PgIndex,
    client: Mutex<Conn>,
    /// The exported snapshot's id (`None` on a standby, which cannot export).
    snapshot: Option<String>,
    /// A second connection in the same snapshot, opened on first need.
    second: Mutex<Second>,
    /// The last chunk list's titles and best chunks, for the document list.
    memo: Mutex<Option<crate::memo::KeywordMemo>>,
    stats: Snapshot,
    model: Option<(String, usize)>,
}

impl<'a> PgView<'a> {
    pub(crate) fn begin(ix: &'a PgIndex) -> Result<Self, IndexError> {
        let mut client = ix.client()?;
        let s = &ix.schema;
        let e = |e| ix.db_error("opening a read view", e);
        client
            .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            .map_err(e)?;
        let r = client
            .query_one(
                &format!("SELECT sources, chunks, chunk_len, doc_len, title_len, vectorless, CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_export_snapshot() END FROM {s}.stats"),
                &[],
            )
            .map_err(e)?;
        let stats = Snapshot {
            sources: r.get(0),
            chunks: r.get(1),
            chunk_len: r.get(2),
            doc_len: r.get(3),
            title_len: r.get(4),
            vectorless: r.get(5),
        };
        let snapshot: Option<String> = r.get(6);
        let model = crate::schema::model(&mut *client, s).map_err(e)?;
        Ok(Self {
            ix,
            client: Mutex::new(client),
            snapshot,
            second: Mutex::new(Second::Untried),
            memo: Mutex::new(None),
            stats,
            model,
        })
    }

    pub(crate) fn memo(&self) -> MutexGuard<'_, Option<crate::memo::KeywordMemo>> {
        self.memo.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The index's schema name.
    pub(crate) fn schema(&self) -> &str {
        &self.ix.schema
    }

    pub(crate) fn query(
        &self,
        doing: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<postgres::Row>, IndexError> {
        self.with_client(|c| c.query(sql, params))
            .map_err(|e| self.ix.db_error(doing, e))
    }

    /// Runs `f` on this view's connection, or, while another thread of the
    /// same use case holds it, on the second connection in the same
    /// snapshot; waits only when no second one can be had.
    pub(crate) fn with_client<R>(&self, f: impl FnOnce(&mut postgres::Client) -> R) -> R {
        if let Some(mut c) = try_lock(&self.client) {
            return f(&mut c);
        }
        if let Some(mut slot) = try_lock(&self.second) {
            if matches!(*slot, Second::Untried) {
                *slot = self
                    .open_second()
                    .map_or(Second::Unavailable, |c| Second::Open(Box::new(c)));
            }
            if let Second::Open(c) = &mut *slot {
                return f(c);
            }
        }
        let mut c = self.client.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut c)
    }

    /// A free pooled connection that imports this view's snapshot; `None`
    /// when there is no snapshot or no free connection (then the lists
    /// take turns on the first), or the import fails.
    fn open_second(&self) -> Option<Conn> {
        let id = self.snapshot.as_ref()?;
        let mut c = self.ix.spare_client()?;
        let begin = format!(
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '{}'",
            id.replace('\'', "")
        );
        match c.batch_execute(&begin) {
            Ok(()) => Some(c),
            Err(_) => {
                let _ = c.batch_execute("ROLLBACK");
                None
            }
        }
    }

    /// Source ids allowed by `scope`; `None` when it allows everything.
    fn allowed(&self, scope: &Scope) -> Result<Option<Vec<i64>>, IndexError> {
        Ok(self.allowed_with_chunks(scope)?.map(|(ids, _)| ids))
    }

    /// [`PgView::allowed`] with the number of chunks the scope holds.
    fn allowed_with_chunks(&self, scope: &Scope) -> Result<Option<(Vec<i64>, i64)>, IndexError> {
        if scope.is_all() {
            return Ok(None);
        }
        // Prefix candidates in SQL (every source when the scope names no
        // folder), the exact rule (path boundaries, the filter) here, on
        // the same records `sources` reads.
        let s = &self.ix.schema;
        let prefixes: Vec<&str> = scope.prefixes().iter().map(String::as_str).collect();
        let rows = self.query(
            "applying the scope",
            &format!("SELECT {SOURCE_COLUMNS}, id FROM {s}.sources WHERE cardinality($1::text[]) = 0 OR EXISTS (SELECT 1 FROM unnest($1::text[]) AS p(prefix) WHERE starts_with(source, p.prefix))"),
            &[&prefixes],
        )?;
        let id_column = SOURCE_COLUMNS.split(',').count();
        let kept: Vec<(i64, u32)> = rows
            .iter()
            .map(|r| (r.get::<_, i64>(id_column), record(r)))
            .filter(|(_, rec)| scope.admits(rec))
            .map(|(id, rec)| (id, rec.chunk_count))
            .collect();
        let chunks = kept.iter().map(|(_, n)| i64::from(*n)).sum();
        Ok(Some((kept.into_iter().map(|(id, _)| id).collect(), chunks)))
    }

    pub(crate) fn averages(&self) -> (f64, f64, f64, f64, f64) {
        let st = &self.stats;
        let n = st.chunks.max(0) as f64;
        let ns = st.sources.max(0) as f64;
        let avg = |len: i64, n: f64| {
            if n > 0.0 {
                (len as f64 / n).max(1.0)
            } else {
                1.0
            }
        };
        (
            n,
            avg(st.chunk_len, n),
            ns,
            avg(st.doc_len, ns),
            avg(st.title_len, ns),
        )
    }

    fn query_terms(&self, query: &str) -> Vec<String> {
        self.ix.analyzer.query_terms(query)
    }
}

impl Drop for PgView<'_> {
    fn drop(&mut self) {
        // A failed rollback leaves a broken connection, which r2d2 drops.
        let second = self.second.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Second::Open(c) = second {
            let _ = c.batch_execute("ROLLBACK");
        }
        let c = self.client.get_mut().unwrap_or_else(|p| p.into_inner());
        let _ = c.batch_execute("ROLLBACK");
    }
}

/// The view's second connection.
enum Second {
    Untried,
    Open(Box<Conn>),
    /// No spare connection, or no snapshot to import: the lists take turns.
    Unavailable,
}

/// The lock if it is free now (a poisoned lock counts as free: the
/// connection's transaction is still the view's).
fn try_lock<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// One vector query, ready to run (or to explain).
struct VectorQuery {
    sql: String,
    /// `SET LOCAL`s of the approximate path.
    setup: String,
    q: Vector,
    k: i64,
    allowed: Option<Vec<i64>>,
}

impl VectorQuery {
    fn run(&self, view: &PgView<'_>, doing: &str) -> Result<Vec<postgres::Row>, IndexError> {
        // The tuning and the search on one connection, whichever it is.
        let params: Vec<&(dyn ToSql + Sync)> = match &self.allowed {
            Some(ids) => vec![&self.q, &self.k, ids],
            None => vec![&self.q, &self.k],
        };
        view.with_client(|c| {
            if !self.setup.is_empty() {
                c.batch_execute(&self.setup)
                    .map_err(|e| view.ix.db_error("tuning the vector search", e))?;
            }
            c.query(&self.sql, &params)
                .map_err(|e| view.ix.db_error(doing, e))
        })
    }
}

impl PgView<'_> {
    /// The SQL of a vector search; `None` when it cannot match anything.
    /// `prefix` goes before the statement (`EXPLAIN` for tests).
    fn vector_query(
        &self,
        query: &[f32],
        k: usize,
        scope: &Scope,
        prefix: &str,
    ) -> Result<Option<VectorQuery>, IndexError> {
        let Some((_, dim)) = &self.model else {
            return Ok(None);
        };
        if *dim != query.len() || k == 0 {
            return Ok(None);
        }
        let s = &self.ix.schema;
        let scoped = self.allowed_with_chunks(scope)?;
        let filter = if scoped.is_some() {
            "AND c.source_id = ANY($3)"
        } else {
            ""
        };
        // The vectors a query can reach: a narrow scope is scanned exactly
        // (its rows are few, and a graph walk filtered to them loses
        // recall); a wide one walks the graph further in proportion.
        let total = self.stats.chunks - self.stats.vectorless;
        let (vectors, widen) = match &scoped {
            Some((_, in_scope)) => (
                (*in_scope).min(total),
                total as f64 / (*in_scope).max(1) as f64,
            ),
            None => (total, 1.0),
        };
        let k = k as i64;
        // The HNSW graph is on `embedding::vector(dim)`: naming that
        // expression lets the planner use it (when it is built, see
        // `graph`); the bare column scans all.
        let (dist, setup) = if vectors < EXACT_BELOW {
            ("c.embedding <=> $1".to_string(), String::new())
        } else {
            let ef = (((k * 4) as f64 * widen).min(1000.0) as i64).max(self.ix.min_ef_search);
            (
                format!("c.embedding::vector({dim}) <=> $1::vector({dim})"),
                format!("SET LOCAL hnsw.ef_search = {ef}; SET LOCAL hnsw.iterative_scan = strict_order;"),
            )
        };
        Ok(Some(VectorQuery {
            sql: format!(
                "{prefix} SELECT s.source, c.idx, ({dist}) AS d FROM {s}.chunks c JOIN {s}.sources s ON s.id = c.source_id \
                 WHERE vector_dims(c.embedding) = {dim} {filter} ORDER BY {dist} LIMIT $2"
            ),
            setup,
            q: Vector::from(query.to_vec()),
            k,
            allowed: scoped.map(|(ids, _)| ids),
        }))
    }

    /// The server's plan for [`IndexView::vector_search`], one line per
    /// node (tests check which path a query takes).
    pub(crate) fn explain_vector_search(
        &self,
        query: &[f32],
        k: usize,
        scope: &Scope,
    ) -> Result<String, IndexError> {
        let Some(q) = self.vector_query(query, k, scope, "EXPLAIN")? else {
            return Ok(String::new());
        };
        let rows = q.run(self, "explaining a vector search")?;
        Ok(rows
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect::<Vec<_>>()
            .join("\n"))
    }
}

impl IndexView for PgView<'_> {
    fn vector_search(
        &self,
        query: &[f32],
        k: usize,
        scope: &Scope,
    ) -> Result<Vec<Candidate>, IndexError> {
        let Some(q) = self.vector_query(query, k, scope, "")? else {
            return Ok(Vec::new());
        };
        let rows = q.run(self, "searching vectors")?;
        Ok(rows
            .iter()
            .map(|r| Candidate {
                key: ChunkKey {
                    source: r.get(0),
                    index: r.get::<_, i32>(1) as u32,
                },
                // Cosine distance → squared L2 on unit vectors.
                value: (2.0 * r.get::<_, f64>(2) as f32).max(0.0),
            })
            .collect())
    }

    fn keyword_search(
        &self,
        query: &str,
        k: usize,
        scope: &Scope,
    ) -> Result<Vec<Candidate>, IndexError> {
        let terms = self.query_terms(query);
        if terms.is_empty() || k == 0 || self.stats.chunks == 0 {
            return Ok(Vec::new());
        }
        let allowed = self.allowed(scope)?;
        self.score_chunks(&terms, k, &allowed)
    }

    fn document_search(
        &self,
        query: &str,
        k: usize,
        scope: &Scope,
    ) -> Result<Vec<DocumentHit>, IndexError> {
        let terms = self.query_terms(query);
        if terms.is_empty() || k == 0 || self.stats.sources == 0 {
            return Ok(Vec::new());
        }
        let allowed = self.allowed(scope)?;
        self.score_documents(&terms, k, &allowed)
    }

    fn source(&self, source: &str) -> Result<Option<SourceRecord>, IndexError> {
        let s = &self.ix.schema;
        let rows = self.query(
            "reading a source",
            &format!("SELECT {SOURCE_COLUMNS} FROM {s}.sources WHERE source = $1"),
            &[&source],
        )?;
        Ok(rows.first().map(record))
    }

    fn sources(&self, scope: &Scope) -> Result<Vec<SourceRecord>, IndexError> {
        let s = &self.ix.schema;
        let rows = self.query(
            "listing sources",
            &format!("SELECT {SOURCE_COLUMNS} FROM {s}.sources ORDER BY source COLLATE \"C\""),
            &[],
        )?;
        Ok(rows
            .iter()
            .map(record)
            .filter(|r| scope.admits(r))
            .collect())
    }

    fn chunks(&self, source: &str, range: RangeInclusive<u32>) -> Result<Vec<Chunk>, IndexError> {
        let s = &self.ix.schema;
        let lo = (*range.start()).min(i32::MAX as u32) as i32;
        let hi = (*range.end()).min(i32::MAX as u32) as i32;
        let rows = self.query(
            "reading chunks",
            &format!(
                "SELECT {CHUNK_COLUMNS} FROM {s}.chunks c JOIN {s}.sources s ON s.id = c.source_id \
                 WHERE s.source = $1 AND c.idx BETWEEN $2 AND $3 ORDER BY c.idx"
            ),
            &[&source, &lo, &hi],
        )?;
        Ok(rows.iter().map(chunk).collect())
    }

    fn get_chunks(&self, keys: &[ChunkKey]) -> Result<Vec<Option<Chunk>>, IndexError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let s = &self.ix.schema;
        let sources: Vec<&str> = keys.iter().map(|k| k.source.as_str()).collect();
        let idx: Vec<i32> = keys
            .iter()
            .map(|k| k.index.min(i32::MAX as u32) as i32)
            .collect();
        let rows = self.query(
            "reading chunks",
            &format!(
                "SELECT q.o, {CHUNK_COLUMNS} FROM unnest($1::text[], $2::int4[]) WITH ORDINALITY AS q(wanted_source, wanted_idx, o) \
                 JOIN {s}.sources s ON s.source = q.wanted_source JOIN {s}.chunks c ON c.source_id = s.id AND c.idx = q.wanted_idx"
            ),
            &[&sources, &idx],
        )?;
        let mut out = vec![None; keys.len()];
        for r in rows {
            let o = r.get::<_, i64>(0) as usize - 1;
            // The chunk columns start after the ordinal.
            if let Some(slot) = out.get_mut(o) {
                *slot = Some(chunk_at(&r, 1));
            }
        }
        Ok(out)
    }

    fn parent_chunks(&self, source: &str, parent: u32) -> Result<Vec<Chunk>, IndexError> {
        let s = &self.ix.schema;
        let rows = self.query(
            "reading a section",
            &format!(
                "SELECT {CHUNK_COLUMNS} FROM {s}.chunks c JOIN {s}.sources s ON s.id = c.source_id \
                 WHERE s.source = $1 AND c.parent = $2 ORDER BY c.idx"
            ),
            &[&source, &(parent.min(i32::MAX as u32) as i32)],
        )?;
        Ok(rows.iter().map(chunk).collect())
    }

    fn stats(&self) -> Result<IndexStats, IndexError> {
        let s = &self.ix.schema;
        let stale = self.query(
            "counting stale chunks",
            &format!("SELECT coalesce(sum(chunk_count), 0)::bigint FROM {s}.sources WHERE scheme_version <> $1"),
            &[&(minirag_core::CHUNK_SCHEME as i32)],
        )?;
        Ok(IndexStats {
            chunk_count: self.stats.chunks.max(0) as u64,
            source_count: self.stats.sources.max(0) as u64,
            stale_chunk_count: stale.first().map_or(0, |r| r.get::<_, i64>(0)).max(0) as u64,
            vectorless_chunk_count: self.stats.vectorless.max(0) as u64,
            // PostgreSQL checks its own pages and WAL.
            damage: Vec::new(),
            log_bytes: 0,
        })
    }

    fn vectorless_chunks(&self) -> Result<u64, IndexError> {
        Ok(self.stats.vectorless.max(0) as u64)
    }

    fn vector_model(&self) -> Option<String> {
        // A model with no vector stored yet (all switched away) holds none.
        self.model
            .as_ref()
            .filter(|_| self.stats.chunks > self.stats.vectorless)
            .map(|(m, _)| m.clone())
    }
}
