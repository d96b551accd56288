//! The eval's whole-document BM25 baseline (issue 13): every document of an
//! index is rebuilt from its chunks, stored as one chunk in a scratch index
//! with our analyzer and BM25, and each query on stdin (one per line) is
//! answered with a JSON array of the best sources, best first, on stdout.
//!
//! usage: doc-bm25 INDEX_DIR [K] < queries
//!        doc-bm25 INDEX_DIR --dump > documents.jsonl (source, title, text:
//!        the rebuilt documents, for analysing the corpus outside the index)

use std::io::{BufRead, Write};

use minirag_core::chunk::{Chunk, Layout};
use minirag_core::ports::Index;
use minirag_core::reconstruct::document;
use minirag_core::search::Scope;
use minirag_index_mem::MemIndex;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: doc-bm25 INDEX_DIR [K] < queries (one per line)");
        std::process::exit(2);
    };
    let arg = args.next();
    let result = if arg.as_deref() == Some("--dump") {
        dump(&dir)
    } else {
        run(&dir, arg.and_then(|k| k.parse().ok()).unwrap_or(10))
    };
    if let Err(e) = result {
        eprintln!("doc-bm25: {e}");
        std::process::exit(1);
    }
}

fn dump(dir: &str) -> Result<(), Box<dyn std::error::Error>> {
    let index = MemIndex::open(dir)?;
    let view = index.read()?;
    let mut out = std::io::stdout().lock();
    for record in view.sources(&Scope::all())? {
        let chunks = view.chunks(&record.source, 0..=u32::MAX)?;
        let seeded = record.title_seeded.then_some(record.title.as_str());
        let line = serde_json::json!({
            "source": record.source,
            "title": record.title,
            "text": document(&chunks, seeded),
            "chunks": chunks.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
        });
        writeln!(out, "{line}")?;
    }
    Ok(())
}

fn run(dir: &str, k: usize) -> Result<(), Box<dyn std::error::Error>> {
    let index = MemIndex::open(dir)?;
    let scratch_dir = tempfile::tempdir()?;
    let whole = MemIndex::open(scratch_dir.path())?;
    {
        let view = index.read()?;
        for mut record in view.sources(&Scope::all())? {
            let chunks = view.chunks(&record.source, 0..=u32::MAX)?;
            let seeded = record.title_seeded.then_some(record.title.as_str());
            let text = document(&chunks, seeded);
            record.chunk_count = 1;
            record.embedded_with = None;
            record.title_seeded = false;
            let one = Chunk {
                index: 0,
                parent: 0,
                text,
                layout: Layout::default(),
            };
            whole.replace_source(record, vec![one], None)?;
        }
    }
    let view = whole.read()?;
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let hits = view.keyword_search(line.trim(), k, &Scope::all())?;
        let sources: Vec<&str> = hits.iter().map(|h| h.key.source.as_str()).collect();
        writeln!(out, "{}", serde_json::to_string(&sources)?)?;
        out.flush()?;
    }
    Ok(())
}
