//! Test helper: writes to an index from its own process.
//!
//! `minirag-index-child DIR loop` replaces sources `/d/s0.md`, `/d/s1.md`, …
//! forever (compacting often) and prints `SOURCE N` after each write returns.
//! `minirag-index-child DIR once SOURCE TEXT` writes one source and exits.

use minirag_core::chunk::{Chunk, Layout};
use minirag_core::ports::{Embeddings, Index, SourceRecord, SourceType};
use minirag_index_mem::MemIndex;
use std::io::Write;

fn write(index: &MemIndex, source: &str, texts: &[String]) {
    let chunks = texts
        .iter()
        .enumerate()
        .map(|(i, t)| Chunk {
            index: i as u32,
            parent: 0,
            text: t.clone(),
            layout: Layout::default(),
        })
        .collect();
    let mut vectors = Embeddings::new(4);
    for t in texts {
        let x = (t.len() % 7) as f32 + 1.0;
        let n = (x * x + 3.0).sqrt();
        vectors.push(&[x / n, 1.0 / n, 1.0 / n, 1.0 / n]);
    }
    let record = SourceRecord {
        source: source.into(),
        source_type: SourceType::File,
        title: format!("title of {source}"),
        title_seeded: false,
        file_hash: String::new(),
        mtime: 0.0,
        ingested_at: String::new(),
        chunk_count: texts.len() as u32,
        scheme_version: minirag_core::CHUNK_SCHEME,
        embedded_with: Some("child".into()),
        ocr_engine: String::new(),
        attributes: Default::default(),
    };
    index
        .replace_source(record, chunks, Some(vectors))
        .expect("write");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let index = MemIndex::open(&args[1])
        .expect("open")
        .with_compaction_threshold(16 << 10);
    match args[2].as_str() {
        "loop" => {
            let stdout = std::io::stdout();
            for i in 0u64.. {
                let source = format!("/d/s{}.md", i % 50);
                let n = 1 + (i % 5) as usize;
                let texts: Vec<String> = (0..n)
                    .map(|j| format!("round {i} chunk {j} of {source}"))
                    .collect();
                write(&index, &source, &texts);
                let mut out = stdout.lock();
                writeln!(out, "{source} {i} {n}").unwrap();
                out.flush().unwrap();
            }
        }
        "once" => write(&index, &args[3], &[args[4].clone()]),
        other => panic!("unknown mode {other}"),
    }
}
