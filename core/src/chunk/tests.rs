//! The reference's worked examples and test tables for chunking and reconstruction, with its
//! word/punctuation token counter.

use super::category::{detect, Category};
use super::sections::{build, format_timestamp, ladder, window_label};
use super::*;
use crate::reconstruct::{document, join_parent};
use crate::testing::WordPunctCounter;
use crate::tokens::EstimateCounter;

const C: WordPunctCounter = WordPunctCounter;

fn tokens(text: &str) -> usize {
    C.count(text)
}

fn chunk(md: &str, title: Option<&str>, budget: usize) -> Chunked {
    chunk_markdown(
        md,
        ChunkOptions {
            budget,
            title,
            counter: &C,
        },
    )
}

fn texts(md: &str, title: Option<&str>, budget: usize) -> Vec<String> {
    chunk(md, title, budget)
        .chunks
        .into_iter()
        .map(|c| c.text)
        .collect()
}

/// Groups chunks by parent and rebuilds each parent.
fn parents(chunks: &[Chunk]) -> Vec<String> {
    let mut out: Vec<Vec<&str>> = Vec::new();
    for c in chunks {
        if c.parent as usize == out.len() {
            out.push(Vec::new());
        }
        out[c.parent as usize].push(&c.text);
    }
    out.iter().map(|units| join_parent(units)).collect()
}

// ------------------------------------------------------------ corpus samples

fn transcript_sample() -> String {
    let mut s = String::from("Weekly sync notes\n\n");
    for i in 0..12 {
        s.push_str(&format!(
            "{}:{:02}\nSpeaker line number {i} talks about the budget and the plan.\n\n",
            i / 3,
            (i * 17) % 60
        ));
    }
    s
}

fn bold_transcript_sample() -> String {
    let mut s = String::new();
    for i in 0..8 {
        s.push_str(&format!(
            "**Marx, Dana** 0{}:{:02}\nКоллеги, обсуждаем выгрузку номер {i}.\n\n",
            i / 4,
            i * 7
        ));
    }
    s
}

fn slides_sample() -> String {
    "<!-- Slide number: 1 -->\n# Roadmap\nGoals for the year.\n\n<!-- Slide number: 2 -->\n# Budget\nNumbers follow.\n".into()
}

fn spec_sample() -> String {
    "# 1 Общие положения\n\n## 1.1 Глоссарий\n\nТермин — значение термина. Документ — файл с текстом.\n\n\
     ## 1.2 Область\n\nПрименяется ко всем подразделениям.\n\n# 2 Схема\n\n## 2.1 Порядок согласования\n\n# 3 Итог\n\nКонец."
        .into()
}

fn spreadsheet_sample() -> String {
    let mut s = String::from("# ИИ\n\n## ДАННЫЕ ПО ПИЛОТУ 2\n\n| Unnamed: 0 | Unnamed: 1 | Unnamed: 2 |\n| --- | --- | --- |\n");
    for i in 0..40 {
        s.push_str(&format!(
            "| строка {i} | значение {} | примечание к строке {i} |\n",
            i * 3
        ));
    }
    s
}

fn prose_sample() -> String {
    (0..30)
        .map(|i| format!("Paragraph {i} says something about indexing. It has two sentences!"))
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn samples() -> Vec<String> {
    vec![
        transcript_sample(),
        bold_transcript_sample(),
        slides_sample(),
        spec_sample(),
        spreadsheet_sample(),
        prose_sample(),
    ]
}

// ------------------------------------------------------------ categories

#[test]
fn categories_of_the_corpus_samples() {
    assert_eq!(detect(&transcript_sample()), Category::Transcript);
    assert_eq!(detect(&bold_transcript_sample()), Category::Transcript);
    assert_eq!(detect(&slides_sample()), Category::Slides);
    assert_eq!(detect(&spec_sample()), Category::Headings);
    assert_eq!(detect(&spreadsheet_sample()), Category::Headings);
}

#[test]
fn generic_fallbacks() {
    let times: String = (1..=10)
        .map(|i| format!("Пункт {i} — 1{i}:30 обсуждение.\n"))
        .collect();
    for md in [
        "",
        "  \n\t",
        "Just one paragraph.",
        "# Only heading\n\nAnd a body.",
        "Встреча в 12:30, потом обед в 13:45.",
        "| a | b |\n| --- | --- |\n| 1 | 2 |",
        times.as_str(),
    ] {
        assert_eq!(detect(md), Category::Generic, "{md:?}");
    }
}

#[test]
fn headings_inside_code_do_not_count() {
    assert_eq!(detect("```\n# a\n# b\n```\ntext"), Category::Generic);
}

// ------------------------------------------------------------ sections

#[test]
fn timestamps_format_and_window_labels() {
    assert_eq!(format_timestamp(0), "00:00");
    assert_eq!(format_timestamp(120), "02:00");
    assert_eq!(format_timestamp(3600), "1:00:00");
    assert_eq!(format_timestamp(3720), "1:02:00");
    assert_eq!(window_label(3660 / 120 * 120), "[1:00:00–1:02:00]");
}

#[test]
fn transcript_windows_and_preamble() {
    let md =
        "Intro before.\n\n0:10\nA.\n\n1:06\nB.\n\n2:05\nC.\n\n3:40\nD.\n\n0:50\nE.\n\n3:59\nF.";
    let (cat, sections) = build(md, "Call");
    assert_eq!(cat, Category::Transcript);
    assert_eq!(sections[0].ladder, [""]);
    assert_eq!(sections[0].body, "Intro before.");
    assert_eq!(
        sections[1].ladder,
        ["[00:00–02:00] Call", "[00:00–02:00]", ""]
    );
    assert!(
        sections[1].body.contains("1:06") && sections[1].body.contains("E."),
        "revisited window appends"
    );
    assert_eq!(sections[2].ladder[0], "[02:00–04:00] Call");
    assert!(sections[2].body.contains("2:05") && sections[2].body.contains("3:40"));
}

#[test]
fn speaker_stamps_window_the_same_and_names_stay_in_body() {
    let (_, sections) = build(&bold_transcript_sample(), "T");
    assert!(sections
        .iter()
        .any(|s| s.body.contains("**Marx, Dana** 00:00")));
    assert_eq!(sections[0].ladder[1], "[00:00–02:00]");
}

#[test]
fn long_title_ladder_shrinks() {
    let title = "x".repeat(400);
    let (_, sections) = build(&transcript_sample(), &title);
    let l = &sections[1].ladder;
    assert_eq!(l[1], "[00:00–02:00]");
    assert_eq!(l.last().unwrap(), "");
    assert!(l.windows(2).all(|w| w[0].len() > w[1].len()));
}

#[test]
fn breadcrumb_ladders() {
    assert_eq!(
        ladder(&["A", "B", "C", "D"]),
        ["A > B > C > D", "A > … > C > D", "A > … > D", "D", ""]
    );
    assert_eq!(ladder(&["A", "B"]), ["A > B", "B", ""]);
    assert_eq!(ladder(&["A"]), ["A", ""]);
    assert_eq!(ladder(&[]), [""]);
}

#[test]
fn spec_sections_breadcrumbs_and_bodiless_rules() {
    let (cat, sections) = build(&spec_sample(), "");
    assert_eq!(cat, Category::Headings);
    assert_eq!(sections[0].ladder[0], "1 Общие положения > 1.1 Глоссарий");
    assert_eq!(sections[0].ladder[1], "1.1 Глоссарий");
    // `# 1 Общие положения` has no body but a child: no own section.
    assert!(sections.iter().all(|s| s.body != "1 Общие положения"));
    // `## 2.1` has no body and no child: its text becomes the body under `2 Схема`.
    let s21 = sections
        .iter()
        .find(|s| s.body == "2.1 Порядок согласования")
        .expect("2.1 section");
    assert_eq!(s21.ladder[0], "2 Схема");
    assert!(s21.heading_is_body);
    assert!(sections.iter().all(|s| s.body != "2 Схема"));
}

#[test]
fn bodiless_childless_heading_becomes_its_own_body() {
    let md = "# 1 Раздел\n\nТекст.\n\n# 2 Резервные требования\n\n# 3 Другое\n\nЕщё текст.";
    let (_, sections) = build(md, "");
    let s = sections
        .iter()
        .find(|s| s.body == "2 Резервные требования")
        .unwrap();
    assert_eq!(s.ladder, [""]);
}

#[test]
fn bold_runs_removed_from_breadcrumbs() {
    let md = "# **2** **Общая схема документооборота**\n\n## Шаг\n\nТекст шага.";
    let (_, sections) = build(md, "");
    assert_eq!(
        sections[0].ladder[0],
        "2 Общая схема документооборота > Шаг"
    );
}

#[test]
fn slides_sections() {
    let (cat, sections) = build(&slides_sample(), "");
    assert_eq!(cat, Category::Slides);
    assert_eq!(sections[0].ladder, ["[Slide 1]", ""]);
    assert_eq!(sections[1].ladder[0], "[Slide 2]");
    assert!(sections.iter().all(|s| !s.body.contains("Slide number")));
}

#[test]
fn spreadsheet_table_prefix() {
    let t = texts(&spreadsheet_sample(), None, 110);
    assert!(t[0].starts_with("ИИ > ДАННЫЕ ПО ПИЛОТУ 2\n\n| Unnamed: 0 | Unnamed: 1 | Unnamed: 2 |\n| --- | --- | --- |\n"));
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !crate::markdown::is_word_char(c))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn four_hundred_paragraphs_are_capped_at_4000_chars() {
    let paras: Vec<String> = (0..400)
        .map(|i| format!("Paragraph number {i} with a little text in it."))
        .collect();
    let md = format!("# Head\n\n{}\n\n# Other\n\nx", paras.join("\n\n"));
    let (_, sections) = build(&md, "");
    let capped: Vec<Section> = sections.into_iter().flat_map(cap::apply).collect();
    let head: Vec<&Section> = capped.iter().filter(|s| s.ladder[0] == "Head").collect();
    assert!(head.len() > 1);
    assert!(head.iter().all(|s| s.body.chars().count() <= 4000));
    assert!(head[1..].iter().all(|s| s.continues));
    let all: String = head
        .iter()
        .map(|s| s.body.as_str())
        .collect::<Vec<_>>()
        .join("\n\n");
    for p in &paras {
        assert_eq!(
            all.matches(&format!("{p}\n")).count() + usize::from(all.ends_with(p.as_str())),
            1,
            "{p}"
        );
    }
}

#[test]
fn a_200_row_table_is_split_with_its_header() {
    let mut md = String::from("# T\n\n## Table\n\n| col a | col b |\n| --- | --- |\n");
    let rows: Vec<String> = (0..200)
        .map(|i| format!("| row {i} with some padding text to make it long | value {i} |"))
        .collect();
    md.push_str(&rows.join("\n"));
    let (_, sections) = build(&md, "");
    let capped: Vec<Section> = sections.into_iter().flat_map(cap::apply).collect();
    assert!(capped.len() > 1);
    let mut seen = Vec::new();
    for s in &capped {
        assert!(
            s.body.starts_with("| col a | col b |\n| --- | --- |\n"),
            "{:?}",
            &s.body[..60]
        );
        assert!(s.body.chars().count() <= 4000);
        seen.extend(s.body.lines().skip(2).map(str::to_string));
    }
    assert_eq!(seen, rows);
}

#[test]
fn a_600_sentence_wall_is_capped_and_keeps_words() {
    let wall: Vec<String> = (0..600)
        .map(|i| format!("Sentence {i} ends here."))
        .collect();
    let md = wall.join(" ");
    let (_, sections) = build(&md, "");
    let capped: Vec<Section> = sections.into_iter().flat_map(cap::apply).collect();
    assert!(capped.len() > 1);
    assert!(capped.iter().all(|s| s.body.chars().count() <= 4000));
    let got: Vec<String> = capped.iter().flat_map(|s| words(&s.body)).collect();
    assert_eq!(got, words(&md));
}

// ------------------------------------------------------------ packing

#[test]
fn worked_example_headings_document() {
    let md = "# 1 Intro\n\nShort text.\n\n## 1.1 Sub\n\nMore text here. Second sentence!\n\n# 2 Empty\n\n# 3 Last\n\nEnd.";
    let chunked = chunk(md, Some("Doc T"), 110);
    let got: Vec<(&str, u32)> = chunked
        .chunks
        .iter()
        .map(|c| (c.text.as_str(), c.parent))
        .collect();
    assert_eq!(
        got,
        [
            ("1 Intro\n\n# Doc T\n\nShort text.", 0),
            ("1 Intro > 1.1 Sub\n\nMore text here. Second sentence!", 1),
            ("2 Empty", 2),
            ("3 Last\n\nEnd.", 3),
        ]
    );
    assert!(chunked.title_seeded);
}

#[test]
fn worked_example_transcript() {
    let md = "Meeting\n\n0:02\nHello there.\n\n0:08\nHi.\n\n1:59\nOk.\n\n2:00\nNext.\n\n2:30\nBye.\n\n61:00\nLate.";
    assert_eq!(
        texts(md, Some("Call"), 110),
        [
            "# Call\n\nMeeting",
            "[00:00–02:00] Call\n\n0:02\nHello there.\n\n0:08\nHi.\n\n1:59\nOk.",
            "[02:00–04:00] Call\n\n2:00\nNext.\n\n2:30\nBye.",
            "[1:00:00–1:02:00] Call\n\n61:00\nLate.",
        ]
    );
}

#[test]
fn twelve_row_table_at_60_repeats_the_header() {
    let mut md = String::from("| h1 | h2 |\n| --- | --- |\n");
    for i in 0..12 {
        md.push_str(&format!("| row {i} | val {i} |\n"));
    }
    let chunked = chunk(&md, None, 60);
    assert_eq!(chunked.chunks.len(), 2);
    for c in &chunked.chunks {
        assert!(c.text.starts_with("| h1 | h2 |\n| --- | --- |\n| row"));
        assert_eq!(tokens(&c.text), 58);
        assert_eq!(c.parent, 0);
        assert_eq!(c.layout.kind, UnitKind::Rows);
    }
}

#[test]
fn every_unit_fits_the_budget_for_every_sample() {
    for md in samples() {
        for budget in [110, 60, 30] {
            for c in chunk(&md, Some("Sample title"), budget).chunks {
                let limit = if c.layout.kind == UnitKind::Code {
                    4 * budget
                } else {
                    budget
                };
                assert!(
                    tokens(&c.text) <= limit,
                    "budget {budget}: {:?} has {}",
                    c.text,
                    tokens(&c.text)
                );
            }
        }
    }
}

#[test]
fn dense_text_gives_more_chunks_than_sparse() {
    let dense: String = (0..300)
        .map(|i| format!("{i},{i};"))
        .collect::<Vec<_>>()
        .join(" ");
    let sparse: String = "word ".repeat(dense.len() / 5);
    assert!(texts(&dense, None, 60).len() > texts(&sparse, None, 60).len());
}

#[test]
fn a_long_word_is_split_by_characters_and_concatenates_back() {
    let word = "х".repeat(4000);
    let chunks = chunk_markdown(
        &word,
        ChunkOptions {
            budget: 40,
            title: None,
            counter: &EstimateCounter,
        },
    )
    .chunks;
    assert!(chunks.len() > 1);
    assert!(chunks.iter().all(|c| EstimateCounter.count(&c.text) <= 40));
    assert_eq!(
        chunks.iter().map(|c| c.text.as_str()).collect::<String>(),
        word
    );
}

fn fence(lines: usize) -> String {
    let body: Vec<String> = (0..lines)
        .map(|i| format!("let value_{i} = compute({i});"))
        .collect();
    format!("```rust\n{}\n```", body.join("\n"))
}

fn short_fence(lines: usize) -> String {
    let body: Vec<String> = (0..lines).map(|i| format!("x = {i}")).collect();
    format!("```rust\n{}\n```", body.join("\n"))
}

#[test]
fn a_60_line_fence_stays_one_unit_over_budget() {
    let md = format!("Intro.\n\n{}\n\nOutro.", short_fence(60));
    let chunks = chunk(&md, None, 110).chunks;
    let with_fences: Vec<&Chunk> = chunks
        .iter()
        .filter(|c| c.text.matches("```").count() == 2)
        .collect();
    assert_eq!(with_fences.len(), 1);
    let code = with_fences[0];
    assert!(code.text.contains("x = 0\n") && code.text.contains("x = 59\n"));
    let n = tokens(&code.text);
    assert!(n > 110 && n <= 440, "{n}");
}

#[test]
fn an_unclosed_fence_gets_no_exception() {
    let paras: Vec<String> = (0..60)
        .map(|i| format!("Paragraph {i} of prose that follows a stray fence marker."))
        .collect();
    let md = format!("```\n{}", paras.join("\n\n"));
    let chunks = chunk(&md, None, 110).chunks;
    assert!(chunks.len() > 5);
    assert!(chunks
        .iter()
        .all(|c| tokens(&c.text) <= 110 && !c.text.contains(CODE_SPLIT_NOTE)));
}

#[test]
fn a_400_line_fence_is_split_at_lines_with_the_note() {
    let md = fence(400);
    let chunks = chunk(&md, None, 110).chunks;
    assert!(chunks.len() > 1);
    for c in &chunks {
        assert!(c.text.starts_with(CODE_SPLIT_NOTE), "{:?}", &c.text[..40]);
        assert!(tokens(&c.text) <= 110);
        assert_eq!(c.layout.kind, UnitKind::CodePiece);
    }
    let all: String = chunks.iter().map(|c| c.text.as_str()).collect();
    assert!(
        all.contains("```rust\nlet value_0 ") && all.contains("let value_399 = compute(399);\n```")
    );
    let joined = &parents(&chunks)[0];
    assert_eq!(joined.matches(CODE_SPLIT_NOTE).count(), 1);
}

#[test]
fn spreadsheet_rows_carry_the_header_at_60() {
    let chunks = chunk(&spreadsheet_sample(), None, 60).chunks;
    let rows: Vec<&Chunk> = chunks
        .iter()
        .filter(|c| c.layout.kind == UnitKind::Rows)
        .collect();
    assert!(rows.len() >= 2);
    for c in rows {
        assert!(c
            .text
            .contains("| Unnamed: 0 | Unnamed: 1 | Unnamed: 2 |\n| --- | --- | --- |\n"));
        assert!(
            c.body()
                .lines()
                .all(|l| l.is_empty() || crate::markdown::is_table_row(l)),
            "no table line cut"
        );
    }
}

#[test]
fn a_30_column_header_is_stored_once_at_60() {
    let header: Vec<String> = (0..30).map(|i| format!("Колонка номер {i}")).collect();
    let delim = vec!["---"; 30];
    let mut md = format!("| {} |\n| {} |\n", header.join(" | "), delim.join(" | "));
    for r in 0..5 {
        md.push_str(&format!(
            "| {} |\n",
            (0..30)
                .map(|c| format!("{r}.{c}"))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    let chunks = chunk(&md, None, 60).chunks;
    let all: String = chunks
        .iter()
        .map(|c| c.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(all.matches("Колонка номер 0 ").count(), 1);
    assert!(chunks.iter().all(|c| tokens(&c.text) <= 60));
}

#[test]
fn header_and_delimiter_without_rows_are_kept() {
    let md = "Some text.\n\n| a | b |\n| --- | --- |";
    let all = texts(md, None, 110).join("\n");
    assert!(all.contains("| a | b |\n| --- | --- |"));
    let alone = texts("| a | b |\n| --- | --- |", None, 110);
    assert_eq!(alone, ["| a | b |\n| --- | --- |"]);
}

#[test]
fn transcript_units_start_with_labels_and_fit() {
    let chunks = chunk(&transcript_sample(), Some("Weekly"), 110).chunks;
    assert!(chunks
        .iter()
        .any(|c| c.text.starts_with("[00:00–02:00] Weekly\n\n")));
    assert!(chunks
        .iter()
        .any(|c| c.text.starts_with("[02:00–04:00] Weekly\n\n")));
    assert!(chunks.iter().all(|c| tokens(&c.text) <= 110));
    let huge = "word ".repeat(200);
    let chunks = chunk(&transcript_sample(), Some(&huge), 110).chunks;
    assert!(chunks
        .iter()
        .skip(1)
        .any(|c| c.text.starts_with("[00:00–02:00]\n\n")));
    assert!(chunks.iter().all(|c| tokens(&c.text) <= 110));
}

#[test]
fn six_nested_headings_get_an_elided_prefix_within_room() {
    let names = [
        "First level of the outline",
        "Second level of the outline",
        "Third level of the outline",
        "Fourth level of the outline",
        "Fifth level of the outline",
        "Sixth level of the outline",
    ];
    let mut md = String::new();
    for (i, n) in names.iter().enumerate() {
        md.push_str(&format!("{} {n}\n\n", "#".repeat(i + 1)));
    }
    md.push_str(&"This body sentence is long enough to matter. ".repeat(20));
    let chunks = chunk(&md, None, 110).chunks;
    let c = &chunks[0];
    let prefix = &c.text[..c.layout.prefix_len as usize];
    let rung = prefix.trim_end();
    assert!(tokens(prefix) <= pack::prefix_room(110), "{rung}");
    assert!(tokens(prefix) * 2 <= tokens(&c.text));
    assert!(
        rung.starts_with(names[0]) && rung.ends_with(names[5]) && rung.contains('…'),
        "{rung}"
    );
}

#[test]
fn spec_at_40_glossary_chunks_start_with_the_breadcrumb() {
    let chunks = texts(&spec_sample(), None, 40);
    let gloss: Vec<&String> = chunks.iter().filter(|t| t.contains("Термин")).collect();
    assert!(!gloss.is_empty());
    assert!(gloss
        .iter()
        .all(|t| t.starts_with("1 Общие положения > 1.1 Глоссарий\n\n")));
}

#[test]
fn parents_match_sections_and_keep_their_words() {
    for budget in [110, 40] {
        for md in samples() {
            let (_, sections) = build(&md, "");
            let sections: Vec<Section> = sections.into_iter().flat_map(cap::apply).collect();
            let chunked = chunk(&md, None, budget);
            let rebuilt = parents(&chunked.chunks);
            assert_eq!(rebuilt.len(), sections.len());
            for (s, p) in sections.iter().zip(&rebuilt) {
                let have = words(p);
                let mut at = 0;
                for w in words(&s.body) {
                    let pos = have[at..]
                        .iter()
                        .position(|h| *h == w)
                        .unwrap_or_else(|| panic!("{w} missing at {budget}"));
                    at += pos + 1;
                }
            }
        }
    }
}

#[test]
fn siblings_rebuild_in_order_and_order_matters() {
    let chunks = chunk(&prose_sample().replace("\n\n", " "), None, 30).chunks;
    let units: Vec<&str> = chunks
        .iter()
        .filter(|c| c.parent == 0)
        .map(|c| c.text.as_str())
        .collect();
    assert!(units.len() > 2);
    let forward = join_parent(&units);
    let reversed: Vec<&str> = units.iter().rev().copied().collect();
    assert_ne!(forward, join_parent(&reversed));
    assert!(forward.find("Paragraph 0 ").unwrap() < forward.find("Paragraph 1 ").unwrap());
}

#[test]
fn spreadsheet_parent_has_header_once_and_rows_follow_the_delimiter() {
    let chunks = chunk(&spreadsheet_sample(), None, 60).chunks;
    let p = &parents(&chunks)[0];
    assert_eq!(
        p.matches("| Unnamed: 0 | Unnamed: 1 | Unnamed: 2 |")
            .count(),
        1
    );
    assert_eq!(p.matches("ДАННЫЕ ПО ПИЛОТУ 2").count(), 1);
    assert!(p.contains("| --- | --- | --- |\n| строка 0 |"));
}

#[test]
fn breadcrumb_appears_once_in_a_multi_unit_parent() {
    let md = format!(
        "# Part\n\n## Chapter\n\n{}\n\n# Next\n\nx",
        "Sentence about the chapter. ".repeat(60)
    );
    let chunks = chunk(&md, None, 40).chunks;
    assert!(chunks.iter().filter(|c| c.parent == 0).count() > 2);
    assert_eq!(parents(&chunks)[0].matches("Part > Chapter").count(), 1);
}

#[test]
fn join_parent_edge_cases() {
    assert_eq!(join_parent::<&str>(&[]), "");
    assert_eq!(join_parent(&["only"]), "only");
    assert_eq!(join_parent(&["a", "  ", "b"]), "a\n\nb");
    assert_eq!(join_parent(&["| x |", "| y |"]), "| x |\n| y |");
    assert_eq!(
        join_parent(&["head\n\nfirst", "head\n\nsecond"]),
        "head\n\nfirst\n\nsecond"
    );
    assert_eq!(join_parent(&["0:05", "Hello."]), "0:05\nHello.");
}

#[test]
fn seeded_title_counts_toward_the_budget_and_appears_once() {
    let chunks = chunk(&prose_sample(), Some("Indexing Guide"), 110).chunks;
    assert!(chunks[0].text.starts_with("# Indexing Guide\n\n"));
    assert!(chunks.iter().all(|c| tokens(&c.text) <= 110));
    let all: String = chunks.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(all.matches("Indexing Guide").count(), 1);
    // Re-chunking is deterministic, so re-ingest is idempotent.
    assert_eq!(
        chunks,
        chunk(&prose_sample(), Some("Indexing Guide"), 110).chunks
    );
}

#[test]
fn title_already_in_the_body_is_not_seeded_again() {
    let chunked = chunk("# MD Title\n\nBody here.", Some("MD Title"), 110);
    assert_eq!(chunked.chunks[0].text, "# MD Title\n\nBody here.");
    assert!(!chunked.title_seeded);
}

#[test]
fn a_title_in_the_first_breadcrumb_is_not_seeded() {
    let chunked = chunk("# Guide\n\nIntro.\n\n## Part\n\nMore.", Some("Guide"), 110);
    assert_eq!(chunked.chunks[0].text, "Guide\n\nIntro.");
    assert!(!chunked.title_seeded);
}

#[test]
fn no_title_means_no_seed() {
    let chunked = chunk("Body only.", None, 110);
    assert_eq!(chunked.chunks[0].text, "Body only.");
}

#[test]
fn childless_bodiless_heading_text_reaches_a_chunk() {
    let all = texts(&spec_sample(), None, 110).join("\n");
    assert!(all.contains("2.1 Порядок согласования"));
}

#[test]
fn ids() {
    assert_eq!(chunk_id("/d/a.md", 3), "/d/a.md#3");
    assert_eq!(parent_id("/d/a#b.md", 2), "/d/a#b.md#p2");
    assert_eq!(parse_parent_id("/d/a#b.md#p2"), Some(("/d/a#b.md", 2)));
}

// ------------------------------------------------------------ reconstruction

#[test]
fn a_three_level_heading_tree_reads_back_as_markdown() {
    let md = "# Guide\n\nIntro paragraph of the guide.\n\n## Install\n\nRun the installer. Then restart.\n\n\
              ### On Linux\n\nUse the package.\n\n| os | cmd |\n| --- | --- |\n| debian | apt install x |\n| fedora | dnf install x |\n\n\
              ```sh\nx --version\nx --help\n```\n\n## Use\n\nSearch with x.\n\n### Tips\n\nQuote phrases.";
    for budget in [110, 30] {
        let chunked = chunk(md, Some("Guide"), budget);
        let text = document(&chunked.chunks, chunked.title_seeded.then_some("Guide"));
        let heading_lines: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
        assert_eq!(
            heading_lines,
            [
                "# Guide",
                "## Install",
                "### On Linux",
                "## Use",
                "### Tips"
            ],
            "budget {budget}:\n{text}"
        );
        for line in md.lines().filter(|l| !l.trim().is_empty()) {
            assert_eq!(
                text.lines().filter(|l| l == &line).count(),
                1,
                "budget {budget}: {line:?} in\n{text}"
            );
        }
        let got: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let want: Vec<&str> = md.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(got, want, "order at budget {budget}");
        assert!(!text.contains(" > "), "no breadcrumb lines:\n{text}");
    }
}

#[test]
fn the_document_reconstructs_split_code_without_notes() {
    let md = format!("# Code\n\n{}\n\n## After\n\nDone.", fence(300));
    let chunked = chunk(&md, None, 110);
    let text = document(&chunked.chunks, None);
    assert!(!text.contains(CODE_SPLIT_NOTE));
    assert!(text.contains(&fence(300)), "the fence comes back whole");
}

#[test]
fn a_filename_title_seed_is_removed_on_read() {
    let chunked = chunk("Plain body text.", Some("From Filename"), 110);
    assert!(chunked.title_seeded);
    assert_eq!(
        document(&chunked.chunks, Some("From Filename")),
        "Plain body text."
    );
}

#[test]
fn a_30_row_table_under_two_headings_reads_back_once() {
    let mut md =
        String::from("# 1 Отчетность\n\n## 1.1 Формы\n\n| форма | срок |\n| --- | --- |\n");
    for i in 0..30 {
        md.push_str(&format!("| форма {i} | {i} число месяца |\n"));
    }
    let chunks = chunk(&md, None, 60).chunks;
    assert!(chunks.len() > 1);
    let text = document(&chunks, None);
    assert_eq!(text.matches("| форма | срок |").count(), 1);
    assert_eq!(text.matches("| --- | --- |").count(), 1);
    assert!(text.contains("| --- | --- |\n| форма 0 |"));
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| форма ") && !l.contains("срок"))
        .collect();
    assert_eq!(rows.len(), 30);
    assert!(text.contains(&rows.join("\n")), "rows contiguous");
    // The reference's breadcrumb form, from the parent view:
    assert_eq!(
        parents(&chunks)[0]
            .matches("1 Отчетность > 1.1 Формы")
            .count(),
        1
    );
}

/// The word/punctuation counter, declared additive: its counts do add up
/// across whitespace, so the packer may sum them.
struct AdditiveWordPunct;

impl TokenCounter for AdditiveWordPunct {
    fn count(&self, text: &str) -> usize {
        C.count(text)
    }
    fn additive(&self) -> bool {
        true
    }
}

#[test]
fn summed_counts_pack_exactly_as_counting_each_candidate_unit() {
    let mut docs = samples();
    docs.push(
        "# T\n\n| a | b |\n| --- | --- |\n".to_string()
            + &"| one cell | two, three |\n".repeat(40)
            + "\n```rust\nfn main() {}\n```\n\n"
            + &"A sentence with words. Another one! ".repeat(60),
    );
    for doc in &docs {
        for budget in [MIN_BUDGET, 40, 60, DEFAULT_BUDGET, MAX_BUDGET] {
            let plain = chunk(doc, Some("Title"), budget);
            let summed = chunk_markdown(
                doc,
                ChunkOptions {
                    budget,
                    title: Some("Title"),
                    counter: &AdditiveWordPunct,
                },
            );
            assert_eq!(plain, summed, "budget {budget}");
            for c in &summed.chunks {
                assert!(
                    tokens(&c.text) <= budget || c.layout.kind == UnitKind::Code,
                    "{budget}: {:?}",
                    c.text
                );
            }
        }
    }
}

#[test]
fn a_numbered_step_keeps_its_number_when_a_list_is_split() {
    let steps: Vec<String> = (1..=12)
        .map(|i| format!("{i}. Open the settings panel and choose option number {i} there."))
        .collect();
    let md = format!("# Steps\n\n{}", steps.join("\n"));
    let units = texts(&md, None, 40);
    assert!(units.len() > 2, "{units:#?}");
    for unit in &units {
        let last = unit.lines().last().unwrap_or_default().trim();
        assert!(
            !crate::markdown::is_list_marker(last),
            "a unit ends with a bare marker: {unit:?}"
        );
        for line in unit.lines().skip(2) {
            let first = line.split(' ').next().unwrap_or_default();
            if crate::markdown::is_list_marker(first) {
                assert!(line.contains("Open the settings"), "{line:?}");
            }
        }
    }
}

#[test]
fn a_badly_encoded_heading_gives_no_anchor() {
    let chunk = |heading: &str| Chunk {
        index: 0,
        parent: 0,
        text: "body".into(),
        layout: Layout {
            headings: vec![Heading {
                level: 2,
                text: heading.into(),
                line: format!("## {heading}"),
            }],
            ..Layout::default()
        },
    };
    let anchor = |h: &str| chunk(h).location().and_then(|l| l.anchor);
    assert_eq!(anchor("Настройка сети").as_deref(), Some("настройка-сети"));
    assert_eq!(anchor("b’’кb’’b’’уb’’b’’дb’’b’’аb’’"), None);
    assert_eq!(anchor("\u{e001}\u{e002}\u{e003}"), None);
}
