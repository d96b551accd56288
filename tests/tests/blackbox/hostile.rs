//! Input that must cost one file, never the index or the process: bytes that
//! are no text under a text format's name.

use minirag_blackbox::Corpus;

#[test]
fn binary_bytes_named_md_are_one_refused_file() {
    let c = Corpus::new(&[(
        "plain.md",
        "# Plain\n\nThe plain file beside the binary one.",
    )])
    .without_model();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let random: Vec<u8> = (0..200_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u8
        })
        .collect();
    std::fs::write(c.path("random.md"), &random).unwrap();
    let mut utf16 = Vec::new();
    for u in "# Notes saved as UTF-16 without a mark".encode_utf16() {
        utf16.extend_from_slice(&u.to_le_bytes());
    }
    std::fs::write(c.path("wide.txt"), &utf16).unwrap();
    let (code, v, stderr) = c.json(&["sync"]);
    assert_eq!(code, 1, "a refused file fails the sync: {v} {stderr}");
    assert_eq!(v["counts"]["ingested"], 1, "{v}");
    assert_eq!(v["counts"]["failed"], 2, "{v}");
    for name in ["random.md", "wide.txt"] {
        let error = v["errors"]
            .as_array()
            .and_then(|e| {
                e.iter()
                    .find(|e| e["source"].as_str().is_some_and(|s| s.ends_with(name)))
            })
            .unwrap_or_else(|| panic!("{name} is not named: {v}"));
        assert!(
            error["error"]
                .as_str()
                .is_some_and(|e| e.contains("binary data")),
            "{error}"
        );
    }
    let (_, status, _) = c.json(&["status"]);
    assert!(
        status["chunkCount"].as_u64().is_some_and(|n| n <= 2),
        "{status}"
    );
}

/// The converter fixture `name` with its zip entry `part` replaced (or
/// `bytes` added under that name).
pub(crate) fn fixture_with_part(name: &str, part: &str, bytes: &[u8]) -> Vec<u8> {
    use std::io::{Read, Write};
    let fixture = std::fs::read(format!(
        "{}/../adapters/convert/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(fixture)).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).unwrap();
        let entry_name = entry.name().unwrap().to_string();
        out.start_file(
            entry_name.as_str(),
            zip::write::SimpleFileOptions::default(),
        )
        .unwrap();
        if entry_name == part {
            out.write_all(bytes).unwrap();
        } else {
            let mut data = Vec::new();
            entry.read_to_end(&mut data).unwrap();
            out.write_all(&data).unwrap();
        }
    }
    out.finish().unwrap().into_inner()
}

/// The EPUB fixture with its first chapter replaced by `chapter`.
fn epub_with_chapter(chapter: &str) -> Vec<u8> {
    fixture_with_part(
        "policy-ru.epub",
        "OEBPS/sections/section0001.xhtml",
        chapter.as_bytes(),
    )
}

#[test]
fn an_epub_nested_3000_deep_is_indexed_beside_the_rest() {
    let c = Corpus::new(&[(
        "plain.md",
        "# Plain\n\nThe plain file beside the deep book.",
    )])
    .without_model();
    let n = 3_000;
    let chapter = format!(
        "<html xmlns=\"http://www.w3.org/1999/xhtml\"><body>{}<p>deepest chapter words</p>{}</body></html>",
        "<div>".repeat(n),
        "</div>".repeat(n)
    );
    std::fs::write(c.path("deep.epub"), epub_with_chapter(&chapter)).unwrap();
    let (code, v, stderr) = c.json(&["sync"]);
    assert_eq!(code, 0, "{v} {stderr}");
    assert_eq!(v["counts"]["ingested"], 2, "{v}");
    let (_, hits, _) = c.json(&["query", "deepest chapter words"]);
    assert!(
        hits["results"][0]["source"]
            .as_str()
            .is_some_and(|s| s.ends_with("deep.epub")),
        "{hits}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ingest_data_of_deep_html_over_http_leaves_the_server_serving() {
    use minirag_blackbox::http_server::HttpServer;
    use minirag_blackbox::mcp_client::{call, call_json, connect_http};
    let c = Corpus::new(&[("a.md", "# A\n\nalpha notes")]).without_model();
    let server = HttpServer::start(&c.env, &c.root, &[]);
    let client = connect_http((), &server.url, None).await;
    let deep = format!(
        "{}deep page words{}",
        "<div>".repeat(100_000),
        "</div>".repeat(100_000)
    );
    let (is_error, text) = call(
        &client,
        "ingest_data",
        serde_json::json!({"source": "deep-page", "data": deep, "format": "html"}),
    )
    .await;
    assert!(!is_error, "{text}");
    let found = call_json(
        &client,
        "query_documents",
        serde_json::json!({"query": "deep page words"}),
    )
    .await;
    assert_eq!(found["results"][0]["source"], "deep-page", "{found}");
    let health = reqwest::get(format!("{}/healthz", server.base()))
        .await
        .unwrap();
    assert_eq!(health.status().as_u16(), 200);
    client.cancel().await.unwrap();
}
