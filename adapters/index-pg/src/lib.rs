//! The `Index` port on PostgreSQL ≥ 15 with pgvector ≥ 0.7: one index that
//! many processes on many machines read and write.
//!
//! - [`connect`]: `DB_URL` → pool; passwords masked, pgpass, rustls.
//! - [`schema`]: the tables of one index in one schema, and migrations.
//! - [`postings`]: BM25 postings computed with the shared analyzer.
//! - [`write`]: per-source transactions under advisory locks.
//! - [`view`]: a read view is one `REPEATABLE READ` transaction; vectors
//!   by pgvector (exact below [`view::EXACT_BELOW`] vectors, HNSW above).
//! - [`keyword`]: BM25 scored in the adapter from postings read once per
//!   query; [`packed`]: a term's chunk postings in one source, one row.
//! - [`graph`]: the HNSW graph, built in bulk when a sync ends.

#![forbid(unsafe_code)]

pub mod connect;
mod graph;
mod jobs;
mod keyword;
mod memo;
mod names;
mod packed;
mod postings;
mod rows;
pub mod schema;
mod view;
mod write;

use minirag_core::cause::Cause;
use minirag_core::chunk::Chunk;
use minirag_core::ports::{Embeddings, Index, IndexError, IndexView, SourceRecord, SyncLease};
use minirag_rank::Analyzer;

pub use names::{mask_password, valid_schema_name, DEFAULT_SCHEMA};
pub use view::EXACT_BELOW;

/// An index in schema `schema` of the database at `DB_URL`.
pub struct PgIndex {
    /// `None` only while dropping (see [`drop_off_runtime`]).
    pool: Option<connect::Pool>,
    target: connect::Target,
    schema: String,
    analyzer: Analyzer,
    root_cert: Option<std::path::PathBuf>,
    min_ef_search: i64,
}

/// The least `hnsw.ef_search` of a query that walks the graph.
pub const MIN_EF_SEARCH: u32 = 200;

/// Where the password and the CA certificates come from, besides the URL.
#[derive(Debug, Clone, Default)]
pub struct PgOptions {
    /// A pgpass file (`PGPASSFILE`, or `~/.pgpass`).
    pub passfile: Option<std::path::PathBuf>,
    /// Extra CA certificates, PEM (`PGSSLROOTCERT`).
    pub root_cert: Option<std::path::PathBuf>,
    /// The least `hnsw.ef_search` (default [`MIN_EF_SEARCH`]): recall
    /// against latency, for benches.
    pub min_ef_search: Option<u32>,
}

impl PgIndex {
    /// Marks the postings' pages all-visible and refreshes their statistics
    /// once a sync ends, so queries read postings by index-only scans at
    /// once rather than after autovacuum comes by. Cheap when little
    /// changed (only pages not yet all-visible are read; PostgreSQL skips
    /// index cleanup for few dead rows); skipped while another process
    /// vacuums them.
    fn vacuum_postings(&self) -> Result<(), IndexError> {
        let s = &self.schema;
        let mut c = self.client()?;
        c.batch_execute(&format!(
            "VACUUM (ANALYZE, SKIP_LOCKED) {s}.chunk_postings, {s}.doc_terms, {s}.title_terms"
        ))
        .map_err(|e| self.db_error("vacuuming the postings", e))
    }

    /// Connects, creates or migrates the schema, and checks pgvector.
    pub fn open(url: &str, schema: &str, options: &PgOptions) -> Result<Self, IndexError> {
        if !valid_schema_name(schema) {
            return Err(IndexError::Storage { cause: None,
                reason: format!(
                    "DB_SCHEMA='{schema}' is invalid: expected a lower-case name of letters, digits and '_' (at most 63), e.g. minirag or team_docs"
                ),
            });
        }
        let target = connect::Target::new(url, options.passfile.as_deref())?;
        let pool = target.pool(options.root_cert.as_deref())?;
        let index = Self {
            pool: Some(pool),
            target,
            schema: schema.to_string(),
            analyzer: Analyzer::default(),
            root_cert: options.root_cert.clone(),
            min_ef_search: i64::from(options.min_ef_search.unwrap_or(MIN_EF_SEARCH)),
        };
        let mut client = index.target.connect_once(index.root_cert.as_deref())?;
        let migrated = schema::migrate(&mut client, schema);
        drop_off_runtime(client);
        migrated.map_err(|e| match e {
            schema::SetupError::Db(e) => index.db_error("preparing the schema", e),
            schema::SetupError::NoVector(e) => IndexError::Storage {
                reason: format!(
                    "the pgvector extension is not installed in the database at {}: {}; install pgvector ≥ 0.7 on the server and run CREATE EXTENSION vector as a superuser",
                    index.target.masked_url,
                    db_message(&e)
                ),
                cause: Some(Cause::new(e)),
            },
            schema::SetupError::Newer(v) => IndexError::Storage { cause: None,
                reason: format!(
                    "schema '{schema}' at {} was written by a newer minirag (version {v}, this one knows {}); upgrade minirag-mcp",
                    index.target.masked_url,
                    schema::VERSION
                ),
            },
        })?;
        Ok(index)
    }

    fn client(&self) -> Result<r2d2::PooledConnection<connect::Manager>, IndexError> {
        let pool = self.pool.as_ref().expect("the pool lives until drop");
        pool.get().map_err(|e| self.target.unreachable(e))
    }

    /// A pooled connection if one is idle or the pool may still open one;
    /// `None` rather than waiting for another use case to give one back.
    fn spare_client(&self) -> Option<r2d2::PooledConnection<connect::Manager>> {
        let pool = self.pool.as_ref()?;
        let state = pool.state();
        if state.idle_connections == 0 && state.connections >= pool.max_size() {
            return None;
        }
        pool.get_timeout(std::time::Duration::from_millis(200)).ok()
    }

    /// A database error, naming the operation and the masked server.
    fn db_error(&self, doing: &str, e: postgres::Error) -> IndexError {
        IndexError::Storage {
            reason: format!(
                "PostgreSQL at {} (schema {}) failed while {doing}: {}",
                self.target.masked_url,
                self.schema,
                db_message(&e)
            ),
            cause: Some(Cause::new(e)),
        }
    }

    /// Whether the HNSW graph is built (`Some(true)`), left invalid by a
    /// killed build (`Some(false)`) or absent (`None`).
    pub fn vector_graph(&self) -> Result<Option<bool>, IndexError> {
        let mut c = self.client()?;
        graph::state(&mut c, &self.schema)
            .map_err(|e| self.db_error("looking up the vector index", e))
    }

    /// The server's plan for a vector search (tests check its path).
    pub fn explain_vector_search(
        &self,
        query: &[f32],
        k: usize,
        scope: &minirag_core::search::Scope,
    ) -> Result<String, IndexError> {
        view::PgView::begin(self)?.explain_vector_search(query, k, scope)
    }

    /// Drops the whole schema: every table of this index (tests, `reset`).
    pub fn drop_schema(&self) -> Result<(), IndexError> {
        let mut c = self.client()?;
        c.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema))
            .map_err(|e| self.db_error("dropping the schema", e))
    }
}

impl Drop for PgIndex {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            drop_off_runtime(pool);
        }
    }
}

/// Drops `value` on a thread of its own. The synchronous client closes a
/// connection by blocking on its own runtime, which panics on a thread
/// that drives async tasks (the MCP server's main thread at shutdown).
pub(crate) fn drop_off_runtime<T: Send>(value: T) {
    std::thread::scope(|s| {
        s.spawn(move || drop(value));
    });
}

/// The server's own message when there is one (`ERROR: …`), else the
/// client's.
fn db_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        // The client's own errors keep the detail in their sources.
        None => connect::chain(e),
    }
}

impl Index for PgIndex {
    fn read(&self) -> Result<Box<dyn IndexView + '_>, IndexError> {
        Ok(Box::new(view::PgView::begin(self)?))
    }

    fn replace_source(
        &self,
        record: SourceRecord,
        chunks: Vec<Chunk>,
        vectors: Option<Embeddings>,
    ) -> Result<(), IndexError> {
        write::replace_source(self, record, chunks, vectors)
    }

    fn set_vectors(
        &self,
        source: &str,
        model_id: &str,
        first: u32,
        texts: &[&str],
        vectors: Embeddings,
        complete: bool,
    ) -> Result<usize, IndexError> {
        write::set_vectors(self, source, model_id, first, texts, vectors, complete)
    }

    fn delete_source(&self, source: &str) -> Result<usize, IndexError> {
        write::delete_source(self, source)
    }

    fn move_source(&self, from: &str, to: &str, mtime: f64) -> Result<usize, IndexError> {
        write::move_source(self, from, to, mtime)
    }

    fn shared(&self) -> bool {
        true
    }

    fn lock_sync(&self) -> Result<SyncLease, IndexError> {
        write::lock_sync(self)
    }

    fn put_job(&self, job: &minirag_core::jobs::Job) -> Result<(), IndexError> {
        jobs::put(self, job)
    }

    fn job(&self, id: &str) -> Result<Option<minirag_core::jobs::Job>, IndexError> {
        jobs::get(self, id)
    }

    fn settle(&self, announce: &mut dyn FnMut(&str)) -> Result<(), IndexError> {
        graph::settle(self, announce)?;
        self.vacuum_postings()
    }

    fn cached_vectors(&self, model_id: &str, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
        write::cached_vectors(self, model_id, texts).unwrap_or_else(|_| vec![None; texts.len()])
    }
}
