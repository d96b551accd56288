//! What documents saved by real software declare about themselves: the
//! fields the `meta` filter matches.

use minirag_convert::Converters;
use minirag_core::ports::{ConvertRequest, Converter};

fn fields(file: &str) -> Vec<(String, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(file);
    let bytes = std::fs::read(&path).unwrap();
    let format = file.rsplit('.').next().unwrap();
    let c = Converters
        .convert(ConvertRequest {
            name: file,
            format,
            bytes: &bytes,
        })
        .unwrap();
    minirag_core::meta::normalized(c.meta.into_pairs())
}

fn has(fields: &[(String, String)], field: &str, value: &str) -> bool {
    fields.iter().any(|(f, v)| f == field && v == value)
}

/// Writer saved a page whose `<meta>` names an author and keywords: the
/// DOCX keeps them in core.xml, the PDF in its Info dictionary.
#[test]
fn writer_documents_declare_their_author_and_keywords() {
    let docx = fields("memo.docx");
    assert!(has(&docx, "author", "Finance Team"), "{docx:?}");
    assert!(has(&docx, "title", "Quarterly budget memo"), "{docx:?}");
    let pdf = fields("memo.pdf");
    assert!(has(&pdf, "author", "Finance Team"), "{pdf:?}");
    assert!(pdf.iter().any(|(f, _)| f == "keywords"), "{pdf:?}");
}

#[test]
fn a_deck_and_a_workbook_declare_their_titles() {
    assert!(has(&fields("deck.pptx"), "title", "Quarterly Review Deck"));
    assert!(has(&fields("workbook.xlsx"), "title", "Inventory 2026"));
}

#[test]
fn a_page_declares_its_meta_fields() {
    let html = fields("../fixtures/src/memo.html");
    assert!(has(&html, "author", "Finance Team"), "{html:?}");
    assert!(has(&html, "keywords", "budget"), "{html:?}");
    assert!(has(&html, "keywords", "audit"), "{html:?}");
}
