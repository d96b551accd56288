//! Older schemas open under the current one: a version 3 index (chunk
//! postings one row per term and chunk) with its postings packed per (term,
//! source), ranking exactly as before; a version 4 index with the sources'
//! language and declared-field columns added.

use crate::support;

use minirag_core::ports::Index;
use minirag_core::search::Scope;
use minirag_index_conformance::synthetic::{source_record, vocabulary, zipf_chunk, Rng};
use minirag_index_pg::{PgIndex, PgOptions};
use minirag_rank::Analyzer;
use support::{test_url, Schema};

#[test]
fn a_version_3_index_is_packed_on_open_and_ranks_the_same() {
    let schema = Schema {
        name: format!("migrate_{}", std::process::id()),
    };
    let s = schema.name.clone();
    let vocab = vocabulary();
    let mut rng = Rng(7);
    let ix = PgIndex::open(&test_url(), &s, &PgOptions::default()).unwrap();
    let mut texts: Vec<(String, Vec<String>)> = Vec::new();
    for n in 0..12 {
        let chunks: Vec<_> = (0..30).map(|i| zipf_chunk(&mut rng, &vocab, i)).collect();
        let record = source_record(n, chunks.len(), &vocab);
        texts.push((
            record.source.clone(),
            chunks.iter().map(|c| c.text.clone()).collect(),
        ));
        ix.replace_source(record, chunks, None).unwrap();
    }
    let queries: Vec<String> = (0..20)
        .map(|i| format!("{} {}", vocab[i], vocab[i * 7 % vocab.len()]))
        .collect();
    let ranked = |ix: &PgIndex| {
        let view = ix.read().unwrap();
        queries
            .iter()
            .map(|q| {
                let chunks = view.keyword_search(q, 10, &Scope::all()).unwrap();
                let docs = view.document_search(q, 5, &Scope::all()).unwrap();
                (chunks, docs)
            })
            .collect::<Vec<_>>()
    };
    let before = ranked(&ix);
    assert!(before.iter().any(|(c, _)| !c.is_empty()));
    drop(ix);

    // Rewrite the chunk postings as version 3 kept them.
    let mut db = postgres::Client::connect(&test_url(), postgres::NoTls).unwrap();
    let analyzer = Analyzer::default();
    db.batch_execute(&format!(
        "CREATE TABLE {s}.chunk_terms (term text NOT NULL, source_id bigint NOT NULL, chunk_id bigint NOT NULL, \
         tf integer NOT NULL, len integer NOT NULL, PRIMARY KEY (term, source_id, chunk_id) INCLUDE (tf, len)); \
         DELETE FROM {s}.chunk_postings; UPDATE {s}.meta SET value = '3' WHERE key = 'version'"
    ))
    .unwrap();
    for (source, chunks) in &texts {
        for (i, text) in chunks.iter().enumerate() {
            let terms = analyzer.terms(text);
            let len = terms.len() as i32;
            let mut tf: std::collections::BTreeMap<String, i32> = Default::default();
            for t in terms {
                *tf.entry(t).or_default() += 1;
            }
            for (t, n) in tf {
                db.execute(
                    &format!(
                        "INSERT INTO {s}.chunk_terms SELECT $1, c.source_id, c.id, $2, $3 FROM {s}.chunks c \
                         JOIN {s}.sources src ON src.id = c.source_id WHERE src.source = $4 AND c.idx = $5"
                    ),
                    &[&t, &n, &len, source, &(i as i32)],
                )
                .unwrap();
            }
        }
    }
    drop(db);

    let ix = PgIndex::open(&test_url(), &s, &PgOptions::default()).unwrap();
    assert_eq!(
        ranked(&ix),
        before,
        "the packed postings rank as the old rows did"
    );
    let mut db = postgres::Client::connect(&test_url(), postgres::NoTls).unwrap();
    let old: bool = db
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'chunk_terms')",
            &[&s],
        )
        .unwrap()
        .get(0);
    assert!(!old, "the old table is dropped");
    let version: String = db
        .query_one(
            &format!("SELECT value FROM {s}.meta WHERE key = 'version'"),
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(version, minirag_index_pg::schema::VERSION.to_string());
}

#[test]
fn a_version_4_index_gains_the_language_and_field_columns() {
    let schema = Schema {
        name: format!("migrate_v4_{}", std::process::id()),
    };
    let s = schema.name.clone();
    let vocab = vocabulary();
    let mut rng = Rng(11);
    let ix = PgIndex::open(&test_url(), &s, &PgOptions::default()).unwrap();
    let chunk = |rng: &mut Rng| vec![zipf_chunk(rng, &vocab, 0)];
    ix.replace_source(source_record(0, 1, &vocab), chunk(&mut rng), None)
        .unwrap();
    drop(ix);
    // As version 4 left it: no such columns.
    let mut db = postgres::Client::connect(&test_url(), postgres::NoTls).unwrap();
    db.batch_execute(&format!(
        "ALTER TABLE {s}.sources DROP COLUMN language; ALTER TABLE {s}.sources DROP COLUMN meta; \
         UPDATE {s}.meta SET value = '4' WHERE key = 'version'"
    ))
    .unwrap();
    drop(db);

    let ix = PgIndex::open(&test_url(), &s, &PgOptions::default()).unwrap();
    let old = ix
        .read()
        .unwrap()
        .source(&source_record(0, 1, &vocab).source)
        .unwrap()
        .unwrap();
    assert_eq!(
        old.attributes,
        Default::default(),
        "an old row declares nothing"
    );
    let mut record = source_record(1, 1, &vocab);
    record.attributes.language = Some("ru".into());
    record.attributes.meta = vec![("tags".into(), "incident".into())];
    ix.replace_source(record.clone(), chunk(&mut rng), None)
        .unwrap();
    let back = ix.read().unwrap().source(&record.source).unwrap().unwrap();
    assert_eq!(back.attributes, record.attributes);
}
