//! What a hostile document, pattern, embedding server or HTTP client sends
//! costs one field, one file or one request, within a bound; never the
//! process, its memory or its time.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use minirag_blackbox::{Corpus, Measured};
use serde_json::Value;

/// The most memory a sync of one hostile file may take.
const PEAK_LIMIT: u64 = 500 << 20;

fn sources(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|h| h["source"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn assert_bounded(m: &Measured, what: &str) {
    println!("{what}: peak RSS {} MB", m.peak_rss >> 20);
    assert!(
        m.peak_rss < PEAK_LIMIT,
        "{what}: peak RSS {} MB (exit {}): {}",
        m.peak_rss >> 20,
        m.code,
        m.stderr.chars().take(400).collect::<String>()
    );
    assert!(!m.stderr.contains("panicked"), "{what}: {}", m.stderr);
}

/// A real DOCX (LibreOffice's memo fixture) with `part` replaced.
fn docx_with(part: &str, bytes: &[u8]) -> Vec<u8> {
    crate::hostile::fixture_with_part("memo.docx", part, bytes)
}

/// The memo's `word/document.xml` with `extra` put in front of its body.
fn memo_body_with(extra: &str) -> Vec<u8> {
    let fixture = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../adapters/convert/tests/fixtures/memo.docx"
    ))
    .unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(fixture)).unwrap();
    let mut xml = String::new();
    archive
        .by_name("word/document.xml")
        .unwrap()
        .read_to_string(&mut xml)
        .unwrap();
    xml.replacen("<w:body>", &format!("<w:body>{extra}"), 1)
        .into_bytes()
}

fn core_xml(inner: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n\
         <cp:coreProperties xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/metadata/core-properties\" \
         xmlns:dc=\"http://purl.org/dc/elements/1.1/\">{inner}</cp:coreProperties>"
    )
}

#[test]
fn nested_yaml_aliases_cost_the_notes_fields_not_the_process() {
    let mut yaml = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for level in 1..8 {
        let refs = vec![format!("*a{}", level - 1); 10].join(",");
        yaml.push_str(&format!("a{level}: &a{level} [{refs}]\n"));
    }
    let note = format!("---\ntitle: Quiet note\n{yaml}---\nThe harbour crane inspection is due.\n");
    assert!(note.len() < 500, "{}", note.len());
    let c = Corpus::new(&[("plain.md", "# Plain\n\nA plain note beside it.")]).without_model();
    std::fs::write(c.path("bomb.md"), &note).unwrap();
    let m = c.json_measured(&["sync"], &[]);
    assert_bounded(&m, "aliases");
    assert_eq!(m.code, 0, "{} {}", m.json, m.stderr);
    assert_eq!(m.json["counts"]["ingested"], 2, "{}", m.json);
    let said = format!("{} {}", m.json, m.stderr);
    assert!(said.contains("YAML aliases"), "a notice names why: {said}");
    let (_, hits, _) = c.json(&["query", "harbour crane inspection"]);
    assert_eq!(sources(&hits)[0], c.path("bomb.md"), "{hits}");
}

#[test]
fn office_properties_and_body_bombs_are_read_within_the_bound() {
    let c = Corpus::new(&[]).without_model();
    let keywords = core_xml(&format!(
        "<cp:keywords>{}</cp:keywords>",
        "a,".repeat(50_000_000)
    ));
    std::fs::write(
        c.path("keywords.docx"),
        docx_with("docProps/core.xml", keywords.as_bytes()),
    )
    .unwrap();
    let empties = core_xml(&"<dc:x/>".repeat(5_000_000));
    std::fs::write(
        c.path("empties.docx"),
        docx_with("docProps/core.xml", empties.as_bytes()),
    )
    .unwrap();
    let body = memo_body_with(&"<w:x/>".repeat(5_000_000));
    std::fs::write(c.path("body.docx"), docx_with("word/document.xml", &body)).unwrap();
    for name in ["keywords.docx", "empties.docx", "body.docx"] {
        assert!(
            std::fs::metadata(c.path(name)).unwrap().len() < 1_000_000,
            "{name}"
        );
    }
    let m = c.json_measured(&["sync"], &[]);
    assert_bounded(&m, "office bombs");
    assert_eq!(m.json["counts"]["ingested"], 3, "{} {}", m.json, m.stderr);
    let (_, hits, _) = c.json(&["query", "travel budget overspent", "--top-k", "5"]);
    let found = sources(&hits);
    for name in ["keywords.docx", "empties.docx", "body.docx"] {
        assert!(found.contains(&c.path(name)), "{name}: {hits}");
    }
}

/// The memo PDF with Info Keywords of `bytes` bytes, saved with its
/// objects in compressed object streams.
fn pdf_with_keywords(bytes: usize) -> Vec<u8> {
    use lopdf::{dictionary, Object, StringFormat};
    let mut doc = lopdf::Document::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../adapters/convert/tests/fixtures/memo.pdf"
    ))
    .unwrap();
    let keywords = Object::String("a,".repeat(bytes / 2).into_bytes(), StringFormat::Literal);
    let info = doc.add_object(dictionary! { "Keywords" => keywords, "Author" => "Finance" });
    doc.trailer.set("Info", info);
    let mut pdf = Vec::new();
    let options = lopdf::SaveOptions::builder()
        .use_object_streams(true)
        .use_xref_streams(true)
        .compression_level(6)
        .build();
    doc.save_with_options(&mut pdf, options).unwrap();
    assert!(pdf.len() < 1_000_000, "{}", pdf.len());
    pdf
}

#[test]
fn pdf_keyword_bombs_in_object_streams_are_read_or_refused_within_the_bound() {
    let c = Corpus::new(&[]).without_model();
    // Under the inflation cap: the text is indexed, the fields dropped.
    std::fs::write(c.path("keywords.pdf"), pdf_with_keywords(40 << 20)).unwrap();
    // Over it: the file is refused by name.
    std::fs::write(c.path("inflating.pdf"), pdf_with_keywords(100 << 20)).unwrap();
    let m = c.json_measured(&["sync"], &[]);
    assert_bounded(&m, "pdf keywords");
    assert_eq!(m.json["counts"]["ingested"], 1, "{} {}", m.json, m.stderr);
    let said = format!("{} {}", m.json, m.stderr);
    assert!(said.contains("over 16 KiB"), "{said}");
    assert!(said.contains("inflates past 64 MiB"), "{said}");
    let (_, hits, _) = c.json(&["query", "travel budget overspent"]);
    assert_eq!(sources(&hits)[0], c.path("keywords.pdf"), "{hits}");
}

#[test]
fn hostile_path_patterns_are_refused_or_answered_at_once() {
    let c = Corpus::new(&[("a/b/c/d/zzz.md", "deep file words")]).without_model();
    c.json(&["sync"]);
    let huge = "**/".repeat(15_000) + "*.md";
    let (code, _, stderr) = c.json(&["query", "deep file words", "--path", &huge]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("over the limit of 1024"), "{stderr}");
    assert!(stderr.len() < 2_000, "the message quotes the start only");
    // The pattern's own cost: the same query without it, side by side.
    let started = Instant::now();
    c.json(&["query", "deep file words"]);
    let plain = started.elapsed();
    let many = "**/".repeat(200) + "zzz.md";
    let started = Instant::now();
    let (code, hits, stderr) = c.json(&["query", "deep file words", "--path", &many]);
    let took = started.elapsed();
    assert!(
        took < plain + Duration::from_secs(2),
        "{took:?} against {plain:?}"
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(sources(&hits)[..1], [c.path("a/b/c/d/zzz.md")], "{hits}");
    let (code, _, stderr) = c.json(&["query", "deep file words", "--path", "[!!]*"]);
    assert_eq!(code, 0, "[!!] is a class of all but `!`: {stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pattern_over_a_source_thousands_of_folders_deep_answers_at_once() {
    use minirag_blackbox::mcp_client::{call, call_json, connect};
    let c = Corpus::new(&[]).without_model();
    let client = connect(&c, &[]).await;
    let deep = "x/".repeat(3_000) + "y";
    let (is_error, text) = call(
        &client,
        "ingest_data",
        serde_json::json!({"source": deep, "data": "deep source words", "format": "text"}),
    )
    .await;
    assert!(!is_error, "{text}");
    let started = Instant::now();
    call_json(
        &client,
        "query_documents",
        serde_json::json!({"query": "deep source words"}),
    )
    .await;
    let plain = started.elapsed();
    let started = Instant::now();
    let found = call_json(
        &client,
        "query_documents",
        serde_json::json!({"query": "deep source words", "path": ["**/x/**/x/**/q.md"]}),
    )
    .await;
    let took = started.elapsed();
    assert!(
        took < plain + Duration::from_secs(2),
        "{took:?} against {plain:?}"
    );
    assert_eq!(
        found["results"].as_array().map_or(0, Vec::len),
        0,
        "{found}"
    );
    let (is_error, text) = call(
        &client,
        "ingest_url",
        serde_json::json!({"url": "http://198.18.0.1/page"}),
    )
    .await;
    assert!(is_error && text.contains("reserved"), "{text}");
    client.cancel().await.unwrap();
}

/// A loopback embedding server handing each connection, numbered, to
/// `handle` on a thread of its own.
fn embedding_server(handle: impl Fn(usize, TcpStream) + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = Arc::new(handle);
    let count = AtomicUsize::new(0);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let n = count.fetch_add(1, Ordering::SeqCst);
            let handle = handle.clone();
            std::thread::spawn(move || handle(n, stream));
        }
    });
    url
}

/// Reads one request; its body.
fn request_body(stream: &TcpStream) -> String {
    String::from_utf8_lossy(&minirag_blackbox::read_request_body(stream)).into_owned()
}

/// Vectors for a request's inputs, `value` in every place.
fn vectors_answer(body: &str, value: &str) -> String {
    let req: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let n = req["input"].as_array().map_or(1, Vec::len);
    let data: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"index":{i},"embedding":[1.0,{value},0.5]}}"#))
        .collect();
    let body = format!(r#"{{"data":[{}]}}"#, data.join(","));
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n{body}",
        body.len()
    )
}

fn remote(url: &str) -> [(&'static str, String); 4] {
    [
        ("EMBED_URL", url.to_string()),
        ("EMBED_MODEL", "test-model".into()),
        ("EMBED_READ_TIMEOUT", "2".into()),
        ("EMBED_RETRIES", "0".into()),
    ]
}

#[test]
fn a_server_silent_on_a_reused_connection_costs_a_query_its_vectors_only() {
    let url = embedding_server(|n, mut stream| {
        if n == 0 {
            let _ = stream.write_all(vectors_answer(&request_body(&stream), "0.1").as_bytes());
        }
        let _ = request_body(&stream);
        std::thread::sleep(Duration::from_secs(120));
    });
    let c = Corpus::new(&[("a.md", "# A\n\nsilent server words")]).without_model();
    c.json(&["sync"]);
    let env = remote(&url);
    let extra: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let started = Instant::now();
    let out = c.cli_env(&["query", "silent server words", "--json"], &extra);
    let elapsed = started.elapsed();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    assert_eq!(sources(&v), [c.path("a.md")], "{v}");
    assert!(v.to_string().contains("keyword-only"), "{v}");
}

#[test]
fn a_redirect_to_a_url_without_a_host_is_a_named_error_and_the_file_is_kept() {
    let url = embedding_server(|_, mut stream| {
        let _ = request_body(&stream);
        let _ = stream.write_all(
            b"HTTP/1.1 302 Found\r\nLocation: file:///etc/passwd\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    });
    let c = Corpus::new(&[("a.md", "# A\n\nredirected server words")]).without_model();
    let env = remote(&url);
    let extra: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = c.cli_env(&["sync", "--json"], &extra);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(101), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(
        format!("{v} {stderr}").contains("not followed"),
        "{v} {stderr}"
    );
    let (_, hits, _) = c.json(&["query", "redirected server words"]);
    assert_eq!(sources(&hits), [c.path("a.md")], "{hits}");
}

#[test]
fn a_bad_embedding_answer_stores_the_changed_text_keyword_only() {
    let broken = Arc::new(AtomicBool::new(false));
    let state = broken.clone();
    let url = embedding_server(move |_, mut stream| {
        let body = request_body(&stream);
        let value = if state.load(Ordering::SeqCst) && !body.contains("identity probe") {
            "\"NaN\""
        } else {
            "0.1"
        };
        let _ = stream.write_all(vectors_answer(&body, value).as_bytes());
    });
    let c = Corpus::new(&[("a.md", "# A\n\nthe old wording")]).without_model();
    let env = remote(&url);
    let extra: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = c.cli_env(&["sync", "--json"], &extra);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(c.path("a.md"), "# A\n\nthe new wording of the note").unwrap();
    broken.store(true, Ordering::SeqCst);
    let out = c.cli_env(&["sync", "--json"], &extra);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(v["counts"]["failed"], 0, "{v}");
    let (_, hits, _) = c.json(&["read", &c.path("a.md")]);
    assert!(hits.to_string().contains("new wording"), "{hits}");
}

#[test]
fn bodies_trickled_to_login_are_cut_at_the_body_limit() {
    use minirag_blackbox::http_server::HttpServer;
    let c = Corpus::new(&[("a.md", "# A\n\nalpha")]).without_model();
    let server = HttpServer::start(
        &c.env,
        &c.root,
        &["--body-timeout-secs", "2", "--max-connections-per-ip", "4"],
    );
    let address = server.base().trim_start_matches("http://").to_string();
    let trickles: Vec<_> = (0..4)
        .map(|_| {
            let address = address.clone();
            std::thread::spawn(move || {
                let started = Instant::now();
                let mut s = TcpStream::connect(&address).unwrap();
                s.write_all(
                    b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n",
                )
                .unwrap();
                s.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
                let mut answer = Vec::new();
                let mut buf = [0u8; 512];
                // One byte a pause, as the attack sends, until the server answers.
                while started.elapsed() < Duration::from_secs(20) {
                    if s.write_all(b"t").is_err() {
                        break;
                    }
                    match s.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            answer.extend_from_slice(&buf[..n]);
                            break;
                        }
                        Err(_) => {}
                    }
                }
                (started.elapsed(), String::from_utf8_lossy(&answer).into_owned())
            })
        })
        .collect();
    for t in trickles {
        let (took, answer) = t.join().unwrap();
        assert!(answer.starts_with("HTTP/1.1 408"), "{took:?}: {answer}");
        assert!(took < Duration::from_secs(8), "{took:?}");
    }
    let mut health = TcpStream::connect(&address).unwrap();
    health
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    health
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    let _ = health.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[test]
fn an_unbroken_two_megabyte_line_is_chunked_in_seconds() {
    let c = Corpus::new(&[]).without_model();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let line: String = (0..2 << 20)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                [(state % 64) as usize] as char
        })
        .collect();
    std::fs::write(c.path("blob.txt"), line).unwrap();
    let started = Instant::now();
    let (code, v, stderr) = c.json(&["sync"]);
    let took = started.elapsed();
    println!("a 2 MB unbroken line synced in {took:?}");
    assert_eq!(code, 0, "{v} {stderr}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_date_with_a_multibyte_character_is_a_named_error() {
    let c = Corpus::new(&[("a.md", "# A\n\nalpha")]).without_model();
    c.json(&["sync"]);
    let (code, _, stderr) = c.json(&["query", "alpha", "--since", "2026-12-01T09:30:€Z"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("is not a date"), "{stderr}");
}

#[test]
fn declared_fields_survive_latin1_quoted_brackets_and_junk_fields() {
    let c = Corpus::new(&[]).without_model();
    let mut latin1 = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><cp:coreProperties xmlns:cp=\"x\" xmlns:dc=\"y\"><dc:creator>Jos".to_vec();
    latin1.extend_from_slice(&[0xe9]);
    latin1.extend_from_slice(b" M");
    latin1.extend_from_slice(&[0xfc]);
    latin1.extend_from_slice(b"ller</dc:creator></cp:coreProperties>");
    std::fs::write(
        c.path("latin1.docx"),
        docx_with("docProps/core.xml", &latin1),
    )
    .unwrap();
    std::fs::write(
        c.path("page.html"),
        "<html><head><meta name=\"description\" content=\"costs > benefits\"><title>Page</title></head>\
         <body><p>quoted bracket page words</p></body></html>",
    )
    .unwrap();
    let junk: String = (0..500).map(|i| format!("a{i:03}: junk\n")).collect();
    std::fs::write(
        c.path("junk.md"),
        format!("---\n{junk}author: Ada Lovelace\n---\njunk fields note words\n"),
    )
    .unwrap();
    let (code, v, stderr) = c.json(&["sync"]);
    assert_eq!(code, 0, "{v} {stderr}");
    assert_eq!(v["counts"]["ingested"], 3, "{v}");
    for (meta, query, name) in [
        ("author=José Müller", "travel budget", "latin1.docx"),
        (
            "description=costs > benefits",
            "quoted bracket page words",
            "page.html",
        ),
        ("author=Ada Lovelace", "junk fields note words", "junk.md"),
    ] {
        let (_, hits, stderr) = c.json(&["query", query, "--meta", meta]);
        let mut found = sources(&hits);
        found.dedup();
        assert_eq!(found, [c.path(name)], "{meta}: {hits} {stderr}");
    }
}

#[test]
fn a_garbled_log_end_note_reports_no_loss() {
    let c = Corpus::new(&[("a.md", "# A\n\nalpha"), ("b.md", "# B\n\nbravo")]).without_model();
    c.json(&["sync"]);
    let db = c.dir.path().join("index");
    let note = db.join("wal.end");
    let mut bytes = std::fs::read(&note).unwrap();
    assert!(bytes.len() >= 16, "{bytes:?}");
    // The generation kept, the end garbled past any real log.
    bytes[8..16].copy_from_slice(&(1u64 << 50).to_le_bytes());
    std::fs::write(&note, &bytes).unwrap();
    let (_, s, stderr) = c.json(&["status"]);
    assert_eq!(s["staleChunkCount"], 0, "{s} {stderr}");
    assert!(!s.to_string().contains("cut short"), "{s}");
    let (_, hits, _) = c.json(&["query", "bravo"]);
    assert_eq!(sources(&hits)[0], c.path("b.md"), "{hits}");
}
