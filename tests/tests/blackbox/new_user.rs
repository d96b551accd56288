//! What a new user trips on (issue 76): each item, driven through the
//! binary as a user would.

use minirag_blackbox::Corpus;

/// Item 4: a query under some of an index's roots returns no hit that
/// `read` would refuse, and says where the documents it would find are.
#[test]
fn a_query_keeps_to_its_own_roots_in_a_shared_index() {
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
}
