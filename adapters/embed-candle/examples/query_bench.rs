//! Query embedding latency: every query of a file (one per line; a TSV uses
//! its second column) embedded `--runs` times in turn, warm; prints p50 and
//! p95 of one `embed_query` call. Two builds run one after the other
//! compare side by side.
//!
//! cargo run --release -p minirag-embed-candle --example query_bench -- --queries eval/queries.tsv [--runs 5]
//!     [--model DIR] [--precision fp32|int8 (default fp32)]

use std::time::Instant;

use minirag_core::ports::Embedder;
use minirag_embed_candle::{CandleEmbedder, Precision};

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let file = arg("--queries").unwrap_or_else(|| "eval/queries.tsv".into());
    let runs: usize = arg("--runs").map_or(5, |r| r.parse().expect("--runs: a number"));
    let model = arg("--model").unwrap_or_else(|| "../shared/models/all-MiniLM-L6-v2".into());
    let queries: Vec<String> = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("cannot read {file}: {e}"))
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split('\t').nth(1).unwrap_or(l).trim().to_string())
        .collect();
    let precision = match arg("--precision").as_deref() {
        None | Some("fp32") => Precision::Fp32,
        Some("int8") => Precision::Int8,
        Some(other) => panic!("--precision: {other} is neither fp32 nor int8"),
    };
    let embedder = CandleEmbedder::load("bench", std::path::Path::new(&model))
        .expect("model loads")
        .with_precision(precision);
    embedder.embed_query(&queries[0]).unwrap();
    let mut ms = Vec::new();
    for _ in 0..runs {
        for q in &queries {
            let t = Instant::now();
            embedder.embed_query(q).unwrap();
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    ms.sort_by(f64::total_cmp);
    println!(
        "{precision:?}: embed_query over {} calls: p50 {:.2} ms, p95 {:.2} ms",
        ms.len(),
        ms[ms.len() / 2],
        ms[ms.len() * 95 / 100]
    );
}
