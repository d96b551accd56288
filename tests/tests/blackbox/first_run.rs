//! Promises a first run must keep: a network that accepts and never answers
//! costs one timeout, not a hung sync; `setup` wires the index that was
//! synced; a hostile nesting depth is one file's problem, never the
//! process's.

use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use minirag_blackbox::mcp_client::call_json;
use minirag_blackbox::{binary, Corpus};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::ServiceExt;
use serde_json::{json, Value};

/// A loopback listener that accepts every connection and never says a word,
/// like a proxy that swallows requests. Connections stay open until it drops.
struct SilentServer {
    addr: String,
    _held: std::thread::JoinHandle<()>,
}

fn silent_server() -> SilentServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let held = std::thread::spawn(move || {
        let mut open: Vec<TcpStream> = Vec::new();
        for stream in listener.incoming().take(64).flatten() {
            open.push(stream);
        }
    });
    SilentServer { addr, _held: held }
}

/// The corpus with no MODEL_PATH: the model comes from the hub, through a
/// proxy that never answers.
fn behind_a_silent_proxy(c: &mut Corpus, proxy: &SilentServer) {
    c.env.retain(|(k, _)| k != "MODEL_PATH");
    let url = format!("http://{}", proxy.addr);
    for k in ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"] {
        c.env.push((k.into(), url.clone()));
    }
    c.env.push(("HF_HUB_DOWNLOAD_TIMEOUT".into(), "3".into()));
    c.env.push((
        "MODEL_NAME".into(),
        "sentence-transformers/all-MiniLM-L6-v2".into(),
    ));
}

#[test]
fn a_proxy_that_never_answers_costs_one_timeout_and_keywords_still_work() {
    let proxy = silent_server();
    let mut c = Corpus::new(&[
        ("a.md", "# Aardvarks\n\nThe aardvark digs burrows at night."),
        ("b.md", "# Bees\n\nBees dance to show where flowers are."),
    ]);
    behind_a_silent_proxy(&mut c, &proxy);

    let started = Instant::now();
    let (code, v, stderr) = c.json(&["sync"]);
    let took = started.elapsed();
    assert_eq!(code, 0, "{stderr}");
    assert!(took < Duration::from_secs(30), "sync took {took:?}");
    assert_eq!(v["counts"]["ingested"], 2, "{v}");
    assert!(
        v["notice"]
            .as_str()
            .is_some_and(|n| n.contains("without the embedding model")),
        "{v}"
    );

    let started = Instant::now();
    let (code, v, stderr) = c.json(&["query", "burrows at night"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(
        v["results"][0]["source"]
            .as_str()
            .is_some_and(|s| s.ends_with("a.md")),
        "{v}"
    );
    assert!(
        v.to_string().contains("keyword"),
        "no keyword-only notice: {v}"
    );

    let out = c.cli(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let doctor: Value = serde_json::from_slice(&out.stdout).unwrap();
    let model = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "model")
        .unwrap()
        .to_string();
    assert!(
        model.contains("HF_HUB_DOWNLOAD_TIMEOUT") && model.contains("MODEL_PATH"),
        "{model}"
    );
}

#[test]
fn offline_never_dials_and_names_the_missing_model() {
    let proxy = silent_server();
    let mut c = Corpus::new(&[("a.md", "# A\n\nalpha")]);
    behind_a_silent_proxy(&mut c, &proxy);
    c.env.push(("HF_HUB_OFFLINE".into(), "1".into()));
    let started = Instant::now();
    let (code, v, stderr) = c.json(&["sync"]);
    assert_eq!(code, 0, "{stderr}");
    // Not even the two-second wait on the proxy.
    assert!(started.elapsed() < Duration::from_secs(2));
    let notice = v["notice"].as_str().unwrap_or_default();
    assert!(
        notice.contains("HF_HUB_OFFLINE") && notice.contains("all-MiniLM-L6-v2"),
        "{v}"
    );
    // In one server process: after a query tried the model, status tells.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = minirag_blackbox::mcp_client::connect(&c, &[]).await;
        let before = call_json(&client, "status", json!({})).await;
        assert_eq!(before["embedder"], "loads on first use", "{before}");
        call_json(&client, "query_documents", json!({"query": "alpha"})).await;
        let after = call_json(&client, "status", json!({})).await;
        assert!(
            after["embedder"]
                .as_str()
                .is_some_and(|e| e.starts_with("failed: ") && e.contains("HF_HUB_OFFLINE")),
            "{after}"
        );
        client.cancel().await.unwrap();
    });
}

#[tokio::test]
async fn setup_writes_the_index_and_model_that_were_synced() {
    let c = Corpus::new(&[("a.md", "# A\n\nalpha beta"), ("b.md", "# B\n\ngamma")]);
    if c.on_postgres() {
        return; // The flags under test are the embedded index's.
    }
    let elsewhere = c.dir.path().join("elsewhere-index");
    let db = elsewhere.display().to_string();
    let (code, synced, stderr) = c.json(&["sync", "--db-path", &db]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(synced["counts"]["ingested"], 2);

    let file = c.dir.path().join("client/.mcp.json");
    let f = file.display().to_string();
    // The variables the entry must carry come from flags, not the shell.
    let out = c.cli_env(
        &["setup", "claude", "--write", "--file", &f, "--db-path", &db],
        &[("DB_PATH", "/somewhere/else")],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // `--check` opens the entry's index and holds it against these settings.
    let check = c.cli(&["setup", "claude", "--check", "--file", &f, "--db-path", &db]);
    let said = String::from_utf8_lossy(&check.stdout).to_string();
    assert_eq!(check.status.code(), Some(0), "{said}");
    assert!(said.contains(&format!("index:   {db}")), "{said}");
    assert!(said.contains("ok: the entry opens the index"), "{said}");
    let holds = said
        .lines()
        .find_map(|l| l.strip_prefix("holds:   "))
        .unwrap_or_default();
    assert!(holds.ends_with("from 2 documents"), "{said}");
    // Without the flag these settings name another index: named, exit 1.
    let other = c.cli(&["setup", "claude", "--check", "--file", &f]);
    let said = String::from_utf8_lossy(&other.stdout).to_string();
    assert_eq!(other.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "problem: the entry's index is {db}, these settings' is "
        )),
        "{said}"
    );
    // With no settings at all, from another folder: nothing to compare,
    // the entry's index opens and holds chunks.
    let bare = std::process::Command::new(binary())
        .args(["setup", "claude", "--check", "--file", &f])
        .current_dir(c.dir.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&bare.stdout).to_string();
    assert_eq!(bare.status.code(), Some(0), "{said}");
    assert!(said.contains("ok: the entry opens the index"), "{said}");

    let missing = c.dir.path().join("nowhere/.mcp.json").display().to_string();
    let none = c.cli(&["setup", "claude", "--check", "--file", &missing]);
    let said = String::from_utf8_lossy(&none.stdout).to_string();
    assert_eq!(none.status.code(), Some(1), "{said}");
    assert!(said.contains("holds no minirag entry"), "{said}");

    let entry: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let entry = &entry["mcpServers"]["minirag"];
    assert_eq!(entry["env"]["DB_PATH"], db.as_str(), "{entry}");
    assert!(entry["env"]["MODEL_NAME"].is_string(), "{entry}");
    assert!(entry["env"]["CACHE_DIR"].is_string(), "{entry}");

    // Start the server as the client would: the entry's command and its
    // environment, nothing inherited.
    let command = entry["command"].as_str().unwrap().to_string();
    let env: Vec<(String, String)> = entry["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        std::fs::canonicalize(&command).unwrap(),
        std::fs::canonicalize(binary()).unwrap()
    );
    let transport =
        TokioChildProcess::new(tokio::process::Command::new(&command).configure(|cmd| {
            cmd.env_clear().current_dir("/");
            for (k, v) in &env {
                cmd.env(k, v);
            }
        }))
        .unwrap();
    let client = ().serve(transport).await.expect("initialize");
    let status = call_json(&client, "status", json!({})).await;
    let (_, here, _) = c.json(&["status", "--db-path", &db]);
    assert!(here["chunkCount"].as_u64().unwrap() >= 2, "{here}");
    assert_eq!(status["chunkCount"], here["chunkCount"], "{status}");
    assert_eq!(status["model"], here["model"], "{status}");
    client.cancel().await.unwrap();
}

#[test]
fn a_page_nested_thousands_deep_is_one_file_not_the_process() {
    let deep = |n: usize| format!("{}deep text{}", "<div>".repeat(n), "</div>".repeat(n));
    let quotes = format!("{}quoted text", "> ".repeat(50_000));
    let lists: String = (0..5_000)
        .map(|i| format!("{}- item {i}\n", "  ".repeat(i)))
        .collect();
    let c = Corpus::new(&[
        ("nested.html", &deep(1_500)),
        ("deeper.html", &deep(100_000)),
        ("quotes.md", &quotes),
        ("lists.md", &lists),
        (
            "plain.md",
            "# Plain\n\nThe plain file after the hostile ones.",
        ),
    ])
    .without_model();
    let (code, v, stderr) = c.json(&["sync"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(v["counts"]["ingested"], 5, "{v}");
    let (code, hits, stderr) = c.json(&["query", "deep text"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        hits["results"][0]["source"]
            .as_str()
            .is_some_and(|s| s.ends_with(".html")),
        "{hits}"
    );
    let (_, hits, _) = c.json(&["query", "plain file after"]);
    assert!(hits.to_string().contains("plain.md"), "{hits}");
}

/// README's first command, as printed, after its install step: a shell runs
/// its `sync` and `query` with HOME in a temp folder, the binary on the PATH.
#[test]
fn the_readme_quick_start_runs_as_printed() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap();
    let steps: Vec<&str> = block.split(" && ").collect();
    assert!(steps[0].starts_with("cargo install"), "{block}");
    let ours: Vec<&str> = steps[1..].to_vec();
    assert_eq!(ours.len(), 2, "{block}");
    assert!(ours[0].starts_with("minirag-mcp sync") && ours[1].starts_with("minirag-mcp query"));

    let home = tempfile::tempdir().unwrap();
    let docs = home.path().join("Documents");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("keys.md"),
        "# Key rotation\n\nWe rotate the API keys every 90 days: create the new key, deploy it, then revoke the old one.",
    )
    .unwrap();
    std::fs::write(
        docs.join("lunch.md"),
        "# Lunch\n\nThe canteen opens at noon.",
    )
    .unwrap();
    let bin_dir = binary().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |command: &str| {
        std::process::Command::new("sh")
            .args(["-c", command])
            .env_clear()
            .env("HOME", home.path())
            .env("PATH", &path)
            // This machine cannot download; the model is the one beside the checkout.
            .env("MODEL_PATH", minirag_blackbox::model_dir())
            .output()
            .unwrap()
    };
    let out = run(ours[0]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        docs.join(".minirag/index").is_dir(),
        "the index goes into the first folder"
    );
    let out = run(ours[1]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = text.lines().find(|l| l.contains(".md")).unwrap_or_default();
    assert!(first.contains("keys.md"), "{text}");
}

/// A model hub on loopback serving the real MiniLM files, except that the
/// weights wait until the test opens the gate (with `halfway`, half of them
/// are sent first). Each request on a thread.
struct SlowHub {
    url: String,
    gate: std::sync::Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
}

impl SlowHub {
    fn start() -> Self {
        Self::holding(false)
    }

    fn holding(halfway: bool) -> Self {
        use std::io::{BufRead, BufReader, Write};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let gate = std::sync::Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
        let shared = gate.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let gate = shared.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut request = String::new();
                    let _ = reader.read_line(&mut request);
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                            break;
                        }
                    }
                    let file = request
                        .split_whitespace()
                        .nth(1)
                        .and_then(|p| p.split("/resolve/main/").nth(1))
                        .unwrap_or_default()
                        .to_string();
                    let mut s = stream;
                    let body = std::fs::read(minirag_blackbox::model_dir().join(&file));
                    if file == "model.safetensors" {
                        if let (true, Ok(body)) = (halfway, &body) {
                            let _ = write!(
                                s,
                                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
                                body.len()
                            );
                            let _ = s.write_all(&body[..body.len() / 2]);
                        }
                        let (open, opened) = &*gate;
                        let mut is_open = open.lock().unwrap();
                        while !*is_open {
                            is_open = opened.wait(is_open).unwrap();
                        }
                    }
                    if halfway && file == "model.safetensors" {
                        return;
                    }
                    match body {
                        Ok(body) if !file.is_empty() => {
                            let _ = write!(
                                s,
                                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                                body.len()
                            );
                            let _ = s.write_all(&body);
                        }
                        _ => {
                            let _ = write!(
                                s,
                                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            );
                        }
                    }
                });
            }
        });
        Self { url, gate }
    }

    fn open(&self) {
        let (open, opened) = &*self.gate;
        *open.lock().unwrap() = true;
        opened.notify_all();
    }
}

#[test]
fn files_are_keyword_searchable_while_the_model_downloads() {
    let hub = SlowHub::start();
    let mut c = Corpus::new(&[
        ("a.md", "# Aardvarks\n\nThe aardvark digs burrows at night."),
        ("b.md", "# Bees\n\nBees dance to show where flowers are."),
    ]);
    c.env.retain(|(k, _)| k != "MODEL_PATH");
    c.env.push(("HF_ENDPOINT".into(), hub.url.clone()));
    c.env.push(("MODEL_NAME".into(), "test-org/minilm".into()));
    let (child, lines) = c.spawn_sync();
    let mut lines = lines.map_while(Result::ok);
    // The keyword pass is done while the weights are still held back.
    let waiting = lines
        .by_ref()
        .find(|l| l.contains("waiting for the embedding model"));
    assert!(waiting.is_some(), "the sync never got to the model");
    let (code, v, err) = c.json(&["query", "burrows at night"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        v["results"][0]["source"]
            .as_str()
            .is_some_and(|s| s.ends_with("a.md")),
        "{v}"
    );
    assert!(v.to_string().contains("still loading"), "{v}");

    hub.open();
    let rest: Vec<String> = lines.collect();
    let answer = child.wait_with_output().unwrap();
    assert!(answer.status.success(), "{rest:?}");
    // Stored keyword-only and embedded in the same sync: new, not re-embedded.
    let synced: serde_json::Value = serde_json::from_slice(&answer.stdout).unwrap();
    assert_eq!(synced["counts"]["ingested"], 2, "{synced}");
    assert_eq!(synced["counts"]["reembedded"], 0, "{synced}");
    let (_, status, _) = c.json(&["status"]);
    assert_eq!(status["vectorlessChunkCount"], 0, "{status}");
    assert!(status["chunkCount"].as_u64().unwrap() >= 2, "{status}");
    // The cached model serves the next process without the hub.
    let (code, v, _) = c.json(&["query", "insects that dance"]);
    assert_eq!(code, 0);
    assert!(!v.to_string().contains("keyword-only"), "{v}");
}

#[test]
fn doctor_says_how_far_a_stalled_download_got() {
    let hub = SlowHub::holding(true);
    let mut c = Corpus::new(&[("a.md", "# A\n\nalpha")]);
    c.env.retain(|(k, _)| k != "MODEL_PATH");
    c.env.push(("HF_ENDPOINT".into(), hub.url.clone()));
    c.env.push(("MODEL_NAME".into(), "test-org/minilm".into()));
    c.env.push(("HF_HUB_DOWNLOAD_TIMEOUT".into(), "3".into()));
    let (code, v, stderr) = c.json(&["doctor"]);
    assert_eq!(code, 1, "{v}");
    let model = v["checks"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == "model"))
        .cloned()
        .unwrap_or_default();
    let message = model["message"].as_str().unwrap_or_default();
    // Half of the weights arrived before the hub fell silent.
    let percent: u32 = message
        .split("the download had reached ")
        .nth(1)
        .and_then(|rest| rest.split('%').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no download reading in {model}"));
    assert!((40..=60).contains(&percent), "{model}");
    assert!(message.contains(" MB)"), "{model}");
    assert!(stderr.contains("downloading the model: "), "{stderr}");
    hub.open();
}

#[test]
fn a_mistyped_root_is_named_and_nothing_is_created_under_it() {
    let c = Corpus::new(&[("a.md", "# A\n\nalpha")]).without_model();
    let typo = c.dir.path().join("Documnets");
    let typo = typo.to_str().unwrap();
    for args in [
        vec!["sync", "--base-dir", typo],
        vec!["query", "alpha", "--base-dir", typo],
        vec!["setup", "claude", "--base-dir", typo],
    ] {
        // The default index folder, under the first root.
        let out = std::process::Command::new(binary())
            .args(&args)
            .current_dir(&c.root)
            .env_clear()
            .envs(c.env.iter().filter(|(k, _)| k != "DB_PATH").cloned())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(typo) && stderr.contains("a folder that exists"),
            "{args:?}: {stderr}"
        );
    }
    let doctor = c.cli_env(&["doctor", "--base-dir", typo], &[]);
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(report.contains("FAIL config"), "{report}");
    assert!(!std::path::Path::new(typo).exists(), "the typo was created");
}
