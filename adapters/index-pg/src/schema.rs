//! The tables of one index, all in one PostgreSQL schema (so several
//! indexes share a database), created on first use and migrated by the
//! version in `meta`.
//!
//! - `sources`: one row per source, with its whole-document and title
//!   lengths for BM25.
//! - `chunks`: text, layout, parent and the vector (`NULL` until embedded).
//! - `chunk_postings`: a term's postings in one source's chunks, packed in
//!   rows `(term, source, part, n, data)` of at most 1,200 bytes (see
//!   `packed`): a frequent term reads one row per document, not one per
//!   chunk. The primary key carries `n` and `data`, so a term's postings
//!   are one index-only range scan over adjacent leaf pages.
//! - `doc_terms`, `title_terms`: postings `(term, source, tf, len)` of the
//!   whole document and of the title; a document's term frequency is net
//!   of the breadcrumbs its chunks repeat. The primary keys carry `tf` and
//!   `len`.
//! - `stats`: one row of collection counts (BM25's N and average lengths,
//!   vector-less chunks), kept current by every write.
//! - `jobs`: the newest sync job records, read by every process.
//! - `meta`: schema version (2 added `jobs`, 3 the chunks' `location`, 4
//!   packed chunk postings in place of one row per chunk and term, 5 the
//!   sources' `language` and `meta`), vector model and width.

use postgres::GenericClient;

/// Bump with a migration step in [`migrate`].
pub const VERSION: i32 = 5;

fn create_sql(s: &str) -> String {
    format!(
        r#"
CREATE TABLE IF NOT EXISTS {s}.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS {s}.sources (
    id bigserial PRIMARY KEY,
    source text NOT NULL UNIQUE,
    source_type smallint NOT NULL,
    title text NOT NULL,
    title_seeded boolean NOT NULL,
    file_hash text NOT NULL,
    mtime double precision NOT NULL,
    ingested_at text NOT NULL,
    chunk_count integer NOT NULL,
    scheme_version integer NOT NULL,
    embedded_with text,
    ocr_engine text NOT NULL,
    doc_len bigint NOT NULL,
    title_len integer NOT NULL
);
CREATE TABLE IF NOT EXISTS {s}.chunks (
    id bigserial PRIMARY KEY,
    source_id bigint NOT NULL REFERENCES {s}.sources(id) ON DELETE CASCADE,
    idx integer NOT NULL,
    parent integer NOT NULL,
    text text NOT NULL,
    prefix_len integer NOT NULL,
    kind smallint NOT NULL,
    headings jsonb NOT NULL,
    heading_is_body boolean NOT NULL,
    continues_section boolean NOT NULL,
    len integer NOT NULL,
    embedding vector,
    UNIQUE (source_id, idx) INCLUDE (id)
);
ALTER TABLE {s}.chunks ADD COLUMN IF NOT EXISTS location text;
ALTER TABLE {s}.sources ADD COLUMN IF NOT EXISTS language text;
ALTER TABLE {s}.sources ADD COLUMN IF NOT EXISTS meta jsonb NOT NULL DEFAULT '[]';
CREATE INDEX IF NOT EXISTS sources_language ON {s}.sources (language);
CREATE INDEX IF NOT EXISTS sources_meta ON {s}.sources USING gin (meta jsonb_path_ops);
CREATE INDEX IF NOT EXISTS chunks_text_md5 ON {s}.chunks (md5(text)) WHERE embedding IS NOT NULL;
CREATE TABLE IF NOT EXISTS {s}.chunk_postings (
    term text NOT NULL,
    source_id bigint NOT NULL REFERENCES {s}.sources(id) ON DELETE CASCADE,
    part integer NOT NULL,
    n integer NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (term, source_id, part) INCLUDE (n, data)
);
CREATE INDEX IF NOT EXISTS chunk_postings_source ON {s}.chunk_postings (source_id);
CREATE TABLE IF NOT EXISTS {s}.doc_terms (
    term text NOT NULL,
    source_id bigint NOT NULL REFERENCES {s}.sources(id) ON DELETE CASCADE,
    tf integer NOT NULL,
    len bigint NOT NULL,
    PRIMARY KEY (term, source_id) INCLUDE (tf, len)
);
CREATE INDEX IF NOT EXISTS doc_terms_source ON {s}.doc_terms (source_id);
CREATE TABLE IF NOT EXISTS {s}.title_terms (
    term text NOT NULL,
    source_id bigint NOT NULL REFERENCES {s}.sources(id) ON DELETE CASCADE,
    tf integer NOT NULL,
    len integer NOT NULL,
    PRIMARY KEY (term, source_id) INCLUDE (tf, len)
);
CREATE INDEX IF NOT EXISTS title_terms_source ON {s}.title_terms (source_id);
CREATE TABLE IF NOT EXISTS {s}.stats (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    sources bigint NOT NULL,
    chunks bigint NOT NULL,
    chunk_len bigint NOT NULL,
    doc_len bigint NOT NULL,
    title_len bigint NOT NULL,
    vectorless bigint NOT NULL
);
INSERT INTO {s}.stats VALUES (true, 0, 0, 0, 0, 0, 0) ON CONFLICT DO NOTHING;
CREATE TABLE IF NOT EXISTS {s}.jobs (
    id text PRIMARY KEY,
    state smallint NOT NULL,
    started_at bigint NOT NULL,
    finished_at bigint,
    phase smallint NOT NULL,
    done bigint NOT NULL,
    total bigint NOT NULL,
    counts bigint[],
    errors text,
    notices text,
    error text,
    updated_at timestamptz NOT NULL DEFAULT now()
);
"#
    )
}

/// What went wrong while preparing the schema, for the caller to name.
pub enum SetupError {
    /// The database refused.
    Db(postgres::Error),
    /// The pgvector extension is missing and could not be created.
    NoVector(postgres::Error),
    /// The schema is of a newer version than this build knows.
    Newer(i32),
}

impl From<postgres::Error> for SetupError {
    fn from(e: postgres::Error) -> Self {
        Self::Db(e)
    }
}

/// Creates or migrates the schema `s` (already validated). Runs in one
/// transaction under an advisory lock, so two processes starting at once
/// do not race.
pub fn migrate(client: &mut postgres::Client, s: &str) -> Result<(), SetupError> {
    let mut tx = client.transaction()?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&format!("minirag schema {s}")],
    )?;
    let has_vector: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')",
            &[],
        )?
        .get(0);
    if !has_vector {
        // The extension is the database's, not the schema's: processes
        // opening other schemas of a fresh database would race to create
        // it (a unique violation in pg_extension), so this lock is
        // database-wide. Taken after the schema's and held to the end, it
        // cannot close a cycle.
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('minirag extension vector', 0))",
            &[],
        )?;
        tx.batch_execute("CREATE EXTENSION IF NOT EXISTS vector")
            .map_err(SetupError::NoVector)?;
    }
    tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {s}"))?;
    let exists: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'meta')",
            &[&s],
        )?
        .get(0);
    let version: i32 = if exists {
        tx.query_opt(
            &format!("SELECT value FROM {s}.meta WHERE key = 'version'"),
            &[],
        )?
        .and_then(|r| r.get::<_, String>(0).parse().ok())
        .unwrap_or(0)
    } else {
        0
    };
    if version > VERSION {
        return Err(SetupError::Newer(version));
    }
    if version < VERSION {
        tx.batch_execute(&create_sql(s))?;
        pack_chunk_terms(&mut tx, s)?;
        tx.execute(
            &format!(
                "INSERT INTO {s}.meta VALUES ('version', $1) ON CONFLICT (key) DO UPDATE SET value = $1"
            ),
            &[&VERSION.to_string()],
        )?;
    }
    tx.commit()?;
    Ok(())
}

/// Version 4 keeps a term's chunk postings in one source as one packed
/// row; a version 3 index's rows, one per (term, chunk), are packed here,
/// one source at a time, and their table dropped.
fn pack_chunk_terms(tx: &mut postgres::Transaction<'_>, s: &str) -> Result<(), postgres::Error> {
    let old: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'chunk_terms')",
            &[&s],
        )?
        .get(0);
    if !old {
        return Ok(());
    }
    let ids: Vec<i64> = tx
        .query(&format!("SELECT id FROM {s}.sources ORDER BY id"), &[])?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for id in ids {
        let rows = tx.query(
            &format!(
                "SELECT t.term, c.idx, t.tf, t.len FROM {s}.chunk_terms t JOIN {s}.chunks c ON c.id = t.chunk_id \
                 WHERE t.source_id = $1 ORDER BY t.term, c.idx"
            ),
            &[&id],
        )?;
        let mut terms: Vec<String> = Vec::new();
        let mut parts: Vec<i32> = Vec::new();
        let mut counts: Vec<i32> = Vec::new();
        let mut data: Vec<Vec<u8>> = Vec::new();
        let mut run: Vec<crate::packed::Posting> = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            let term: &str = r.get(0);
            run.push(crate::packed::Posting {
                idx: r.get::<_, i32>(1).max(0) as u32,
                tf: r.get::<_, i32>(2).max(0) as u32,
                len: r.get::<_, i32>(3).max(0) as u32,
            });
            let last = rows.get(i + 1).is_none_or(|n| n.get::<_, &str>(0) != term);
            if last {
                for (part, (n, bytes)) in crate::packed::pack_rows(&run).into_iter().enumerate() {
                    terms.push(term.to_string());
                    parts.push(part as i32);
                    counts.push(n);
                    data.push(bytes);
                }
                run.clear();
            }
        }
        tx.execute(
            &format!(
                "INSERT INTO {s}.chunk_postings (term, source_id, part, n, data) \
                 SELECT u.t, $1, u.p, u.n, u.d FROM unnest($2::text[], $3::int4[], $4::int4[], $5::bytea[]) AS u(t, p, n, d)"
            ),
            &[&id, &terms, &parts, &counts, &data],
        )?;
    }
    tx.batch_execute(&format!("DROP TABLE {s}.chunk_terms"))
}

/// The stored vector model and width, `None` before the first vectors.
pub fn model(
    client: &mut impl GenericClient,
    s: &str,
) -> Result<Option<(String, usize)>, postgres::Error> {
    let rows = client.query(
        &format!("SELECT key, value FROM {s}.meta WHERE key IN ('model', 'dim')"),
        &[],
    )?;
    let get = |k: &str| {
        rows.iter()
            .find(|r| r.get::<_, &str>(0) == k)
            .map(|r| r.get::<_, String>(1))
    };
    Ok(
        match (get("model"), get("dim").and_then(|d| d.parse().ok())) {
            (Some(m), Some(d)) => Some((m, d)),
            _ => None,
        },
    )
}
