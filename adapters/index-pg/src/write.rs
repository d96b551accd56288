//! Writes. Each is one transaction that first takes the source's advisory
//! lock, so writers on many machines are serialised per source and a killed
//! writer leaves nothing: the server rolls its transaction back.

use minirag_core::chunk::Chunk;
use minirag_core::ports::{Embeddings, IndexError, SourceRecord, SyncLease};
use pgvector::Vector;
use postgres::Transaction;

use crate::packed::{pack_rows, Posting};
use crate::postings::source_postings;
use crate::rows::{headings_json, kind_code, location_json, meta_json, source_type_code};
use crate::PgIndex;

/// Postings rows per INSERT: bounded statements for a source of 150,000
/// chunks.
const ROWS_PER_STATEMENT: usize = 50_000;
/// Chunk rows per INSERT (each carries its text and vector).
const CHUNKS_PER_STATEMENT: usize = 2_000;

fn lock_source(ix: &PgIndex, tx: &mut Transaction<'_>, source: &str) -> Result<(), IndexError> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&format!("minirag source {}\n{source}", ix.schema)],
    )
    .map(|_| ())
    .map_err(|e| ix.db_error("locking a source", e))
}

/// Locks `meta` for the rest of the transaction (model switches and the
/// first vectors are serialised) and returns the stored model and width.
fn lock_model(
    ix: &PgIndex,
    tx: &mut Transaction<'_>,
) -> Result<Option<(String, usize)>, IndexError> {
    let s = &ix.schema;
    tx.execute(
        &format!("SELECT 1 FROM {s}.meta WHERE key = 'version' FOR UPDATE"),
        &[],
    )
    .map_err(|e| ix.db_error("locking the model", e))?;
    crate::schema::model(tx, s).map_err(|e| ix.db_error("reading the model", e))
}

/// Makes the index ready for vectors of `model` and `dim`: the first ones
/// fix the model; another model's (or width's) drop every stored vector,
/// the chunks stay keyword-searchable until re-embedded (as index-mem).
fn prepare_vectors(
    ix: &PgIndex,
    tx: &mut Transaction<'_>,
    model: &str,
    dim: usize,
) -> Result<(), IndexError> {
    let s = &ix.schema;
    let stored = lock_model(ix, tx)?;
    if stored
        .as_ref()
        .is_some_and(|(m, d)| m == model && *d == dim)
    {
        return Ok(());
    }
    let e = |e| ix.db_error("switching the vector model", e);
    if let Some((m, d)) = &stored {
        let held: i64 = tx
            .query_one(&format!("SELECT chunks - vectorless FROM {s}.stats"), &[])
            .map_err(e)?
            .get(0);
        // The same model cannot change width: one of the two is lying.
        if m == model && held > 0 {
            return Err(IndexError::DimensionMismatch {
                stored: *d,
                model: dim,
            });
        }
    }
    if stored.is_some() {
        let graph = crate::graph::NAME;
        tx.batch_execute(&format!(
            "DROP INDEX IF EXISTS {s}.{graph};
             UPDATE {s}.chunks SET embedding = NULL WHERE embedding IS NOT NULL;
             UPDATE {s}.stats SET vectorless = chunks;"
        ))
        .map_err(e)?;
    }
    tx.execute(
        &format!(
            "INSERT INTO {s}.meta VALUES ('model', $1), ('dim', $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        ),
        &[&model, &dim.to_string()],
    )
    .map_err(e)?;
    // The column stays untyped `vector`; the HNSW graph on the cast to
    // this width is built when a sync ends (`graph::settle`).
    Ok(())
}

fn check_rows(source: &str, rows: usize, e: &Embeddings) -> Result<(), IndexError> {
    if e.dim == 0 || e.data.len() != rows * e.dim {
        return Err(IndexError::Storage {
            cause: None,
            reason: format!(
                "{} vectors of width {} do not match {rows} chunks of {source}",
                e.data.len().checked_div(e.dim).unwrap_or(0),
                e.dim
            ),
        });
    }
    Ok(())
}

/// Removes a source's rows and its share of the collection counts; returns
/// how many chunks it had (0 when unknown).
fn remove(ix: &PgIndex, tx: &mut Transaction<'_>, source: &str) -> Result<usize, IndexError> {
    let s = &ix.schema;
    let e = |e| ix.db_error("removing a source", e);
    let Some(row) = tx
        .query_opt(
            &format!("SELECT id, doc_len, title_len FROM {s}.sources WHERE source = $1"),
            &[&source],
        )
        .map_err(e)?
    else {
        return Ok(0);
    };
    let id: i64 = row.get(0);
    let (doc_len, title_len): (i64, i32) = (row.get(1), row.get(2));
    let counts = tx
        .query_one(
            &format!(
                "SELECT count(*), coalesce(sum(len), 0)::bigint, count(*) FILTER (WHERE embedding IS NULL) \
                 FROM {s}.chunks WHERE source_id = $1"
            ),
            &[&id],
        )
        .map_err(e)?;
    let (chunks, chunk_len, vectorless): (i64, i64, i64) =
        (counts.get(0), counts.get(1), counts.get(2));
    tx.execute(&format!("DELETE FROM {s}.sources WHERE id = $1"), &[&id])
        .map_err(e)?;
    tx.execute(
        &format!(
            "UPDATE {s}.stats SET sources = sources - 1, chunks = chunks - $1, chunk_len = chunk_len - $2, \
             doc_len = doc_len - $3, title_len = title_len - $4, vectorless = vectorless - $5"
        ),
        &[&chunks, &chunk_len, &doc_len, &i64::from(title_len), &vectorless],
    )
    .map_err(e)?;
    Ok(chunks as usize)
}

pub(crate) fn replace_source(
    ix: &PgIndex,
    record: SourceRecord,
    chunks: Vec<Chunk>,
    vectors: Option<Embeddings>,
) -> Result<(), IndexError> {
    let s = &ix.schema;
    if let Some(v) = &vectors {
        check_rows(&record.source, chunks.len(), v)?;
    }
    let postings = source_postings(&ix.analyzer, &record.title, &chunks);
    let mut client = ix.client()?;
    let e = |e| ix.db_error("replacing a source", e);
    let mut tx = client.transaction().map_err(e)?;
    lock_source(ix, &mut tx, &record.source)?;
    if let (Some(v), Some(model)) = (&vectors, &record.embedded_with) {
        prepare_vectors(ix, &mut tx, model, v.dim)?;
    }
    remove(ix, &mut tx, &record.source)?;
    let id: i64 = tx
        .query_one(
            &format!(
                "INSERT INTO {s}.sources (source, source_type, title, title_seeded, file_hash, mtime, ingested_at, \
                 chunk_count, scheme_version, embedded_with, ocr_engine, doc_len, title_len, language, meta) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::text::jsonb) RETURNING id"
            ),
            &[
                &record.source,
                &source_type_code(record.source_type),
                &record.title,
                &record.title_seeded,
                &record.file_hash,
                &record.mtime,
                &record.ingested_at,
                &(chunks.len() as i32),
                &(record.scheme_version as i32),
                &record.embedded_with,
                &record.ocr_engine,
                &postings.document.len,
                &(postings.title.len as i32),
                &record.attributes.language,
                &meta_json(&record.attributes.meta),
            ],
        )
        .map_err(e)?
        .get(0);
    let n = chunks.len();
    let mut chunk_ids: Vec<i64> = Vec::with_capacity(n);
    for start in (0..n).step_by(CHUNKS_PER_STATEMENT) {
        let range = start..(start + CHUNKS_PER_STATEMENT).min(n);
        let part = &chunks[range.clone()];
        let idx: Vec<i32> = part.iter().map(|c| c.index as i32).collect();
        let parent: Vec<i32> = part.iter().map(|c| c.parent as i32).collect();
        let text: Vec<&str> = part.iter().map(|c| c.text.as_str()).collect();
        let prefix: Vec<i32> = part.iter().map(|c| c.layout.prefix_len as i32).collect();
        let kind: Vec<i16> = part.iter().map(|c| kind_code(c.layout.kind)).collect();
        let heads: Vec<String> = part
            .iter()
            .map(|c| headings_json(&c.layout.headings))
            .collect();
        let hib: Vec<bool> = part.iter().map(|c| c.layout.heading_is_body).collect();
        let cont: Vec<bool> = part.iter().map(|c| c.layout.continues_section).collect();
        let place: Vec<Option<String>> = part
            .iter()
            .map(|c| location_json(c.layout.location.unpack().as_ref()))
            .collect();
        let len: Vec<i32> = postings.chunks[range.clone()]
            .iter()
            .map(|f| f.len as i32)
            .collect();
        let vecs: Option<Vec<Vector>> = vectors.as_ref().map(|v| {
            range
                .clone()
                .map(|i| Vector::from(v.row(i).to_vec()))
                .collect()
        });
        let rows = tx
            .query(
                &format!(
                    "INSERT INTO {s}.chunks (source_id, idx, parent, text, prefix_len, kind, headings, heading_is_body, continues_section, len, embedding, location) \
                     SELECT $1, u.idx, u.parent, u.text, u.prefix_len, u.kind, u.headings::jsonb, u.hib, u.cont, u.len, u.v, u.place \
                     FROM unnest($2::int4[], $3::int4[], $4::text[], $5::int4[], $6::int2[], $7::text[], $8::bool[], $9::bool[], $10::int4[], $11::vector[], $12::text[]) \
                       WITH ORDINALITY AS u(idx, parent, text, prefix_len, kind, headings, hib, cont, len, v, place, o) \
                     ORDER BY u.o RETURNING id"
                ),
                &[&id, &idx, &parent, &text, &prefix, &kind, &heads, &hib, &cont, &len, &vecs, &place],
            )
            .map_err(e)?;
        chunk_ids.extend(rows.iter().map(|r| r.get::<_, i64>(0)));
    }
    if chunk_ids.len() != n {
        return Err(IndexError::Storage {
            cause: None,
            reason: format!(
                "PostgreSQL stored {} of {n} chunks of {}",
                chunk_ids.len(),
                record.source
            ),
        });
    }
    // Chunk postings: one packed row per term, in bounded statements.
    let mut by_term: std::collections::BTreeMap<&str, Vec<Posting>> = Default::default();
    let mut chunk_len = 0i64;
    for (field, chunk) in postings.chunks.iter().zip(&chunks) {
        chunk_len += field.len;
        for (t, tf) in &field.terms {
            by_term.entry(t).or_default().push(Posting {
                idx: chunk.index,
                tf: (*tf).max(0) as u32,
                len: field.len.clamp(0, i64::from(u32::MAX)) as u32,
            });
        }
    }
    let mut rows: Vec<(&str, i32, i32, Vec<u8>)> = Vec::new();
    for (t, mut ps) in by_term {
        ps.sort_by_key(|p| p.idx);
        for (part, (n, bytes)) in pack_rows(&ps).into_iter().enumerate() {
            rows.push((t, part as i32, n, bytes));
        }
    }
    for part in rows.chunks(ROWS_PER_STATEMENT) {
        let t: Vec<&str> = part.iter().map(|r| r.0).collect();
        let p: Vec<i32> = part.iter().map(|r| r.1).collect();
        let n: Vec<i32> = part.iter().map(|r| r.2).collect();
        let d: Vec<&[u8]> = part.iter().map(|r| r.3.as_slice()).collect();
        tx.execute(
            &format!(
                "INSERT INTO {s}.chunk_postings (term, source_id, part, n, data) \
                 SELECT u.t, $1, u.p, u.n, u.d FROM unnest($2::text[], $3::int4[], $4::int4[], $5::bytea[]) AS u(t, p, n, d)"
            ),
            &[&id, &t, &p, &n, &d],
        )
        .map_err(|e| ix.db_error("storing postings", e))?;
    }
    for (table, field) in [
        ("doc_terms", &postings.document),
        ("title_terms", &postings.title),
    ] {
        let t: Vec<&str> = field.terms.iter().map(|(t, _)| t.as_str()).collect();
        let tf: Vec<i32> = field.terms.iter().map(|(_, tf)| *tf).collect();
        tx.execute(
            &format!(
                "INSERT INTO {s}.{table} (term, source_id, tf, len) SELECT u.t, $1, u.tf, $4::int8 FROM unnest($2::text[], $3::int4[]) AS u(t, tf)"
            ),
            &[&id, &t, &tf, &field.len],
        )
        .map_err(e)?;
    }
    let vectorless = if vectors.is_some() { 0 } else { n as i64 };
    tx.execute(
        &format!(
            "UPDATE {s}.stats SET sources = sources + 1, chunks = chunks + $1, chunk_len = chunk_len + $2, \
             doc_len = doc_len + $3, title_len = title_len + $4, vectorless = vectorless + $5"
        ),
        &[&(n as i64), &chunk_len, &postings.document.len, &postings.title.len, &vectorless],
    )
    .map_err(e)?;
    tx.commit().map_err(e)
}

pub(crate) fn set_vectors(
    ix: &PgIndex,
    source: &str,
    model_id: &str,
    first: u32,
    texts: &[&str],
    vectors: Embeddings,
    complete: bool,
) -> Result<usize, IndexError> {
    let s = &ix.schema;
    check_rows(source, texts.len(), &vectors)?;
    let changed = || IndexError::Storage {
        cause: None,
        reason: format!(
            "{source} changed while it was being embedded; the next sync embeds its new chunks"
        ),
    };
    let mut client = ix.client()?;
    let e = |e| ix.db_error("storing vectors", e);
    let mut tx = client.transaction().map_err(e)?;
    lock_source(ix, &mut tx, source)?;
    let Some(id) = tx
        .query_opt(
            &format!("SELECT id FROM {s}.sources WHERE source = $1"),
            &[&source],
        )
        .map_err(e)?
        .map(|r| r.get::<_, i64>(0))
    else {
        return Err(changed());
    };
    let last = first as i64 + texts.len() as i64;
    let stored = tx
        .query(
            &format!("SELECT text FROM {s}.chunks WHERE source_id = $1 AND idx >= $2 AND idx < $3 ORDER BY idx"),
            &[&id, &(first as i32), &(last as i32)],
        )
        .map_err(e)?;
    if stored.len() != texts.len()
        || stored
            .iter()
            .zip(texts)
            .any(|(r, t)| r.get::<_, &str>(0) != *t)
    {
        return Err(changed());
    }
    prepare_vectors(ix, &mut tx, model_id, vectors.dim)?;
    let idx: Vec<i32> = (0..texts.len() as i32).map(|i| first as i32 + i).collect();
    let vecs: Vec<Vector> = (0..texts.len())
        .map(|i| Vector::from(vectors.row(i).to_vec()))
        .collect();
    let filled = tx
        .query_one(
            &format!(
                "WITH u AS (SELECT * FROM unnest($2::int4[], $3::vector[]) AS u(idx, v)), \
                 up AS (UPDATE {s}.chunks c SET embedding = u.v FROM u, {s}.chunks old \
                        WHERE c.source_id = $1 AND c.idx = u.idx AND old.id = c.id \
                        RETURNING old.embedding IS NULL AS was_null) \
                 SELECT count(*) FILTER (WHERE was_null), count(*) FROM up"
            ),
            &[&id, &idx, &vecs],
        )
        .map_err(e)?;
    let (was_null, n): (i64, i64) = (filled.get(0), filled.get(1));
    tx.execute(
        &format!("UPDATE {s}.stats SET vectorless = vectorless - $1"),
        &[&was_null],
    )
    .map_err(e)?;
    if complete {
        tx.execute(
            &format!("UPDATE {s}.sources SET embedded_with = $2 WHERE id = $1"),
            &[&id, &model_id],
        )
        .map_err(e)?;
    }
    tx.commit().map_err(e)?;
    Ok(n as usize)
}

pub(crate) fn delete_source(ix: &PgIndex, source: &str) -> Result<usize, IndexError> {
    let mut client = ix.client()?;
    let e = |e| ix.db_error("deleting a source", e);
    let mut tx = client.transaction().map_err(e)?;
    lock_source(ix, &mut tx, source)?;
    let n = remove(ix, &mut tx, source)?;
    tx.commit().map_err(e)?;
    Ok(n)
}

pub(crate) fn move_source(
    ix: &PgIndex,
    from: &str,
    to: &str,
    mtime: f64,
) -> Result<usize, IndexError> {
    let s = &ix.schema;
    let mut client = ix.client()?;
    let e = |e| ix.db_error("moving a source", e);
    let mut tx = client.transaction().map_err(e)?;
    // Both names, in one order, so two opposite moves cannot deadlock.
    let (a, b) = if from <= to { (from, to) } else { (to, from) };
    lock_source(ix, &mut tx, a)?;
    if a != b {
        lock_source(ix, &mut tx, b)?;
    }
    let taken = tx
        .query_opt(
            &format!("SELECT 1 FROM {s}.sources WHERE source = $1"),
            &[&to],
        )
        .map_err(e)?
        .is_some();
    if taken {
        return Ok(0);
    }
    let moved = tx
        .query_opt(
            &format!("UPDATE {s}.sources SET source = $2, mtime = $3 WHERE source = $1 RETURNING chunk_count"),
            &[&from, &to, &mtime],
        )
        .map_err(e)?
        .map_or(0, |r| r.get::<_, i32>(0) as usize);
    tx.commit().map_err(e)?;
    Ok(moved)
}

/// The sync lock is a session advisory lock held on a connection of its
/// own: it lasts while the lease lives and goes with the connection when
/// the process dies.
pub(crate) fn lock_sync(ix: &PgIndex) -> Result<SyncLease, IndexError> {
    let key = format!("minirag sync {}", ix.schema);
    let mut client = ix.target.connect_once(ix.root_cert.as_deref())?;
    let got: bool = client
        .query_one(
            "SELECT pg_try_advisory_lock(hashtextextended($1, 0))",
            &[&key],
        )
        .map_err(|e| ix.db_error("taking the sync lock", e))?
        .get(0);
    if got {
        return Ok(SyncLease::held(Box::new(LockConnection(Some(client)))));
    }
    let holder = client
        .query_opt(
            "SELECT a.application_name, coalesce(host(a.client_addr), 'local socket') \
             FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
             WHERE l.locktype = 'advisory' AND l.granted \
               AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($1, 0) \
             LIMIT 1",
            &[&key],
        )
        .ok()
        .flatten()
        .map(|r| format!("{} from {}", r.get::<_, String>(0), r.get::<_, String>(1)))
        .unwrap_or_else(|| "another process".into());
    Err(IndexError::Busy { cause: None,
        reason: format!(
            "another sync of index '{}' at {} is running ({holder}); wait for it to finish, or query meanwhile",
            ix.schema, ix.target.masked_url
        ),
    })
}

pub(crate) fn cached_vectors(
    ix: &PgIndex,
    model_id: &str,
    texts: &[&str],
) -> Result<Vec<Option<Vec<f32>>>, IndexError> {
    let s = &ix.schema;
    let mut out = vec![None; texts.len()];
    let mut client = ix.client()?;
    let e = |e| ix.db_error("reading cached vectors", e);
    if crate::schema::model(&mut *client, s)
        .map_err(e)?
        .map(|(m, _)| m)
        .as_deref()
        != Some(model_id)
    {
        return Ok(out);
    }
    let rows = client
        .query(
            &format!(
                "SELECT DISTINCT ON (q.i) q.i, c.embedding FROM unnest($1::text[]) WITH ORDINALITY AS q(t, i) \
                 JOIN {s}.chunks c ON md5(c.text) = md5(q.t) AND c.text = q.t \
                 WHERE c.embedding IS NOT NULL ORDER BY q.i"
            ),
            &[&texts],
        )
        .map_err(e)?;
    for r in rows {
        let i = r.get::<_, i64>(0) as usize - 1;
        let v: Vector = r.get(1);
        if let Some(slot) = out.get_mut(i) {
            *slot = Some(v.to_vec());
        }
    }
    Ok(out)
}

/// The sync lock's connection; closing it releases the lock.
struct LockConnection(Option<postgres::Client>);

impl Drop for LockConnection {
    fn drop(&mut self) {
        if let Some(client) = self.0.take() {
            crate::drop_off_runtime(client);
        }
    }
}
