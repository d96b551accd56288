//! Views pin one generation: whatever a writer does beside them, every
//! read of a view agrees with one whole write.

use std::sync::atomic::{AtomicBool, Ordering};

use minirag_core::ports::{Index, IndexView};
use minirag_core::search::Scope;
use minirag_index_mem::MemIndex;

use crate::common::*;

/// The texts of write `round`: alternately three chunks of one word and
/// five of another, so a view that saw half a write would mix them.
fn texts(round: usize) -> Vec<String> {
    let (word, n) = if round.is_multiple_of(2) {
        ("alpha", 3)
    } else {
        ("bravo", 5)
    };
    (0..n).map(|i| format!("{word} {round} part {i}")).collect()
}

/// What one view reads of `/d/a.md` through every path: its chunks by
/// range, its record, and the keyword side, which must all be one write's.
fn check_one_write(view: &dyn IndexView) -> Option<usize> {
    let chunks = view.chunks("/d/a.md", 0..=10).unwrap();
    let first = chunks.first()?;
    let round: usize = first.text.split(' ').nth(1)?.parse().unwrap();
    let want = texts(round);
    let got: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(got, want, "the chunks of one write, whole");
    let record = view.source("/d/a.md").unwrap().expect("the record");
    assert_eq!(
        record.chunk_count as usize,
        want.len(),
        "the record of that write"
    );
    let word = want[0].split(' ').next().unwrap();
    let other = if word == "alpha" { "bravo" } else { "alpha" };
    let hits = view.keyword_search(word, 10, &Scope::all()).unwrap();
    assert_eq!(hits.len(), want.len(), "the postings of that write");
    assert!(view
        .keyword_search(other, 10, &Scope::all())
        .unwrap()
        .is_empty());
    let vectors = view.vector_search(&vector(&want[0]), 10, &Scope::all());
    assert_eq!(
        vectors.unwrap().len(),
        want.len(),
        "the vectors of that write"
    );
    Some(round)
}

#[test]
fn views_beside_a_writer_each_read_one_whole_write() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemIndex::open(dir.path()).unwrap();
    let write = |round: usize| {
        let t = texts(round);
        index
            .replace_source(
                record("/d/a.md", "A", t.len()),
                chunks(&t),
                Some(vectors(&t)),
            )
            .unwrap();
    };
    write(0);
    let done = AtomicBool::new(false);
    let rounds = 300;
    let seen = std::thread::scope(|s| {
        let readers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut seen = std::collections::BTreeSet::new();
                    // One view held across many writes, read again at the end.
                    let pinned = index.read().unwrap();
                    let pinned_round = check_one_write(&*pinned);
                    while !done.load(Ordering::Acquire) {
                        let view = index.read().unwrap();
                        seen.extend(check_one_write(&*view));
                    }
                    assert_eq!(check_one_write(&*pinned), pinned_round, "pinned");
                    seen
                })
            })
            .collect();
        for round in 1..=rounds {
            write(round);
        }
        done.store(true, Ordering::Release);
        readers
            .into_iter()
            .flat_map(|r| r.join().unwrap())
            .collect::<std::collections::BTreeSet<_>>()
    });
    // The last write is what a view reads now; the readers saw writes in
    // between (each a whole one, checked above).
    assert_eq!(check_one_write(&*index.read().unwrap()), Some(rounds));
    assert!(!seen.is_empty());
}

/// Writes beside held views go to segments of their own: what the index
/// answers then, after a compaction and after reopening is what an index
/// written with no view answers, score for score.
#[test]
fn writes_beside_held_views_answer_as_writes_alone_through_compaction_and_reopening() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let beside = MemIndex::open(a.path()).unwrap();
    let alone = MemIndex::open(b.path()).unwrap();
    let write = |index: &MemIndex, round: usize| {
        for s in 0..5 {
            let t: Vec<String> = (0..4)
                .map(|i| format!("w{} v{} common r{round} s{s}", (round + i) % 7, s * i % 11))
                .collect();
            let source = format!("/d/{s}.md");
            let (rec, ch) = (record(&source, "Title", t.len()), chunks(&t));
            index.replace_source(rec, ch, Some(vectors(&t))).unwrap();
        }
    };
    let queries = ["common", "w3 v4", "r39 s2", "r7", "w0 w1 w2", "title v0"];
    let answers = |index: &MemIndex| {
        let view = index.read().unwrap();
        let all = Scope::all();
        queries.map(|q| {
            let chunks = view.keyword_search(q, 50, &all).unwrap();
            let documents = view.document_search(q, 10, &all).unwrap();
            format!("{chunks:?} {documents:?}")
        })
    };
    let mut views = Vec::new();
    for round in 0..40 {
        views.push(beside.read().unwrap());
        write(&beside, round);
        write(&alone, round);
    }
    let want = answers(&alone);
    let every = alone
        .read()
        .unwrap()
        .keyword_search("common", 50, &Scope::all());
    assert_eq!(
        every.unwrap().len(),
        20,
        "the last round's 5 sources of 4 chunks"
    );
    assert_eq!(answers(&beside), want, "beside the views");
    drop(views);
    beside.compact().unwrap();
    alone.compact().unwrap();
    assert_eq!(answers(&beside), answers(&alone), "compacted");
    drop((beside, alone));
    let beside = MemIndex::open(a.path()).unwrap();
    let alone = MemIndex::open(b.path()).unwrap();
    assert_eq!(answers(&beside), answers(&alone), "reopened");
    assert_eq!(answers(&alone), want, "compaction keeps every answer");
}
