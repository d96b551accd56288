//! Title derivation tables.

use super::*;

#[test]
fn stems_lose_one_known_extension() {
    assert_eq!(stem("/x/report.pdf"), "report");
    assert_eq!(stem("И-112.DOCX.md"), "И-112");
    assert_eq!(stem("v1.2 plan"), "v1");
    assert_eq!(strip_known_extension("v1.2 plan"), "v1.2 plan");
    assert_eq!(stem("report.txt.txt"), "report");
    assert_eq!(stem("scan.png.png"), "scan");
}

#[test]
fn display_stems() {
    assert_eq!(
        display_stem("И-112_ЗПС__Хранение   ТМЗ"),
        "И-112 ЗПС Хранение ТМЗ"
    );
}

#[test]
fn informative_stems() {
    for s in [
        "abc",
        "12345",
        "2026-08-07",
        "Untitled",
        "DOCUMENT",
        "",
        "Untitled-1",
        "New Document",
        "Copy of Report",
        "scan_001",
        "IMG_20260807_123456",
        "Копия документа (2)",
        "Document1",
        "DSC00042",
    ] {
        assert!(!is_informative_stem(s), "{s:?} is not informative");
    }
    for s in [
        "notes",
        "Document Management Policy",
        "Scanner maintenance log",
        "И-112_ЗПС_Хранение ТМЗ",
    ] {
        assert!(is_informative_stem(s), "{s:?} is informative");
    }
}

#[test]
fn boilerplate_headings() {
    for h in [
        "Общие положения",
        "1.2.3 Общие положения",
        "**Лист изменений**",
        "  2) TABLE OF CONTENTS  ",
        "III. Revision history",
        "IV. Introduction",
        "**1. Общие положения**",
    ] {
        assert!(is_boilerplate_heading(h), "{h:?} is boilerplate");
    }
    for h in [
        "Общие положения о премировании работников",
        "Introduction to LanceDB indexing",
    ] {
        assert!(!is_boilerplate_heading(h), "{h:?} is not boilerplate");
    }
}

#[test]
fn image_only_h1_is_unusable() {
    assert!(!is_usable_h1("![](data:image/x-emf;base64,AAAA)"));
    assert!(is_usable_h1("Real heading ![logo](a.png)"));
}

#[test]
fn title_order() {
    // Metadata wins.
    assert_eq!(
        file_title("/d/page.html", Some("  Meta Title "), "# H1"),
        "Meta Title"
    );
    // A usable H1 beats an informative stem.
    assert_eq!(
        file_title("/d/notes.md", None, "# Real Title\n\nx"),
        "Real Title"
    );
    for name in [
        "intro.md",
        "CHANGELOG.md",
        "0001-use-lancedb.md",
        "guide.txt",
    ] {
        assert_eq!(
            file_title(name, None, "# Heading Wins\n"),
            "Heading Wins",
            "{name}"
        );
    }
    // Boilerplate H1 yields to an informative stem.
    assert_eq!(
        file_title(
            "/d/Политика_премирования.docx",
            None,
            "# 1 Общие положения\n"
        ),
        "Политика премирования"
    );
    // Generic stem falls back to the H1, even a boilerplate one.
    assert_eq!(
        file_title("/d/doc.md", None, "# Общие положения\n"),
        "Общие положения"
    );
    assert_eq!(
        file_title("/d/Document1.docx", None, "# Budget 2026\n"),
        "Budget 2026"
    );
    // Machine-issued stems never beat a real H1.
    assert_eq!(
        file_title("/d/IMG_20260807_123456.pdf", None, "# Invoice\n"),
        "Invoice"
    );
    // No heading: the stem.
    assert_eq!(file_title("/d/readme.txt", None, "plain"), "readme");
    // Image-only H1 → informative stem.
    assert_eq!(
        file_title(
            "/d/D-493_Передача данных.docx",
            None,
            "# ![](data:image/x-emf;base64,AA)\n"
        ),
        "D-493 Передача данных"
    );
    // Leftover extension stripped, punctuation kept.
    assert_eq!(file_title("/d/report.txt.txt", None, ""), "report");
    assert_eq!(
        file_title("/d/Q3-plan (final).md", None, ""),
        "Q3-plan (final)"
    );
}

#[test]
fn h1_inside_fences_is_ignored() {
    let md = "```\n# Not a title\n```\n~~~\n# Nor this\n~~~\n\n# Real One\n";
    assert_eq!(first_h1(md).as_deref(), Some("Real One"));
    assert_eq!(first_h1("## Second level only"), None);
}

#[test]
fn content_titles() {
    assert_eq!(
        content_title(Some("  Given "), Some("Meta"), "# H1").as_deref(),
        Some("Given")
    );
    assert_eq!(
        content_title(None, Some("Meta"), "# H1").as_deref(),
        Some("Meta")
    );
    assert_eq!(
        content_title(Some("  "), None, "# H1\n").as_deref(),
        Some("H1")
    );
    assert_eq!(content_title(None, None, "no heading"), None);
}

#[test]
fn images_are_titled_by_their_stem() {
    assert_eq!(
        image_title("/d/Договор_поставки_2026.png"),
        "Договор поставки 2026"
    );
    assert_eq!(
        image_title("IMG_20260807_123456.png"),
        "IMG 20260807 123456"
    );
    assert_eq!(image_title("scan.png.png"), "scan");
}

#[test]
fn a_declared_title_is_used_unless_the_saving_program_left_it() {
    for title in [
        "Harbour Safety Manual",
        "FAQ",
        "Inventory 2026",
        "Часто задаваемые вопросы о Debian GNU/Linux",
    ] {
        assert_eq!(file_title("/d/x.pdf", Some(title), "# Heading\n"), title);
    }
    for junk in [
        "Microsoft Word - plan.docx",
        "C:\\temp\\draft.doc",
        "/home/me/draft",
        "untitled.pdf",
        "Untitled",
        "Document1",
        "Book1",
        "Presentation1",
        "",
    ] {
        assert_eq!(
            file_title("/d/x.pdf", Some(junk), "# Heading\n"),
            "Heading",
            "{junk:?}"
        );
    }
}
