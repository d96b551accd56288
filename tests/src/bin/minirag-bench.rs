//! The bench harness: ingest, re-sync, start-up and query latency of the real
//! binary (and of the engine in process) on a corpus folder and a query file.
//!
//! `cargo run -p minirag-blackbox --bin minirag-bench -- --corpus eval/corpus --queries eval/queries.tsv`
//! (queries: one per line; a tab-separated file uses its second column).
//! Prints one table. The corpus is copied first, so touching files for the
//! re-sync never changes the original.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use minirag_blackbox::{binary, model_dir};
use minirag_core::config::Config;
use minirag_core::engine::{Engine, Ports, QueryRequest, Settings};
// The bench corpus has no scans and fetches nothing: the core fakes stand in.
use minirag_core::testing::fakes::{FakeClock, FakeFetcher};
use minirag_core::testing::NoOcr;
use serde_json::{json, Value};

struct Args {
    corpus: PathBuf,
    queries: PathBuf,
    calls: usize,
}

fn args() -> Args {
    let mut corpus = None;
    let mut queries = None;
    let mut calls = 200;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--corpus" => corpus = it.next().map(PathBuf::from),
            "--queries" => queries = it.next().map(PathBuf::from),
            "--calls" => calls = it.next().and_then(|n| n.parse().ok()).unwrap_or(calls),
            other => die(&format!("unknown argument {other:?}; usage: minirag-bench --corpus DIR --queries FILE [--calls N]")),
        }
    }
    let (Some(corpus), Some(queries)) = (corpus, queries) else {
        die("usage: minirag-bench --corpus DIR --queries FILE [--calls N]")
    };
    Args {
        corpus,
        queries,
        calls,
    }
}

fn die(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2)
}

/// Runs a child to the end; (wall, peak RSS in bytes, stdout). The child is
/// reaped by `wait4` (for its rusage), which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn run_measured(mut cmd: Command) -> (Duration, u64, String) {
    let started = Instant::now();
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let pid = child.id() as libc::pid_t;
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.unwrap(), &mut stdout).unwrap();
    let mut status = 0;
    // SAFETY: rusage is a plain C struct of integers and timevals, for which
    // all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child, not yet reaped; usage is a valid out-pointer.
    unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    (started.elapsed(), usage.ru_maxrss as u64 * 1024, stdout)
}

fn cli(env: &[(String, String)], args: &[&str]) -> Command {
    let mut cmd = Command::new(binary());
    cmd.args(args).env_clear().envs(env.iter().cloned());
    cmd
}

fn dir_bytes(p: &Path) -> u64 {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_bytes(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

fn files_under(p: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(p)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for e in entries {
        if e.is_dir() {
            files_under(&e, out);
        } else {
            out.push(e);
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    let mut files = Vec::new();
    files_under(from, &mut files);
    for f in files {
        let dest = to.join(f.strip_prefix(from).unwrap());
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&f, &dest).unwrap();
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Runs `f(0..n)` and returns each call's milliseconds, sorted.
fn timed(n: usize, mut f: impl FnMut(usize)) -> Vec<f64> {
    let mut lat: Vec<f64> = (0..n)
        .map(|i| {
            let started = Instant::now();
            f(i);
            ms(started.elapsed())
        })
        .collect();
    lat.sort_by(f64::total_cmp);
    lat
}

/// `serve --http` on a free port; `calls` warm `GET /?q=…` with the
/// response read to its end; and the bytes of a results page plus its assets.
fn page_queries(
    env: &[(String, String)],
    queries: &[String],
    calls: usize,
) -> (std::process::Child, Vec<f64>, usize) {
    use std::io::BufRead;
    let mut child = Command::new(binary())
        .args(["serve", "--http", "127.0.0.1:0"])
        .env_clear()
        .envs(env.iter().cloned())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("serve --http");
    let mut lines = std::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
    let listening: Value = serde_json::from_str(&first).unwrap_or(Value::Null);
    let addr = listening["url"]
        .as_str()
        .and_then(|u| u.strip_prefix("http://"))
        .and_then(|u| u.strip_suffix("/mcp"))
        .unwrap_or_else(|| die(&format!("no listening line: {first}")))
        .to_string();
    let path = |q: &str| format!("/?q={}", q.replace(|c: char| !c.is_alphanumeric(), "+"));
    let html = http_get(&addr, &path(&queries[0]));
    let lat = timed(calls, |i| {
        http_get(&addr, &path(&queries[i % queries.len()]));
    });
    let bytes = html.len()
        + http_get(&addr, "/assets/page.css").len()
        + http_get(&addr, "/assets/page.js").len();
    (child, lat, bytes)
}

/// A plain HTTP/1.1 GET over loopback; the whole response.
fn http_get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("the page server");
    let _ = stream.set_nodelay(true);
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("request sent");
    let mut out = String::new();
    stream.read_to_string(&mut out).expect("response read");
    out
}

fn latency(sorted: &[f64]) -> String {
    format!(
        "p50 {:.1} ms, p95 {:.1} ms ({} calls)",
        percentile(sorted, 0.5),
        percentile(sorted, 0.95),
        sorted.len()
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A server on stdio spoken to in raw JSON-RPC lines.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn spawn(env: &[(String, String)]) -> Self {
        let mut child = cli(env, &[])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn server");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{msg}").unwrap();
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line).unwrap() == 0 {
                die("the server closed stdout");
            }
            let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    fn initialize(&mut self) {
        self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}),
        );
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
    }

    fn query(&mut self, q: &str) -> Value {
        let r = self.request(
            "tools/call",
            json!({"name": "query_documents", "arguments": {"query": q}}),
        );
        if r["result"]["isError"] == json!(true) || r.get("error").is_some() {
            die(&format!("query failed: {r}"));
        }
        r
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The engine in this process, on the index the sync built.
fn engine(env: &[(String, String)]) -> Engine {
    let env: BTreeMap<String, String> = env.iter().cloned().collect();
    // The variables the sync ran with, absolute already; the rest default.
    let mut config = Config::defaults(
        vec![env["BASE_DIR"].clone()],
        env["DB_PATH"].clone(),
        env["CACHE_DIR"].clone(),
    );
    config.model_path = env.get("MODEL_PATH").cloned();
    // The same identity the binary stores, or the index's vectors would
    // count as another model's.
    let id = minirag_embed_candle::source::content_id(&model_dir()).expect("model files");
    let embedder =
        Arc::new(minirag_embed_candle::CandleEmbedder::load(id, &model_dir()).expect("model"));
    let index = Arc::new(minirag_index_mem::MemIndex::open(&config.db_path).expect("index"));
    Engine::new(
        Settings::from(&config),
        Ports {
            converter: Arc::new(minirag_convert::Converters),
            embedder: embedder.clone(),
            tokens: embedder,
            index,
            fetcher: Arc::new(FakeFetcher(Default::default())),
            files: Arc::new(minirag_fs::LocalFiles),
            clock: Arc::new(FakeClock),
            ocr: Arc::new(NoOcr),
            languages: Arc::new(minirag_core::testing::fakes::ScriptLanguages),
        },
    )
}

fn main() {
    let a = args();
    let queries: Vec<String> = std::fs::read_to_string(&a.queries)
        .unwrap_or_else(|e| die(&format!("cannot read {}: {e}", a.queries.display())))
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split('\t').nth(1).unwrap_or(l).trim().to_string())
        .collect();
    if queries.is_empty() {
        die("the query file holds no queries");
    }
    let work = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(work.path()).unwrap().join("corpus");
    copy_tree(&a.corpus, &root);
    let mut files = Vec::new();
    files_under(&root, &mut files);
    let corpus_bytes: u64 = files.iter().map(|f| f.metadata().unwrap().len()).sum();
    let db = work.path().join("index");
    let env: Vec<(String, String)> = vec![
        ("BASE_DIR".into(), root.display().to_string()),
        ("DB_PATH".into(), db.display().to_string()),
        ("MODEL_PATH".into(), model_dir().display().to_string()),
        (
            "CACHE_DIR".into(),
            work.path().join("cache").display().to_string(),
        ),
        ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
    ];
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut row = |k: &str, v: String| {
        eprintln!("{k}: {v}");
        rows.push((k.to_string(), v));
    };

    // Ingest.
    let (wall, rss, out) = run_measured(cli(&env, &["sync", "--json"]));
    let report: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
    let (_, _, status) = run_measured(cli(&env, &["status", "--json"]));
    let status: Value = serde_json::from_str(&status).unwrap_or(Value::Null);
    let chunks = status["chunkCount"].as_u64().unwrap_or(0);
    let secs = wall.as_secs_f64();
    row(
        "corpus",
        format!("{} files, {:.1} MB", files.len(), corpus_bytes as f64 / 1e6),
    );
    row("ingest: counts", report["counts"].to_string());
    row("ingest: wall", format!("{secs:.1} s"));
    row(
        "ingest: rate",
        format!(
            "{:.2} files/s, {:.1} chunks/s, {:.3} MB/s ({chunks} chunks)",
            files.len() as f64 / secs,
            chunks as f64 / secs,
            corpus_bytes as f64 / 1e6 / secs
        ),
    );
    row("ingest: peak RSS", format!("{:.0} MB", rss as f64 / 1e6));
    row(
        "index on disk",
        format!("{:.1} MB", dir_bytes(&db) as f64 / 1e6),
    );

    // Re-sync after changing 1% of the files (text-like ones: appended words).
    let editable: Vec<&PathBuf> = files
        .iter()
        .filter(|f| {
            matches!(
                f.extension().and_then(|e| e.to_str()),
                Some("md" | "txt" | "html")
            )
        })
        .collect();
    let touch = (files.len() as f64 * 0.01).ceil() as usize;
    let step = (editable.len() / touch.max(1)).max(1);
    for f in editable.iter().step_by(step).take(touch) {
        let mut h = std::fs::OpenOptions::new().append(true).open(f).unwrap();
        writeln!(
            h,
            "\n\nBenchmark edit: one more paragraph about tidal pools."
        )
        .unwrap();
    }
    let (wall, rss, out) = run_measured(cli(&env, &["sync", "--json"]));
    let report: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
    row(
        "re-sync after editing 1%",
        format!(
            "{:.1} s, {} re-ingested, {} skipped, peak RSS {:.0} MB",
            wall.as_secs_f64(),
            report["counts"]["ingested"],
            report["counts"]["skipped"],
            rss as f64 / 1e6
        ),
    );

    // Start-up: spawn → initialize, and spawn → first answered query.
    let mut init = Vec::new();
    let mut first = Vec::new();
    for i in 0..5 {
        let started = Instant::now();
        let mut s = Server::spawn(&env);
        s.initialize();
        init.push(ms(started.elapsed()));
        s.query(&queries[i % queries.len()]);
        first.push(ms(started.elapsed()));
    }
    init.sort_by(f64::total_cmp);
    first.sort_by(f64::total_cmp);
    row(
        "start-up: spawn → initialize (median of 5)",
        format!("{:.1} ms", percentile(&init, 0.5)),
    );
    row(
        "start-up: spawn → first query answered (median of 5)",
        format!("{:.0} ms", percentile(&first, 0.5)),
    );

    // Warm queries through one MCP server.
    let mut s = Server::spawn(&env);
    s.initialize();
    s.query(&queries[0]);
    let lat = timed(a.calls, |i| {
        s.query(&queries[i % queries.len()]);
    });
    drop(s);
    row("query via MCP stdio, warm", latency(&lat));

    // The search page: warm server-rendered queries over loopback, and the
    // weight of what a browser loads for it.
    let (page, page_lat, page_bytes) = page_queries(&env, &queries, a.calls);
    drop(page);
    row(
        "search page: server-rendered query, warm",
        latency(&page_lat),
    );
    row(
        "search page: HTML + CSS + JS",
        format!("{:.1} KB", page_bytes as f64 / 1024.0),
    );

    // Warm queries through the engine in this process.
    let e = engine(&env);
    let ask = |q: &str| {
        e.query(QueryRequest {
            query: q,
            top_k: 8,
            scope: &[],
            filter: Default::default(),
            explain: false,
        })
        .expect("query")
    };
    ask(&queries[0]);
    let lat = timed(a.calls, |i| {
        ask(&queries[i % queries.len()]);
    });
    row("query via the engine, warm", latency(&lat));

    // Cold CLI query: a fresh process opens the index and loads the model.
    let mut cold = Vec::new();
    for q in queries.iter().take(5) {
        let (wall, _, _) = run_measured(cli(&env, &["query", q, "--json"]));
        cold.push(ms(wall));
    }
    cold.sort_by(f64::total_cmp);
    row(
        "cold CLI query (median of 5)",
        format!("{:.0} ms", percentile(&cold, 0.5)),
    );

    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    println!("\n| measure ({cores} cores) | value |\n| --- | --- |");
    for (k, v) in rows {
        println!("| {k} | {v} |");
    }
}
