//! Deterministic synthetic corpora for the index benches: Zipfian text
//! from a fixed vocabulary, and 384-d unit vectors.

use minirag_core::chunk::{Chunk, Layout};
use minirag_core::ports::{SourceRecord, SourceType};

/// xorshift64: fast, seedable, the same stream everywhere.
pub struct Rng(pub u64);

impl Rng {
    /// The next pseudo-random number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }
    /// Roughly Zipfian over `0..n`: cubes concentrate mass on small ids.
    pub fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        ((u * u * u) * n as f64) as usize
    }
}

/// 5,000 made-up words.
pub fn vocabulary() -> Vec<String> {
    let syl = [
        "ka", "ri", "to", "me", "su", "la", "no", "pe", "zu", "vi", "do", "ga", "xe", "mo", "tu",
        "ne",
    ];
    (0..5000)
        .map(|i| {
            format!(
                "{}{}{}",
                syl[i % 16],
                syl[(i / 16) % 16],
                syl[(i / 256) % 16]
            ) + &(i / 4096).to_string()
        })
        .collect()
}

fn normalised(v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.into_iter().map(|x| x / n).collect()
}

/// A uniform random unit vector of `dim`.
pub fn unit_vector(rng: &mut Rng, dim: usize) -> Vec<f32> {
    normalised((0..dim).map(|_| rng.unit()).collect())
}

/// A unit vector near one of `centers` (topics), as real embeddings
/// cluster: uniform vectors have no neighbours worth the name, which no
/// approximate index is built for.
pub fn clustered_vector(rng: &mut Rng, centers: &[Vec<f32>]) -> Vec<f32> {
    let c = &centers[(rng.next_u64() % centers.len() as u64) as usize];
    // Noise of norm about 0.6 around a unit center (uniform [-1, 1) has a
    // variance of 1/3 per dimension): cosine about 0.85 to its topic, as
    // sentence embeddings of one subject are.
    let scale = 0.6 / (c.len() as f32 / 3.0).sqrt();
    normalised(c.iter().map(|x| x + scale * rng.unit()).collect())
}

/// Folders the synthetic sources are spread over (`/corpus/dir<s % 17>/`).
pub const FOLDERS: usize = 17;

/// The record of synthetic source `s` with `count` chunks embedded by the
/// model `bench`; its title is two words of `vocab`.
pub fn source_record(s: usize, count: usize, vocab: &[String]) -> SourceRecord {
    SourceRecord {
        source: format!("/corpus/dir{}/doc{s}.md", s % FOLDERS),
        source_type: SourceType::File,
        title: format!(
            "{} {}",
            vocab[s % vocab.len()],
            vocab[(s * 7) % vocab.len()]
        ),
        title_seeded: false,
        file_hash: String::new(),
        mtime: 0.0,
        ingested_at: String::new(),
        chunk_count: count as u32,
        scheme_version: minirag_core::CHUNK_SCHEME,
        embedded_with: Some("bench".into()),
        ocr_engine: String::new(),
        attributes: Default::default(),
    }
}

/// Chunk `index` of a synthetic source: 60 Zipfian words of `vocab`, four
/// chunks to a parent.
pub fn zipf_chunk(rng: &mut Rng, vocab: &[String], index: u32) -> Chunk {
    let words: Vec<&str> = (0..60)
        .map(|_| vocab[rng.zipf(vocab.len())].as_str())
        .collect();
    Chunk {
        index,
        parent: index / 4,
        text: words.join(" "),
        layout: Layout::default(),
    }
}
