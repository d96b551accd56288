//! What a new user trips on (issue 76): each item, driven through the
//! binary as a user would.

use minirag_blackbox::Corpus;

/// Item 4: a query under some of an index's roots returns no hit that
/// `read` would refuse, and says where the documents it would find are.
#[test]
fn a_query_keeps_to_the_roots_it_is_given() {
    let c = Corpus::new(&[
        (
            "a/otter.md",
            "# Otters\n\nSea otters hold hands while sleeping.",
        ),
        (
            "b/heron.md",
            "# Herons\n\nThe grey heron waits still in the shallows.",
        ),
    ])
    .without_model();
    let a = c.path("a");
    let b = c.path("b");
    let (code, _, err) = c.json(&["sync", "--base-dir", &a, "--base-dir", &b]);
    assert_eq!(code, 0, "{err}");

    let (code, q, err) = c.json(&["query", "otters sleeping heron", "--base-dir", &b]);
    assert_eq!(code, 0, "{err}");
    let sources: Vec<&str> = q["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, [c.path("b/heron.md")], "{q}");

    let (code, q, err) = c.json(&["query", "otters sleeping", "--base-dir", &b]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(q["results"].as_array().unwrap().len(), 0, "{q}");
    let notice = q["notice"].as_str().unwrap_or_default();
    assert!(
        notice.contains("outside the configured roots") && notice.contains(&b),
        "{q}"
    );
}

/// A fixture saved by LibreOffice (`adapters/convert/tests/fixtures`).
fn fixture(name: &str) -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read(dir.join("../adapters/convert/tests/fixtures").join(name)).unwrap()
}

/// Item 5: rows of a workbook are rows of one sheet: a hit's part names
/// its sheet, and rows asked for with no sheet where two sheets have them
/// is an error naming both.
#[test]
fn a_workbook_part_is_rows_of_one_sheet() {
    let c = Corpus::new(&[]).without_model();
    std::fs::write(c.root.join("book.xlsx"), fixture("workbook.xlsx")).unwrap();
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let book = c.path("book.xlsx");

    let (code, q, err) = c.json(&["query", "BOLT-M8", "--top-k", "1"]);
    assert_eq!(code, 0, "{err}");
    let link = q["results"][0]["link"].as_str().unwrap();
    assert!(link.ends_with("&sheet=Stock"), "{q}");
    let part = link.split_once('#').unwrap().1;

    let (code, read, err) = c.json(&["read", &book, "--part", part]);
    assert_eq!(code, 0, "{part}: {err}");
    let text = read["text"].as_str().unwrap();
    assert!(
        text.contains("BOLT-M8") && !text.contains("Казань"),
        "{read}"
    );

    let out = c.cli(&["read", &book, "--part", "rows=2-3"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("Stock, Поставщики") && err.contains("rows=2-3&sheet=Stock"),
        "{err}"
    );
    let (code, read, err) = c.json(&["read", &book, "--part", "rows=2&sheet=Поставщики"]);
    assert_eq!(code, 0, "{err}");
    let text = read["text"].as_str().unwrap();
    assert!(
        text.contains("Казань") && !text.contains("BOLT-M8"),
        "{read}"
    );
}

/// Item 6: the title a PDF or a workbook declares names it, as a DOCX's
/// does.
#[test]
fn declared_titles_of_pdfs_and_workbooks_are_used() {
    let c = Corpus::new(&[]).without_model();
    std::fs::write(c.root.join("memo.pdf"), fixture("memo.pdf")).unwrap();
    std::fs::write(c.root.join("book.xlsx"), fixture("workbook.xlsx")).unwrap();
    std::fs::write(c.root.join("faq.pdf"), fixture("debian-faq-ru.pdf")).unwrap();
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let (code, list, err) = c.json(&["list"]);
    assert_eq!(code, 0, "{err}");
    let title = |name: &str| {
        list["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["source"].as_str().unwrap().ends_with(name))
            .map(|f| f["title"].as_str().unwrap().to_string())
    };
    assert_eq!(
        title("memo.pdf").as_deref(),
        Some("Quarterly budget memo"),
        "{list}"
    );
    assert_eq!(
        title("book.xlsx").as_deref(),
        Some("Inventory 2026"),
        "{list}"
    );
    assert_eq!(
        title("faq.pdf").as_deref(),
        Some("Часто задаваемые вопросы о Debian GNU/Linux"),
        "{list}"
    );
}

/// The top hit for `query`: its location and its text.
fn top_hit(c: &Corpus, query: &str) -> (serde_json::Value, String) {
    let (code, q, err) = c.json(&["query", query, "--top-k", "1"]);
    assert_eq!(code, 0, "{err}");
    let hit = &q["results"][0];
    (
        hit["location"].clone(),
        hit["text"].as_str().unwrap_or_default().to_string(),
    )
}

/// Whether a hit's location (`page`, or `pages` as `[first, last]`) holds
/// `page`, spanning at most one page break (a chunk may run on).
fn on_page(location: &serde_json::Value, page: u64) -> bool {
    let (first, last) = match location["page"].as_u64() {
        Some(p) => (p, p),
        None => {
            let pages = &location["pages"];
            (
                pages[0].as_u64().unwrap_or(0),
                pages[1].as_u64().unwrap_or(0),
            )
        }
    };
    first <= page && page <= last && last - first <= 1
}

/// Item 1: a line that repeats in one place on every page is body text
/// unless it sits at the page's edge, apart from the body; every fact
/// keeps its words and its page. A true running header and footer are
/// still dropped.
#[test]
fn repeated_body_lines_keep_their_text_and_pages() {
    let c = Corpus::new(&[]).without_model();
    std::fs::write(c.root.join("repeated.pdf"), fixture("repeated-body.pdf")).unwrap();
    std::fs::write(c.root.join("report.pdf"), fixture("report.pdf")).unwrap();
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");

    let facts = [
        (
            "VX-5521 torqued",
            "Valve VX-5521 must be torqued to 45 Nm before the pressure test.",
        ),
        (
            "P-7730 primed glycol",
            "Pump P-7730 is primed with glycol, never with water.",
        ),
        (
            "G-1184 kilopascals",
            "Gauge G-1184 reads in kilopascals and is checked every Monday.",
        ),
        (
            "H-2209 locked crane",
            "Hatch H-2209 stays locked while the crane is moving.",
        ),
    ];
    let filler_end = "as a template's boilerplate does in real documents saved by an office suite.";
    for (page, (query, fact)) in (1..).zip(facts) {
        let (pages, text) = top_hit(&c, query);
        assert!(on_page(&pages, page), "{query}: {pages} {text}");
        assert!(text.contains(fact), "{query}: {text}");
        let (code, read, err) = c.json(&[
            "read",
            &c.path("repeated.pdf"),
            "--part",
            &format!("page={page}"),
        ]);
        assert_eq!(code, 0, "{err}");
        let part = read["text"].as_str().unwrap();
        assert!(
            part.contains(fact) && part.contains(filler_end),
            "page {page}: {part}"
        );
    }

    for (page, unit) in [(2, "unit 21"), (3, "unit 42"), (4, "unit 63")] {
        let (pages, text) = top_hit(&c, &format!("crew inspected {unit} this quarter"));
        assert!(on_page(&pages, page), "{unit}: {pages} {text}");
        assert!(text.contains(unit), "{unit}: {text}");
    }
    let (code, read, err) = c.json(&["read", &c.path("report.pdf")]);
    assert_eq!(code, 0, "{err}");
    let whole = read["text"].as_str().unwrap();
    assert!(
        !whole.contains("Harbour Authority —"),
        "the running header stays: {whole}"
    );
}

/// Item 8: ordinary files raise no "badly encoded" notice: ASCII art,
/// addresses in code, an icon font's glyph in Sphinx headings.
#[test]
fn ordinary_files_are_not_called_badly_encoded() {
    let c = Corpus::new(&[
        (
            "graph.txt",
            "History of the branch:\n\n  o--o--O--o--o--o <-- origin\n\nStones: G-W-W-W-B\n",
        ),
        (
            "dns.md",
            "# Resolvers\n\n```\nnameserver '4.4.4.4'\nnameserver 8.8.8.8\n```\n",
        ),
        (
            "qemu-img.html",
            "<html><body><h1>qemu-img<a class=\"headerlink\" href=\"#qemu-img\">\u{f0c1}</a></h1>\
             <h2>Options<a class=\"headerlink\" href=\"#options\">\u{f0c1}</a></h2>\
             <p>Convert the disk image to another format.</p></body></html>",
        ),
    ])
    .without_model();
    let (code, sync, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(sync["counts"]["unreadable"], 0, "{sync}");
    assert!(!sync.to_string().contains("badly encoded"), "{sync}");
}

/// Item 13: the smaller things. Counts agree with their nouns; a CLI error
/// gives CLI advice; a failed file is one line, and `list` says why; an
/// absolute path pattern is read below its root, or refused; a part the
/// document lacks names the parts it has.
#[test]
fn the_smaller_things_a_new_user_reads() {
    let c =
        Corpus::new(&[("one.md", "# One\n\nA single short note about otters.")]).without_model();
    std::fs::write(c.root.join("broken.docx"), fixture("truncated.docx")).unwrap();
    std::fs::write(c.root.join("repeated.pdf"), fixture("repeated-body.pdf")).unwrap();

    let sync = c.cli(&["sync"]);
    let err = String::from_utf8_lossy(&sync.stderr);
    let broken = c.path("broken.docx");
    assert_eq!(
        err.lines().filter(|l| l.contains(&broken)).count(),
        1,
        "one line per failure: {err}"
    );

    let out = c.cli(&["ingest", &c.path("one.md")]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("ingested 1 file:") && said.contains("(1 chunk)"),
        "{said}"
    );

    let (_, list, _) = c.json(&["list"]);
    let row = list["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["source"] == broken)
        .cloned()
        .unwrap();
    assert_eq!(row["state"], "not_ingested", "{row}");
    assert!(
        row["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{row}"
    );
    let human = String::from_utf8_lossy(&c.cli(&["list"]).stdout).into_owned();
    let line = human
        .lines()
        .find(|l| l.contains(&broken))
        .unwrap_or_default();
    assert!(line.contains(row["error"].as_str().unwrap()), "{line}");

    let out = c.cli(&["read", &c.path("missing.md")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("minirag-mcp ingest"), "CLI advice: {err}");

    let under = format!("{}/*.md", c.root.display());
    let (code, q, err) = c.json(&["query", "otters", "--path", &under]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(q["results"][0]["source"], c.path("one.md"), "{q}");
    let out = c.cli(&["query", "otters", "--path", "/elsewhere/*.md"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("/elsewhere/*.md") && err.contains("outside every root"),
        "{err}"
    );

    let out = c.cli(&["read", &c.path("repeated.pdf"), "--part", "lines=1-2"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pp. 1–4") && err.contains("page=1"), "{err}");
}

/// Item 13: a hit scores the same whatever the number of results asked
/// for: every query fetches at least 120 candidates, and the vector side is
/// scaled over those. `topK` 60 fetches 240, so the corpus holds more.
#[test]
fn a_hits_score_does_not_depend_on_top_k() {
    // 250 notes of different words, so no two score alike.
    const WORDS: [&str; 37] = [
        "tide", "harbour", "crane", "rope", "gull", "storm", "pilot", "cargo", "anchor", "buoy",
        "quay", "ferry", "net", "lamp", "mast", "keel", "sail", "deck", "hull", "oar", "wave",
        "reef", "dock", "pier", "fog", "bell", "chart", "compass", "tug", "barge", "crate",
        "winch", "hatch", "cabin", "galley", "bosun", "lantern",
    ];
    let c = Corpus::generated(250, |i| {
        let words: Vec<&str> = (0..10 + i % 9)
            .map(|j| WORDS[(i * 5 + j * j * 3 + i / 7) % 37])
            .collect();
        (
            format!("n{i:03}.md"),
            format!("# Note {i}\n\n{}.", words.join(" ")),
        )
    });
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    // The first five hits: their sources and scores.
    let first_five = |k: &str| {
        let (code, q, err) = c.json(&["query", "storm over the harbour", "--top-k", k]);
        assert_eq!(code, 0, "{err}");
        let hits = q["results"].as_array().unwrap()[..5].to_vec();
        hits.iter()
            .map(|h| (h["source"].clone(), h["score"].as_f64().unwrap()))
            .collect::<Vec<_>>()
    };
    assert_eq!(first_five("5"), first_five("60"));
}

/// Item 7, and item 1's book: a PDF's outline names its headings whatever
/// their punctuation (`Nonregular files` for `2.13. Non-regular files`);
/// page numbers of any length and a chapter's running head are dropped,
/// not read into sentences. Both PDFs as Debian ships them
/// (shared-mime-info 2.2-1, bzip2-doc 1.0.8-5).
#[test]
fn pdf_headings_and_running_heads_of_real_manuals() {
    let c = Corpus::new(&[]).without_model();
    std::fs::write(
        c.root.join("spec.pdf"),
        fixture("shared-mime-info-spec.pdf"),
    )
    .unwrap();
    std::fs::write(c.root.join("bzip2.pdf"), fixture("bzip2-manual.pdf")).unwrap();
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let text = |name: &str| {
        let (code, read, err) = c.json(&["read", &c.path(name)]);
        assert_eq!(code, 0, "{err}");
        read["text"].as_str().unwrap().to_string()
    };
    let spec = text("spec.pdf");
    let headings: Vec<&str> = spec.lines().filter(|l| l.starts_with('#')).collect();
    let mut wanted = vec!["# 2. Unified system".to_string()];
    wanted.extend((1..=17).map(|n| format!("## 2.{n}. ")));
    for w in &wanted {
        assert!(
            headings.iter().any(|h| h.starts_with(w.as_str())),
            "{w}: {headings:#?}"
        );
    }
    assert!(
        spec.contains("Unix filesystem:\n"),
        "a page number in a sentence"
    );

    let manual = text("bzip2.pdf");
    assert!(
        manual.contains("constant overhead in the region of 50 bytes."),
        "a running head in a sentence"
    );
    assert!(!manual.contains(['\u{FB00}', '\u{FB01}', '\u{FB02}', '\u{FB03}', '\u{FB04}']));
}
