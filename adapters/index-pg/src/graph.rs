//! The HNSW graph over the vectors. It is built in bulk at the end of a
//! sync ([`settle`]) once [`EXACT_BELOW`] vectors are stored, instead of
//! being grown row by row by every write: pgvector builds a graph in bulk
//! many times faster, and below that size queries scan every vector anyway.
//! Until it exists a query scans every vector: exact, only slower. Once it
//! exists, writes keep it current.

use minirag_core::ports::IndexError;

use crate::view::EXACT_BELOW;
use crate::PgIndex;

/// The graph's name in the index's schema.
pub(crate) const NAME: &str = "chunks_embedding_hnsw";

/// Candidates kept while the graph is built. pgvector's default, 64, gave
/// recall@10 0.90–0.92 at a million clustered 384-d vectors whatever the
/// query's `ef_search` (0.954 at 1,000: points the graph cannot reach);
/// 128 gave 0.998 at `ef_search` 200, for a build of 373 s instead of
/// 319 s (`pg_bench`, 2 cores).
const EF_CONSTRUCTION: u32 = 128;

/// The most memory one build asks for (`maintenance_work_mem`, MB): a graph
/// that fits is built several times faster than one that spills; 4 GB holds
/// about 2 M vectors of 384 dimensions.
const MAX_BUILD_MB: i64 = 4096;

/// Whether the graph exists: `Some(true)` built, `Some(false)` left
/// invalid by a killed build, `None` absent.
pub(crate) fn state(
    client: &mut postgres::Client,
    schema: &str,
) -> Result<Option<bool>, postgres::Error> {
    Ok(client
        .query_opt(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
             JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2",
            &[&schema, &NAME],
        )?
        .map(|r| r.get(0)))
}

/// Builds the graph when enough vectors are stored and it is missing (or a
/// killed build left it invalid). Other writers go on meanwhile
/// (`CONCURRENTLY`); one process builds at a time, another one skips.
pub(crate) fn settle(ix: &PgIndex, announce: &mut dyn FnMut(&str)) -> Result<(), IndexError> {
    let s = &ix.schema;
    let e = |e| ix.db_error(&format!("building the vector index {s}.{NAME}"), e);
    // The usual case, a graph that is there or not needed, on a pooled
    // connection; a build on one of its own (session settings, a lock).
    let needed = {
        let mut c = ix.client()?;
        needed(ix, &mut c).map_err(e)?
    };
    let Some(need) = needed else {
        return Ok(());
    };
    let mut client = ix.target.connect_once(ix.root_cert.as_deref())?;
    let result = build(ix, &mut client, need, announce);
    crate::drop_off_runtime(client);
    result.map_err(e)
}

/// What a build needs to know.
struct Need {
    dim: usize,
    vectors: i64,
    invalid: bool,
}

fn needed(ix: &PgIndex, client: &mut postgres::Client) -> Result<Option<Need>, postgres::Error> {
    let s = &ix.schema;
    let Some((_, dim)) = crate::schema::model(client, s)? else {
        return Ok(None);
    };
    let vectors: i64 = client
        .query_one(&format!("SELECT chunks - vectorless FROM {s}.stats"), &[])?
        .get(0);
    let state = state(client, s)?;
    Ok(
        (vectors >= EXACT_BELOW && state != Some(true)).then_some(Need {
            dim,
            vectors,
            invalid: state == Some(false),
        }),
    )
}

fn build(
    ix: &PgIndex,
    client: &mut postgres::Client,
    need: Need,
    announce: &mut dyn FnMut(&str),
) -> Result<(), postgres::Error> {
    let s = &ix.schema;
    let Need {
        dim,
        vectors,
        invalid,
    } = need;
    // Held until this connection closes.
    let mine: bool = client
        .query_one(
            "SELECT pg_try_advisory_lock(hashtextextended($1, 0))",
            &[&format!("minirag vector graph {s}")],
        )?
        .get(0);
    // Another process builds it, or built it since we looked.
    if !mine || state(client, s)? == Some(true) {
        return Ok(());
    }
    if invalid {
        // Writes keep an invalid index current, and no query uses it.
        client.batch_execute(&format!("DROP INDEX CONCURRENTLY IF EXISTS {s}.{NAME}"))?;
    }
    announce(&format!(
        "building the vector index over {vectors} vectors (queries scan them all until it is done)"
    ));
    let have_kb: i64 = client
        .query_one(
            "SELECT setting::bigint FROM pg_settings WHERE name = 'maintenance_work_mem'",
            &[],
        )?
        .get(0);
    let need_mb = ((vectors * (dim as i64 * 4 + 512)) >> 20) + 64;
    let mb = need_mb.min(MAX_BUILD_MB).max(have_kb / 1024);
    client.batch_execute(&format!("SET maintenance_work_mem = '{mb}MB'"))?;
    // A statement of its own: CONCURRENTLY refuses a transaction block,
    // which several statements in one call are. The graph is on the cast
    // to this width, which the approximate query names; the predicate keeps
    // out rows of another width that older snapshots still see (a build
    // reads recently dead rows too, and the cast would fail on them).
    client.batch_execute(&format!(
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS {NAME} ON {s}.chunks \
         USING hnsw ((embedding::vector({dim})) vector_cosine_ops) WITH (m = 16, ef_construction = {EF_CONSTRUCTION}) \
         WHERE vector_dims(embedding) = {dim}"
    ))
}
