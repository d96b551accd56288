//! Whole-document BM25: a source made of many chunks scores as the one
//! document their text makes together.

mod common;

use std::collections::HashMap;

use common::*;
use minirag_core::ports::Index;
use minirag_core::search::Scope;
use minirag_index_mem::MemIndex;

const WORDS: [&str; 12] = [
    "vacuum",
    "index",
    "checkpoint",
    "wal",
    "table",
    "row",
    "lock",
    "query",
    "plan",
    "page",
    "tuple",
    "buffer",
];

/// Deterministic chunk texts: source `s` has `1 + s % 4` chunks.
fn texts(s: usize, salt: usize) -> Vec<String> {
    (0..1 + s % 4)
        .map(|c| {
            (0..3 + (s * 7 + c * 3 + salt) % 9)
                .map(|w| WORDS[(s * 5 + c * 11 + w * 3 + salt) % WORDS.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn put(index: &MemIndex, source: &str, title: &str, texts: &[String]) {
    index
        .replace_source(record(source, title, texts.len()), chunks(texts), None)
        .unwrap();
}

/// Every source's score from `document_search` on the chunked index, and
/// from `keyword_search` on an index holding each source as one chunk.
fn both(chunked: &MemIndex, whole: &MemIndex, query: &str) -> Vec<(String, f32, f32)> {
    let docs = chunked
        .read()
        .unwrap()
        .document_search(query, 100, &Scope::all())
        .unwrap();
    let singles: HashMap<String, f32> = whole
        .keyword_search(query, 100, &Scope::all())
        .unwrap()
        .into_iter()
        .map(|c| (c.key.source, c.value))
        .collect();
    assert_eq!(docs.len(), singles.len(), "{query}: the same sources match");
    docs.into_iter()
        .map(|d| {
            let one = singles[&d.source];
            (d.source, d.score, one)
        })
        .collect()
}

fn assert_same(chunked: &MemIndex, whole: &MemIndex) {
    for query in ["vacuum", "checkpoint wal", "lock row page", "buffer title"] {
        for (source, grouped, single) in both(chunked, whole, query) {
            assert!(
                (grouped - single).abs() <= 1e-4 * single.abs().max(1.0),
                "{query} {source}: {grouped} as chunks, {single} as one document"
            );
        }
    }
}

#[test]
fn a_source_of_many_chunks_scores_as_one_document() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let chunked = MemIndex::open(a.path()).unwrap();
    let whole = MemIndex::open(b.path()).unwrap();
    let write = |s: usize, salt: usize| {
        let t = texts(s, salt);
        let title = if s.is_multiple_of(3) {
            "Buffer title"
        } else {
            "Other"
        };
        put(&chunked, &format!("/d/{s}.md"), title, &t);
        put(&whole, &format!("/d/{s}.md"), title, &[t.join(" ")]);
    };
    for s in 0..30 {
        write(s, 0);
    }
    assert_same(&chunked, &whole);
    // Replaced sources change their length and counts; deleted ones leave
    // the collection.
    for s in (0..30).step_by(4) {
        write(s, 1);
    }
    for s in [5, 6, 7] {
        chunked.delete_source(&format!("/d/{s}.md")).unwrap();
        whole.delete_source(&format!("/d/{s}.md")).unwrap();
    }
    assert_same(&chunked, &whole);
}

#[test]
fn a_document_that_repeats_the_term_across_sections_ranks_first() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemIndex::open(dir.path()).unwrap();
    // Each of five sections names the term once; the other document names
    // it in one chunk only, a little more densely.
    let spread: Vec<String> = (0..5)
        .map(|i| format!("checkpoint settings part {i} about disks"))
        .collect();
    put(&index, "/d/spread.md", "Settings", &spread);
    put(
        &index,
        "/d/once.md",
        "Notes",
        &["unrelated words here".into(), "a checkpoint note".into()],
    );
    for i in 0..20 {
        put(
            &index,
            &format!("/d/filler{i}.md"),
            "Filler",
            &["plain words".into()],
        );
    }
    let docs = index
        .read()
        .unwrap()
        .document_search("checkpoint", 10, &Scope::all())
        .unwrap();
    let names: Vec<&str> = docs.iter().map(|d| d.source.as_str()).collect();
    assert_eq!(names, ["/d/spread.md", "/d/once.md"]);
    assert_eq!(docs[1].best_chunk, 1, "the chunk that names the term");
    // The scope applies before the cut.
    let scoped = index
        .read()
        .unwrap()
        .document_search("checkpoint", 1, &Scope::new(["/d/once.md"]))
        .unwrap();
    assert_eq!(scoped.len(), 1);
    assert_eq!(scoped[0].source, "/d/once.md");
}
