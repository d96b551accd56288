//! Deeply nested documents built from fuzz input, for the `nested_*`
//! targets: the bytes choose how deep (up to 200,000 levels), which
//! elements nest, where text sits and whether closing tags are left out,
//! and the nesting goes into a real fixture's own part (a DOCX body, a
//! PPTX group of shapes, an XLSX cell, an EPUB chapter), so every
//! converter's walk meets depth it did not choose.

use std::io::{Cursor, Read, Write};

/// How deep and with what: read from the front of the input.
struct Plan<'a> {
    depth: usize,
    closes: bool,
    rest: &'a [u8],
}

fn plan(bytes: &[u8]) -> Plan<'_> {
    let head = |i: usize| *bytes.get(i).unwrap_or(&0) as usize;
    let depth = (head(0) | head(1) << 8 | head(2) << 16) % 200_000;
    Plan {
        depth,
        closes: head(3) % 4 != 0,
        rest: bytes.get(4..).unwrap_or_default(),
    }
}

/// `depth` elements drawn from `tags` by the input, text at the levels the
/// input marks, closed in order unless the plan leaves them open.
fn nest(bytes: &[u8], tags: &[(&str, &str)], text: (&str, &str)) -> String {
    let p = plan(bytes);
    let mut out = String::with_capacity(p.depth * 16);
    let mut open = Vec::with_capacity(p.depth);
    for i in 0..p.depth {
        let b = *p.rest.get(i % p.rest.len().max(1)).unwrap_or(&0) as usize;
        let (start, end) = tags[b % tags.len()];
        out.push_str(start);
        if b & 0x80 != 0 {
            out.push_str(text.0);
            out.push_str("level ");
            out.push_str(&i.to_string());
            out.push_str(text.1);
        }
        open.push(end);
    }
    out.push_str(text.0);
    out.push_str("the deepest text");
    out.push_str(text.1);
    if p.closes {
        for end in open.iter().rev() {
            out.push_str(end);
        }
    }
    out
}

pub fn html(bytes: &[u8]) -> Vec<u8> {
    let tags = [
        ("<div>", "</div>"),
        ("<blockquote>", "</blockquote>"),
        ("<ul><li>", "</li></ul>"),
        ("<table><tr><td>", "</td></tr></table>"),
        ("<span>", "</span>"),
        ("<b><i>", "</i></b>"),
    ];
    format!(
        "<html><head><title>Nested</title></head><body>{}</body></html>",
        nest(bytes, &tags, ("<p>", "</p>"))
    )
    .into_bytes()
}

pub fn ipynb(bytes: &[u8]) -> Vec<u8> {
    let tags = [("{\"a\":", "}"), ("[", "]"), ("{\"b\":[", "]}")];
    let deep = nest(bytes, &tags, ("\"", "\""));
    format!(
        "{{\"cells\":[{{\"cell_type\":\"markdown\",\"metadata\":{{}},\"source\":[\"# Nested\\n\"]}},\
         {{\"cell_type\":\"code\",\"metadata\":{{\"deep\":{deep}}},\"outputs\":[{{\"output_type\":\"execute_result\",\"data\":{{\"application/json\":{deep}}}}}],\"source\":[\"print(1)\"]}}],\
         \"metadata\":{{}},\"nbformat\":4,\"nbformat_minor\":5}}"
    )
    .into_bytes()
}

/// `fixture` with its part `part` replaced by `body(nesting)`.
fn in_zip(fixture: &[u8], part: &str, body: String) -> Vec<u8> {
    let mut archive = zip::ZipArchive::new(Cursor::new(fixture)).expect("a fixture zip");
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).expect("an entry");
        let name = entry.name().expect("an entry name").to_string();
        out.start_file(name.as_str(), options).expect("start");
        if name == part {
            out.write_all(body.as_bytes()).expect("write");
        } else {
            let mut data = Vec::new();
            entry.read_to_end(&mut data).expect("read");
            out.write_all(&data).expect("write");
        }
    }
    out.finish().expect("finish").into_inner()
}

const DOCX: &[u8] = include_bytes!("../../../adapters/convert/tests/fixtures/lists.docx");
const PPTX: &[u8] = include_bytes!("../../../adapters/convert/tests/fixtures/deck.pptx");
const XLSX: &[u8] = include_bytes!("../../../adapters/convert/tests/fixtures/workbook.xlsx");
const EPUB: &[u8] = include_bytes!("../../../adapters/convert/tests/fixtures/policy-ru.epub");

const W: &str = "xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"";

pub fn docx(bytes: &[u8]) -> Vec<u8> {
    let tags = [
        ("<w:tbl><w:tr><w:tc>", "</w:tc></w:tr></w:tbl>"),
        ("<w:sdt><w:sdtContent>", "</w:sdtContent></w:sdt>"),
        ("<w:customXml>", "</w:customXml>"),
        ("<w:smartTag>", "</w:smartTag>"),
    ];
    let body = nest(bytes, &tags, ("<w:p><w:r><w:t>", "</w:t></w:r></w:p>"));
    let xml = format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><w:document {W}><w:body>{body}</w:body></w:document>");
    in_zip(DOCX, "word/document.xml", xml)
}

pub fn pptx(bytes: &[u8]) -> Vec<u8> {
    let tags = [
        ("<p:grpSp><p:nvGrpSpPr/><p:grpSpPr/>", "</p:grpSp>"),
        ("<p:sp><p:txBody><a:p><a:r>", "</a:r></a:p></p:txBody></p:sp>"),
    ];
    let tree = nest(bytes, &tags, ("<a:t>", "</a:t>"));
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><p:sld xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" \
         xmlns:p=\"http://schemas.openxmlformats.org/presentationml/2006/main\"><p:cSld><p:spTree>{tree}</p:spTree></p:cSld></p:sld>"
    );
    in_zip(PPTX, "ppt/slides/slide1.xml", xml)
}

pub fn xlsx(bytes: &[u8]) -> Vec<u8> {
    let tags = [("<is>", "</is>"), ("<r>", "</r>"), ("<x:ext>", "</x:ext>")];
    let cell = nest(bytes, &tags, ("<t>", "</t>"));
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\">\
         <sheetData><row r=\"1\"><c r=\"A1\" t=\"inlineStr\">{cell}</c></row></sheetData></worksheet>"
    );
    in_zip(XLSX, "xl/worksheets/sheet1.xml", xml)
}

pub fn epub(bytes: &[u8]) -> Vec<u8> {
    let chapter = String::from_utf8(html(bytes)).unwrap_or_default();
    in_zip(EPUB, "OEBPS/sections/section0001.xhtml", chapter)
}
