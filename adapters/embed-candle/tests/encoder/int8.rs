//! The int8 encoder against our fp32 one on real weights: all-MiniLM-L6-v2
//! and multilingual-e5-small (the default's family), on the model's
//! reference texts and on paragraphs of this repository's docs. The gate
//! is a cosine median of at least 0.995 and a minimum of at least 0.985.

use std::path::PathBuf;

use minirag_core::models::Precision;
use minirag_core::ports::Embedder;
use minirag_embed_candle::CandleEmbedder;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn minilm() -> PathBuf {
    std::env::var_os("MINIRAG_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/models"))
        .join("all-MiniLM-L6-v2")
}

fn e5() -> PathBuf {
    std::env::var_os("MINIRAG_MULTILINGUAL_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/models/multilingual-e5-small"))
}

/// The reference texts, and 200 paragraphs of this repository's own docs
/// (real prose, tables and code; `embed_bench` gives the 2,000 README
/// chunks of `shared/tools/ort-baseline`).
fn texts() -> Vec<String> {
    let refs = std::fs::read_to_string(minilm().join("reference-embeddings.jsonl")).unwrap();
    let mut texts: Vec<String> = refs
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["text"].as_str().map(str::to_string))
        .collect();
    assert!(texts.len() >= 30, "{} reference texts", texts.len());
    let mut paragraphs = Vec::new();
    for doc in [
        "README.md",
        "ARCHITECTURE.md",
        "docs/benchmarks.md",
        "docs/quality.md",
    ] {
        let raw = std::fs::read_to_string(root().join(doc)).unwrap();
        paragraphs.extend(
            raw.split("\n\n")
                .map(str::trim)
                .filter(|p| p.len() >= 40)
                .map(str::to_string),
        );
    }
    assert!(paragraphs.len() >= 200, "{} paragraphs", paragraphs.len());
    let step = paragraphs.len() / 200;
    texts.extend(paragraphs.into_iter().step_by(step).take(200));
    texts
}

fn cosines(dir: &std::path::Path) -> Vec<f64> {
    assert!(
        dir.join("model.safetensors").is_file(),
        "real weights expected at {} (.ci/run converts e5)",
        dir.display()
    );
    let texts = texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let fp32 = CandleEmbedder::load("m", dir).unwrap();
    let int8 = CandleEmbedder::load("m", dir)
        .unwrap()
        .with_precision(Precision::Int8);
    assert_eq!(int8.model_id(), "m+int8a8", "int8 is part of the id");
    let a = fp32.embed_documents(&refs).unwrap();
    let b = int8.embed_documents(&refs).unwrap();
    let mut cos: Vec<f64> = a
        .data
        .chunks_exact(a.dim)
        .zip(b.data.chunks_exact(b.dim))
        .map(|(x, y)| x.iter().zip(y).map(|(p, q)| *p as f64 * *q as f64).sum())
        .collect();
    cos.sort_by(f64::total_cmp);
    cos
}

fn assert_gate(name: &str, cos: &[f64]) {
    let (median, min) = (cos[cos.len() / 2], cos[0]);
    assert!(
        median >= 0.995 && min >= 0.985,
        "{name}: int8 vs fp32 cosine median {median:.4}, min {min:.4} over {} texts",
        cos.len()
    );
    // Not the same vectors: the int8 path really ran.
    assert!(median < 0.999_999, "{name}: {median}");
}

#[test]
fn int8_minilm_keeps_fp32_vectors() {
    assert_gate("all-MiniLM-L6-v2", &cosines(&minilm()));
}

#[test]
fn int8_multilingual_e5_keeps_fp32_vectors() {
    assert_gate("multilingual-e5-small", &cosines(&e5()));
}
