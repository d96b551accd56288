//! OCR on real scans (tests/fixtures/ocr, made by LibreOffice, pdftoppm,
//! img2pdf and Pillow), through the real binary and the real Tesseract 5
//! that `.ci/run` installs. Without the tools, scans stay unreadable.

use std::path::PathBuf;

use minirag_blackbox::Corpus;

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ocr")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A corpus of fixture files, copied byte for byte.
fn scans(names: &[&str]) -> Corpus {
    let c = Corpus::new(&[]);
    for name in names {
        std::fs::write(c.root.join(name), fixture(name)).unwrap();
    }
    c
}

const NO_TESSERACT: (&str, &str) = ("MINIRAG_TESSERACT", "/nonexistent/tesseract");

const EN: &str = "Harbour Inspection The QUARTZLINE crane lifted forty containers before noon. Inspector Mallory signed the ballast report at dusk.";
const RU: &str = "Приёмка товара Кладовщик сверил накладную ТОРГ-12 с количеством мест. Партия черепицы принята на склад без замечаний.";

/// Share of the words of `expected` found in `text`.
fn recovered(expected: &str, text: &str) -> f64 {
    let words: Vec<&str> = expected
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    let found = words.iter().filter(|w| text.contains(*w)).count();
    found as f64 / words.len() as f64
}

fn read_text(c: &Corpus, name: &str) -> String {
    let (code, v, err) = c.json(&["read", &c.path(name)]);
    assert_eq!(code, 0, "{err}");
    v["text"].as_str().unwrap().to_string()
}

fn top_source(c: &Corpus, query: &str) -> String {
    let (code, v, err) = c.json(&["query", query, "--top-k", "1"]);
    assert_eq!(code, 0, "{err}");
    v["results"][0]["source"].as_str().unwrap_or("").to_string()
}

#[test]
fn scans_answer_queries_for_words_that_exist_only_in_their_pixels() {
    let c = scans(&["scan-en-ru.pdf", "pages.tiff", "sideways.png"]);
    let (code, status, err) = c.json(&["status"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        status["ocr"]
            .as_str()
            .unwrap_or("")
            .starts_with("tesseract 5"),
        "Tesseract 5 with rus+eng is expected (.ci/run installs it): {status}"
    );
    let (code, done, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(done["counts"]["ingested"], 3, "{done}");

    for name in ["scan-en-ru.pdf", "pages.tiff"] {
        let text = read_text(&c, name);
        let (en, ru) = (recovered(EN, &text), recovered(RU, &text));
        eprintln!(
            "{name}: {:.0} % of English words, {:.0} % of Russian",
            en * 100.0,
            ru * 100.0
        );
        assert!(en >= 0.9 && ru >= 0.9, "{name}: {en} / {ru}\n{text}");
    }
    // Each source names the engine that read it.
    let (_, list, _) = c.json(&["list"]);
    for f in list["files"].as_array().unwrap() {
        let engine = f["ocrEngine"].as_str().unwrap();
        assert!(engine.starts_with("tesseract 5"), "{f}");
    }
    let human = String::from_utf8_lossy(&c.cli(&["list"]).stdout).into_owned();
    assert!(human.contains("[ocr:tesseract 5"), "{human}");
    let sideways = read_text(&c, "sideways.png");
    assert!(
        recovered(EN, &sideways) >= 0.9,
        "a page scanned sideways:\n{sideways}"
    );
    assert_eq!(read_title(&c, "sideways.png"), "sideways");

    // Recognised text keeps the page (PDF) or frame (TIFF) it was read from;
    // a passage that runs from one page onto the next names both.
    for name in ["scan-en-ru.pdf", "pages.tiff"] {
        for (query, page) in [("QUARTZLINE crane", 1), ("накладная ТОРГ-12 черепица", 2)]
        {
            let (_, q, _) = c.json(&["query", query, "--scope", &c.path(name), "--top-k", "1"]);
            let place = &q["results"][0]["location"];
            let (first, last) = match (place.get("page"), place.get("pages")) {
                (Some(p), None) => (p.as_u64().unwrap(), p.as_u64().unwrap()),
                (None, Some(ps)) => (ps[0].as_u64().unwrap(), ps[1].as_u64().unwrap()),
                _ => panic!("{name}: no page for {query:?}: {q}"),
            };
            assert!(first <= page && page <= last, "{name}, {query:?}: {place}");
            let cite = q["results"][0]["citation"].as_str().unwrap();
            assert!(cite.starts_with(&format!("{name}, p")), "{cite}");
        }
    }

    let found = top_source(&c, "QUARTZLINE crane");
    assert!(
        found.ends_with(".pdf") || found.ends_with(".tiff") || found.ends_with(".png"),
        "{found}"
    );
    let found = top_source(&c, "накладная ТОРГ-12 черепица");
    assert!(
        found.ends_with("scan-en-ru.pdf") || found.ends_with("pages.tiff"),
        "{found}"
    );
}

/// A phone-style photo (low contrast, light falling off, sensor noise):
/// Tesseract alone reads nothing of it; the cleaning before recognition
/// (flatten the lighting, median, stretch, Otsu) brings the page back.
#[test]
fn a_noisy_low_contrast_photo_reads_after_cleaning() {
    let c = scans(&["noisy-photo.jpg"]);
    let (code, done, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(done["counts"]["ingested"], 1, "{done}");
    let text = read_text(&c, "noisy-photo.jpg");
    let share = recovered(EN, &text);
    eprintln!("noisy photo: {:.0} % of its words\n{text}", share * 100.0);
    assert!(share >= 0.5, "{share}: {text}");
    assert!(text.contains("QUARTZLINE"), "{text}");
    assert!(top_source(&c, "QUARTZLINE crane").ends_with("noisy-photo.jpg"));
}

/// A scanned two-column page reads down the left column, then the right.
#[test]
fn a_scanned_two_column_page_reads_in_column_order() {
    let c = scans(&["two-column-scan.pdf"]);
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let text = read_text(&c, "two-column-scan.pdf");
    let order = [
        "LEFTCOLUMN",
        "anemones",
        "closing",
        "RIGHTCOLUMN",
        "barnacles",
        "three mornings",
    ];
    let mut from = 0;
    for word in order {
        let at = text[from..]
            .find(word)
            .unwrap_or_else(|| panic!("{word:?} missing or out of order in:\n{text}"));
        from += at + word.len();
    }
}

fn read_title(c: &Corpus, name: &str) -> String {
    let (_, v, _) = c.json(&["read", &c.path(name)]);
    v["title"].as_str().unwrap_or("").to_string()
}

#[test]
fn without_the_tools_a_scan_is_unreadable_with_the_install_hint() {
    let c = scans(&["scan-en-ru.pdf", "pages.tiff"]);
    let out = c.cli_env(&["status", "--json"], &[NO_TESSERACT]);
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["ocr"], "unavailable", "{status}");
    assert!(
        status["ocrHint"]
            .as_str()
            .unwrap()
            .contains("apt install tesseract-ocr"),
        "{status}"
    );

    let out = c.cli_env(&["sync", "--json"], &[NO_TESSERACT]);
    let done: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        done["counts"]["unreadable"], 1,
        "the PDF; the image is not scanned: {done}"
    );
    assert_eq!(done["counts"]["scanned"], 1, "{done}");
    let error = done["errors"][0]["error"].as_str().unwrap();
    assert!(
        error.contains("scanned PDF") && error.contains("apt install tesseract-ocr"),
        "{error}"
    );

    let out = c.cli_env(&["ingest", &c.path("pages.tiff")], &[NO_TESSERACT]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("needs OCR") && err.contains("apt install tesseract-ocr"),
        "{err}"
    );

    // Indexed with OCR, then synced without it: the image is kept.
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let out = c.cli_env(&["sync", "--json"], &[NO_TESSERACT]);
    let done: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(done["counts"]["deleted"], 0, "{done}");
    assert!(done.to_string().contains("kept in the index"), "{done}");
    assert!(
        top_source(&c, "накладная ТОРГ-12 черепица").ends_with("pages.tiff")
            || top_source(&c, "накладная ТОРГ-12 черепица").ends_with(".pdf")
    );
    let out = c.cli_env(&["list", "--json"], &[NO_TESSERACT]);
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tiff = list["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["source"].as_str().unwrap().ends_with("pages.tiff"))
        .unwrap_or_else(|| panic!("{list}"));
    assert_eq!(tiff["state"], "unreadable", "{tiff}");
    assert!(tiff["chunkCount"].as_u64() > Some(0), "{tiff}");
}

#[test]
fn hostile_scans_fail_by_name_and_harm_nothing() {
    let c = scans(&[
        "bomb.png",
        "truncated.jpg",
        "broken-frame.tiff",
        "blank.pdf",
        "pages.tiff",
    ]);
    std::fs::write(
        c.root.join("encrypted.pdf"),
        std::fs::read(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../adapters/convert/tests/fixtures/encrypted.pdf"),
        )
        .unwrap(),
    )
    .unwrap();
    // Files failed, so the exit code is 1; the sync itself completed.
    let (code, done, err) = c.json(&["sync"]);
    assert_eq!(code, 1, "{err}");
    let errors = done["errors"].as_array().unwrap();
    let error_of = |name: &str| {
        errors
            .iter()
            .find(|e| e["source"].as_str().unwrap().ends_with(name))
            .map(|e| e["error"].as_str().unwrap().to_string())
    };
    let bomb = error_of("bomb.png").expect("the bomb is refused");
    assert!(
        bomb.contains("100000 × 100000") && bomb.contains("bomb.png"),
        "{bomb}"
    );
    // Tesseract's decoder refuses a JPEG cut in half: a named failure.
    let truncated = error_of("truncated.jpg").expect("a truncated JPEG fails by name");
    assert!(
        truncated.contains("truncated.jpg") && truncated.contains("could not read or decode image"),
        "{truncated}"
    );
    let blank = error_of("blank.pdf").expect("a blank page has no text");
    assert!(blank.contains("OCR produced no text"), "{blank}");
    let encrypted = error_of("encrypted.pdf").expect("a password-protected PDF");
    assert!(encrypted.contains("encrypted"), "{encrypted}");
    // Its first frame is whole: that frame is read, the cut one is not.
    assert_eq!(error_of("broken-frame.tiff"), None, "{done}");
    let first_frame = read_text(&c, "broken-frame.tiff");
    assert!(first_frame.contains("QUARTZLINE"), "{first_frame}");
    // The good scan beside them is indexed and found.
    assert!(top_source(&c, "накладная ТОРГ-12 черепица").ends_with("pages.tiff"));
    let (code, _, err) = c.json(&["status"]);
    assert_eq!(code, 0, "{err}");
}

/// Records progress lines and wakes the test at the first page read.
#[derive(Clone)]
struct PageProgress(
    std::sync::Arc<tokio::sync::Notify>,
    std::sync::Arc<std::sync::Mutex<Vec<String>>>,
);

impl rmcp::ClientHandler for PageProgress {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        let line = params.message.unwrap_or_default();
        let page = line.starts_with("recognised page");
        self.1.lock().unwrap().push(line);
        if page {
            self.0.notify_one();
        }
    }
}

#[test]
fn a_long_scan_reports_its_pages_and_a_cancel_writes_nothing_of_it() {
    use minirag_blackbox::http_server::HttpServer;
    use minirag_blackbox::mcp_client::{connect_http, sync_with_progress_token};
    let c = scans(&["six-pages.pdf"]);
    let server = HttpServer::start(&c.env, &c.root, &[]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let woke = std::sync::Arc::new(tokio::sync::Notify::new());
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let client =
            connect_http(PageProgress(woke.clone(), lines.clone()), &server.url, None).await;
        let handle = sync_with_progress_token(&client).await;
        woke.notified().await;
        handle.cancel(Some("stop".into())).await.unwrap();
        let seen = lines.lock().unwrap().clone();
        assert!(
            seen.iter()
                .any(|l| l.contains("of 6 of") && l.contains("six-pages.pdf")),
            "{seen:?}"
        );
        client.cancel().await.unwrap();
    });
    // Cancelled while its pages were read: nothing of the file was written.
    let (_, status, _) = c.json(&["status"]);
    assert_eq!(status["sourceCount"], 0, "{status}");
}
