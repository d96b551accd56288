//! The CLI with `--json`, on the real binary and the real model.

use minirag_blackbox::Corpus;
use serde_json::Value;

const GUIDE: &str = "# Network Guide\n\nThis guide explains connections.\n\n## Errors\n\n\
    The error ERR_CONN_RESET means the peer closed the socket. Retry after a pause.\n\n\
    ## Tuning\n\n| setting | default |\n| --- | --- |\n| timeout | 30 s |\n| retries | 3 |\n";
const RECIPES: &str = "# Soup\n\nBoil water, add vegetables and salt. Simmer for twenty minutes.\n";
const RU: &str = "# Хранение\n\nДокументы хранятся на складе в сухом помещении.\n";

fn corpus() -> Corpus {
    Corpus::new(&[
        ("guide.md", GUIDE),
        ("food/soup.md", RECIPES),
        ("ru/store.txt", RU),
    ])
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn ingest_query_read_list_delete() {
    let c = corpus();
    let root = c.root.display().to_string();
    let (code, v, err) = c.json(&["ingest", &root]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["ingested"].as_array().unwrap().len(), 3);
    assert_eq!(v["failed"].as_array().unwrap().len(), 0);

    let (code, q, err) = c.json(&["query", "ERR_CONN_RESET"]);
    assert_eq!(code, 0, "{err}");
    let top = &q["results"][0];
    assert_eq!(top["source"], c.path("guide.md"));
    assert!(top["text"].as_str().unwrap().contains("ERR_CONN_RESET"));
    assert_eq!(
        keys(top),
        [
            "chunkIndex",
            "citation",
            "distance",
            "link",
            "location",
            "parentId",
            "score",
            "source",
            "text",
            "title"
        ]
    );
    // The hit's lines in the file, cited and linked.
    let lines = top["location"]["lines"].as_array().unwrap();
    let (first, last) = (lines[0].as_u64().unwrap(), lines[1].as_u64().unwrap());
    let file = std::fs::read_to_string(c.path("guide.md")).unwrap();
    let span: Vec<&str> = file
        .lines()
        .skip(first as usize - 1)
        .take((last - first + 1) as usize)
        .collect();
    assert!(span.join("\n").contains("ERR_CONN_RESET"), "{span:?}");
    assert!(
        top["citation"]
            .as_str()
            .unwrap()
            .starts_with("guide.md, line"),
        "{top}"
    );
    assert!(
        top["link"]
            .as_str()
            .unwrap()
            .ends_with(&format!("#lines={first}-{last}"))
            || first == last,
        "{top}"
    );
    assert_eq!(
        keys(&q["sources"][0]),
        ["displayPath", "hits", "source", "title"]
    );
    assert_eq!(q["sources"][0]["displayPath"], "guide.md");
    assert_eq!(keys(&q), ["parents", "results", "sources"]);
    let hits: u64 = q["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["hits"].as_u64().unwrap())
        .sum();
    assert_eq!(hits as usize, q["results"].as_array().unwrap().len());

    // A paraphrase finds the soup by meaning.
    let (_, q, _) = c.json(&["query", "how do I cook a vegetable broth"]);
    assert_eq!(q["results"][0]["source"], c.path("food/soup.md"));

    // Russian morphology meets across forms.
    let (_, q, _) = c.json(&["query", "документов", "--scope", &c.path("ru")]);
    assert_eq!(q["results"][0]["source"], c.path("ru/store.txt"));
    assert_eq!(
        q["results"].as_array().unwrap().len(),
        1,
        "scope keeps only ru/"
    );
    // The same scope relative to the working folder (the corpus root), as
    // `--help` says; a folder outside every root is refused with the roots.
    let (code, q, err) = c.json(&["query", "документов", "--scope", "ru"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(q["results"][0]["source"], c.path("ru/store.txt"));
    assert_eq!(q["results"].as_array().unwrap().len(), 1);
    let (_, listed, _) = c.json(&["list", "--scope", "ru"]);
    assert_eq!(listed["files"].as_array().unwrap().len(), 1, "{listed}");
    refused(
        &c,
        &["query", "x"],
        &[(&["--scope", "/etc"], &["/etc", "root"])],
    );

    let (code, r, _) = c.json(&["read", &c.path("guide.md")]);
    assert_eq!(code, 0);
    assert_eq!(
        keys(&r),
        [
            "chunkCount",
            "language",
            "meta",
            "source",
            "sourceType",
            "text",
            "title"
        ]
    );
    let text = r["text"].as_str().unwrap();
    for line in [
        "# Network Guide",
        "## Errors",
        "## Tuning",
        "| setting | default |",
        "| retries | 3 |",
    ] {
        assert_eq!(
            text.lines().filter(|l| *l == line).count(),
            1,
            "{line} in\n{text}"
        );
    }

    let (code, l, _) = c.json(&["list"]);
    assert_eq!(code, 0);
    let files = l["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    assert!(files.iter().all(|f| f["state"] == "ingested"));
    assert_eq!(
        keys(&files[0]),
        [
            "chunkCount",
            "language",
            "meta",
            "ocrEngine",
            "source",
            "sourceType",
            "state",
            "title"
        ]
    );

    let (code, d, _) = c.json(&["delete", &c.path("food/soup.md")]);
    assert_eq!(code, 0);
    assert!(d["deletedChunks"].as_u64().unwrap() >= 1);
    let (code, _, err) = c.json(&["read", &c.path("food/soup.md")]);
    assert_eq!(code, 1);
    assert!(err.contains("not found"), "{err}");
    let (_, l, _) = c.json(&["list"]);
    let soup = l["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["source"] == c.path("food/soup.md"))
        .unwrap()
        .clone();
    assert_eq!(soup["state"], "not_ingested");
}

#[test]
fn sync_ingests_skips_moves_and_deletes() {
    let c = corpus();
    let (code, v, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["counts"]["ingested"], 3);
    let (_, v, _) = c.json(&["sync"]);
    assert_eq!(
        (
            v["counts"]["skipped"].as_u64(),
            v["counts"]["ingested"].as_u64()
        ),
        (Some(3), Some(0))
    );

    std::fs::create_dir_all(c.root.join("archive")).unwrap();
    std::fs::rename(c.root.join("food/soup.md"), c.root.join("archive/soup.md")).unwrap();
    std::fs::remove_file(c.root.join("ru/store.txt")).unwrap();
    std::fs::write(
        c.root.join("new.md"),
        "# New\n\nA brand new note about kites.",
    )
    .unwrap();
    let (code, v, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let counts = &v["counts"];
    assert_eq!(
        (
            counts["moved"].as_u64(),
            counts["deleted"].as_u64(),
            counts["ingested"].as_u64()
        ),
        (Some(1), Some(1), Some(1)),
        "{v}"
    );
    let (_, q, _) = c.json(&["query", "vegetable soup"]);
    assert_eq!(q["results"][0]["source"], c.path("archive/soup.md"));
}

#[test]
fn status_and_configuration_errors() {
    let c = corpus();
    let (code, s, _) = c.json(&["status"]);
    assert_eq!(code, 0);
    assert_eq!(s["chunkScheme"], 8);
    assert_eq!(s["chunkCount"], 0);
    assert_eq!(s["roots"][0], c.root.display().to_string());

    let out = c.cli_env(&["status", "--json"], &[("BASE_DIRS", "/a:/b")]);
    assert_eq!(out.status.code(), Some(0));
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(keys(&s), ["configError", "version"]);
    assert!(s["configError"].as_str().unwrap().contains("BASE_DIRS"));

    let out = c.cli_env(&["list", "--json"], &[("BASE_DIRS", "/a:/b")]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: ") && err.contains("BASE_DIRS"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_arguments_are_refused_with_the_reason() {
    let c = corpus();
    let (code, _, err) = c.json(&["query", "x", "--top-k", "0"]);
    assert_eq!(code, 1);
    assert!(err.contains("--top-k must be at least 1, got 0"), "{err}");
    let (code, _, err) = c.json(&["query", "   "]);
    assert_eq!(code, 1);
    assert!(err.contains("query must not be empty"), "{err}");
    let (code, _, err) = c.json(&["ingest", "/etc/hostname"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("outside") && err.contains("BASE_DIRS"),
        "{err}"
    );
    let (code, _, err) = c.json(&["ingest", "../escape.md"]);
    assert_eq!(code, 1);
    assert!(err.contains("outside"), "{err}");
    let (code, _, err) = c.json(&["read", "--source", "nothing-here"]);
    assert_eq!(code, 1);
    assert!(err.contains("not found"), "{err}");
}

#[test]
fn sync_skips_symlinks_that_leave_the_roots() {
    let c = corpus();
    let outside = c.dir.path().join("secret.md");
    std::fs::write(&outside, "# Secret\n\nTOP-SECRET-TOKEN").unwrap();
    std::os::unix::fs::symlink(&outside, c.root.join("notes.md")).unwrap();
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let (_, q, _) = c.json(&["query", "TOP-SECRET-TOKEN"]);
    assert!(q["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| !r["text"].as_str().unwrap().contains("TOP-SECRET")));
}

#[test]
fn a_held_sync_lock_refuses_a_second_sync() {
    let c = corpus();
    let lock = c.hold_sync_lock();
    let out = c.cli(&["sync", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        c.lock_holder_words()
            .iter()
            .all(|w| err.contains(w.as_str())),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    drop(lock);
    let (code, v, _) = c.json(&["sync"]);
    assert_eq!(code, 0);
    assert_eq!(v["counts"]["ingested"], 3);
}

#[test]
fn a_sync_killed_mid_way_is_completed_by_the_next_sync() {
    let c = Corpus::generated(12, |i| {
        (
            format!("notes/n{i:02}.md"),
            format!("# Note {i}\n\nNote number {i} talks about topic {i} and its details."),
        )
    });
    let (mut child, mut lines) = c.spawn_sync();
    let mut acked = 0;
    while acked < 3 {
        let line = lines.next().expect("sync is running").unwrap();
        if line.starts_with("ingested ") {
            acked += 1;
        }
    }
    child.kill().unwrap(); // SIGKILL mid-sync
    child.wait().unwrap();

    let (code, v, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "the lock died with the killed process: {err}");
    // Two-phase sync: an acknowledged file is either embedded already
    // (skipped now) or stored keyword-only (embedded now, not converted).
    let kept =
        v["counts"]["skipped"].as_u64().unwrap() + v["counts"]["reembedded"].as_u64().unwrap();
    assert!(kept >= 3, "acknowledged files were kept: {v}");
    assert_eq!(kept + v["counts"]["ingested"].as_u64().unwrap(), 12, "{v}");
    let (_, l, _) = c.json(&["list"]);
    let rows = l["files"].as_array().unwrap();
    assert_eq!(rows.len(), 12);
    assert!(rows.iter().all(|r| r["state"] == "ingested"), "{l}");
    let (_, s, _) = c.json(&["status"]);
    assert_eq!(s["sourceCount"], 12, "every file once");
    let chunks: u64 = rows.iter().map(|r| r["chunkCount"].as_u64().unwrap()).sum();
    assert_eq!(s["chunkCount"].as_u64().unwrap(), chunks);
}

#[test]
fn an_emptied_root_holds_its_files_as_unlisted() {
    let c = corpus();
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    // The volume "unmounts": the root is still there but empty.
    for entry in std::fs::read_dir(&c.root).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            std::fs::remove_dir_all(p).unwrap()
        } else {
            std::fs::remove_file(p).unwrap()
        }
    }
    let (code, v, _) = c.json(&["sync"]);
    assert_eq!(code, 1, "a held root counts as failed: {v}");
    assert_eq!(
        v["counts"]["deleted"], 0,
        "nothing deleted under an empty root"
    );
    let (_, l, err) = c.json(&["list"]);
    let files = l["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    assert!(files.iter().all(|f| f["state"] == "unlisted"), "{l}");
    let folders = l["unlistedFolders"].as_array().unwrap();
    assert_eq!(folders.len(), 1);
    assert_eq!(folders[0]["indexedCount"], 3);
    assert!(folders[0]["message"]
        .as_str()
        .unwrap()
        .contains("unmounted"));
    assert!(err.contains("warn: "), "{err}");
    // Nothing hidden: no unlisted folders.
    let fresh = corpus();
    let (_, l, _) = fresh.json(&["list"]);
    assert_eq!(l["unlistedFolders"], serde_json::json!([]));
}

/// A one-page PDF with no text layer, as a scanner writes it (ASCII, so it
/// fits the text-file corpus helper).
fn scanned_pdf() -> String {
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        "<< /Length 0 >>\nstream\n\nendstream",
    ];
    let mut pdf = String::from("%PDF-1.4\n");
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.push_str(&format!("{} 0 obj\n{body}\nendobj\n", i + 1));
    }
    let xref = pdf.len();
    pdf.push_str(&format!(
        "xref\n0 {}\n0000000000 65535 f \n",
        objects.len() + 1
    ));
    for o in offsets {
        pdf.push_str(&format!("{o:010} 00000 n \n"));
    }
    pdf.push_str(&format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    ));
    pdf
}

#[test]
fn a_scanned_pdf_is_unreadable_not_failed() {
    let pdf = scanned_pdf();
    let c = Corpus::new(&[("guide.md", GUIDE), ("scan.pdf", &pdf)]);
    // Without an OCR engine (the ocr module covers the one with it).
    let out = c.cli_env(
        &["sync", "--json"],
        &[("MINIRAG_TESSERACT", "/nonexistent/tesseract")],
    );
    let (code, err) = (out.status.code(), String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(code, Some(0), "{err}\n{v}");
    assert_eq!(v["counts"]["ingested"], 1, "{v}");
    assert_eq!(v["counts"]["unreadable"], 1, "{v}");
    assert_eq!(v["counts"]["failed"], 0, "{v}");
    let errors = v["errors"].to_string();
    assert!(
        errors.contains("scan.pdf")
            && errors.contains("scanned PDF")
            && errors.contains("tesseract-ocr"),
        "{v}"
    );
}

#[test]
fn a_sync_killed_while_embedding_back_fills_and_converts_nothing_again() {
    let body = "Paragraph about warehouses, deliveries and the notes kept for them. ".repeat(40);
    let c = Corpus::generated(40, |i| {
        (
            format!("notes/n{i:02}.md"),
            format!("# Note {i}\n\nTAG-{i:03}. {body}\n\n## More {i}\n\n{body}"),
        )
    });
    let (mut child, mut lines) = c.spawn_sync();
    // The first embedded file means phase 1 wrote every file.
    loop {
        let line = lines.next().expect("sync is running").unwrap();
        if line.starts_with("embedded ") {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL while embedding
    child.wait().unwrap();

    // Every file answers a keyword query already, embedded or not.
    for i in [0, 20, 39] {
        let tag = format!("TAG-{i:03}");
        // Found, if not always first: a chunk with vectors also scores on
        // the vector side, one without only on the keyword side.
        let (_, q, _) = c.json(&["query", &tag, "--top-k", "5"]);
        let want = c.path(&format!("notes/n{i:02}.md"));
        let found = q["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["source"] == want);
        assert!(found, "{tag} not found");
        let notice = q["notice"].as_str().unwrap_or("");
        assert!(notice.contains("not embedded yet"), "{notice}");
    }

    let (code, v, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let counts = &v["counts"];
    assert_eq!(
        counts["ingested"], 0,
        "nothing is converted again: {counts}"
    );
    assert!(counts["reembedded"].as_u64().unwrap() >= 1, "{counts}");
    assert_eq!(
        counts["reembedded"].as_u64().unwrap() + counts["skipped"].as_u64().unwrap(),
        40,
        "{counts}"
    );
    let (_, s, _) = c.json(&["status"]);
    assert_eq!(s["vectorlessChunkCount"], 0, "{s}");
}

#[test]
fn a_kill_inside_a_large_files_embedding_keeps_its_finished_batches() {
    // One file of 700 chunks of about 60 tokens: phase 2 embeds it in
    // batches of 256, each a few seconds of encoder work.
    let words = "crates pallets forklifts invoices shelves ".repeat(10);
    let body: String = (0..700)
        .map(|i| format!("## Entry {i}\n\nLedger line {i} about {words}\n\n"))
        .collect();
    let c = Corpus::new(&[("big.md", &body)]);
    let (mut child, mut lines) = c.spawn_sync();
    let mut seen = None;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.strip_prefix("embedding ") {
            seen = Some(rest.to_string());
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL inside the file, after its first batch
    child.wait().unwrap();
    let seen = seen.expect("progress inside the file");
    assert!(seen.contains("big.md: 256 / "), "{seen}");

    let (_, s, _) = c.json(&["status"]);
    let total = s["chunkCount"].as_u64().unwrap();
    let vectorless = s["vectorlessChunkCount"].as_u64().unwrap();
    assert!(total > 512, "{s}");
    assert!(
        vectorless <= total - 256 && vectorless > 0,
        "the finished batches are durable, the rest waits: {s}"
    );

    let (code, v, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["counts"]["ingested"], 0, "nothing converted again: {v}");
    assert_eq!(v["counts"]["reembedded"], 1, "{v}");
    let (_, s, _) = c.json(&["status"]);
    assert_eq!(s["vectorlessChunkCount"], 0, "{s}");
    let (_, q, _) = c.json(&["query", "ledger line 650 crates", "--top-k", "3"]);
    assert!(q["notice"].is_null(), "every chunk has its vector: {q}");
}

#[test]
fn a_kill_while_a_large_file_is_replaced_shows_its_old_version_or_the_new_one_whole() {
    let csv = |tag: &str, rows: usize| {
        let mut s = String::from("id,item,note\n");
        for i in 0..rows {
            s.push_str(&format!("{i},{tag}-{i},pallet note {i}\n"));
        }
        s
    };
    let c = Corpus::new(&[("a.md", "# A\n\nfirst"), ("big.csv", &csv("old", 50))]).without_model();
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    // A new version of about 6 MB, and a.md changed so it is written first.
    std::fs::write(c.path("big.csv"), csv("new", 200_000)).unwrap();
    std::fs::write(c.path("a.md"), "# A\n\nsecond").unwrap();
    let (mut child, mut lines) = c.spawn_sync();
    for line in lines.by_ref() {
        if line.unwrap().starts_with("ingested ") {
            break; // a.md is written; big.csv is being converted or written
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let read = |c: &Corpus| {
        let out = c.cli(&["read", &c.path("big.csv")]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = read(&c);
    let old_whole = text.contains("old-49") && !text.contains("new-");
    let new_whole =
        text.contains("new-199999") && text.contains("new-0 ") && !text.contains("old-");
    assert!(
        old_whole || new_whole,
        "neither the old version nor the new one whole: {} bytes, old-49 {}, new-0 {}, new-199999 {}",
        text.len(),
        text.contains("old-49"),
        text.contains("new-0 "),
        text.contains("new-199999")
    );
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let text = read(&c);
    assert!(
        text.contains("new-199999") && !text.contains("old-"),
        "the next sync completes it"
    );
}

/// Filters narrow a query by format, modification time and path pattern,
/// before the cut, on real files (a PDF Writer saved beside Markdown with
/// set modification times); a bad value is an error naming it and the
/// forms that work, and a filter that matches nothing says so.
#[test]
fn query_filters_narrow_by_format_date_and_path() {
    let c = Corpus::new(&[
        (
            "notes/old.md",
            "# Old notes\n\nThe update command was run by hand last year.",
        ),
        (
            "specs/new.md",
            "# New spec\n\nThe update command now runs every night.",
        ),
    ])
    .without_model();
    let pdf = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../adapters/convert/tests/fixtures/code-comments.pdf");
    std::fs::copy(pdf, c.root.join("manual.pdf")).unwrap();
    // 2025-06-01: before the cut-off date the queries use.
    let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_748_736_000);
    std::fs::File::options()
        .write(true)
        .open(c.root.join("notes/old.md"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let sources = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["query", "update command", "--top-k", "10"];
        args.extend_from_slice(extra);
        let (code, v, err) = c.json(&args);
        assert_eq!(code, 0, "{extra:?}: {err}");
        file_names(&v, "results")
    };
    assert_eq!(sources(&[]), ["manual.pdf", "new.md", "old.md"]);
    assert_eq!(sources(&["--format", "pdf"]), ["manual.pdf"]);
    assert_eq!(sources(&["--format", "markdown"]), ["new.md", "old.md"]);
    assert_eq!(
        sources(&["--since", "2026-01-01"]),
        ["manual.pdf", "new.md"]
    );
    assert_eq!(sources(&["--until", "2026-01-01T00:00:00Z"]), ["old.md"]);
    assert_eq!(sources(&["--path", "specs/**"]), ["new.md"]);
    assert_eq!(
        sources(&["--exclude-path", "*.pdf", "--exclude-path", "notes/**"]),
        ["new.md"]
    );
    let specs = c.path("specs");
    assert_eq!(
        sources(&["--format", "md", "--since", "2026-01-01", "--scope", &specs]),
        ["new.md"]
    );
    // `list` narrows the same way, indexed or not.
    std::fs::write(c.root.join("specs/later.md"), "# Later\n\nNot synced yet.").unwrap();
    let (code, listed, err) = c.json(&["list", "--path", "specs/*", "--since", "2026-01-01"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<(&str, &str)> = listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let name = f["source"].as_str().unwrap().rsplit('/').next().unwrap();
            (name, f["state"].as_str().unwrap())
        })
        .collect();
    assert_eq!(rows, [("later.md", "not_ingested"), ("new.md", "ingested")]);
    // Nothing matches: an empty answer that says why.
    let (code, v, _) = c.json(&["query", "update command", "--format", "epub"]);
    assert_eq!(code, 0);
    assert_eq!(v["results"], serde_json::json!([]));
    let notice = v["notice"].as_str().unwrap_or_default();
    assert!(
        notice.contains("matches the filter") && notice.contains("epub"),
        "{v}"
    );
    // Bad values are named, with the forms that work.
    refused(
        &c,
        &["query", "update command"],
        &[
            (&["--format", "doc"][..], &["\"doc\"", "docx"][..]),
            (&["--since", "yesterday"], &["\"yesterday\"", "2026-12-01"]),
            (
                &["--since", "2026-02-01", "--until", "2026-01-01"],
                &["modifiedAfter must be before"],
            ),
            (&["--path", "docs/[ab"], &["docs/[ab", "]"]),
        ],
    );
}

/// A corpus whose documents declare things about themselves: a DOCX and a
/// PDF that Writer saved with an author and keywords, a note with front
/// matter, and a Russian and an English note.
fn declaring_corpus() -> Corpus {
    let c = Corpus::new(&[
        (
            "notes/outage.md",
            "---\ntitle: Outage review\ntags: [incident, db]\nstatus: closed\n---\n# Timeline\n\nThe quarter's only outage: the database ran out of disk at night.",
        ),
        (
            "notes/ru.md",
            "# Отчёт за квартал\n\nВ этом квартале команда перенесла базу данных на новый сервер. \
             Резервные копии снимаются каждую ночь и хранятся тридцать дней.",
        ),
        (
            "notes/en.md",
            "# Quarter report\n\nThis quarter the team moved the database to a new server. \
             Backups are taken every night and kept for thirty days.",
        ),
    ])
    .without_model();
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../adapters/convert/tests/fixtures");
    for f in ["memo.docx", "memo.pdf"] {
        std::fs::copy(fixtures.join(f), c.root.join(f)).unwrap();
    }
    c
}

#[test]
fn language_and_declared_fields_narrow_a_search() {
    let c = declaring_corpus();
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let found = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["query", "quarter database budget квартале", "--top-k", "20"];
        args.extend_from_slice(extra);
        let (code, v, err) = c.json(&args);
        assert_eq!(code, 0, "{extra:?}: {err}");
        file_names(&v, "results")
    };
    assert_eq!(
        found(&[]),
        ["en.md", "memo.docx", "memo.pdf", "outage.md", "ru.md"]
    );
    assert_eq!(found(&["--lang", "ru"]), ["ru.md"]);
    assert_eq!(
        found(&["--lang", "EN", "--format", "md"]),
        ["en.md", "outage.md"]
    );
    assert_eq!(
        found(&["--meta", "author=finance team"]),
        ["memo.docx", "memo.pdf"]
    );
    assert_eq!(
        found(&["--meta", "author=Finance Team", "--format", "pdf"]),
        ["memo.pdf"]
    );
    assert_eq!(found(&["--meta", "tags=incident"]), ["outage.md"]);
    // The PDF's Info keywords, one by one.
    assert_eq!(found(&["--meta", "keywords=audit"]), ["memo.pdf"]);
    assert_eq!(
        found(&["--meta", "tags=incident", "--meta", "status=open"]),
        Vec::<String>::new()
    );

    // list shows what each document declares, and narrows the same way.
    let (code, listed, err) = c.json(&["list", "--meta", "tags=db"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(file_names(&listed, "files"), ["outage.md"]);
    let outage = &listed["files"][0];
    assert_eq!(outage["language"], "en", "{outage}");
    assert_eq!(
        outage["meta"]["tags"],
        serde_json::json!(["db", "incident"])
    );
    assert_eq!(outage["meta"]["status"], serde_json::json!(["closed"]));
    assert_eq!(
        outage["title"], "Outage review",
        "front matter names the title"
    );
    let out = c.cli(&["list", "--lang", "ru"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ru.md") && text.contains("[ru]"), "{text}");
    // read gives the fields back, and the text without the front matter.
    let (code, read, err) = c.json(&["read", &c.path("memo.docx")]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(read["meta"]["author"], serde_json::json!(["Finance Team"]));
    let (_, outage_text, _) = c.json(&["read", &c.path("notes/outage.md")]);
    let text = outage_text["text"].as_str().unwrap();
    assert!(
        !text.contains("status: closed") && text.contains("ran out of disk"),
        "{text}"
    );

    // Bad values are named, with the forms or fields that work.
    refused(
        &c,
        &["query", "quarter"],
        &[
            (
                &["--lang", "russian"][..],
                &["\"russian\"", "ISO 639-1"][..],
            ),
            (
                &["--meta", "team=finance"],
                &["\"team\"", "author", "keywords", "tags"],
            ),
            (&["--meta", "author"], &["field=value"]),
        ],
    );
}

/// The file names of an answer's `key` list (results or files), sorted and
/// once each.
fn file_names(v: &Value, key: &str) -> Vec<String> {
    let mut names: Vec<String> = v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["source"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Each of `cases` (extra arguments after `base`, words the error must
/// hold) fails, naming the bad value and the fix.
fn refused(c: &Corpus, base: &[&str], cases: &[(&[&str], &[&str])]) {
    for (args, words) in cases {
        let mut all = base.to_vec();
        all.extend_from_slice(args);
        let out = c.cli(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        for w in *words {
            assert!(err.contains(w), "{args:?}: {err}");
        }
    }
}
