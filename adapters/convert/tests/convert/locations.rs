//! Every fact of a real file is found with its place: each fixture (saved
//! by the software named in `fixtures/make.sh`) converted, chunked as the
//! engine chunks it, and the chunk holding a known fact checked for its
//! page, slide, sheet and rows, cell, lines or anchor.

use std::path::Path;

use minirag_convert::Converters;
use minirag_core::chunk::{pack_sections, section_markdown, Chunk, ChunkOptions};
use minirag_core::location::Location;
use minirag_core::ports::{ConvertRequest, Converter};
use minirag_core::testing::WordPunctCounter;

fn chunks(name: &str) -> Vec<Chunk> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let bytes = std::fs::read(&path).unwrap();
    let format = name.rsplit('.').next().unwrap();
    let c = Converters
        .convert(ConvertRequest {
            name,
            format,
            bytes: &bytes,
        })
        .unwrap();
    let options = ChunkOptions {
        budget: 110,
        title: Some(name),
        counter: &WordPunctCounter,
    };
    let sectioned = section_markdown(&c.markdown, options).with_places(c.places);
    pack_sections(sectioned, options).chunks
}

/// The place of the first chunk whose text holds `fact`.
fn place_of(chunks: &[Chunk], fact: &str) -> Location {
    let c = chunks
        .iter()
        .find(|c| c.text.contains(fact))
        .unwrap_or_else(|| panic!("no chunk holds {fact:?}"));
    c.location()
        .unwrap_or_else(|| panic!("the chunk with {fact:?} has no place: {:?}", c.text))
}

fn pages(a: u32, b: u32) -> Option<(u32, u32)> {
    Some((a, b))
}

#[test]
fn pdf_text_layer_facts_carry_their_page() {
    // Pages as pdftotext reads them from the file Writer laid out.
    let c = chunks("report.pdf");
    for (fact, page) in [
        ("unit 0 ", 1),
        ("unit 14 ", 1),
        ("unit 20 ", 2),
        ("unit 40 ", 2),
        ("unit 41 ", 3),
        ("unit 61 ", 3),
        ("unit 62 ", 4),
        ("unit 74 ", 4),
    ] {
        // Short paragraphs share a unit, so a unit may run onto the next page.
        let (a, b) = place_of(&c, fact).pages.unwrap();
        assert!(a <= page && page <= b && b - a <= 1, "{fact}: {a}-{b}");
    }
    let c = chunks("newsletter.pdf");
    assert_eq!(place_of(&c, "Note 10:").pages.map(|p| p.0), Some(1));
    // Note 11 runs from the foot of page 1's right column onto page 2.
    assert_eq!(place_of(&c, "Note 11:").pages, pages(1, 2));
    for (fact, page) in [("Note 23:", 2), ("Note 31:", 3)] {
        let (a, b) = place_of(&c, fact).pages.unwrap();
        assert!(a <= page && page <= b && b - a <= 1, "{fact}: {a}-{b}");
    }
    assert_eq!(
        place_of(&c, "Note 11:").citation("newsletter.pdf"),
        "newsletter.pdf, pp. 1–2"
    );
}

#[test]
fn a_paragraph_across_a_page_break_and_a_forced_break() {
    // As pdftotext reads pages.pdf: sentences 0-29 on page 1, 30-59 on 2.
    let c = chunks("pages.pdf");
    assert_eq!(place_of(&c, "ALPHA-1").pages, pages(1, 1));
    assert_eq!(place_of(&c, "Sentence 5 ").pages, pages(1, 1));
    assert_eq!(place_of(&c, "Sentence 50 ").pages, pages(2, 2));
    let (a, b) = place_of(&c, "GAMMA-3").pages.unwrap();
    assert!(a <= 3 && b == 3, "GAMMA-3: {a}-{b}");
    let crossing = c
        .iter()
        .find(|c| c.text.contains("Sentence 29 ") && c.text.contains("Sentence 30 "))
        .map(|c| c.location().unwrap().pages);
    let (end_of_one, start_of_two) = (
        place_of(&c, "Sentence 29 ").pages.unwrap(),
        place_of(&c, "Sentence 30 ").pages.unwrap(),
    );
    match crossing {
        Some(p) => assert_eq!(
            p,
            pages(1, 2),
            "the chunk across the break names both pages"
        ),
        // Page 2 starts inside sentence 29 (after "Sentence 29 of the
        // crossing"), so the unit that ends with it runs onto page 2.
        None => assert_eq!((end_of_one, start_of_two.0), ((1, 2), 2)),
    }
}

#[test]
fn slides_sheets_rows_and_cells() {
    let c = chunks("deck.pptx");
    assert_eq!(place_of(&c, "item-02").slide, Some(2));
    assert_eq!(place_of(&c, "| North | 1200 |").slide, Some(3));
    assert_eq!(place_of(&c, "item-11").slide, Some(11));

    let c = chunks("workbook.xlsx");
    let stock = place_of(&c, "BOLT");
    assert_eq!(
        (stock.sheet.as_deref(), stock.rows),
        (Some("Stock"), Some((2, 3)))
    );
    assert_eq!(
        stock.citation("workbook.xlsx"),
        "workbook.xlsx, Stock, rows 2–3"
    );
    let suppliers = place_of(&c, "Поставщики");
    assert_eq!(suppliers.sheet.as_deref(), Some("Поставщики"));

    // Calc's CSV with line breaks inside cells: record numbers, header 1.
    let c = chunks("notes-comma.csv");
    assert_eq!(place_of(&c, "BOLT-M8").rows, Some((2, 4)));
    // The seeded title's own unit is placed at the header row it names.
    let title = c
        .iter()
        .find(|c| c.text.starts_with("# notes-comma.csv") && !c.text.contains("BOLT-M8"))
        .expect("a unit of the title alone");
    assert_eq!(
        title
            .location()
            .map(|l| (l.rows, l.citation("notes-comma.csv"))),
        Some((Some((1, 1)), "notes-comma.csv, row 1".into()))
    );

    let c = chunks("notebook.ipynb");
    let cells: Vec<Option<u32>> = c
        .iter()
        .map(|c| c.location().and_then(|l| l.cell))
        .collect();
    assert_eq!(cells, [Some(1), Some(2), Some(3)]);
}

#[test]
fn headings_give_anchors_and_transcripts_their_cue() {
    let c = chunks("policy-ru.docx");
    assert_eq!(
        place_of(&c, "SPEC-112").anchor.as_deref(),
        Some("2-retention-in-english")
    );
    let c = chunks("page.html");
    assert_eq!(
        place_of(&c, "| os").anchor.as_deref(),
        Some("supported-systems")
    );
    // mdBook gives its headings ids: a hit's anchor is the file's own.
    let c = chunks("mdbook-box.html");
    assert_eq!(
        place_of(&c, "Computing the Size of a Non-Recursive Type")
            .anchor
            .as_deref(),
        Some("computing-the-size-of-a-non-recursive-type")
    );
    assert_eq!(
        place_of(&c, "Box<T>` to Get a Recursive Type")
            .anchor
            .as_deref(),
        Some("using-boxt-to-get-a-recursive-type-with-a-known-size")
    );
    // The page's own lines, as `cat -n page.html` numbers them.
    let c = chunks("page.html");
    let holds = |place: Location, line: u32| {
        let (a, b) = place.lines.unwrap_or_else(|| panic!("no lines: {place:?}"));
        assert!(a <= line && line <= b, "line {line} not in {a}-{b}");
    };
    holds(place_of(&c, "download the archive"), 6);
    holds(place_of(&c, "Debian 12"), 10);
    let c = chunks("meeting.vtt");
    // The one-word cue shares a unit with the cue before it.
    assert_eq!(place_of(&c, "Ага.").start.as_deref(), Some("00:02"));
    holds(place_of(&c, "Ага."), 9);
    holds(place_of(&c, "по срокам оплаты"), 17);
    // Three short cues are one unit, which starts at the first.
    assert_eq!(
        place_of(&c, "по срокам оплаты").start.as_deref(),
        Some("00:02")
    );
}

#[test]
fn markdown_and_text_lines_are_the_files_lines() {
    // Lines 1-3 a heading and intro, 5-7 a list, 9-12 a table, 14-16 code.
    let md = "# Guide\n\nIntro words for the guide.\n\n- first step\n- second step\n- third step\n\n| k | v |\n|---|---|\n| alpha | 1 |\n| beta | 2 |\n\n```sh\nrun --fast\n```\n";
    let options = ChunkOptions {
        budget: 16,
        title: None,
        counter: &WordPunctCounter,
    };
    let sectioned = section_markdown(md, options).with_places(minirag_core::location::file_lines());
    let c = pack_sections(sectioned, options).chunks;
    // The heading is glued to its paragraph, and the short paragraph
    // shares its unit with the list that follows: the chunk spans all.
    assert_eq!(place_of(&c, "Intro words").lines.map(|l| l.0), Some(1));
    assert!(place_of(&c, "Intro words").lines.unwrap().1 >= 3);
    let steps = place_of(&c, "second step").lines.unwrap();
    assert!(steps.0 <= 6 && 6 <= steps.1, "{steps:?}");
    let beta = place_of(&c, "| beta | 2 |").lines.unwrap();
    assert!(beta.0 >= 11 && beta.1 == 12, "{beta:?}");
    assert_eq!(place_of(&c, "run --fast").lines, Some((14, 16)));
    assert_eq!(
        place_of(&c, "Intro words").citation("guide.md"),
        "guide.md, lines 1–6"
    );
}
