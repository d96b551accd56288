//! Records, chunks and deterministic vectors for the contract tests.

use minirag_core::chunk::{Chunk, Layout};
use minirag_core::ports::{Embeddings, SourceRecord, SourceType};

/// Width of the test vectors.
pub const DIM: usize = 8;

/// A file record for `source` with `n` chunks.
pub fn record(source: &str, title: &str, n: usize) -> SourceRecord {
    SourceRecord {
        source: source.into(),
        source_type: SourceType::File,
        title: title.into(),
        title_seeded: false,
        file_hash: format!("hash-of-{source}"),
        mtime: 1.5,
        ingested_at: "2026-11-30T00:00:00Z".into(),
        chunk_count: n as u32,
        scheme_version: minirag_core::CHUNK_SCHEME,
        embedded_with: Some("test-model".into()),
        ocr_engine: String::new(),
        attributes: Default::default(),
    }
}

/// Chunk `index` with `text`.
pub fn chunk(index: u32, text: &str) -> Chunk {
    Chunk {
        index,
        parent: index / 2,
        text: text.into(),
        layout: Layout::default(),
    }
}

/// A deterministic unit vector for a text.
pub fn vector(text: &str) -> Vec<f32> {
    let mut v = [0f32; DIM];
    for (i, b) in text.bytes().enumerate() {
        v[(b as usize + i) % DIM] += 1.0 + (b % 7) as f32;
    }
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter().map(|x| x / n).collect()
}

/// Deterministic unit vectors for `texts`.
pub fn vectors(texts: &[String]) -> Embeddings {
    let mut e = Embeddings::new(DIM);
    for t in texts {
        e.push(&vector(t));
    }
    e
}

/// Chunks 0.. of `texts`.
pub fn chunks(texts: &[String]) -> Vec<Chunk> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| chunk(i as u32, t))
        .collect()
}
