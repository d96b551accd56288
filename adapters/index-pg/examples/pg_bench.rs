//! index-pg beside index-mem on the same synthetic chunks (Zipfian text,
//! clustered 384-d vectors, 100 chunks per source): load time under the
//! sync lock, then the settle that builds index-pg's vector graph; a query's
//! three lists (vector top-50, BM25 top-50, documents top-50) p50/p95 with
//! 1, 4 and 16 concurrent clients; recall@10 of the vector list against
//! brute force, unscoped and scoped to one folder in 17.
//!
//! cargo run --release -p minirag-index-pg --example pg_bench -- --url postgres://… [--sizes 100000] [--queries 320] [--indexes mem,pg]

use std::time::Instant;

use minirag_core::chunk::Chunk;
use minirag_core::ports::{Embeddings, Index, SourceRecord};
use minirag_core::search::Scope;
use minirag_index_conformance::synthetic::{
    clustered_vector, source_record, unit_vector, vocabulary, zipf_chunk, Rng, FOLDERS,
};
use minirag_index_mem::MemIndex;
use minirag_index_pg::{PgIndex, PgOptions};

const DIM: usize = 384;
const PER_SOURCE: usize = 100;
const TOPICS: usize = 2000;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn percentiles(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[ms.len() * 95 / 100])
}

struct Data {
    sources: Vec<(SourceRecord, Vec<Chunk>, Embeddings)>,
    /// (source index, vector) of every chunk, for brute force.
    vectors: Vec<(usize, Vec<f32>)>,
    centers: Vec<Vec<f32>>,
}

fn generate(n: usize, vocab: &[String]) -> Data {
    let mut rng = Rng(0x9E3779B97F4A7C15 ^ n as u64);
    let centers: Vec<Vec<f32>> = (0..TOPICS).map(|_| unit_vector(&mut rng, DIM)).collect();
    let mut sources = Vec::new();
    let mut vectors = Vec::with_capacity(n);
    for s in 0..n.div_ceil(PER_SOURCE) {
        let count = PER_SOURCE.min(n - s * PER_SOURCE);
        let mut chunks = Vec::with_capacity(count);
        let mut e = Embeddings::new(DIM);
        for i in 0..count {
            chunks.push(zipf_chunk(&mut rng, vocab, i as u32));
            let v = clustered_vector(&mut rng, &centers);
            e.push(&v);
            vectors.push((s, v));
        }
        let record = source_record(s, count, vocab);
        sources.push((record, chunks, e));
    }
    Data {
        sources,
        vectors,
        centers,
    }
}

/// Seconds to write every source under the sync lock, as a sync does, and
/// to settle afterwards (index-pg builds its vector graph then).
fn load(index: &dyn Index, data: &Data) -> (f64, f64) {
    let t = Instant::now();
    let lease = index.lock_sync().unwrap();
    for (record, chunks, e) in &data.sources {
        index
            .replace_source(record.clone(), chunks.clone(), Some(e.clone()))
            .unwrap();
    }
    let written = t.elapsed().as_secs_f64();
    let t = Instant::now();
    index.settle(&mut |line| eprintln!("{line}")).unwrap();
    drop(lease);
    (written, t.elapsed().as_secs_f64())
}

/// Recall@10 of `index`'s vector list against brute force over `data`.
fn recall(index: &dyn Index, data: &Data, scoped: bool, queries: usize) -> f64 {
    let mut rng = Rng(7);
    let folder = 3;
    let scope = if scoped {
        Scope::new([format!("/corpus/dir{folder}")])
    } else {
        Scope::all()
    };
    let mut total = 0.0;
    for _ in 0..queries {
        let q = clustered_vector(&mut rng, &data.centers);
        let mut exact: Vec<f32> = data
            .vectors
            .iter()
            .filter(|(s, _)| !scoped || s % FOLDERS == folder)
            .map(|(_, v)| v.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>())
            .collect();
        exact.sort_by(|a, b| b.total_cmp(a));
        let cutoff = 2.0 - 2.0 * exact[9] + 1e-4;
        let got = index.read().unwrap().vector_search(&q, 10, &scope).unwrap();
        assert_eq!(got.len(), 10, "k results, scoped or not");
        total += got.iter().filter(|c| c.value <= cutoff).count() as f64 / 10.0;
    }
    total / queries as f64
}

/// p50/p95 ms of one query's three lists in one read view, and queries per
/// second, with `clients` threads sharing `total` queries.
fn latency(
    index: &(dyn Index + Sync),
    data: &Data,
    vocab: &[String],
    clients: usize,
    total: usize,
    beside: bool,
) -> (f64, f64, f64) {
    let started = Instant::now();
    let per = total / clients;
    let ms: Vec<f64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                s.spawn(move || {
                    let mut rng = Rng(1000 + c as u64);
                    let mut ms = Vec::with_capacity(per);
                    for q in 0..per {
                        let qv = clustered_vector(&mut rng, &data.centers);
                        let words: Vec<&str> = (0..3)
                            .map(|_| vocab[(rng.zipf(vocab.len()) + q % 3) % vocab.len()].as_str())
                            .collect();
                        let text = words.join(" ");
                        let t = Instant::now();
                        let view = index.read().unwrap();
                        let keyword = || {
                            let k = view.keyword_search(&text, 50, &Scope::all()).unwrap();
                            let d = view.document_search(&text, 50, &Scope::all()).unwrap();
                            (k, d)
                        };
                        // As `Engine::query` does: the keyword lists on a
                        // second thread beside the vector search; or, to
                        // compare, all three in turn.
                        let (v, (k, d)) = if beside {
                            std::thread::scope(|s| {
                                let kd = s.spawn(keyword);
                                let v = view.vector_search(&qv, 50, &Scope::all()).unwrap();
                                (v, kd.join().unwrap())
                            })
                        } else {
                            (
                                view.vector_search(&qv, 50, &Scope::all()).unwrap(),
                                keyword(),
                            )
                        };
                        drop(view);
                        ms.push(t.elapsed().as_secs_f64() * 1e3);
                        assert!(!v.is_empty() && k.len() <= 50 && d.len() <= 50);
                    }
                    ms
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let qps = ms.len() as f64 / started.elapsed().as_secs_f64();
    let (p50, p95) = percentiles(ms);
    (p50, p95, qps)
}

/// How far index-pg's keyword lists agree with index-mem's over 100
/// queries: the share of top-10 chunks and of top-10 documents in common,
/// unscoped and scoped to one folder in 17; a scoped list with fewer than
/// 10 where index-mem has 10 is counted.
fn agreement(mem: &dyn Index, pg: &dyn Index, vocab: &[String]) -> String {
    let mut rng = Rng(99);
    let (mem_view, pg_view) = (mem.read().unwrap(), pg.read().unwrap());
    let mut cells = Vec::new();
    for scope in [Scope::all(), Scope::new(["/corpus/dir3".to_string()])] {
        let (mut chunks, mut docs, mut short) = (0.0, 0.0, 0);
        for q in 0..100 {
            let words: Vec<&str> = (0..3)
                .map(|_| vocab[(rng.zipf(vocab.len()) + q % 3) % vocab.len()].as_str())
                .collect();
            let text = words.join(" ");
            let a = mem_view.keyword_search(&text, 10, &scope).unwrap();
            let b = pg_view.keyword_search(&text, 10, &scope).unwrap();
            if b.len() < a.len() {
                short += 1;
            }
            chunks += b
                .iter()
                .filter(|c| a.iter().any(|m| m.key == c.key))
                .count() as f64
                / a.len().max(1) as f64;
            let a = mem_view.document_search(&text, 10, &scope).unwrap();
            let b = pg_view.document_search(&text, 10, &scope).unwrap();
            docs += b
                .iter()
                .filter(|d| a.iter().any(|m| m.source == d.source))
                .count() as f64
                / a.len().max(1) as f64;
        }
        cells.push(format!(
            "{} chunks {:.3}, documents {:.3}, short lists {short}",
            if scope.is_all() { "unscoped" } else { "scoped" },
            chunks / 100.0,
            docs / 100.0
        ));
    }
    cells.join("; ")
}

fn main() {
    let Some(url) = arg("--url") else {
        eprintln!("usage: pg_bench --url postgres://… [--sizes 100000,1000000] [--queries 320] [--indexes mem,pg]");
        std::process::exit(2);
    };
    let sizes: Vec<usize> = arg("--sizes")
        .unwrap_or("100000".into())
        .split(',')
        .map(|s| s.parse().expect("--sizes: numbers separated by commas"))
        .collect();
    let queries: usize = arg("--queries").map_or(320, |q| q.parse().expect("--queries: a number"));
    // `--indexes mem` re-measures one side alone (on a quieter machine, say).
    let indexes = arg("--indexes").unwrap_or("mem,pg".into());
    // `--ef 200,400,800`: index-pg's recall (and mean vector-query time) at
    // each least ef_search; `--keep` leaves the schema for `--reuse`, which
    // skips loading a schema that holds the size already.
    let efs: Vec<u32> = arg("--ef").map_or(Vec::new(), |l| {
        l.split(',')
            .map(|e| e.parse().expect("--ef: numbers separated by commas"))
            .collect()
    });
    let flag = |name: &str| std::env::args().any(|a| a == name);
    let (keep, reuse) = (flag("--keep"), flag("--reuse"));
    let vocab = vocabulary();
    println!(
        "cores: {}; index-pg exact below {} vectors, HNSW above",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        minirag_index_pg::EXACT_BELOW
    );
    println!("| chunks | index | load + settle (graph build) | recall@10 | recall@10 scoped (1/17) | 1 client p50/p95 ms, q/s | 4 clients | 16 clients |");
    println!("|---|---|---|---|---|---|---|---|");
    for n in sizes {
        let data = generate(n, &vocab);
        let dir = tempfile::tempdir().unwrap();
        let mem = MemIndex::open(dir.path()).unwrap();
        let schema = format!("bench_{n}");
        let pg = PgIndex::open(&url, &schema, &PgOptions::default()).unwrap();
        let loaded = reuse && pg.read().unwrap().stats().unwrap().chunk_count == n as u64;
        if !loaded {
            pg.drop_schema().unwrap();
        }
        let pg = PgIndex::open(&url, &schema, &PgOptions::default()).unwrap();
        let systems: [(&str, &(dyn Index + Sync)); 2] = [("index-mem", &mem), ("index-pg", &pg)];
        for (name, index) in systems {
            if !indexes.split(',').any(|i| name == format!("index-{i}")) {
                continue;
            }
            let (load_s, settle_s) = if name == "index-pg" && loaded {
                (0.0, 0.0)
            } else {
                load(index, &data)
            };
            if name == "index-pg" {
                for &ef in &efs {
                    let options = PgOptions {
                        min_ef_search: Some(ef),
                        ..PgOptions::default()
                    };
                    let tuned = PgIndex::open(&url, &schema, &options).unwrap();
                    let t = std::time::Instant::now();
                    let r = recall(&tuned, &data, false, 100);
                    let rs = recall(&tuned, &data, true, 100);
                    let ms = t.elapsed().as_secs_f64() * 1e3 / 200.0;
                    eprintln!("ef_search >= {ef}: recall@10 {r:.3}, scoped {rs:.3}, {ms:.1} ms a vector query (with its brute force)");
                }
            }
            if name == "index-mem" {
                mem.compact().unwrap();
                mem.warm().unwrap();
            }
            let r = recall(index, &data, false, 100);
            let rs = recall(index, &data, true, 100);
            // index-pg also in turn: one connection, as before the view
            // could take a second one.
            let ways: &[(bool, &str)] = if name == "index-pg" {
                &[(false, ", lists in turn"), (true, "")]
            } else {
                &[(true, "")]
            };
            for &(beside, how) in ways {
                let cells: Vec<String> = [1, 4, 16]
                    .iter()
                    .map(|&c| {
                        let (p50, p95, qps) = latency(index, &data, &vocab, c, queries, beside);
                        format!("{p50:.1} / {p95:.1}, {qps:.0}")
                    })
                    .collect();
                println!(
                    "| {n} | {name}{how} | {load_s:.0} s + {settle_s:.0} s | {r:.3} | {rs:.3} | {} |",
                    cells.join(" | ")
                );
            }
        }
        if indexes.contains("mem") && indexes.contains("pg") {
            println!(
                "keyword lists, top-10 in common with index-mem at {n}: {}",
                agreement(&mem, &pg, &vocab)
            );
        }
        if !keep {
            pg.drop_schema().unwrap();
        }
    }
}
