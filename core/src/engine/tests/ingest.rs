//! Ingest: files, text, URLs, titles, errors and the vector cache.

use super::*;
use crate::engine::ingest::format_for_content_type;

#[test]
fn ingest_file_round_trip() {
    let f = fixture();
    let out = f
        .engine
        .ingest_file("/docs/guide.md", GUIDE.as_bytes(), "abc123", 1700000000.5)
        .unwrap();
    assert_eq!(
        (out.source.as_str(), out.title.as_str()),
        ("/docs/guide.md", "Setup Guide")
    );
    assert!(out.chunk_count >= 2);
    assert_eq!(out.notice, None);
    let rec = f
        .index
        .read()
        .unwrap()
        .source("/docs/guide.md")
        .unwrap()
        .unwrap();
    assert_eq!(
        (rec.file_hash.as_str(), rec.mtime, rec.source_type),
        ("abc123", 1700000000.5, SourceType::File)
    );
    assert_eq!(rec.ingested_at, "2026-11-30T02:11:32Z");
    assert_eq!(rec.scheme_version, CHUNK_SCHEME);
    assert_eq!(rec.embedded_with.as_deref(), Some("hash-16"));
    assert!(!rec.title_seeded, "the H1 already holds the title");
    assert_eq!(rec.chunk_count as usize, out.chunk_count);
}

#[test]
fn file_errors_name_the_file_and_the_fix() {
    let f = fixture();
    let e = f
        .engine
        .ingest_file("/docs/script.py", b"print()", "", 0.0)
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("Unsupported file extension '.py'")
            && msg.contains(".md")
            && msg.contains(".pdf"),
        "{msg}"
    );
    let msg = f
        .engine
        .ingest_file("/docs/photo.JPG", b"..", "", 0.0)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("is an image") && msg.contains("OCR") && !msg.contains("Unsupported"),
        "{msg}"
    );
    let big = vec![b'a'; 1_000_001];
    let msg = f
        .engine
        .ingest_file("/docs/big.txt", &big, "", 0.0)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("1000001 bytes") && msg.contains("MAX_FILE_SIZE is 1000000"),
        "{msg}"
    );
    let e = f
        .engine
        .ingest_file("/docs/blank.md", b"  \n\n ", "", 0.0)
        .unwrap_err();
    assert_eq!(
        e,
        EngineError::Empty {
            source: "/docs/blank.md".into()
        }
    );
    assert_eq!(
        f.index.read().unwrap().stats().unwrap().chunk_count,
        0,
        "nothing stored on failure"
    );
}

#[test]
fn filename_title_is_seeded_and_not_doubled_on_reingest() {
    let f = fixture();
    let body = "# 1 Общие положения\n\nТекст положения.";
    f.engine
        .ingest_file("/docs/Политика_премирования.md", body.as_bytes(), "h", 1.0)
        .unwrap();
    let first = f
        .index
        .read()
        .unwrap()
        .chunks("/docs/Политика_премирования.md", 0..=10)
        .unwrap();
    assert!(first[0].text.starts_with("# Политика премирования\n\n"));
    f.engine
        .ingest_file("/docs/Политика_премирования.md", body.as_bytes(), "h", 1.0)
        .unwrap();
    let second = f
        .index
        .read()
        .unwrap()
        .chunks("/docs/Политика_премирования.md", 0..=10)
        .unwrap();
    assert_eq!(first, second);
    let all: String = second.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(all.matches("# Политика премирования").count(), 1);
    // read_file gives the document back without the seed.
    let read = f
        .engine
        .read_document("/docs/Политика_премирования.md")
        .unwrap();
    assert_eq!(read.text, body);
}

#[test]
fn ingest_data_titles_and_formats() {
    let f = fixture();
    let out = f
        .engine
        .ingest_data("note-1", "Plain words here.", "text", Some("  My Note "))
        .unwrap();
    assert_eq!(out.title, "My Note");
    assert!(f.index.read().unwrap().chunks("note-1", 0..=0).unwrap()[0]
        .text
        .starts_with("# My Note\n\n"));

    let out = f
        .engine
        .ingest_data("note-2", "# From H1\n\nBody.", "markdown", None)
        .unwrap();
    assert_eq!(out.title, "From H1");

    let out = f
        .engine
        .ingest_data(
            "page-1",
            "<title>Html T</title><body>Body text.</body>",
            "html",
            None,
        )
        .unwrap();
    assert_eq!(out.title, "Html T");

    let out = f
        .engine
        .ingest_data("note-3", "No title at all.", "text", None)
        .unwrap();
    assert_eq!(out.title, "note-3");
    assert_eq!(
        f.index.read().unwrap().chunks("note-3", 0..=0).unwrap()[0].text,
        "No title at all.",
        "not seeded"
    );
    assert_eq!(
        f.index
            .read()
            .unwrap()
            .source("note-3")
            .unwrap()
            .unwrap()
            .source_type,
        SourceType::Data
    );

    let e = f.engine.ingest_data("x", "y", "pdf", None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "format must be one of ('text', 'markdown', 'html'), got 'pdf'"
    );
}

#[test]
fn a_caller_named_source_is_never_a_file_path() {
    let f = fixture();
    f.files.put("/docs/key.md", "# Key\n\nThe real file.", 1.0);
    f.engine.sync(None, &|_| {}, &Default::default()).unwrap();
    for named in [
        "/docs/key.md",
        "/etc/passwd",
        "~/.ssh/id_rsa",
        "C:\\notes.md",
        " /docs/x",
    ] {
        let e = f.engine.ingest_data(named, "x", "text", None).unwrap_err();
        assert!(
            matches!(e, EngineError::SourceIsAPath { .. }),
            "{named}: {e}"
        );
        let e = f
            .engine
            .ingest_url("https://example.org/", Some(named), None)
            .unwrap_err();
        assert!(
            matches!(e, EngineError::SourceIsAPath { .. }),
            "{named}: {e}"
        );
    }
    // The file's own text is untouched.
    let text = &f
        .index
        .read()
        .unwrap()
        .chunks("/docs/key.md", 0..=0)
        .unwrap()[0]
        .text;
    assert!(text.contains("The real file."), "{text}");
    assert!(f
        .engine
        .ingest_data("notes/passwd", "x", "text", None)
        .is_ok());
}

#[test]
fn only_a_synced_file_the_scan_admits_is_served() {
    let f = fixture();
    f.files.put("/docs/a.md", "# A\n\nApples.", 1.0);
    f.engine.sync(None, &|_| {}, &Default::default()).unwrap();
    f.engine
        .ingest_data("data.md", "Data.", "text", None)
        .unwrap();
    assert!(f
        .engine
        .serves_original("/docs/a.md", "/docs/a.md")
        .unwrap());
    // A symlink whose target the scan skips.
    assert!(!f
        .engine
        .serves_original("/docs/a.md", "/docs/.key.md")
        .unwrap());
    assert!(!f
        .engine
        .serves_original("/docs/.hidden.md", "/docs/.hidden.md")
        .unwrap());
    assert!(
        !f.engine
            .serves_original("/docs/b.md", "/docs/b.md")
            .unwrap(),
        "not indexed"
    );
    assert!(!f.engine.serves_original("data.md", "data.md").unwrap());
}

#[test]
fn ingest_url_defaults_and_titles() {
    let f = fixture();
    let out = f
        .engine
        .ingest_url("https://example.com/page", None, None)
        .unwrap();
    assert_eq!(
        (out.source.as_str(), out.title.as_str()),
        ("https://example.com/page", "Public Page")
    );
    assert_eq!(
        f.index
            .read()
            .unwrap()
            .source("https://example.com/page")
            .unwrap()
            .unwrap()
            .source_type,
        SourceType::Url
    );
    let out = f
        .engine
        .ingest_url("https://example.com/bare", Some("my-id"), None)
        .unwrap();
    assert_eq!(
        (out.source.as_str(), out.title.as_str()),
        ("my-id", "my-id")
    );
    assert_eq!(
        f.index.read().unwrap().chunks("my-id", 0..=0).unwrap()[0].text,
        "just words, no title"
    );
    let e = f
        .engine
        .ingest_url("https://example.com/missing", None, None)
        .unwrap_err();
    assert!(e.to_string().contains("404"));
}

#[test]
fn stored_vectors_equal_embeddings_of_stored_texts_and_unchanged_chunks_are_reused() {
    let f = fixture();
    f.engine
        .ingest_file("/docs/guide.md", GUIDE.as_bytes(), "h1", 1.0)
        .unwrap();
    let embedded_first = f.embedder.embedded.load(Ordering::SeqCst);
    let chunks = f
        .index
        .read()
        .unwrap()
        .chunks("/docs/guide.md", 0..=100)
        .unwrap();
    assert_eq!(
        embedded_first,
        chunks.len(),
        "one batch of every final chunk text"
    );
    {
        let map = f.index.sources.lock().unwrap();
        let v = map["/docs/guide.md"].vectors.as_ref().unwrap();
        for c in &chunks {
            assert_eq!(
                v.row(c.index as usize),
                FakeEmbedder::vector(&c.text).as_slice()
            );
        }
    }
    let edited = GUIDE.replace(
        "Check the log file for details.",
        "Check the journal for details.",
    );
    f.engine
        .ingest_file("/docs/guide.md", edited.as_bytes(), "h2", 2.0)
        .unwrap();
    let embedded_again = f.embedder.embedded.load(Ordering::SeqCst) - embedded_first;
    assert_eq!(
        embedded_again, 1,
        "only the changed chunk is embedded again"
    );
}

#[test]
fn without_a_model_ingest_stores_text_and_query_is_keyword_only() {
    let mut e = FakeEmbedder::new();
    e.unavailable = true;
    let f = fixture_with(e, |_| {});
    let out = f
        .engine
        .ingest_file("/docs/guide.md", GUIDE.as_bytes(), "h", 1.0)
        .unwrap();
    assert!(out.notice.as_deref().unwrap().contains("without vectors"));
    assert_eq!(
        f.index
            .read()
            .unwrap()
            .source("/docs/guide.md")
            .unwrap()
            .unwrap()
            .embedded_with,
        None
    );
    let r = f.engine.query(query("ERR_CONN_RESET", 5, &[])).unwrap();
    assert_eq!(r.results[0].source, "/docs/guide.md");
    assert!(r.results[0].text.contains("ERR_CONN_RESET"));
    assert_eq!(r.results[0].distance, None);
    let notice = r.notice.unwrap();
    assert!(
        notice.contains("keyword-only") && notice.contains("could not be loaded"),
        "{notice}"
    );
}

#[test]
fn extensions_and_fetched_formats() {
    assert_eq!(file_extension("/a/b.Tar.PDF"), "pdf");
    assert_eq!(file_extension("/a/.hidden"), "");
    assert_eq!(file_extension("/a/noext"), "");
    assert_eq!(
        format_for_content_type(Some("text/html"), "https://x/a.pdf"),
        "html"
    );
    assert_eq!(format_for_content_type(None, "https://x/a.pdf?x=1"), "pdf");
    assert_eq!(format_for_content_type(None, "https://x/REPORT.PDF"), "pdf");
    assert_eq!(
        format_for_content_type(Some("application/octet-stream"), "https://x/"),
        "html"
    );
}

#[test]
fn errors_keep_their_cause() {
    let f = fixture();
    let err = f.engine.ingest_path("/docs/missing.md").unwrap_err();
    assert!(
        err.to_string().contains("cannot read /docs/missing.md"),
        "{err}"
    );
    let file = std::error::Error::source(&err).expect("the file error");
    let os = file.source().expect("the OS error");
    assert_eq!(
        os.downcast_ref::<std::io::Error>().map(|e| e.kind()),
        Some(std::io::ErrorKind::NotFound)
    );
}

#[test]
fn the_language_is_detected_once_at_ingest_and_stored() {
    let f = fixture();
    f.engine
        .ingest_data(
            "ru-note",
            "Резервные копии хранятся тридцать дней.",
            "text",
            None,
        )
        .unwrap();
    f.engine
        .ingest_data("en-note", "Backups are kept for thirty days.", "text", None)
        .unwrap();
    let language = |s: &str| {
        f.index
            .read()
            .unwrap()
            .source(s)
            .unwrap()
            .unwrap()
            .attributes
            .language
    };
    assert_eq!(language("ru-note").as_deref(), Some("ru"));
    assert_eq!(language("en-note").as_deref(), Some("en"));
}

#[test]
fn badly_encoded_lines_are_reported_in_the_notice() {
    let f = fixture();
    let out = f
        .engine
        .ingest_data(
            "scan-note",
            "Readable words first.\n\n\u{fffd}\u{fffd}\u{fffd}\u{fffd} \u{e001}\u{e002}\n\nMore words.",
            "text",
            None,
        )
        .unwrap();
    let notice = out.notice.unwrap_or_default();
    assert!(
        notice.contains("1 line of scan-note read as badly encoded"),
        "{notice}"
    );
    assert_eq!(out.unreadable.as_deref(), Some(notice.as_str()));
    let clean = f
        .engine
        .ingest_data("clean-note", "Only readable words.", "text", None)
        .unwrap();
    assert_eq!((clean.notice, clean.unreadable), (None, None));
}
