//! Queries beside a sync. An index of `--base` synthetic 384-d chunks takes
//! hybrid queries on `--threads` threads (each one view: vector, keyword and
//! whole-document lists, then fusion) while a writer replaces `--write`
//! chunks, 100 per source as a sync stores them (`--per-source`), and the
//! same again:
//!
//! - idle: the queries alone, for as long as the writer alone took (at
//!   least 5 s);
//! - writer alone: no queries;
//! - a held view: the writer with a view of each generation held until
//!   the next write, and no queries (every write builds its generation as
//!   a copy: what the copying costs; `--hold-every k` takes a view every k
//!   writes instead, as if a sync published k writes at a time);
//! - one process: the writer on a thread beside the queries;
//! - queries elsewhere: the writer on a thread beside the same queries
//!   on a second, identical index it does not write: the same load on the
//!   CPU and its caches, nothing shared, so what the writer loses here is
//!   the machine's, and what it loses beyond this beside queries on its
//!   own index is the index's;
//! - two processes: the writer in a child process of its own, the queries
//!   catching up with its log;
//! - compactions: the index folded into a new snapshot three times.
//!
//! `--only held` or `--only thread` stops after that phase (the idle and
//! writer-alone rows are always run), to profile one.
//!
//! Each phase replaces the same sources with new chunks (written once
//! before the first), and the log is folded into a snapshot between
//! phases, so every phase does the same work. Prints query p50, p99, p99.9 and
//! max, and the writer's chunks per second of wall time and of its own
//! CPU time: with 8 busy query threads on 2 cores the writer gets its share
//! of the CPU, and the second figure says what it does with it.
//!
//! cargo run --release -p minirag-index-mem --example contention_bench -- [--base 100000] [--write 20000] [--threads 8] [--vocab 5000] [--per-source 100] [--hold-every 1] [--only held|thread]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use minirag_core::ports::{Embeddings, Index};
use minirag_core::search::{fuse_documents, Scope};
use minirag_index_conformance::synthetic::{self, source_record, vocabulary, zipf_chunk, Rng};
use minirag_index_mem::MemIndex;

/// The binary's allocator: what a sync beside queries costs depends on it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DIM: usize = 384;
/// Chunks a source of the writer holds (`--per-source`, 100 unless told).
fn per_source() -> usize {
    arg("--per-source", 100).max(1)
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(default)
}

/// The CPU seconds this thread has run (Linux: user and system clock ticks
/// of `/proc/thread-self/stat`, 10 ms apart; 0 elsewhere).
fn thread_cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let fields: Vec<f64> = stat
        .rsplit_once(')')
        .map(|(_, rest)| {
            rest.split_whitespace()
                .filter_map(|f| f.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    // After the name: state is field 3, utime 14 and stime 15 (1-based).
    fields.get(10..12).map_or(0.0, |t| (t[0] + t[1]) / 100.0)
}

/// What a write took: wall seconds, and the writing thread's CPU seconds.
#[derive(Clone, Copy)]
struct Took {
    secs: f64,
    cpu: f64,
}

/// The words chunks are drawn from: the synthetic vocabulary, grown to
/// `--vocab` words (a real index has far more terms than 5,000, most of
/// them rare: more lists, and more pages of them, for a write to touch).
fn words() -> Vec<String> {
    let mut words = vocabulary();
    let n = arg("--vocab", words.len());
    words.extend((words.len()..n).map(|i| format!("w{i}")));
    words
}

/// Writes `chunks` chunks as sources of [`per_source`] named `{prefix}{i}`,
/// calling `after_each` after every source.
fn write_then(
    index: &MemIndex,
    prefix: &str,
    chunks: usize,
    seed: u64,
    after_each: &mut dyn FnMut(),
) -> Took {
    let vocab = words();
    let mut rng = Rng(seed);
    let cpu = thread_cpu_s();
    let started = Instant::now();
    let per_source = per_source();
    for s in 0..chunks.div_ceil(per_source) {
        let count = per_source.min(chunks - s * per_source);
        let mut batch = Vec::with_capacity(count);
        let mut vectors = Embeddings::new(DIM);
        for i in 0..count {
            batch.push(zipf_chunk(&mut rng, &vocab, i as u32));
            vectors.push(&synthetic::unit_vector(&mut rng, DIM));
        }
        let mut record = source_record(s, count, &vocab);
        record.source = format!("{prefix}{s}");
        index.replace_source(record, batch, Some(vectors)).unwrap();
        after_each();
    }
    Took {
        secs: started.elapsed().as_secs_f64(),
        cpu: thread_cpu_s() - cpu,
    }
}

/// [`write_then`] with nothing between the sources.
fn write(index: &MemIndex, prefix: &str, chunks: usize, seed: u64) -> Took {
    write_then(index, prefix, chunks, seed, &mut || {})
}

/// Hybrid queries on `threads` threads until `stop`; each query's ms.
fn queries(index: &MemIndex, threads: usize, stop: &AtomicBool) -> Vec<f64> {
    let vocab = words();
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let vocab = &vocab;
                s.spawn(move || {
                    let mut rng = Rng(0xC0FFEE + t as u64);
                    let scope = Scope::all();
                    let mut ms = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let qv = synthetic::unit_vector(&mut rng, DIM);
                        let text: Vec<&str> = (0..3)
                            .map(|_| vocab[rng.zipf(vocab.len())].as_str())
                            .collect();
                        let text = text.join(" ");
                        let t0 = Instant::now();
                        let view = index.read().unwrap();
                        let v = view.vector_search(&qv, 50, &scope).unwrap();
                        let k = view.keyword_search(&text, 50, &scope).unwrap();
                        let d = view.document_search(&text, 50, &scope).unwrap();
                        let fused = fuse_documents(&v, &k, &d, 0.6);
                        drop(view);
                        ms.push(t0.elapsed().as_secs_f64() * 1e3);
                        assert!(!fused.is_empty());
                    }
                    ms
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    })
}

/// Writes `chunks` into `written` on this thread while `threads` query
/// threads read `read`; the queries' ms and what the write took.
fn write_beside_queries(
    written: &MemIndex,
    read: &MemIndex,
    threads: usize,
    chunks: usize,
    seed: u64,
) -> (Vec<f64>, Took) {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let q = s.spawn(|| queries(read, threads, &stop));
        let took = write(written, "w", chunks, seed);
        stop.store(true, Ordering::Relaxed);
        (q.join().unwrap(), took)
    })
}

/// One phase's row: query latencies, and the writer's chunks per second
/// of wall time and per second of its own CPU time (what it would write
/// with a core of its own).
fn report(phase: &str, mut ms: Vec<f64>, writer: Option<(usize, Took)>) {
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms.get(((ms.len() as f64 * q) as usize).min(ms.len().saturating_sub(1)));
    let (p50, p99, p999, max) = match (at(0.5), at(0.99), at(0.999), ms.last()) {
        (Some(a), Some(b), Some(c), Some(d)) => (
            format!("{a:.1}"),
            format!("{b:.1}"),
            format!("{c:.1}"),
            format!("{d:.1}"),
        ),
        _ => ("-".into(), "-".into(), "-".into(), "-".into()),
    };
    let (writer, per_cpu) = writer.map_or(("-".into(), "-".into()), |(n, t)| {
        let per_cpu = if t.cpu > 0.0 {
            format!("{:.0}", n as f64 / t.cpu)
        } else {
            "-".into()
        };
        (format!("{:.0}", n as f64 / t.secs), per_cpu)
    });
    println!(
        "| {phase} | {} | {p50} | {p99} | {p999} | {max} | {writer} | {per_cpu} |",
        ms.len()
    );
}

/// The child of the two-process phase: writes and prints its seconds.
fn child(dir: &str, chunks: usize, seed: u64) {
    let index = MemIndex::open(dir).unwrap();
    let took = write(&index, "w", chunks, seed);
    println!("{} {}", took.secs, took.cpu);
}

/// An index at `dir` of `base` chunks and the `written` the phases
/// replace, folded into its snapshot and warm.
fn filled(dir: &std::path::Path, base: usize, written: usize) -> MemIndex {
    let index = MemIndex::open(dir).unwrap();
    write(&index, "base", base, 7);
    write(&index, "w", written, 8);
    index.compact().unwrap();
    index.warm().unwrap();
    index
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(
            &args[i + 1],
            arg("--write", 20_000),
            arg("--seed", 1) as u64,
        );
        return;
    }
    let (base, written, threads) = (
        arg("--base", 100_000),
        arg("--write", 20_000),
        arg("--threads", 8),
    );
    let dir = tempfile::tempdir().unwrap();
    let index = filled(dir.path(), base, written);
    let other_dir = tempfile::tempdir().unwrap();
    let other = filled(other_dir.path(), base, written);
    println!(
        "{base} chunks of {} words, a writer replacing {written}, {threads} query threads, {} cores",
        words().len(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "| phase | queries | p50 ms | p99 ms | p99.9 ms | max ms | writer chunks/s | writer chunks per CPU s |"
    );
    println!("|---|---|---|---|---|---|---|---|");

    let alone = write(&index, "w", written, 9);
    index.compact().unwrap();

    let stop = AtomicBool::new(false);
    let idle = std::thread::scope(|s| {
        let q = s.spawn(|| queries(&index, threads, &stop));
        std::thread::sleep(Duration::from_secs_f64(alone.secs.max(5.0)));
        stop.store(true, Ordering::Relaxed);
        q.join().unwrap()
    });
    report("idle", idle, None);
    report("writer alone", Vec::new(), Some((written, alone)));

    // A view of each generation held until the next write and no query
    // load: every write builds its generation as a copy, so this is what
    // the copying costs, apart from sharing the CPU.
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1));
    if only.is_some_and(|o| o == "thread") {
        let (ms, took) = write_beside_queries(&index, &index, threads, written, 10);
        report("beside a writer thread", ms, Some((written, took)));
        return;
    }
    // `--hold-every k`: a new view every k writes, as if a sync published
    // its writes k at a time (the writes between go in place).
    let every = arg("--hold-every", 1).max(1);
    let mut held = Some(index.read().unwrap());
    let mut writes = 0;
    let took = write_then(&index, "w", written, 12, &mut || {
        writes += 1;
        if writes % every == 0 {
            held = Some(index.read().unwrap());
        }
    });
    drop(held);
    report("beside a held view", Vec::new(), Some((written, took)));
    if only.is_some_and(|o| o == "held") {
        return;
    }
    index.compact().unwrap();

    let (ms, took) = write_beside_queries(&index, &index, threads, written, 10);
    report("beside a writer thread", ms, Some((written, took)));
    index.compact().unwrap();

    let (ms, took) = write_beside_queries(&index, &other, threads, written, 13);
    report("beside queries on another index", ms, Some((written, took)));
    index.compact().unwrap();
    drop(other);

    let stop = AtomicBool::new(false);
    let (ms, took) = std::thread::scope(|s| {
        let q = s.spawn(|| queries(&index, threads, &stop));
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--child", &dir.path().display().to_string()])
            .args(["--write", &written.to_string(), "--seed", "11"])
            .args(["--vocab", &words().len().to_string()])
            .args(["--per-source", &per_source().to_string()])
            .output()
            .unwrap();
        stop.store(true, Ordering::Relaxed);
        let said = String::from_utf8_lossy(&out.stdout);
        let mut said = said.split_whitespace().map(|v| v.parse::<f64>().unwrap());
        let (secs, cpu) = (said.next().unwrap(), said.next().unwrap());
        (q.join().unwrap(), Took { secs, cpu })
    });
    report("beside a writer process", ms, Some((written, took)));

    // Three compactions of the whole index, one after the other; the
    // writer column counts the chunks folded per second.
    let stop = AtomicBool::new(false);
    let (ms, took) = std::thread::scope(|s| {
        let q = s.spawn(|| queries(&index, threads, &stop));
        let (cpu, started) = (thread_cpu_s(), Instant::now());
        for _ in 0..3 {
            index.compact().unwrap();
        }
        let secs = started.elapsed().as_secs_f64();
        let cpu = thread_cpu_s() - cpu;
        stop.store(true, Ordering::Relaxed);
        (q.join().unwrap(), Took { secs, cpu })
    });
    report("beside compactions", ms, Some((3 * (base + written), took)));
}
