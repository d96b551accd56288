//! Index benchmark on synthetic 384-d chunks (random text from a fixed
//! vocabulary): build time, snapshot bytes, open time, RSS, vector top-50,
//! BM25 and hybrid latency. Each size is built, then opened and measured in
//! a process of its own, so the RSS it prints is the open index's and not
//! the build's freed heap. With `--hnsw N` it also measures instant-distance
//! (build time and recall@10 against the exact scan) on the first N vectors.
//!
//! With `--filters` it also times hybrid queries narrowed by a search
//! filter that keeps 1 % and 50 % of the documents (by modification
//! time), beside the same queries unfiltered, rounds interleaved.
//!
//! cargo run -p minirag-index-mem --example index_bench -- [--sizes 10000,100000] [--queries 200] [--hnsw 20000] [--filters] [--keep DIR]

use std::path::PathBuf;
use std::time::Instant;

use minirag_core::ports::{Embeddings, Index};
use minirag_core::search::{fuse_documents, Filter, FilterRequest, Scope};
use minirag_index_conformance::synthetic::{self, source_record, vocabulary, zipf_chunk, Rng};
use minirag_index_mem::MemIndex;

/// The binary's allocator: the RSS printed is what the binary would hold.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DIM: usize = 384;
const PER_SOURCE: usize = 100;
/// Queries measured per size, unless `--queries N`.
const QUERIES: usize = 200;

fn unit_vector(rng: &mut Rng) -> Vec<f32> {
    synthetic::unit_vector(rng, DIM)
}

/// The seed of the `n`-chunk index's vectors: a stream of its own, so they
/// can be made again for the recall check instead of being held (which
/// would put 1.5 GB of the bench's own into the RSS it reports).
fn vector_seed(n: usize) -> u64 {
    0x2545_F491_4F6C_DD1D ^ n as u64
}

/// The first `n` vectors of the stream `seed`, one at a time.
fn vectors_of(seed: u64, n: usize) -> impl Iterator<Item = Vec<f32>> {
    let mut rng = Rng(seed);
    (0..n).map(move |_| unit_vector(&mut rng))
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn rss_mb(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn dir_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.metadata().map_or(0, |m| m.len()))
        .sum()
}

fn percentiles(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[ms.len() * 95 / 100])
}

/// Builds an index of `n` chunks in a temporary folder, or in `--keep
/// DIR/<n>` to measure again (`--measure DIR/<n> <n> 0 0`): (the temporary
/// folder, the folder, build seconds, bytes on disk).
fn build(n: usize, vocab: &[String]) -> (Option<tempfile::TempDir>, PathBuf, f64, u64) {
    let (temporary, path) = match arg("--keep") {
        Some(keep) => (None, PathBuf::from(keep).join(n.to_string())),
        None => {
            let t = tempfile::tempdir().unwrap();
            let path = t.path().to_path_buf();
            (Some(t), path)
        }
    };
    let dir = &path;
    let mut rng = Rng(0x9E3779B97F4A7C15 ^ n as u64);
    let index = MemIndex::open(dir).unwrap();
    let mut vector_rng = Rng(vector_seed(n));
    let started = Instant::now();
    for s in 0..n.div_ceil(PER_SOURCE) {
        let count = PER_SOURCE.min(n - s * PER_SOURCE);
        let mut chunks = Vec::with_capacity(count);
        let mut vectors = Embeddings::new(DIM);
        for i in 0..count {
            chunks.push(zipf_chunk(&mut rng, vocab, i as u32));
            vectors.push(&unit_vector(&mut vector_rng));
        }
        let mut record = source_record(s, count, vocab);
        // Day s: a date filter keeps a known share of the documents; one
        // in a hundred is Russian, every other one is tagged `even`.
        record.mtime = s as f64 * 86_400.0;
        record.attributes.language = Some(if s % 100 == 0 { "ru" } else { "en" }.into());
        if s % 2 == 0 {
            record.attributes.meta = vec![("tags".into(), "even".into())];
        }
        index.replace_source(record, chunks, Some(vectors)).unwrap();
    }
    index.compact().unwrap();
    let build_s = started.elapsed().as_secs_f64();
    let bytes = dir_bytes(dir);
    drop(index);
    (temporary, path, build_s, bytes)
}

/// Opens the `n`-chunk index in `dir` and measures it, in a process of its
/// own (the build's freed heap would count in the RSS otherwise).
fn measure_apart(dir: &std::path::Path, n: usize, build_s: f64, bytes: u64) {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap());
    child
        .arg("--measure")
        .arg(dir)
        .args([n.to_string(), build_s.to_string(), bytes.to_string()]);
    if arg_present("--filters") {
        child.arg("--filters");
    }
    if let Some(q) = arg("--queries") {
        child.args(["--queries", &q]);
    }
    let status = child.status().unwrap();
    assert!(status.success(), "the measuring process failed");
}

fn measure(dir: &std::path::Path, n: usize, vocab: &[String], build_s: f64, bytes: u64) {
    let mut rng = Rng(0x5851_F42D_4C95_7F2D ^ n as u64);
    let t = Instant::now();
    let index = MemIndex::open(dir).unwrap();
    let open_ms = t.elapsed().as_secs_f64() * 1e3;

    let scope = Scope::all();
    // Open → the first hybrid query's answer: a large index without an
    // int8 copy on disk starts building one and scans exactly meanwhile.
    let t = Instant::now();
    {
        let qv = unit_vector(&mut rng);
        let text = format!("{} {}", vocab[1], vocab[7]);
        let view = index.read().unwrap();
        let v = view.vector_search(&qv, 50, &scope).unwrap();
        let k = view.keyword_search(&text, 50, &scope).unwrap();
        let d = view.document_search(&text, 50, &scope).unwrap();
        assert!(!fuse_documents(&v, &k, &d, 0.6).is_empty());
    }
    let first_query_ms = open_ms + t.elapsed().as_secs_f64() * 1e3;
    // Open → the int8 copy ready (read in place, or built in the background).
    index.warm().unwrap();
    let first_ms = open_ms + t.elapsed().as_secs_f64() * 1e3;
    let int8_file = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .any(|e| e.path().extension().is_some_and(|x| x == "i8"));
    // Recall@10 of the index's vector search against brute force, in one
    // pass over the vectors made again.
    let mut recall = 0.0;
    const RECALL_QUERIES: usize = 20;
    let queries: Vec<Vec<f32>> = (0..RECALL_QUERIES).map(|_| unit_vector(&mut rng)).collect();
    let mut best: Vec<Vec<f32>> = vec![Vec::new(); RECALL_QUERIES];
    for v in vectors_of(vector_seed(n), n) {
        for (qv, top) in queries.iter().zip(&mut best) {
            let d = minirag_index_mem::vectors::dot(&v, qv);
            if top.len() < 10 || d > top[9] {
                let at = top.partition_point(|&b| b >= d);
                top.insert(at, d);
                top.truncate(10);
            }
        }
    }
    for (qv, truth) in queries.iter().zip(&best) {
        let got = index.read().unwrap().vector_search(qv, 10, &scope).unwrap();
        // Compare by distance (slots are not exposed): a hit counts when its
        // distance is one of the true ten.
        let cutoff = 2.0 - 2.0 * truth[9] + 1e-5;
        recall += got.iter().filter(|c| c.value <= cutoff).count() as f64 / 10.0;
    }
    let recall = recall / RECALL_QUERIES as f64;
    let (mut vec_ms, mut kw_ms, mut doc_ms, mut hy_ms) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let wanted = arg("--queries")
        .and_then(|q| q.parse().ok())
        .unwrap_or(QUERIES);
    for q in 0..wanted {
        let qv = unit_vector(&mut rng);
        let words: Vec<&str> = (0..3)
            .map(|_| vocab[(rng.zipf(vocab.len()) + q % 3) % vocab.len()].as_str())
            .collect();
        let text = words.join(" ");
        let t = Instant::now();
        let v = index
            .read()
            .unwrap()
            .vector_search(&qv, 50, &scope)
            .unwrap();
        vec_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let k = index
            .read()
            .unwrap()
            .keyword_search(&text, 50, &scope)
            .unwrap();
        kw_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let view = index.read().unwrap();
        let t = Instant::now();
        let d = view.document_search(&text, 50, &scope).unwrap();
        doc_ms.push(t.elapsed().as_secs_f64() * 1e3);
        // Index cost of one hybrid query: every list one after the other,
        // then fusion. (The engine runs the keyword side beside the query
        // embedding, which takes longer, so there it costs no wall time.)
        let t = Instant::now();
        let v2 = view.vector_search(&qv, 50, &scope).unwrap();
        let k2 = view.keyword_search(&text, 50, &scope).unwrap();
        let d2 = view.document_search(&text, 50, &scope).unwrap();
        let fused = fuse_documents(&v2, &k2, &d2, 0.6);
        hy_ms.push(t.elapsed().as_secs_f64() * 1e3);
        drop(view);
        assert!(d.len() <= 50);
        assert!(!v.is_empty() && !fused.is_empty() && k.len() <= 50);
    }
    if arg_present("--filters") {
        filtered(&index, n.div_ceil(PER_SOURCE), vocab, &mut rng);
    }
    let (v50, v95) = percentiles(vec_ms);
    let (k50, k95) = percentiles(kw_ms);
    let (d50, d95) = percentiles(doc_ms);
    let (h50, h95) = percentiles(hy_ms);
    println!(
        "| {n} | {build_s:.1} s | {:.0} MB | {} | {open_ms:.0} ms | {first_query_ms:.0} ms | {first_ms:.0} ms | {:.0} + {:.0} MB | {v50:.2} / {v95:.2} | {k50:.2} / {k95:.2} | {d50:.2} / {d95:.2} | {h50:.2} / {h95:.2} | {recall:.3} |",
        bytes as f64 / 1e6,
        if int8_file { "on disk" } else { "built" },
        rss_mb("RssAnon:"),
        rss_mb("RssFile:"),
    );
}

fn arg_present(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

/// Hybrid queries (every list, then fusion) unfiltered and with filters
/// keeping 1 % and 50 % of the `sources` documents, rounds interleaved.
fn filtered(index: &MemIndex, sources: usize, vocab: &[String], rng: &mut Rng) {
    let before = |share: usize| {
        let day = (sources * share / 100).max(1) as i64;
        minirag_core::time::iso_utc(day * 86_400)
    };
    let scope_before = |date: &str| {
        let filter = Filter::new(
            FilterRequest {
                modified_before: Some(date),
                ..Default::default()
            },
            &[],
        )
        .unwrap();
        Scope::all().with_filter(filter)
    };
    let (one, half) = (before(1), before(50));
    let ru = ["ru".to_string()];
    let even = [("tags".to_string(), "even".to_string())];
    let by = |languages: &[String], meta: &[(String, String)]| {
        let request = FilterRequest {
            languages,
            meta,
            ..Default::default()
        };
        Scope::all().with_filter(Filter::new(request, &[]).unwrap())
    };
    let scopes = [
        ("none", Scope::all()),
        ("1 % (date)", scope_before(&one)),
        ("50 % (date)", scope_before(&half)),
        ("1 % (language)", by(&ru, &[])),
        ("50 % (meta)", by(&[], &even)),
    ];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); scopes.len()];
    for q in 0..QUERIES {
        let qv = unit_vector(rng);
        let words: Vec<&str> = (0..3)
            .map(|_| vocab[(rng.zipf(vocab.len()) + q % 3) % vocab.len()].as_str())
            .collect();
        let text = words.join(" ");
        for (i, (_, scope)) in scopes.iter().enumerate() {
            let view = index.read().unwrap();
            let t = Instant::now();
            let v = view.vector_search(&qv, 50, scope).unwrap();
            let k = view.keyword_search(&text, 50, scope).unwrap();
            let d = view.document_search(&text, 50, scope).unwrap();
            let fused = fuse_documents(&v, &k, &d, 0.6);
            times[i].push(t.elapsed().as_secs_f64() * 1e3);
            assert!(!fused.is_empty());
        }
    }
    for ((name, _), ms) in scopes.iter().zip(times) {
        let (p50, p95) = percentiles(ms);
        println!(
            "filter keeping {name} of {sources} documents: hybrid p50 {p50:.2} ms, p95 {p95:.2} ms"
        );
    }
}

#[derive(Clone)]
struct P(Vec<f32>);

impl instant_distance::Point for P {
    fn distance(&self, other: &Self) -> f32 {
        let dot: f32 = self.0.iter().zip(&other.0).map(|(a, b)| a * b).sum();
        (2.0 - 2.0 * dot).max(0.0)
    }
}

/// instant-distance over the first `n` vectors of the `size`-chunk index.
fn hnsw(size: usize, n: usize) {
    let n = n.min(size);
    let points: Vec<P> = vectors_of(vector_seed(size), n).map(P).collect();
    let values: Vec<usize> = (0..n).collect();
    let t = Instant::now();
    let map = instant_distance::Builder::default().build(points.clone(), values);
    let build_s = t.elapsed().as_secs_f64();
    let mut rng = Rng(42);
    let mut recall = 0.0;
    let mut search = instant_distance::Search::default();
    let mut ms = Vec::new();
    for _ in 0..QUERIES {
        let q = P(unit_vector(&mut rng));
        let mut exact: Vec<(f32, usize)> = points
            .iter()
            .enumerate()
            .map(|(i, p)| (instant_distance::Point::distance(&q, p), i))
            .collect();
        exact.sort_by(|a, b| a.0.total_cmp(&b.0));
        let truth: Vec<usize> = exact[..10].iter().map(|e| e.1).collect();
        let t = Instant::now();
        let got: Vec<usize> = map
            .search(&q, &mut search)
            .take(10)
            .map(|i| *i.value)
            .collect();
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        recall += got.iter().filter(|g| truth.contains(g)).count() as f64 / 10.0;
    }
    let (p50, _) = percentiles(ms);
    println!("instant-distance HNSW over {n} vectors: build {build_s:.1} s, recall@10 {:.3}, search p50 {p50:.2} ms", recall / QUERIES as f64);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--measure") {
        let value = |i: usize| args[at + i].as_str();
        let vocab = vocabulary();
        let n = value(2).parse().unwrap();
        let (build_s, bytes) = (value(3).parse().unwrap(), value(4).parse().unwrap());
        measure(std::path::Path::new(value(1)), n, &vocab, build_s, bytes);
        return;
    }
    let sizes: Vec<usize> = arg("--sizes")
        .unwrap_or("10000,100000".into())
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    let vocab = vocabulary();
    println!(
        "cores: {}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("| chunks | build | on disk | int8 copy | open | open → first hybrid | open → int8 ready | RSS anon + file | vector top-50 p50/p95 ms | BM25 p50/p95 ms | documents p50/p95 ms | hybrid p50/p95 ms | recall@10 vs exact |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &n in &sizes {
        let (_temporary, dir, build_s, bytes) = build(n, &vocab);
        measure_apart(&dir, n, build_s, bytes);
    }
    if let (Some(h), Some(&last)) = (
        arg("--hnsw").and_then(|h| h.parse::<usize>().ok()),
        sizes.last(),
    ) {
        hnsw(last, h);
    }
}
