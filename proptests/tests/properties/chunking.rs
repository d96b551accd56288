//! Chunking invariants over generated Markdown (headings, tables, closed and
//! unclosed fences, lists, Cyrillic, long words, data-URI images), with the
//! reference's word/punctuation counter.

use minirag_core::chunk::cap;
use minirag_core::chunk::pack::MIN_UNIT_TOKENS;
use minirag_core::chunk::sections::build;
use minirag_core::chunk::{chunk_markdown, Chunk, ChunkOptions, UnitKind};
use minirag_core::datauri::strip_data_uri_images;
use minirag_core::markdown::{fence_run, is_word_char, sentences};
use minirag_core::ports::TokenCounter;
use minirag_core::reconstruct::{document, join_chunks};
use minirag_core::testing::WordPunctCounter;
use proptest::prelude::*;

const COUNTER: WordPunctCounter = WordPunctCounter;

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z]{1,9}",
        3 => "[а-яё]{1,9}",
        1 => "[0-9]{1,4}",
        1 => "[A-Za-z0-9_]{20,48}",
        1 => "[A-Z]{2,4}_[A-Z]{2,5}",
    ]
}

fn sentence() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(word(), 1..14),
        prop_oneof![Just("."), Just("!"), Just("?"), Just("…"), Just("")],
    )
        .prop_map(|(w, end)| format!("{}{end}", w.join(" ")))
}

#[derive(Debug, Clone)]
enum Block {
    Heading(usize, Vec<String>),
    Paragraph(Vec<String>),
    List(Vec<String>),
    Table(usize, usize),
    Fence(bool, Vec<String>),
    Image(String),
}

fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        3 => (1usize..=6, prop::collection::vec(word(), 1..6)).prop_map(|(l, w)| Block::Heading(l, w)),
        5 => prop::collection::vec(sentence(), 1..8).prop_map(Block::Paragraph),
        1 => prop::collection::vec(sentence(), 60..120).prop_map(Block::Paragraph),
        2 => prop::collection::vec(sentence(), 1..6).prop_map(Block::List),
        2 => (1usize..5, 0usize..40).prop_map(|(c, r)| Block::Table(c, r)),
        2 => (any::<bool>(), prop::collection::vec(sentence(), 1..80)).prop_map(|(c, l)| Block::Fence(c, l)),
        1 => prop::collection::vec(word(), 0..3).prop_map(|w| Block::Image(w.join(" "))),
    ]
}

/// Renders blocks; tables get a unique id so their rows can be traced.
fn render(blocks: &[Block]) -> String {
    let mut out = Vec::new();
    for (n, b) in blocks.iter().enumerate() {
        out.push(match b {
            Block::Heading(l, w) => format!("{} {}", "#".repeat(*l), w.join(" ")),
            Block::Paragraph(s) => s.join(" "),
            Block::List(items) => items
                .iter()
                .map(|i| format!("- {i}"))
                .collect::<Vec<_>>()
                .join("\n"),
            Block::Table(cols, rows) => {
                let head: Vec<String> = (0..*cols).map(|c| format!("t{n}h{c}")).collect();
                let mut t = format!(
                    "| {} |\n|{}|",
                    head.join(" | "),
                    vec![" --- "; *cols].join("|")
                );
                for r in 0..*rows {
                    let cells: Vec<String> = (0..*cols)
                        .map(|c| format!("t{n}r{r}c{c} значение"))
                        .collect();
                    t.push_str(&format!("\n| {} |", cells.join(" | ")));
                }
                t
            }
            Block::Fence(closed, lines) => {
                let mut f = format!("```text\n{}", lines.join("\n"));
                if *closed {
                    f.push_str("\n```");
                }
                f
            }
            Block::Image(alt) => {
                format!("![{alt}](data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==)")
            }
        });
    }
    out.join("\n\n")
}

fn markdown() -> impl Strategy<Value = String> {
    prop::collection::vec(block(), 0..24).prop_map(|b| render(&b))
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !is_word_char(c))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Multiset inclusion: every word of `want` occurs at least as often in `have`.
fn missing_words(want: &str, have: &str) -> Vec<String> {
    let mut counts = std::collections::HashMap::<String, i64>::new();
    for w in words(have) {
        *counts.entry(w).or_default() += 1;
    }
    let mut missing = Vec::new();
    for w in words(want) {
        let c = counts.entry(w.clone()).or_default();
        *c -= 1;
        if *c < 0 {
            missing.push(w);
        }
    }
    missing
}

fn chunks(md: &str, budget: usize, title: Option<&str>) -> Vec<Chunk> {
    chunk_markdown(
        md,
        ChunkOptions {
            budget,
            title,
            counter: &COUNTER,
        },
    )
    .chunks
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 1000,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_unit_fits_its_budget(md in markdown(), budget in 16usize..=128) {
        let md = strip_data_uri_images(&md);
        for c in chunks(&md, budget, Some("Generated title")) {
            let limit = if c.layout.kind == UnitKind::Code { 4 * budget } else { budget };
            let n = COUNTER.count(&c.text);
            prop_assert!(n <= limit, "{n} > {limit} for {:?} ({:?})", c.text, c.layout.kind);
        }
    }

    #[test]
    fn a_unit_under_the_minimum_has_no_neighbour_in_its_section_that_could_take_it(
        md in markdown(),
        budget in 16usize..=128,
    ) {
        let md = strip_data_uri_images(&md);
        let units = chunks(&md, budget, Some("Generated title"));
        for (k, c) in units.iter().enumerate() {
            if c.layout.kind != UnitKind::Text || COUNTER.count(c.body()) >= MIN_UNIT_TOKENS {
                continue;
            }
            let neighbours = [k.checked_sub(1), Some(k + 1)];
            for n in neighbours.into_iter().flatten().filter_map(|n| units.get(n)) {
                if n.parent != c.parent || n.layout.kind != UnitKind::Text {
                    continue;
                }
                let together = COUNTER.count(&format!("{}\n\n{}", n.text, c.body()));
                prop_assert!(
                    together > budget,
                    "{:?} ({} tokens) could join {:?} within {budget}",
                    c.text, COUNTER.count(c.body()), n.text
                );
            }
        }
    }

    #[test]
    fn no_word_is_lost_from_units_or_the_read_back_document(md in markdown(), budget in 16usize..=128) {
        let md = strip_data_uri_images(&md);
        let chunked = chunk_markdown(&md, ChunkOptions { budget, title: None, counter: &COUNTER });
        let doc = document(&chunked.chunks, None);
        let missing = missing_words(&md, &doc);
        prop_assert!(missing.is_empty(), "document lost {missing:?}\n--- input\n{md}\n--- document\n{doc}");
        // Units: every word outside heading lines (breadcrumbs may elide headings).
        let body: String = md.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n");
        let units: String = chunked.chunks.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join("\n");
        let missing = missing_words(&body, &units);
        prop_assert!(missing.is_empty(), "units lost {missing:?}");
    }

    #[test]
    fn repeated_headers_open_every_unit_of_their_table(md in markdown(), budget in 16usize..=128) {
        for c in chunks(&md, budget, None) {
            if c.layout.kind != UnitKind::Rows {
                continue;
            }
            let prefix = &c.text[..c.layout.prefix_len as usize];
            let body = c.body();
            // Which generated table do these rows belong to?
            let Some(id) = body.split(|ch: char| !ch.is_alphanumeric()).find_map(|w| {
                let rest = w.strip_prefix('t')?;
                let (n, _) = rest.split_once('r')?;
                n.parse::<usize>().ok()
            }) else { continue };
            let header_line = md.lines().find(|l| l.starts_with(&format!("| t{id}h0"))).expect("table header");
            let delim = md.lines().skip_while(|l| *l != header_line).nth(1).unwrap();
            let header = format!("{header_line}\n{delim}");
            if COUNTER.count(&format!("{prefix}{header}\n")) <= budget.saturating_sub(24) {
                prop_assert!(body.starts_with(&format!("{header}\n")), "unit without its header: {:?}", c.text);
            }
        }
    }

    #[test]
    fn sections_are_capped_unless_one_row_sentence_or_fence_is_longer(md in markdown()) {
        let (_, sections) = build(&md, "");
        for s in sections.into_iter().flat_map(cap::apply) {
            if s.body.chars().count() <= 4000 {
                continue;
            }
            let one_line = !s.body.contains('\n');
            let one_sentence = sentences(&s.body).len() == 1;
            let fence = fence_run(s.body.lines().next().unwrap_or("")).is_some();
            prop_assert!(one_line || one_sentence || fence, "{} chars: {:?}", s.body.chars().count(), &s.body[..200]);
        }
    }

    #[test]
    fn join_chunks_keeps_each_sections_words_in_order(md in markdown(), budget in 16usize..=128) {
        let (_, sections) = build(&md, "");
        let sections: Vec<_> = sections.into_iter().flat_map(cap::apply).collect();
        let all = chunks(&md, budget, None);
        let parent_count = all.last().map_or(0, |c| c.parent as usize + 1);
        prop_assert_eq!(parent_count, sections.len());
        for (p, section) in sections.iter().enumerate() {
            let units: Vec<&Chunk> = all.iter().filter(|c| c.parent as usize == p).collect();
            let have = words(&join_chunks(&units));
            let mut at = 0;
            for w in words(&section.body) {
                let pos = have[at..].iter().position(|h| *h == w);
                prop_assert!(pos.is_some(), "{w} missing or out of order in parent {p}");
                at += pos.unwrap() + 1;
            }
        }
    }

    #[test]
    fn chunking_is_deterministic(md in markdown(), budget in 16usize..=128) {
        prop_assert_eq!(chunks(&md, budget, Some("T")), chunks(&md, budget, Some("T")));
    }

    /// A unit's file lines, when found, are lines of the file, in order, and
    /// hold a word of the unit; units come in the file's order. (How many
    /// are found is the golden tests' business: on generated text as
    /// repetitive as `a. a. a.` a unit's words fit many places and it may
    /// be left unplaced, never misplaced.) A unit that is only the seeded
    /// title, which no line of the file holds, cites where the document
    /// starts: the next line with a place.
    #[test]
    fn a_units_lines_hold_its_words_in_file_order(md in markdown(), budget in 16usize..=128) {
        let options = ChunkOptions { budget, title: Some("T"), counter: &COUNTER };
        let sectioned = minirag_core::chunk::section_markdown(&md, options)
            .with_places(minirag_core::location::file_lines());
        let file: Vec<&str> = md.split('\n').collect();
        let mut last_start = 0;
        let units = minirag_core::chunk::pack_sections(sectioned, options).chunks;
        for c in &units {
            let Some((a, b)) = c.location().and_then(|l| l.lines) else { continue };
            prop_assert!(1 <= a && a <= b && b as usize <= file.len(), "{a}-{b} of {}", file.len());
            if c.body() == "# T" {
                continue;
            }
            let span = file[a as usize - 1..b as usize].join("\n");
            let first = words(c.body()).into_iter().find(|w| span.contains(w.as_str()));
            prop_assert!(first.is_some(), "lines {a}-{b} hold no word of {:?}", c.body());
            if c.layout.kind != UnitKind::Rows {
                prop_assert!(a >= last_start, "{a} before {last_start}");
                last_start = a;
            }
        }
    }
}
