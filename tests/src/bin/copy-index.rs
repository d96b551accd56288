//! Copies an embedded index into a PostgreSQL schema through the Index
//! port: every source with its record, chunks and stored vectors (read
//! back by chunk text, the embedding cache). The eval uses it to rank the
//! same corpus on both adapters without embedding it twice.
//!
//! usage: copy-index INDEX_DIR DB_URL SCHEMA

use minirag_core::ports::{Embeddings, Index};
use minirag_core::search::Scope;
use minirag_index_mem::MemIndex;
use minirag_index_pg::{PgIndex, PgOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, url, schema] = args.as_slice() else {
        eprintln!("usage: copy-index INDEX_DIR DB_URL SCHEMA");
        std::process::exit(2);
    };
    if let Err(e) = run(dir, url, schema) {
        eprintln!("copy-index: {e}");
        std::process::exit(1);
    }
}

fn run(dir: &str, url: &str, schema: &str) -> Result<(), Box<dyn std::error::Error>> {
    let from = MemIndex::open(dir)?;
    let to = PgIndex::open(url, schema, &PgOptions::default())?;
    let started = std::time::Instant::now();
    // As a sync: under the sync lock, settled at the end (the vector graph).
    let lease = to.lock_sync()?;
    let view = from.read()?;
    let model = view.vector_model();
    let sources = view.sources(&Scope::all())?;
    let mut chunks_copied = 0usize;
    for (i, record) in sources.iter().enumerate() {
        let chunks = view.chunks(&record.source, 0..=u32::MAX)?;
        let vectors = match (&model, &record.embedded_with) {
            (Some(m), Some(e)) if m == e => {
                let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
                let rows = from.cached_vectors(m, &texts);
                rows.iter().all(Option::is_some).then(|| {
                    let dim = rows.first().and_then(|r| r.as_ref()).map_or(0, Vec::len);
                    let mut e = Embeddings::new(dim);
                    for r in rows.iter().flatten() {
                        e.push(r);
                    }
                    e
                })
            }
            _ => None,
        };
        let mut record = record.clone();
        if vectors.is_none() {
            record.embedded_with = None;
        }
        chunks_copied += chunks.len();
        to.replace_source(record, chunks, vectors)?;
        if (i + 1) % 100 == 0 {
            eprintln!("{} / {} sources", i + 1, sources.len());
        }
    }
    eprintln!(
        "copied {} sources, {chunks_copied} chunks in {:.1} s",
        sources.len(),
        started.elapsed().as_secs_f64()
    );
    to.settle(&mut |line| eprintln!("{line}"))?;
    drop(lease);
    eprintln!("settled after {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}
