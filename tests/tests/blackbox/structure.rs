//! Settings reach the adapters, and a model is known by its content: on the
//! real binary, the real model and loopback only.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;

use minirag_blackbox::{model_dir, Corpus};
use minirag_embed_candle::source::{OPTIONAL, REQUIRED};
use serde_json::Value;

/// Serves `body` as text/plain to every connection until the test ends.
fn serve_text(body: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut line = String::new();
            // The request head ends with an empty line.
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let mut out = &stream;
            let _ = write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}/notes.txt")
}

#[test]
fn url_max_bytes_takes_effect() {
    let c = Corpus::new(&[("a.md", "# A\n\nalpha")]);
    let body = "Kites fly in steady wind. ".repeat(80); // 2,000 bytes
    let url = serve_text(body);
    let out = c.cli_env(
        &["ingest-url", &url, "--json"],
        &[("ALLOW_PRIVATE_URLS", "1"), ("URL_MAX_BYTES", "1000")],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("1000 byte limit"), "{err}");
    let out = c.cli_env(
        &["ingest-url", &url, "--json"],
        &[("ALLOW_PRIVATE_URLS", "1"), ("URL_MAX_BYTES", "5000")],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(v["chunkCount"].as_u64().unwrap() >= 1, "{v}");
}

fn copy_model(to: &Path, tweak: impl Fn(&str, Vec<u8>) -> Vec<u8>) {
    std::fs::create_dir_all(to.join("1_Pooling")).unwrap();
    // Every file the model's identity reads.
    let files = REQUIRED
        .iter()
        .chain(&["model.safetensors"])
        .chain(&OPTIONAL);
    for f in files {
        let bytes = std::fs::read(model_dir().join(f)).unwrap();
        std::fs::write(to.join(f), tweak(f, bytes)).unwrap();
    }
}

fn states(c: &Corpus, model: &Path) -> Vec<String> {
    let out = c.cli_env(
        &["list", "--json"],
        &[("MODEL_PATH", &model.display().to_string())],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["state"].as_str().unwrap().to_string())
        .collect()
}

fn sync(c: &Corpus, model: &Path) -> Value {
    let out = c.cli_env(
        &["sync", "--json"],
        &[("MODEL_PATH", &model.display().to_string())],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_copy_of_the_model_is_the_same_model_and_a_changed_model_is_a_re_embed() {
    let c = Corpus::new(&[
        (
            "guide.md",
            "# Guide\n\nThe error ERR_CONN_RESET means the peer closed the socket.",
        ),
        ("soup.md", "# Soup\n\nBoil water, add vegetables and salt."),
    ]);
    let original = model_dir();
    let v = sync(&c, &original);
    assert_eq!(v["counts"]["ingested"], 2, "{v}");

    let copy = c.dir.path().join("models/copy");
    copy_model(&copy, |_, b| b);
    assert_eq!(
        states(&c, &copy),
        ["ingested", "ingested"],
        "a copy is not a change"
    );
    let v = sync(&c, &copy);
    assert_eq!(
        (
            v["counts"]["skipped"].as_u64(),
            v["counts"]["reembedded"].as_u64()
        ),
        (Some(2), Some(0)),
        "{v}"
    );

    // Another model: same files but one config value.
    let changed = c.dir.path().join("models/changed");
    copy_model(&changed, |f, b| {
        if f == "config.json" {
            String::from_utf8(b)
                .unwrap()
                .replace("1e-12", "1e-11")
                .into_bytes()
        } else {
            b
        }
    });
    assert_eq!(
        states(&c, &changed),
        ["stale", "stale"],
        "list_files sees the model change"
    );
    let out = c.cli_env(
        &["query", "vegetable broth", "--json"],
        &[("MODEL_PATH", &changed.display().to_string())],
    );
    let q: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        q["notice"].as_str().unwrap_or("").contains("another model"),
        "old vectors are not compared with the new model's query: {q}"
    );
    let v = sync(&c, &changed);
    assert_eq!(
        (
            v["counts"]["reembedded"].as_u64(),
            v["counts"]["ingested"].as_u64(),
            v["counts"]["failed"].as_u64()
        ),
        (Some(2), Some(0), Some(0)),
        "a model change re-embeds, it does not fail: {v}"
    );
    assert_eq!(states(&c, &changed), ["ingested", "ingested"]);
    let out = c.cli_env(
        &["query", "vegetable broth", "--json"],
        &[("MODEL_PATH", &changed.display().to_string())],
    );
    let q: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(q.get("notice").is_none(), "{q}");
    assert_eq!(q["results"][0]["source"], c.path("soup.md"));
}
