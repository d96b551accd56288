//! Durability, sharing, model and document rules every adapter keeps.

use std::collections::HashMap;

use minirag_core::chunk::Chunk;
use minirag_core::ports::{Embeddings, Index, IndexError};
use minirag_core::search::{ChunkKey, Filter, FilterRequest, Scope};

use crate::fixtures::*;
use crate::Subject;

fn put(index: &impl Index, source: &str, texts: &[&str]) {
    let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
    index
        .replace_source(
            record(source, "Title", texts.len()),
            chunks(&texts),
            Some(vectors(&texts)),
        )
        .unwrap();
}

/// Writes survive a reopen, and a replace with fewer chunks leaves none of the old behind.
pub fn writes_survive_reopen_and_replace_shrinks<S: Subject>(subject: &S) {
    let store = subject.fresh();
    {
        let index = subject.open(&store);
        put(
            &index,
            "/d/a.md",
            &["alpha one", "alpha two", "alpha three"],
        );
        put(&index, "/d/b#1.md", &["beta"]);
        put(&index, "/d/a.md", &["alpha only"]);
    }
    let index = subject.open(&store);
    let a = index.read().unwrap().chunks("/d/a.md", 0..=100).unwrap();
    assert_eq!(
        a.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
        ["alpha only"]
    );
    assert_eq!(
        index
            .read()
            .unwrap()
            .source("/d/a.md")
            .unwrap()
            .unwrap()
            .file_hash,
        "hash-of-/d/a.md"
    );
    assert_eq!(index.read().unwrap().stats().unwrap().chunk_count, 2);
    let keys = [
        ChunkKey {
            source: "/d/b#1.md".into(),
            index: 0,
        },
        ChunkKey {
            source: "/d/a.md".into(),
            index: 2,
        },
        ChunkKey {
            source: "/d/a.md".into(),
            index: 0,
        },
    ];
    let got: Vec<Option<String>> = index
        .read()
        .unwrap()
        .get_chunks(&keys)
        .unwrap()
        .into_iter()
        .map(|c| c.map(|c| c.text))
        .collect();
    assert_eq!(
        got,
        [Some("beta".into()), None, Some("alpha only".into())],
        "by key, in order, gaps as None"
    );
    let section = index.read().unwrap().parent_chunks("/d/a.md", 0).unwrap();
    assert_eq!(
        section.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
        ["alpha only"]
    );
    let hits = index
        .read()
        .unwrap()
        .keyword_search("alpha", 10, &Scope::all())
        .unwrap();
    assert_eq!(hits.len(), 1, "old chunks are gone from the postings");
    let near = index
        .read()
        .unwrap()
        .vector_search(&vector("beta"), 1, &Scope::all())
        .unwrap();
    assert_eq!(near[0].key.source, "/d/b#1.md");
    assert!(near[0].value < 1e-5);
}

/// A chunk's place in its document comes back as written, through a
/// reopen and a compaction, by range, by key and by section.
pub fn locations_come_back_as_written<S: Subject>(subject: &S) {
    use minirag_core::location::Location;
    let located = |i: u32| Location {
        pages: Some((i + 1, i + 2)),
        sheet: (i == 1).then(|| "Лист 1".to_string()),
        // Every number is 1-based: 0 is "absent" to a packed place.
        rows: Some((10 * i + 1, 10 * i + 4)),
        lines: Some((i + 1, i + 3)),
        start: (i == 2).then(|| "01:02".to_string()),
        ..Location::default()
    };
    let texts: Vec<String> = ["gamma one", "gamma two", "gamma three"]
        .iter()
        .map(|t| t.to_string())
        .collect();
    let mut chunks = chunks(&texts);
    for c in chunks.iter_mut().take(2) {
        c.layout.location = minirag_core::location::Packed::from(&located(c.index));
    }
    let store = subject.fresh();
    {
        let index = subject.open(&store);
        index
            .replace_source(record("/d/g.md", "G", 3), chunks, Some(vectors(&texts)))
            .unwrap();
        put(&index, "/d/plain.md", &["no place"]);
    }
    let check = |index: &S::Index, when: &str| {
        let back = index.read().unwrap().chunks("/d/g.md", 0..=9).unwrap();
        let places: Vec<Option<Location>> =
            back.iter().map(|c| c.layout.location.unpack()).collect();
        assert_eq!(places, [Some(located(0)), Some(located(1)), None], "{when}");
        let key = ChunkKey {
            source: "/d/g.md".into(),
            index: 1,
        };
        let by_key = index.read().unwrap().get_chunks(&[key]).unwrap();
        assert_eq!(
            by_key[0].as_ref().unwrap().layout.location.unpack(),
            Some(located(1)),
            "{when}"
        );
        let plain = index.read().unwrap().chunks("/d/plain.md", 0..=0).unwrap();
        assert_eq!(plain[0].layout.location.unpack(), None, "{when}");
    };
    let index = subject.open(&store);
    check(&index, "after a reopen");
    subject.compact(&index);
    check(&subject.open(&store), "after a compaction");
}

/// A second handle on the same index sees the first's writes.
pub fn another_handle_sees_writes<S: Subject>(subject: &S) {
    let store = subject.fresh();
    let reader = subject.open(&store);
    let writer = subject.open(&store);
    assert!(reader
        .read()
        .unwrap()
        .keyword_search("mango", 5, &Scope::all())
        .unwrap()
        .is_empty());
    put(&writer, "/d/m.md", &["mango season"]);
    assert_eq!(
        reader
            .read()
            .unwrap()
            .keyword_search("mango", 5, &Scope::all())
            .unwrap()
            .len(),
        1
    );
    subject.compact(&writer);
    put(&writer, "/d/n.md", &["mango again"]);
    assert_eq!(
        reader
            .read()
            .unwrap()
            .keyword_search("mango", 5, &Scope::all())
            .unwrap()
            .len(),
        2
    );
    writer.delete_source("/d/m.md").unwrap();
    assert_eq!(writer.move_source("/d/n.md", "/d/o.md", 3.0).unwrap(), 1);
    let hits = reader
        .read()
        .unwrap()
        .keyword_search("mango", 5, &Scope::all())
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].key.source, "/d/o.md");
}

/// A view answers from one generation while another handle writes.
pub fn a_read_view_is_a_snapshot<S: Subject>(subject: &S) {
    let store = subject.fresh();
    let reader = subject.open(&store);
    let writer = subject.open(&store);
    put(&writer, "/d/k.md", &["kiwi one", "kiwi two"]);
    let view = reader.read().unwrap();
    assert_eq!(
        view.keyword_search("kiwi", 5, &Scope::all()).unwrap().len(),
        2
    );
    // The writer of another handle does not wait for this view (a second
    // process never does).
    std::thread::scope(|s| {
        s.spawn(|| {
            put(&writer, "/d/k.md", &["kiwi only"]);
            put(&writer, "/d/l.md", &["kiwi late"]);
        })
        .join()
        .unwrap();
    });
    // The old generation, whole: searches, chunks and sources agree.
    assert_eq!(
        view.keyword_search("kiwi", 5, &Scope::all()).unwrap().len(),
        2
    );
    assert_eq!(view.chunks("/d/k.md", 0..=9).unwrap().len(), 2);
    assert!(view.source("/d/l.md").unwrap().is_none());
    drop(view);
    let hits = reader
        .read()
        .unwrap()
        .keyword_search("kiwi", 5, &Scope::all())
        .unwrap();
    assert_eq!(hits.len(), 2, "a new view sees the new generation");
    assert_eq!(
        reader
            .read()
            .unwrap()
            .chunks("/d/k.md", 0..=9)
            .unwrap()
            .len(),
        1
    );
}

/// Vectors of another width under one model are refused; another model's vectors switch the index.
pub fn a_width_clash_is_refused_and_another_model_switches_the_index<S: Subject>(subject: &S) {
    let store = subject.fresh();
    let index = subject.open(&store);
    put(&index, "/d/a.md", &["x"]);
    // The same model cannot change width: one of the two is lying.
    let mut wide = Embeddings::new(16);
    wide.push(&[0.25; 16]);
    let err = index
        .replace_source(record("/d/b.md", "T", 1), vec![chunk(0, "y")], Some(wide))
        .unwrap_err();
    assert_eq!(
        err,
        IndexError::DimensionMismatch {
            stored: 8,
            model: 16
        }
    );
    assert_eq!(
        index.read().unwrap().stats().unwrap().source_count,
        1,
        "nothing half-written"
    );

    // Another model's vectors (here also another width) switch the index:
    // the old vectors go, the old chunks stay for keyword search.
    let mut other = record("/d/c.md", "T", 1);
    other.embedded_with = Some("other-model".into());
    let mut wide = Embeddings::new(16);
    wide.push(&[0.25; 16]);
    index
        .replace_source(other, vec![chunk(0, "z")], Some(wide))
        .unwrap();
    for index in [index, subject.open(&store)] {
        let view = index.read().unwrap();
        assert_eq!(view.vector_model().as_deref(), Some("other-model"));
        let stats = view.stats().unwrap();
        assert_eq!((stats.source_count, stats.vectorless_chunk_count), (2, 1));
        assert_eq!(
            view.vectorless_chunks().unwrap(),
            1,
            "the counter follows a switch"
        );
        let hits = view.vector_search(&[0.25; 16], 5, &Scope::all()).unwrap();
        assert_eq!(hits.len(), 1, "only the new model's vector is compared");
        assert_eq!(hits[0].key.source, "/d/c.md");
        let words = view.keyword_search("x", 5, &Scope::all()).unwrap();
        assert_eq!(
            words[0].key.source, "/d/a.md",
            "old chunks answer by keyword"
        );
        drop(view);
        assert_eq!(index.cached_vectors("test-model", &["x"]), vec![None]);
    }
}

/// A scope and filters apply before the cut at k, not after.
pub fn scope_applies_before_the_cut<S: Subject>(subject: &S) {
    let store = subject.fresh();
    let index = subject.open(&store);
    for i in 0..60 {
        put(
            &index,
            &format!("/d/other/{i}.md"),
            &["common words galore common"],
        );
    }
    put(&index, "/d/proj/x.md", &["common"]);
    put(&index, "/d/project-secret/y.md", &["common"]);
    let scope = Scope::new(["/d/proj"]);
    let kw = index
        .read()
        .unwrap()
        .keyword_search("common", 5, &scope)
        .unwrap();
    assert_eq!(kw.len(), 1);
    assert_eq!(kw[0].key.source, "/d/proj/x.md");
    let vec = index
        .read()
        .unwrap()
        .vector_search(&vector("common words galore common"), 5, &scope)
        .unwrap();
    assert_eq!(vec.len(), 1);
    assert_eq!(vec[0].key.source, "/d/proj/x.md");
    let docs = index
        .read()
        .unwrap()
        .document_search("common", 5, &scope)
        .unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0].source, "/d/proj/x.md");
}

/// Each filter (format, date, path pattern) narrows every list before its
/// cut: sixty better matches outside it leave the one inside in the top 5.
pub fn a_filter_applies_before_the_cut<S: Subject>(subject: &S) {
    let store = subject.fresh();
    let index = subject.open(&store);
    for i in 0..60 {
        put(
            &index,
            &format!("/d/other/{i}.txt"),
            &["common words galore common"],
        );
    }
    let texts = vec!["common".to_string()];
    let mut rec = record("/d/team/specs/x.md", "Title", 1);
    rec.mtime = 1_800_000_000.0; // 2027-01-15
    index
        .replace_source(rec, chunks(&texts), Some(vectors(&texts)))
        .unwrap();
    let formats = vec!["md".to_string()];
    let paths = vec!["**/specs/**".to_string()];
    let requests = [
        FilterRequest {
            formats: &formats,
            ..Default::default()
        },
        FilterRequest {
            paths: &paths,
            ..Default::default()
        },
        FilterRequest {
            modified_after: Some("2027-01-01"),
            ..Default::default()
        },
    ];
    for request in requests {
        let filter = Filter::new(request, &["/d".to_string()]).unwrap();
        let scope = Scope::all().with_filter(filter);
        let kw = index
            .read()
            .unwrap()
            .keyword_search("common", 5, &scope)
            .unwrap();
        let vec = index
            .read()
            .unwrap()
            .vector_search(&vector("common words galore common"), 5, &scope)
            .unwrap();
        let docs = index
            .read()
            .unwrap()
            .document_search("common", 5, &scope)
            .unwrap();
        let listed = index.read().unwrap().sources(&scope).unwrap();
        let found: Vec<&str> = [
            kw.iter().map(|c| c.key.source.as_str()).collect::<Vec<_>>(),
            vec.iter().map(|c| c.key.source.as_str()).collect(),
            docs.iter().map(|d| d.source.as_str()).collect(),
            listed.iter().map(|r| r.source.as_str()).collect(),
        ]
        .concat();
        assert_eq!(found, ["/d/team/specs/x.md"; 4], "{request:?}");
    }
}

/// Sources stored without vectors are counted, and get their vectors later.
pub fn vectorless_sources_are_counted_and_get_vectors_later<S: Subject>(subject: &S) {
    let store = subject.fresh();
    let index = subject.open(&store);
    let mut rec = record("/d/a.md", "T", 1);
    rec.embedded_with = None;
    index
        .replace_source(rec, vec![chunk(0, "no vector yet")], None)
        .unwrap();
    assert_eq!(
        index
            .read()
            .unwrap()
            .stats()
            .unwrap()
            .vectorless_chunk_count,
        1
    );
    assert_eq!(
        index
            .read()
            .unwrap()
            .keyword_search("vector", 5, &Scope::all())
            .unwrap()
            .len(),
        1
    );
    assert!(index
        .read()
        .unwrap()
        .vector_search(&vector("no vector yet"), 5, &Scope::all())
        .unwrap()
        .is_empty());
    put(&index, "/d/a.md", &["no vector yet"]);
    assert_eq!(
        index
            .read()
            .unwrap()
            .stats()
            .unwrap()
            .vectorless_chunk_count,
        0
    );
    assert_eq!(
        index.cached_vectors("test-model", &["no vector yet", "unknown"]),
        vec![Some(vector("no vector yet")), None]
    );
    assert_eq!(
        index.cached_vectors("another-model", &["no vector yet"]),
        vec![None]
    );
}

/// Vectors stored in batches are each durable once their call returns.
pub fn vectors_arrive_in_batches_each_durable<S: Subject>(subject: &S) {
    let store = subject.fresh();
    let texts: Vec<String> = (0..10).map(|i| format!("batch chunk number {i}")).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    {
        let index = subject.open(&store);
        let mut rec = record("/d/big.csv", "Big", texts.len());
        rec.embedded_with = None;
        index.replace_source(rec, chunks(&texts), None).unwrap();
        subject.compact(&index);
        let n = index
            .set_vectors(
                "/d/big.csv",
                "test-model",
                0,
                &refs[..4],
                vectors(&texts[..4]),
                false,
            )
            .unwrap();
        assert_eq!(n, 4);
        assert_eq!(
            index
                .read()
                .unwrap()
                .stats()
                .unwrap()
                .vectorless_chunk_count,
            6
        );
        let rec = index.read().unwrap().source("/d/big.csv").unwrap().unwrap();
        assert_eq!(rec.embedded_with, None, "not embedded until the last batch");
        // A stale batch (texts that are not the stored ones) is refused by name.
        let e = index
            .set_vectors(
                "/d/big.csv",
                "test-model",
                4,
                &["other"],
                vectors(&texts[..1]),
                false,
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("/d/big.csv") && e.contains("changed"), "{e}");
    }
    let index = subject.open(&store);
    assert_eq!(
        index
            .read()
            .unwrap()
            .stats()
            .unwrap()
            .vectorless_chunk_count,
        6
    );
    index
        .set_vectors(
            "/d/big.csv",
            "test-model",
            4,
            &refs[4..],
            vectors(&texts[4..]),
            true,
        )
        .unwrap();
    let check = |index: &S::Index| {
        assert_eq!(
            index
                .read()
                .unwrap()
                .stats()
                .unwrap()
                .vectorless_chunk_count,
            0
        );
        let rec = index.read().unwrap().source("/d/big.csv").unwrap().unwrap();
        assert_eq!(rec.embedded_with.as_deref(), Some("test-model"));
        for (i, t) in texts.iter().enumerate() {
            let hit = &index
                .read()
                .unwrap()
                .vector_search(&vector(t), 1, &Scope::all())
                .unwrap()[0];
            assert_eq!(hit.key.index, i as u32, "{t}");
            let kw = index
                .read()
                .unwrap()
                .keyword_search(&format!("number {i}"), 1, &Scope::all())
                .unwrap();
            assert_eq!(kw[0].key.index, i as u32, "{t}: keyword side");
        }
        assert_eq!(
            index
                .read()
                .unwrap()
                .chunks("/d/big.csv", 0..=u32::MAX)
                .unwrap()
                .len(),
            10
        );
        assert_eq!(
            index.cached_vectors("test-model", &[&texts[0]]),
            vec![Some(vector(&texts[0]))]
        );
    };
    check(&index);
    subject.compact(&index);
    check(&index);
    drop(index);
    check(&subject.open(&store));
}

/// Chunks of one section that carry its breadcrumb before their text.
fn section(crumb: &str, bodies: &[&str], first: u32) -> Vec<Chunk> {
    bodies
        .iter()
        .enumerate()
        .map(|(i, body)| {
            let prefix = format!("{crumb}\n\n");
            let mut c = chunk(first + i as u32, &format!("{prefix}{body}"));
            c.layout.prefix_len = prefix.len() as u32;
            c
        })
        .collect()
}

/// Every source's score from `document_search` on the chunked index, and
/// from `keyword_search` on an index holding each source as one chunk.
fn both(chunked: &impl Index, whole: &impl Index, query: &str) -> Vec<(String, f32, f32)> {
    let docs = chunked
        .read()
        .unwrap()
        .document_search(query, 100, &Scope::all())
        .unwrap();
    let singles: HashMap<String, f32> = whole
        .read()
        .unwrap()
        .keyword_search(query, 100, &Scope::all())
        .unwrap()
        .into_iter()
        .map(|c| (c.key.source, c.value))
        .collect();
    assert_eq!(docs.len(), singles.len(), "{query}: the same sources match");
    docs.into_iter()
        .map(|d| {
            let single = singles[&d.source];
            (d.source, d.score, single)
        })
        .collect()
}

fn assert_same(chunked: &impl Index, whole: &impl Index, queries: &[&str]) {
    for query in queries {
        for (source, grouped, single) in both(chunked, whole, query) {
            assert!(
                (grouped - single).abs() <= 1e-4 * single.abs().max(1.0),
                "{query} {source}: {grouped} as chunks, {single} as one document"
            );
        }
    }
}

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

fn put_titled(index: &impl Index, source: &str, title: &str, texts: &[String]) {
    index
        .replace_source(record(source, title, texts.len()), chunks(texts), None)
        .unwrap();
}

/// Whole-document BM25 equals BM25 over the chunks' text joined, through
/// replaces and deletes.
pub fn a_source_of_many_chunks_scores_as_one_document<S: Subject>(subject: &S) {
    let (a, b) = (subject.fresh(), subject.fresh());
    let chunked = subject.open(&a);
    let whole = subject.open(&b);
    let write = |s: usize, salt: usize| {
        let t = texts(s, salt);
        let title = if s.is_multiple_of(3) {
            "Buffer title"
        } else {
            "Other"
        };
        put_titled(&chunked, &format!("/d/{s}.md"), title, &t);
        put_titled(&whole, &format!("/d/{s}.md"), title, &[t.join(" ")]);
    };
    for s in 0..30 {
        write(s, 0);
    }
    let queries = ["vacuum", "checkpoint wal", "lock row page", "buffer title"];
    assert_same(&chunked, &whole, &queries);
    // Replaced sources change their length and counts; deleted ones leave
    // the collection.
    for s in (0..30).step_by(4) {
        write(s, 1);
    }
    for s in [5, 6, 7] {
        chunked.delete_source(&format!("/d/{s}.md")).unwrap();
        whole.delete_source(&format!("/d/{s}.md")).unwrap();
    }
    assert_same(&chunked, &whole, &queries);
}

/// A document that names the term in each of its sections ranks above one
/// that names it once, more densely; each carries the chunk that matched.
pub fn a_document_that_repeats_the_term_across_sections_ranks_first<S: Subject>(subject: &S) {
    let store = subject.fresh();
    let index = subject.open(&store);
    let spread: Vec<String> = (0..5)
        .map(|i| format!("checkpoint settings part {i} about disks"))
        .collect();
    put_titled(&index, "/d/spread.md", "Settings", &spread);
    put_titled(
        &index,
        "/d/once.md",
        "Notes",
        &["unrelated words here".into(), "a checkpoint note".into()],
    );
    for i in 0..20 {
        put_titled(
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
    let scoped = index
        .read()
        .unwrap()
        .document_search("checkpoint", 1, &Scope::new(["/d/once.md"]))
        .unwrap();
    assert_eq!(scoped.len(), 1);
    assert_eq!(scoped[0].source, "/d/once.md");
}

/// Whole-document BM25: a source made of many chunks scores as the one
/// document they make together, each breadcrumb counted once per section,
/// before and after reopening.
pub fn a_document_scores_as_its_chunks_together<S: Subject>(subject: &S) {
    let (a, b) = (subject.fresh(), subject.fresh());
    let chunked = subject.open(&a);
    let whole = subject.open(&b);
    for s in 0..12 {
        let source = format!("/d/{s}.md");
        let mut chunks = section("Guide > Checkpoint tuning", &["wal page buffer"; 4], 0);
        chunks.extend(section(
            "Guide > Locks",
            &["row lock", "table lock query"],
            4,
        ));
        chunks.truncate(1 + s % 6);
        // The document as the reader has it: each breadcrumb once.
        let mut text = String::new();
        let mut last = "";
        for c in &chunks {
            let (crumb, body) = c.text.split_at(c.layout.prefix_len as usize);
            if crumb != last {
                text.push_str(crumb);
                last = crumb;
            }
            text.push_str(body);
            text.push(' ');
        }
        let n = chunks.len();
        chunked
            .replace_source(record(&source, "T", n), chunks, None)
            .unwrap();
        whole
            .replace_source(record(&source, "T", 1), vec![chunk(0, &text)], None)
            .unwrap();
    }
    assert_same(
        &chunked,
        &whole,
        &["checkpoint", "guide lock", "wal tuning"],
    );
    let before = both(&chunked, &whole, "checkpoint tuning");
    subject.compact(&chunked);
    drop(chunked);
    let reopened = subject.open(&a);
    let after = both(&reopened, &whole, "checkpoint tuning");
    assert_eq!(after.len(), before.len());
    for ((s1, g1, _), (s2, g2, _)) in before.iter().zip(&after) {
        assert_eq!(s1, s2);
        assert!((g1 - g2).abs() <= 1e-4 * g1.abs().max(1.0));
    }
}
