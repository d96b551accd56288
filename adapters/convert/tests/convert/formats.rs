//! Converters on small files built in the test, and on hostile ones.

use std::io::Write;

use minirag_convert::Converters;
use minirag_core::ports::{ConvertError, ConvertRequest, Converter};

fn zip(entries: &[(&str, &str)]) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    {
        let mut w = zip::ZipWriter::new(&mut buf);
        let opts = zip::write::SimpleFileOptions::default();
        for (name, body) in entries {
            w.start_file(*name, opts).unwrap();
            w.write_all(body.as_bytes()).unwrap();
        }
        w.finish().unwrap();
    }
    buf.into_inner()
}

fn convert(format: &str, bytes: &[u8]) -> Result<minirag_core::ports::Converted, ConvertError> {
    Converters.convert(ConvertRequest {
        name: "/d/file",
        format,
        bytes,
    })
}

const W: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;

fn para(style: Option<&str>, text: &str) -> String {
    let ppr = style.map_or(String::new(), |s| {
        format!(r#"<w:pPr><w:pStyle w:val="{s}"/></w:pPr>"#)
    });
    format!("<w:p>{ppr}<w:r><w:t>{text}</w:t></w:r></w:p>")
}

#[test]
fn docx_headings_tables_and_title() {
    let cell = |t: &str| format!("<w:tc>{}</w:tc>", para(None, t));
    let body = format!(
        "<w:document {W}><w:body>{}{}{}{}<w:tbl><w:tr>{}{}</w:tr><w:tr>{}{}</w:tr></w:tbl>{}</w:body></w:document>",
        para(Some("Title"), "Storage Policy"),
        para(Some("Heading1"), "1 Scope"),
        para(None, "Applies to R&amp;D warehouses."),
        para(Some("Heading2"), "1.1 Forms"),
        cell("form"),
        cell("due"),
        cell("F-1 | monthly"),
        cell("5th"),
        para(None, "End."),
    );
    let core = r#"<cp:coreProperties xmlns:cp="x" xmlns:dc="y"><dc:title>Policy on Storage</dc:title></cp:coreProperties>"#;
    let c = convert(
        "docx",
        &zip(&[("word/document.xml", &body), ("docProps/core.xml", core)]),
    )
    .unwrap();
    assert_eq!(c.metadata_title.as_deref(), Some("Policy on Storage"));
    assert_eq!(
        c.markdown,
        "# Storage Policy\n\n# 1 Scope\n\nApplies to R&D warehouses.\n\n## 1.1 Forms\n\n| form | due |\n| --- | --- |\n| F-1 \\| monthly | 5th |\n\nEnd."
    );
}

#[test]
fn csv_delimiters_are_sniffed() {
    let c = convert("csv", "name;qty\nbolts;10\nnuts;20\n".as_bytes()).unwrap();
    assert_eq!(
        c.markdown,
        "| name | qty |\n| --- | --- |\n| bolts | 10 |\n| nuts | 20 |"
    );
    let c = convert("csv", "a\tb\n1\t2\n".as_bytes()).unwrap();
    assert_eq!(c.markdown, "| a | b |\n| --- | --- |\n| 1 | 2 |");
}

#[test]
fn notebooks_keep_markdown_and_fence_code() {
    let nb = r##"{"cells":[{"cell_type":"markdown","source":["# Analysis\n","Load data."]},
        {"cell_type":"code","source":"import pandas as pd\ndf = pd.read_csv('x')","outputs":[]}],
        "metadata":{"language_info":{"name":"python"}}}"##;
    let c = convert("ipynb", nb.as_bytes()).unwrap();
    assert_eq!(
        c.markdown,
        "# Analysis\nLoad data.\n\n```python\nimport pandas as pd\ndf = pd.read_csv('x')\n```"
    );
}

#[test]
fn xlsx_sheets_become_headed_tables() {
    let ct = r#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#;
    let rels = r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#;
    let wb = r#"<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Stock" sheetId="1" r:id="rId1"/></sheets></workbook>"#;
    let wbrels = r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#;
    let sheet = r#"<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>
        <row r="1"><c r="A1" t="inlineStr"><is><t>item</t></is></c><c r="B1" t="inlineStr"><is><t>count</t></is></c></row>
        <row r="2"><c r="A2" t="inlineStr"><is><t>bolt</t></is></c><c r="B2"><v>12</v></c></row></sheetData></worksheet>"#;
    let bytes = zip(&[
        ("[Content_Types].xml", ct),
        ("_rels/.rels", rels),
        ("xl/workbook.xml", wb),
        ("xl/_rels/workbook.xml.rels", wbrels),
        ("xl/worksheets/sheet1.xml", sheet),
    ]);
    let c = convert("xlsx", &bytes).unwrap();
    assert_eq!(
        c.markdown,
        "## Stock\n\n| item | count |\n| --- | --- |\n| bolt | 12 |"
    );
}

#[test]
fn hostile_archives_are_refused_with_the_reason() {
    let e = convert(
        "docx",
        &zip(&[
            ("../../etc/passwd", "x"),
            ("word/document.xml", "<w:document/>"),
        ]),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("/d/file") && e.contains("unsafe entry name"),
        "{e}"
    );
    let e = convert("docx", b"not a zip at all")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a readable zip archive"), "{e}");
    let deep = format!(
        "<w:document {W}>{}{}</w:document>",
        "<a>".repeat(300),
        "</a>".repeat(300)
    );
    let e = convert("docx", &zip(&[("word/document.xml", &deep)]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("nested deeper"), "{e}");
    let e = convert("docx", &zip(&[("other.xml", "x")]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a Word document"), "{e}");
    let e = convert("ipynb", b"{\"nope\": 1}").unwrap_err().to_string();
    assert!(e.contains("not a notebook"), "{e}");
}

#[test]
fn truncated_files_never_panic() {
    let docx = zip(&[(
        "word/document.xml",
        &format!(
            "<w:document {W}><w:body>{}</w:body></w:document>",
            para(None, "hello")
        ),
    )]);
    for cut in 0..16 {
        let end = docx.len() * cut / 16;
        match convert("docx", &docx[..end]) {
            Ok(c) => assert!(c.markdown.len() <= 5, "cut at {end}"),
            Err(e) => assert!(
                !e.to_string().contains("crashed"),
                "cut at {end} panicked inside the converter"
            ),
        }
    }
}

#[test]
fn unsupported_formats_say_so() {
    assert!(matches!(
        convert("rtf", b"{rtf1}"),
        Err(ConvertError::Unsupported { .. })
    ));
}

/// A PDF with one page per entry (an empty entry is a page without text).
fn pdf(pages: &[&str]) -> Vec<u8> {
    use lopdf::content::{Content, Operation};
    use lopdf::{dictionary, Document, Object, Stream};
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(
        dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier" },
    );
    let resources_id = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font_id } });
    let mut kids: Vec<Object> = Vec::new();
    for text in pages {
        let mut ops = vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 12.into()]),
        ];
        for (i, line) in text.lines().enumerate() {
            ops.push(Operation::new(
                "Td",
                vec![0.into(), if i == 0 { 700.into() } else { (-14).into() }],
            ));
            ops.push(Operation::new("Tj", vec![Object::string_literal(line)]));
        }
        ops.push(Operation::new("ET", vec![]));
        let content_id = doc.add_object(Stream::new(
            dictionary! {},
            Content { operations: ops }.encode().unwrap(),
        ));
        let page_id = doc.add_object(
            dictionary! { "Type" => "Page", "Parent" => pages_id, "Contents" => content_id },
        );
        kids.push(page_id.into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

#[test]
fn pdf_text_pages_in_order_and_scans_need_ocr() {
    let c = convert(
        "pdf",
        &pdf(&["Storage policy first page", "", "Second page text"]),
    )
    .unwrap();
    let first = c.markdown.find("Storage policy").expect("page 1 text");
    let second = c.markdown.find("Second page").expect("page 3 text");
    assert!(first < second);
    assert!(
        c.markdown[first..second].contains("\n\n"),
        "pages are paragraphs: {:?}",
        c.markdown
    );
    let e = convert("pdf", &pdf(&["", ""])).unwrap_err();
    assert!(matches!(e, ConvertError::NeedsOcr { .. }));
    assert!(e.to_string().contains("scanned") && e.to_string().contains("OCR"));
    let e = convert("pdf", b"%PDF-1.7 garbage").unwrap_err().to_string();
    assert!(e.contains("not a readable PDF"), "{e}");
}

#[test]
fn pptx_slides_in_numeric_order_with_titles_tables_and_notes() {
    let slide = |title: &str, body: &str| {
        format!(
            r#"<p:sld xmlns:p="p" xmlns:a="a"><p:cSld><p:spTree>
            <p:sp><p:nvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>{title}</a:t></a:r></a:p></p:txBody></p:sp>
            <p:sp><p:txBody><a:p><a:r><a:t>{body}</a:t></a:r></a:p></p:txBody></p:sp>
            </p:spTree></p:cSld></p:sld>"#
        )
    };
    let table = r#"<p:sld xmlns:p="p" xmlns:a="a"><p:graphicFrame><a:tbl><a:tr><a:tc><a:txBody><a:p><a:r><a:t>k</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>v</a:t></a:r></a:p></a:txBody></a:tc></a:tr><a:tr><a:tc><a:txBody><a:p><a:r><a:t>a</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>1</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></p:graphicFrame></p:sld>"#;
    let notes = r#"<p:notes xmlns:p="p" xmlns:a="a"><p:sp><p:txBody><a:p><a:r><a:t>Say hello first.</a:t></a:r></a:p></p:txBody></p:sp></p:notes>"#;
    let (s2, s10) = (slide("Second", "Body two"), slide("Tenth", "Body ten"));
    let bytes = zip(&[
        ("ppt/slides/slide10.xml", s10.as_str()),
        ("ppt/slides/slide2.xml", s2.as_str()),
        ("ppt/slides/slide9.xml", table),
        ("ppt/notesSlides/notesSlide2.xml", notes),
    ]);
    let c = convert("pptx", &bytes).unwrap();
    assert_eq!(
        c.markdown,
        "<!-- Slide number: 2 -->\n\n# Second\n\nBody two\n\n### Notes:\nSay hello first.\n\n<!-- Slide number: 9 -->\n\n| k | v |\n| --- | --- |\n| a | 1 |\n\n<!-- Slide number: 10 -->\n\n# Tenth\n\nBody ten"
    );
}

#[test]
fn epub_chapters_in_spine_order_with_title() {
    let container = r#"<container><rootfiles><rootfile full-path="OEBPS/content.opf"/></rootfiles></container>"#;
    let opf = r#"<package xmlns:dc="dc"><metadata><dc:title>The Manual</dc:title></metadata>
        <manifest><item id="c2" href="text/ch2.xhtml"/><item id="c1" href="text/ch1.xhtml"/></manifest>
        <spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>"#;
    let ch1 = "<html><body><h1>Chapter One</h1><p>First words.</p></body></html>";
    let ch2 = "<html><body><h2 id=\"ch-two\">Chapter Two</h2><p>Second words.</p></body></html>";
    let bytes = zip(&[
        ("META-INF/container.xml", container),
        ("OEBPS/content.opf", opf),
        ("OEBPS/text/ch2.xhtml", ch2),
        ("OEBPS/text/ch1.xhtml", ch1),
    ]);
    let c = convert("epub", &bytes).unwrap();
    assert_eq!(c.metadata_title.as_deref(), Some("The Manual"));
    assert_eq!(
        c.markdown,
        "# Chapter One\n\nFirst words.\n\n## Chapter Two\n\nSecond words."
    );
    // The second chapter's heading keeps its id, at its line in the book.
    let anchors: Vec<(u32, minirag_core::location::Mark)> = c
        .places
        .into_iter()
        .filter(|p| matches!(p.mark, minirag_core::location::Mark::Anchor(_)))
        .map(|p| (p.line, p.mark))
        .collect();
    assert_eq!(
        anchors,
        [(4, minirag_core::location::Mark::Anchor("ch-two".into()))]
    );
}

/// The parser's own error stays under a malformed file's, down through the
/// engine's: `source()` walks from `EngineError` to the zip reader's error.
#[test]
fn a_malformed_files_cause_is_kept_to_the_parser() {
    use minirag_core::error::EngineError;
    use minirag_core::ports::{ConvertRequest, Converter};
    let err = minirag_convert::Converters
        .convert(ConvertRequest {
            name: "broken.docx",
            format: "docx",
            bytes: b"PK\x03\x04 this is not a zip archive",
        })
        .unwrap_err();
    let engine = EngineError::Convert(err);
    let found = minirag_core::cause::in_chain::<zip::result::ZipError>(&engine).is_some();
    assert!(found, "the walk from {engine} reaches zip's error");
}
