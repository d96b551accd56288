//! Real files saved by LibreOffice (see `fixtures/make.sh`) and hand-written
//! text formats: each converts with its structure, broken ones fail by name,
//! and every binary fixture cut at each 1/16 of its length never panics.

use std::path::Path;

use minirag_convert::{convert_unguarded, Converters};
use minirag_core::ports::{ConvertError, ConvertRequest, Converted, Converter};

fn fixture(name: &str) -> (String, Vec<u8>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path.display().to_string(), bytes)
}

fn convert(name: &str) -> Result<Converted, ConvertError> {
    let (path, bytes) = fixture(name);
    let format = name.rsplit('.').next().unwrap();
    Converters.convert(ConvertRequest {
        name: &path,
        format,
        bytes: &bytes,
    })
}

fn markdown(name: &str) -> (String, Option<String>) {
    let c = convert(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    (c.markdown, c.metadata_title)
}

/// ATX heading lines outside code fences.
fn headings(md: &str) -> Vec<&str> {
    let mut fenced = false;
    md.lines()
        .filter(|l| {
            fenced ^= l.starts_with("```");
            !fenced && l.starts_with('#')
        })
        .collect()
}

/// `needles` appear in this order.
fn in_order(md: &str, needles: &[&str]) {
    let mut from = 0;
    for n in needles {
        let at = md[from..]
            .find(n)
            .unwrap_or_else(|| panic!("{n:?} missing (or out of order) in:\n{md}"));
        from += at + n.len();
    }
}

#[test]
fn docx_from_writer_keeps_title_headings_and_table() {
    let (md, title) = markdown("policy-ru.docx");
    assert_eq!(title.as_deref(), Some("Положение о хранении"));
    in_order(
        &md,
        &[
            "# Порядок хранения документов\n",
            "\n# 1 Общие положения\n",
            "складе И-112.",
            "\n## 1.1 Сроки хранения\n",
            "| Документ | Срок, лет |\n| --- | --- |\n| Накладная ТОРГ-12 | 5 |\n| Акт сверки | 3 |",
            "\n# 2 Retention in English\n",
            "SPEC-112",
        ],
    );
}

#[test]
fn xlsx_from_calc_has_a_headed_table_per_sheet() {
    let (md, _) = markdown("workbook.xlsx");
    in_order(
        &md,
        &[
            "## Stock\n\n| sku | qty | price |\n| --- | --- | --- |\n| BOLT-M8 | 120 | 0.35 |",
            // The formula cell reads as the value Calc cached.
            "| NUT-M8 | 300 | 600 |",
            "## Поставщики\n\n| поставщик | город |\n| --- | --- |\n| ООО Крепёж | Казань |",
        ],
    );
}

#[test]
fn pptx_from_impress_has_ordered_slides_titles_tables_and_notes() {
    let (md, title) = markdown("deck.pptx");
    assert_eq!(title.as_deref(), Some("Quarterly Review Deck"));
    let markers: Vec<String> = (1..=11)
        .map(|n| format!("<!-- Slide number: {n} -->"))
        .collect();
    let markers: Vec<&str> = markers.iter().map(String::as_str).collect();
    in_order(&md, &markers);
    in_order(
        &md,
        &[
            "# Квартальный обзор\n\nВыручка выросла на 12 процентов\n\n### Notes:\nSpeaker note 1:",
            "# Slide topic 3\n",
            "| Region | Revenue |\n| --- | --- |\n| North | 1200 |",
            "### Notes:\nSpeaker note 3:",
            "<!-- Slide number: 10 -->\n\n# Slide topic 10\n",
        ],
    );
    // The notes page's slide-number field is page furniture, not a note.
    assert!(!md.contains("<number>"), "{md}");
}

#[test]
fn epub_from_writer_has_chapter_headings_table_and_title() {
    let (md, title) = markdown("policy-ru.epub");
    assert_eq!(title.as_deref(), Some("Положение о хранении"));
    in_order(
        &md,
        &[
            "Порядок хранения документов",
            "\n# 1 Общие положения\n",
            "| Накладная ТОРГ-12 | 5 ",
            "\n# 2 Retention in English\n",
        ],
    );
}

#[test]
fn pdf_with_a_table_reads_in_order() {
    let (md, _) = markdown("table.pdf");
    in_order(
        &md,
        &[
            "Порядок хранения документов",
            "1.1 Сроки хранения",
            "Накладная ТОРГ-12",
            "Акт сверки",
            "2 Retention in English",
            "SPEC-112",
        ],
    );
}

/// The spare-parts table of `tables.py`, as a pipe table; `pump` is the
/// supplier cell that Writer wrapped over several lines.
fn parts_table(pump: &str) -> String {
    format!(
        "| Part | Supplier | Stock | Price |\n| --- | --- | --- | --- |\n\
         | BOLT-M8 | Nordfast AB | 1200 | 0.12 |\n| NUT-M8 | Nordfast AB | 3400 | 0.05 |\n\
         | WASHER-8 | Kovka OOO | 560 | 0.02 |\n| PUMP-X2 | {pump} | 7 | 1450.00 |\n\
         | RADIO-V | Harbour Signals | 12 | 310.00 |"
    )
}

#[test]
fn pdf_tables_ruled_or_not_become_pipe_tables_with_every_row_once() {
    for (name, pump) in [
        (
            "ruled-table.pdf",
            "Tidewater Pumps Ltd, service contract renewed every spring",
        ),
        ("unruled-table.pdf", "Tidewater Pumps Ltd"),
    ] {
        let (md, _) = markdown(name);
        let table = parts_table(pump);
        assert_eq!(
            md.matches(&table).count(),
            1,
            "{name}: no table\n{table}\nin:\n{md}"
        );
        for part in [
            "BOLT-M8", "NUT-M8", "WASHER-8", "PUMP-X2", "RADIO-V", "Supplier",
        ] {
            assert_eq!(
                md.matches(part).count(),
                1,
                "{name}: {part} not once in:\n{md}"
            );
        }
        in_order(
            &md,
            &[
                "Spare parts on hand\n\n",
                "The table lists every part the workshop keeps, with its supplier and unit price.\n\n| Part",
                "310.00 |\n\nPrices are in euros and exclude delivery; stock is counted every Monday morning.",
            ],
        );
    }
    // Writer's table in the Russian policy: its header first, no heading inside.
    let (md, _) = markdown("table.pdf");
    assert!(
        md.contains("| Документ | Срок, лет |\n| --- | --- |\n| Накладная ТОРГ-12 | 5 |\n| Акт сверки | 3 |\n\n# 2 Retention in English"),
        "{md}"
    );
}

#[test]
fn two_column_pages_read_down_each_column_with_paragraphs_whole() {
    let (md, _) = markdown("newsletter.pdf");
    let md = format!("{md}\n\n"); // every paragraph then ends with a blank line
    assert!(
        !md.contains("Newsletter"),
        "the running header stays:\n{md}"
    );
    assert!(
        !md.lines().any(|l| l.trim().starts_with("Page")),
        "a page-number footer stays:\n{md}"
    );
    let creatures = [
        "anemones",
        "barnacles",
        "limpets",
        "periwinkles",
        "crabs",
        "mussels",
        "starfish",
        "whelks",
    ];
    let mut order = vec!["Tidal Survey".to_string()];
    for (i, creature) in creatures.iter().enumerate() {
        // The pools are the outline's second level: headings now.
        order.push(format!("\n\n## Pool {}: ", i + 1));
        for j in 0..4 {
            // Whole: paragraphs broken across a column or a page come back as one.
            let para = format!(
                "\n\nNote {}: the {creature} in pool {} were counted at low water on a calm morning, and the count was checked twice by a second observer before it went into the log book.\n\n",
                i * 4 + j,
                i + 1
            );
            assert_eq!(md.matches(&para).count(), 1, "{para}\nin:\n{md}");
            order.push(para.trim_end().to_string());
        }
    }
    let order: Vec<&str> = order.iter().map(String::as_str).collect();
    in_order(&md, &order);
}

#[test]
fn two_column_pdf_reads_the_left_column_first() {
    let (md, _) = markdown("two-column.pdf");
    in_order(
        &md,
        &[
            "Field Notes on Tidal Pools",
            "LEFTCOLUMN",
            "record the time of each",
            "closing.",
            "RIGHTCOLUMN",
            "three mornings.",
        ],
    );
}

#[test]
fn encrypted_pdf_and_truncated_docx_fail_by_name() {
    let e = convert("encrypted.pdf").unwrap_err().to_string();
    assert!(
        e.contains("encrypted.pdf") && e.contains("encrypted;"),
        "{e}"
    );
    let e = convert("truncated.docx").unwrap_err().to_string();
    assert!(e.contains("truncated.docx") && e.contains("zip"), "{e}");
}

#[test]
fn cp1251_text_reads_as_russian() {
    let (md, _) = markdown("cp1251.txt");
    assert!(
        md.starts_with("Инструкция по приёмке товара\n\nКладовщик сверяет"),
        "{md}"
    );
}

#[test]
fn notebook_keeps_markdown_cells_and_fences_code() {
    let (md, _) = markdown("notebook.ipynb");
    in_order(
        &md,
        &[
            "# Анализ остатков\n",
            "```python\nimport pandas as pd\n",
            "print(len(df))\n```",
            "## Result\n",
        ],
    );
    assert!(!md.contains("\"outputs\""), "{md}");
}

#[test]
fn html_page_keeps_structure_and_drops_chrome() {
    let (md, title) = markdown("page.html");
    assert_eq!(title.as_deref(), Some("Install Guide & FAQ"));
    in_order(
        &md,
        &[
            "# Install\n",
            "download the archive",
            "unpack it",
            "```bash\ntar xf minirag.tar.gz\n./minirag-mcp status\n```",
            "## Supported systems\n",
            "| Debian 12 |",
            "architecture diagram",
        ],
    );
    for gone in ["track()", "Home", "font:12px", "© 2026", "diagram.png"] {
        assert!(!md.contains(gone), "{gone:?} kept in:\n{md}");
    }
    let items = md
        .lines()
        .filter(|l| l.trim_start().starts_with("* "))
        .count();
    assert_eq!(items, 2, "{md}");
}

#[test]
fn teams_transcript_merges_segments_into_turns() {
    let (md, _) = markdown("meeting.vtt");
    assert_eq!(
        md,
        "**Marx, Dana** 00:02\nКоллеги, добрый день. Смотрим свежую выгрузку.\n\n\
         **Ivanova, Olga** 00:04\nАга.\n\n**Marx, Dana** 02:04\nТогда по срокам оплаты.\n"
    );
}

#[test]
fn semicolon_csv_is_one_table() {
    let (md, _) = markdown("stock.csv");
    assert_eq!(
        md,
        "| sku | qty | warehouse |\n| --- | --- | --- |\n| BOLT-M8 | 120 | И-112 |\n| NUT-M8 | 300 | SPEC-112 |"
    );
}

#[test]
fn every_binary_fixture_cut_at_each_sixteenth_never_panics() {
    let binaries = [
        "policy-ru.docx",
        "lists.docx",
        "deck.pptx",
        "workbook.xlsx",
        "policy-ru.epub",
        "table.pdf",
        "two-column.pdf",
        "report.pdf",
        "ruled-table.pdf",
        "unruled-table.pdf",
        "newsletter.pdf",
        "encrypted.pdf",
        "memo.docx",
        "memo.pdf",
    ];
    let mut failures = Vec::new();
    for name in binaries {
        let (path, bytes) = fixture(name);
        let format = name.rsplit('.').next().unwrap();
        for k in 0..16 {
            let cut = &bytes[..bytes.len() * k / 16];
            let outcome = std::panic::catch_unwind(|| {
                convert_unguarded(ConvertRequest {
                    name: &path,
                    format,
                    bytes: cut,
                })
            });
            match outcome {
                Err(_) => failures.push(format!("{name} cut at {k}/16 panicked")),
                Ok(Err(e)) if !e.to_string().contains(name) => failures.push(format!(
                    "{name} cut at {k}/16: error does not name the file: {e}"
                )),
                Ok(_) => {}
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn docx_lists_become_markdown_lists_nested_and_numbered() {
    let (md, _) = markdown("lists.docx");
    eprintln!("{md}");
    in_order(
        &md,
        &[
            "Before the first day:\n\n",
            "- Laptop ordered\n- Accounts created\n    - Email account\n    - Badge for the north gate\n- Desk assigned",
            "First week steps:\n\n",
            "1. Meet the team lead\n2. Read the safety manual\n    - a. Fire exits\n    - b. First aid kits\n3. Shadow a senior engineer",
            "numbered from one again:\n\n",
            "1. Submit the timesheet\n2. Book the review",
        ],
    );
}

#[test]
fn calc_csv_exports_with_multi_line_cells_keep_one_row_per_record() {
    for name in ["notes-comma.csv", "notes-semicolon.csv"] {
        let (md, _) = markdown(name);
        assert_eq!(
            md,
            "| sku | note | qty |\n| --- | --- | --- |\n\
             | BOLT-M8 | first line second line with \"quotes\"; and, separators | 120 |\n\
             | NUT-M8 | plain | 300 |\n\
             | ШАЙБА-8 | склад И-112 вторая строка третья | 560 |",
            "{name}"
        );
    }
}

#[test]
fn csv_cells_with_line_breaks_stay_one_row_for_each_delimiter() {
    for (delimiter, sep) in [(',', ","), (';', ";")] {
        let text = format!(
            "sku{sep}note{sep}qty\nBOLT-M8{sep}\"first line\nsecond line with \"\"quotes\"\"\"{sep}120\nNUT-M8{sep}plain{sep}300\n"
        );
        let c = Converters
            .convert(ConvertRequest {
                name: "stock.csv",
                format: "csv",
                bytes: text.as_bytes(),
            })
            .unwrap();
        assert_eq!(
            c.markdown,
            "| sku | note | qty |\n| --- | --- | --- |\n| BOLT-M8 | first line second line with \"quotes\" | 120 |\n| NUT-M8 | plain | 300 |",
            "delimiter {delimiter:?}"
        );
    }
}

#[test]
fn pdf_paragraphs_are_whole_and_running_headers_and_footers_go() {
    let (md, _) = markdown("report.pdf");
    assert!(
        !md.contains("Harbour Authority"),
        "the running header stays:\n{md}"
    );
    assert!(
        !md.lines()
            .any(|l| l.trim() == "Page" || l.trim().parse::<u32>().is_ok()),
        "a page-number footer stays:\n{md}"
    );
    // Every paragraph wrapped over three lines comes back as one.
    for unit in [0, 14, 32, 74] {
        let topic = [
            "cranes", "bollards", "fenders", "lighting", "dredging", "gates", "pumps", "radios",
        ][unit / 10..][0];
        let para = format!(
            "The {topic} crew inspected unit {unit} this quarter and logged its condition, the parts replaced and the hours spent, so that the next crew can plan the {topic} work for the coming season without repeating the survey."
        );
        assert_eq!(md.matches(&para).count(), 1, "{para}\nin:\n{md}");
    }
    in_order(
        &md,
        &[
            "Quarterly Maintenance",
            "Section 1: Cranes",
            "Section 8: Radios",
        ],
    );
}

/// A PDF's text is text: comment lines of a code example stay text (they
/// became headings, and the title), and a numbered step keeps its number
/// in the unit that holds its text.
#[test]
fn pdf_lines_that_look_like_markdown_stay_text() {
    use minirag_core::chunk::{chunk_markdown, ChunkOptions};
    let (md, _) = markdown("code-comments.pdf");
    // The headings are the outline's (Writer's bookmarks), never a comment line.
    assert_eq!(headings(&md), ["# Steps", "# The generated file"], "{md}");
    in_order(
        &md,
        &[
            "1\\. Install the package",
            "3\\. Check that the new type",
            // Monospaced lines are a code block, kept line by line.
            "\n```\n# This file was automatically generated by the\n# update-mime-database command. DO NOT EDIT!\napplication/x-example:*.example\n```\n",
        ],
    );
    let chunked = chunk_markdown(
        &md,
        ChunkOptions {
            budget: 24,
            title: None,
            counter: &minirag_core::tokens::EstimateCounter,
        },
    );
    for c in &chunked.chunks {
        let crumbs: Vec<&str> = c.layout.headings.iter().map(|h| h.text.as_str()).collect();
        let expected: &[&str] = if c.text.contains("generated by the") || c.text.contains("by hand")
        {
            &["The generated file"]
        } else if c.text.contains("Run the update command") {
            &["Steps"]
        } else {
            &crumbs
        };
        assert_eq!(crumbs, expected, "{:?}", c.text);
        assert!(
            !crumbs.iter().any(|h| h.contains("automatically")),
            "{crumbs:?}"
        );
        let last = c.text.split_whitespace().last().unwrap_or_default();
        assert!(
            !minirag_core::markdown::is_list_marker(last),
            "{:?}",
            c.text
        );
    }
    assert!(
        chunked
            .chunks
            .iter()
            .any(|c| c.text.contains("2\\. Run the update command as root.")),
        "{:#?}",
        chunked.chunks
    );
}

/// A PDF without an outline takes its headings from type: larger sizes are
/// outer levels and a bold line of the body's size the innermost; its
/// monospaced lines are a fenced block with their indentation, and its
/// numbered steps stay whole in their units.
#[test]
fn pdf_without_an_outline_has_headings_by_type_and_fenced_code() {
    use minirag_core::chunk::{chunk_markdown, ChunkOptions};
    let (md, _) = markdown("compress-manual.pdf");
    assert_eq!(
        headings(&md),
        [
            "# Options",
            "### Block size",
            "## Exit codes",
            "# Packing a folder"
        ],
        "{md}"
    );
    in_order(
        &md,
        &[
            "1\\. Collect the files into one tar archive.",
            "A script that does all three steps:\n\n```\n# Pack every log of the week.\nfor f in *.log; do\n    packer --best \"$f\"\ndone\n```\n\nThe script stops",
        ],
    );
    let chunked = chunk_markdown(
        &md,
        ChunkOptions {
            budget: 40,
            title: None,
            counter: &minirag_core::tokens::EstimateCounter,
        },
    );
    for c in &chunked.chunks {
        let crumbs: Vec<&str> = c.layout.headings.iter().map(|h| h.text.as_str()).collect();
        if c.text.contains("exits with zero") {
            assert_eq!(crumbs, ["Options", "Exit codes"], "{:?}", c.text);
        }
        if c.text.contains("packer --best") {
            assert_eq!(crumbs, ["Packing a folder"], "{:?}", c.text);
            assert!(
                c.text.contains("for f in *.log; do\n    packer"),
                "{:?}",
                c.text
            );
        }
        let last = c.text.split_whitespace().last().unwrap_or_default();
        assert!(
            !minirag_core::markdown::is_list_marker(last),
            "{:?}",
            c.text
        );
    }
}

/// The Debian FAQ in Russian (Debian's debian-faq-ru 11.1, made by its
/// DocBook toolchain) prints each italic word with a filler around every
/// letter; the words come back as their letters, headings included.
#[test]
fn interleaved_italics_in_a_real_pdf_read_as_words() {
    let (md, _) = markdown("debian-faq-ru.pdf");
    assert!(
        md.contains("apt-mark hold имя_пакета"),
        "the placeholder is words"
    );
    assert!(!md.contains("b’’иb’’"), "no interleaved word is left whole");
    for h in headings(&md) {
        assert!(
            !minirag_core::unreadable::is_unreadable(
                h,
                minirag_core::unreadable::Glyphs::FromFonts
            ),
            "heading reads as badly encoded: {h}"
        );
    }
}
