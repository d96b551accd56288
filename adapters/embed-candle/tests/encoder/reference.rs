//! The embedder against reference vectors computed independently (ONNX
//! Runtime fp32) from the same real weights. No toy model here.

use std::path::PathBuf;

use minirag_core::ports::{EmbedError, Embedder, TokenCounter};
use minirag_embed_candle::{
    CandleEmbedder, DownloadProgress, HubOptions, LazyEmbedder, ModelSource,
};
use serde::Deserialize;

/// `../shared/models` beside the checkout (CI lays it there), or MINIRAG_MODELS_DIR.
fn models_dir() -> PathBuf {
    std::env::var_os("MINIRAG_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models"))
}

fn model_dir() -> PathBuf {
    let dir = models_dir().join("all-MiniLM-L6-v2");
    assert!(
        dir.join("model.safetensors").is_file(),
        "real weights expected at {}",
        dir.display()
    );
    dir
}

fn load() -> CandleEmbedder {
    CandleEmbedder::load("all-MiniLM-L6-v2", &model_dir()).expect("model loads")
}

#[derive(Deserialize)]
struct Reference {
    text: String,
    tokens_untruncated: usize,
    tokens_embedded: usize,
    embedding: Vec<f32>,
}

fn references() -> Vec<Reference> {
    let raw = std::fs::read_to_string(model_dir().join("reference-embeddings.jsonl")).unwrap();
    raw.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let na: f64 = a.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

#[test]
fn matches_every_reference_vector_and_token_count() {
    let model = load();
    let refs = references();
    assert!(refs.len() >= 30, "{} references", refs.len());
    let texts: Vec<&str> = refs.iter().map(|r| r.text.as_str()).collect();
    let got = model.embed_documents(&texts).unwrap();
    assert_eq!(got.len(), refs.len());
    let ids = model.embedded_ids(&texts).unwrap();
    for (i, r) in refs.iter().enumerate() {
        let cos = cosine(got.row(i), &r.embedding);
        assert!(
            cos >= 0.9999,
            "cosine {cos} for {:?}",
            &r.text.chars().take(60).collect::<String>()
        );
        assert_eq!(
            model.count(&r.text),
            r.tokens_untruncated,
            "untruncated count of {:?}",
            &r.text.chars().take(60).collect::<String>()
        );
        assert_eq!(ids[i].len(), r.tokens_embedded);
        let norm: f32 = got.row(i).iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "unit vectors");
    }
    assert!(
        refs.iter()
            .any(|r| r.tokens_untruncated > r.tokens_embedded),
        "the set includes an over-long text"
    );
}

#[test]
fn a_text_alone_equals_itself_in_a_mixed_batch_in_the_original_order() {
    let model = load();
    let refs = references();
    let texts: Vec<&str> = refs.iter().map(|r| r.text.as_str()).collect();
    let batch = model.embed_documents(&texts).unwrap();
    for (i, t) in texts.iter().enumerate() {
        let alone = model.embed_query(t).unwrap();
        let worst = alone
            .iter()
            .zip(batch.row(i))
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(worst <= 1e-5, "row {i} differs by {worst}");
    }
}

#[test]
fn the_counter_does_not_truncate() {
    let model = load();
    let text = "word ".repeat(500);
    assert_eq!(model.count(&text), 502);
    assert!(model.count("one two three") == 5);
}

#[test]
fn a_text_longer_than_max_seq_length_embeds_like_its_truncation() {
    let model = load();
    assert_eq!(model.settings().max_seq_length, 256);
    let long: String = (0..400).map(|i| format!("token{} ", i % 50)).collect();
    let longer = format!("{long} and a tail that lies far past the limit");
    let a = model.embed_query(&long).unwrap();
    let b = model.embed_query(&longer).unwrap();
    assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 1e-6));
    let ids = model.embedded_ids(&[long.as_str()]).unwrap();
    assert_eq!(ids[0].len(), 256);
    let from_ids = model.embed_ids(&ids).unwrap();
    assert!(a
        .iter()
        .zip(from_ids.row(0))
        .all(|(x, y)| (x - y).abs() <= 1e-6));
}

#[test]
fn a_local_model_folder_loads_lazily_and_a_missing_one_is_reported() {
    let lazy = LazyEmbedder::new(ModelSource::Local(model_dir()));
    assert!(!lazy.is_loaded());
    assert_eq!(lazy.embed_query("hello").unwrap().len(), 384);
    assert!(lazy.is_loaded());

    let missing = LazyEmbedder::new(ModelSource::Local(PathBuf::from("/nonexistent/model")));
    match missing.embed_query("x") {
        Err(EmbedError::Unavailable { reason, .. }) => {
            assert!(
                reason.contains("/nonexistent/model") && reason.contains("config.json"),
                "{reason}"
            )
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert!(
        missing.count("some words here") > 2,
        "falls back to the estimate"
    );
}

#[test]
fn a_failed_download_names_the_model_the_cache_and_the_fix() {
    let cache = std::env::temp_dir().join(format!("minirag-hub-test-{}", std::process::id()));
    // A model id that is not a folder, with the hub unreachable from tests: the
    // endpoint is pointed at a closed loopback port so nothing leaves the machine.
    let hub = HubOptions {
        endpoint: "http://127.0.0.1:9".into(),
        ..HubOptions::default()
    };
    let source = ModelSource::choose("sentence-transformers/not-a-real-model", None, &cache, hub);
    assert!(matches!(source, ModelSource::Hub { .. }));
    let err = source
        .materialize(&DownloadProgress::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("sentence-transformers/not-a-real-model"),
        "{err}"
    );
    assert!(
        err.contains(&cache.display().to_string()) && err.contains("MODEL_PATH"),
        "{err}"
    );
}
