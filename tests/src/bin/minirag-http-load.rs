//! The HTTP load bench: N MCP clients send `query_documents` back to back
//! for a fixed time against `serve --http` over a synced corpus, on
//! loopback. Prints calls, errors, latency percentiles and the servers' RSS.
//!
//! `cargo run --release -p minirag-blackbox --bin minirag-http-load -- --corpus eval/corpus --queries eval/queries.tsv`
//! (`--clients 16 --seconds 60` by default; `--db DIR` reuses an index.)
//!
//! `--processes 1,3` runs one row per count, side by side: that many
//! `serve --http` processes over the same index (`--db-url URL` puts it on
//! PostgreSQL), and 2026-07-28 clients without sessions that send each
//! request to the next process in turn, as a proxy without stickiness
//! would. Without `--processes`, one process and rmcp's session clients.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use minirag_blackbox::http_server::HttpServer;
use minirag_blackbox::mcp_client::{call, connect_http};
use minirag_blackbox::{binary, model_dir};
use serde_json::json;

struct Args {
    corpus: PathBuf,
    queries: PathBuf,
    db: Option<PathBuf>,
    clients: usize,
    seconds: u64,
    db_url: Option<String>,
    db_schema: Option<String>,
    processes: Vec<usize>,
}

/// Each client walks the query list with this stride from its own start,
/// so that clients do not send the same query at the same moment.
const STRIDE: usize = 7;

const USAGE: &str =
    "usage: minirag-http-load --corpus DIR --queries FILE [--db DIR | --db-url URL [--db-schema S]] [--clients N] [--seconds S] [--processes 1,3]";

fn args() -> Args {
    let mut a = Args {
        corpus: PathBuf::new(),
        queries: PathBuf::new(),
        db: None,
        clients: 16,
        seconds: 60,
        db_url: None,
        db_schema: None,
        processes: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| die(USAGE));
        match flag.as_str() {
            "--corpus" => a.corpus = PathBuf::from(value),
            "--queries" => a.queries = PathBuf::from(value),
            "--db" => a.db = Some(PathBuf::from(value)),
            "--clients" => a.clients = value.parse().unwrap_or_else(|_| die(USAGE)),
            "--seconds" => a.seconds = value.parse().unwrap_or_else(|_| die(USAGE)),
            "--db-url" => a.db_url = Some(value),
            "--db-schema" => a.db_schema = Some(value),
            "--processes" => {
                a.processes = value
                    .split(',')
                    .map(|n| n.trim().parse().unwrap_or_else(|_| die(USAGE)))
                    .collect()
            }
            _ => die(&format!("unknown argument {flag:?}; {USAGE}")),
        }
    }
    if a.corpus.as_os_str().is_empty() || a.queries.as_os_str().is_empty() {
        die(USAGE);
    }
    a
}

fn die(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2)
}

fn queries(file: &PathBuf) -> Vec<String> {
    let text =
        std::fs::read_to_string(file).unwrap_or_else(|e| die(&format!("{}: {e}", file.display())));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split('\t').nth(1).unwrap_or(l).to_string())
        .collect()
}

/// Resident set of a process, from /proc, in MB.
fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let a = args();
    let corpus = std::fs::canonicalize(&a.corpus)
        .unwrap_or_else(|e| die(&format!("{}: {e}", a.corpus.display())));
    let work = tempfile::tempdir().unwrap();
    let db = a.db.clone().unwrap_or_else(|| work.path().join("index"));
    let env: Vec<(String, String)> = vec![
        ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
        ("BASE_DIR".into(), corpus.display().to_string()),
        ("DB_PATH".into(), db.display().to_string()),
        ("MODEL_PATH".into(), model_dir().display().to_string()),
        (
            "CACHE_DIR".into(),
            work.path().join("cache").display().to_string(),
        ),
    ];
    let mut env = env;
    if let Some(url) = &a.db_url {
        env.push(("DB_URL".into(), url.clone()));
        env.push((
            "DB_SCHEMA".into(),
            format!("http_load_{}", std::process::id()),
        ));
    }
    let started = Instant::now();
    let synced = std::process::Command::new(binary())
        .arg("sync")
        .env_clear()
        .envs(env.iter().cloned())
        .stdout(std::process::Stdio::null())
        .status()
        .expect("sync runs");
    assert!(synced.success(), "sync failed");
    eprintln!("sync: {:.1} s", started.elapsed().as_secs_f64());

    if !a.processes.is_empty() {
        println!("| processes | clients | seconds | calls | errors | calls/s | p50 ms | p95 ms | p99 ms | RSS, all processes, end MB |");
        println!("|---|---|---|---|---|---|---|---|---|---|");
        for &n in &a.processes {
            round_robin(&a, &env, &corpus, n).await;
        }
        return;
    }
    let server = HttpServer::start(&env, &corpus, &[]);
    let pid = server.child.id();
    let queries = Arc::new(queries(&a.queries));
    // Warm the model and the index before measuring.
    let warm = connect_http((), &server.url, None).await;
    let (err, text) = call(&warm, "query_documents", json!({"query": queries[0]})).await;
    assert!(!err, "warm-up query failed: {text}");
    let rss_start = rss_mb(pid);

    let deadline = Instant::now() + Duration::from_secs(a.seconds);
    let errors = Arc::new(AtomicU64::new(0));
    let latencies = Arc::new(Mutex::new(Vec::<f64>::new()));
    let mut tasks = Vec::new();
    for c in 0..a.clients {
        let (url, queries, errors, latencies) = (
            server.url.clone(),
            queries.clone(),
            errors.clone(),
            latencies.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let client = connect_http((), &url, None).await;
            let mut mine = Vec::new();
            let mut i = c;
            while Instant::now() < deadline {
                let q = &queries[i % queries.len()];
                i += STRIDE;
                let t = Instant::now();
                let (err, text) = call(&client, "query_documents", json!({"query": q})).await;
                mine.push(t.elapsed().as_secs_f64() * 1000.0);
                if err {
                    errors.fetch_add(1, Ordering::Relaxed);
                    eprintln!("error: {text}");
                }
            }
            latencies.lock().unwrap().extend(mine);
            let _ = client.cancel().await;
        }));
    }
    let mut rss = vec![rss_start];
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(5).min(deadline - Instant::now())).await;
        rss.push(rss_mb(pid));
    }
    for t in tasks {
        t.await.unwrap();
    }
    rss.push(rss_mb(pid));
    let mut l = latencies.lock().unwrap().clone();
    l.sort_by(f64::total_cmp);
    let calls = l.len();
    println!(
        "| clients | seconds | calls | errors | calls/s | p50 ms | p95 ms | p99 ms | RSS start → end (max) MB |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    println!(
        "| {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.0} → {:.0} ({:.0}) |",
        a.clients,
        a.seconds,
        calls,
        errors.load(Ordering::Relaxed),
        calls as f64 / a.seconds as f64,
        percentile(&l, 0.50),
        percentile(&l, 0.95),
        percentile(&l, 0.99),
        rss_start,
        rss.last().copied().unwrap_or(0.0),
        rss.iter().copied().fold(0.0, f64::max),
    );
    println!(
        "RSS every 5 s (MB): {}",
        rss.iter()
            .map(|r| format!("{r:.0}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let _ = warm.cancel().await;
}

/// One row: `n` processes, every client sending 2026-07-28 requests to the
/// next process in turn.
async fn round_robin(a: &Args, env: &[(String, String)], corpus: &std::path::Path, n: usize) {
    use minirag_blackbox::modern::call_tool;
    let servers: Vec<HttpServer> = (0..n)
        .map(|_| HttpServer::start(env, corpus, &[]))
        .collect();
    let urls: Arc<Vec<String>> = Arc::new(servers.iter().map(|s| s.url.clone()).collect());
    let queries = Arc::new(queries(&a.queries));
    let http = reqwest::Client::new();
    // Warm every process's model and index before measuring.
    for url in urls.iter() {
        call_tool(
            &http,
            url,
            0,
            "query_documents",
            json!({"query": queries[0]}),
        )
        .await;
    }
    let deadline = Instant::now() + Duration::from_secs(a.seconds);
    let errors = Arc::new(AtomicU64::new(0));
    let latencies = Arc::new(Mutex::new(Vec::<f64>::new()));
    let mut tasks = Vec::new();
    for c in 0..a.clients {
        let (urls, queries, errors, latencies, http) = (
            urls.clone(),
            queries.clone(),
            errors.clone(),
            latencies.clone(),
            http.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            let (mut i, mut turn) = (c, c);
            while Instant::now() < deadline {
                let q = &queries[i % queries.len()];
                i += STRIDE;
                turn += 1;
                let body = minirag_blackbox::modern::body(
                    turn as u64,
                    "tools/call",
                    json!({"name": "query_documents", "arguments": {"query": q}}),
                );
                let t = Instant::now();
                let answer =
                    minirag_blackbox::modern::post(&http, &urls[turn % urls.len()], &body, &[])
                        .await;
                mine.push(t.elapsed().as_secs_f64() * 1000.0);
                let ok = answer.status == 200
                    && answer.response["result"]["isError"] != json!(true)
                    && answer.response.get("error").is_none();
                if !ok {
                    errors.fetch_add(1, Ordering::Relaxed);
                    eprintln!("error: {answer:?}");
                }
            }
            latencies.lock().unwrap().extend(mine);
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let rss: f64 = servers.iter().map(|s| rss_mb(s.child.id())).sum();
    let mut l = latencies.lock().unwrap().clone();
    l.sort_by(f64::total_cmp);
    let calls = l.len();
    println!(
        "| {n} | {} | {} | {calls} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {rss:.0} |",
        a.clients,
        a.seconds,
        errors.load(Ordering::Relaxed),
        calls as f64 / a.seconds as f64,
        percentile(&l, 0.50),
        percentile(&l, 0.95),
        percentile(&l, 0.99),
    );
}
