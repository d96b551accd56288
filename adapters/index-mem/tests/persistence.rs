//! Durability, sharing and error behaviour of the on-disk index.

mod common;

use std::io::Write;

use common::*;
use minirag_core::ports::{Index, IndexError};
use minirag_core::search::Scope;
use minirag_index_mem::MemIndex;

fn put(index: &MemIndex, source: &str, texts: &[&str]) {
    let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
    index
        .replace_source(
            record(source, "Title", texts.len()),
            chunks(&texts),
            Some(vectors(&texts)),
        )
        .unwrap();
}

#[test]
fn writes_survive_reopen_and_replace_shrinks() {
    let dir = tempfile::tempdir().unwrap();
    {
        let index = MemIndex::open(dir.path()).unwrap();
        put(
            &index,
            "/d/a.md",
            &["alpha one", "alpha two", "alpha three"],
        );
        put(&index, "/d/b#1.md", &["beta"]);
        put(&index, "/d/a.md", &["alpha only"]);
    }
    let index = MemIndex::open(dir.path()).unwrap();
    let a = index.chunks("/d/a.md", 0..=100).unwrap();
    assert_eq!(
        a.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
        ["alpha only"]
    );
    assert_eq!(
        index.source("/d/a.md").unwrap().unwrap().file_hash,
        "hash-of-/d/a.md"
    );
    assert_eq!(index.stats().unwrap().chunk_count, 2);
    let hits = index.keyword_search("alpha", 10, &Scope::all()).unwrap();
    assert_eq!(hits.len(), 1, "old chunks are gone from the postings");
    let near = index
        .vector_search(&vector("beta"), 1, &Scope::all())
        .unwrap();
    assert_eq!(near[0].key.source, "/d/b#1.md");
    assert!(near[0].value < 1e-5);
}

#[test]
fn compaction_keeps_every_answer() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemIndex::open(dir.path()).unwrap();
    for i in 0..20 {
        put(
            &index,
            &format!("/d/{i}.md"),
            &[&format!("doc {i} apple"), &format!("doc {i} pear")],
        );
    }
    index.delete_source("/d/3.md").unwrap();
    index.move_source("/d/4.md", "/d/moved.md", 9.0).unwrap();
    let before_kw = index.keyword_search("apple 7", 50, &Scope::all()).unwrap();
    let before_vec = index
        .vector_search(&vector("doc 7 pear"), 50, &Scope::all())
        .unwrap();
    index.compact().unwrap();
    assert!(dir.path().join("snapshot.meta").is_file());
    assert_eq!(
        index.keyword_search("apple 7", 50, &Scope::all()).unwrap(),
        before_kw
    );
    assert_eq!(
        index
            .vector_search(&vector("doc 7 pear"), 50, &Scope::all())
            .unwrap(),
        before_vec
    );
    drop(index);
    let reopened = MemIndex::open(dir.path()).unwrap();
    assert_eq!(
        reopened
            .keyword_search("apple 7", 50, &Scope::all())
            .unwrap(),
        before_kw
    );
    assert_eq!(
        reopened
            .vector_search(&vector("doc 7 pear"), 50, &Scope::all())
            .unwrap(),
        before_vec
    );
    assert_eq!(reopened.source("/d/moved.md").unwrap().unwrap().mtime, 9.0);
    assert!(reopened.source("/d/3.md").unwrap().is_none());
    // Writes after a compaction land in the new log.
    put(&reopened, "/d/new.md", &["fresh kiwi"]);
    drop(reopened);
    let again = MemIndex::open(dir.path()).unwrap();
    assert_eq!(
        again.keyword_search("kiwi", 5, &Scope::all()).unwrap()[0]
            .key
            .source,
        "/d/new.md"
    );
}

#[test]
fn another_handle_sees_writes_on_its_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let reader = MemIndex::open(dir.path()).unwrap();
    let writer = MemIndex::open(dir.path()).unwrap();
    assert!(reader
        .keyword_search("mango", 5, &Scope::all())
        .unwrap()
        .is_empty());
    put(&writer, "/d/m.md", &["mango season"]);
    assert_eq!(
        reader
            .keyword_search("mango", 5, &Scope::all())
            .unwrap()
            .len(),
        1
    );
    writer.compact().unwrap();
    put(&writer, "/d/n.md", &["mango again"]);
    assert_eq!(
        reader
            .keyword_search("mango", 5, &Scope::all())
            .unwrap()
            .len(),
        2,
        "picks up a newer snapshot and its log"
    );
    writer.delete_source("/d/m.md").unwrap();
    assert_eq!(
        reader
            .keyword_search("mango", 5, &Scope::all())
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_torn_log_tail_is_cut_and_acknowledged_writes_stay() {
    let dir = tempfile::tempdir().unwrap();
    {
        let index = MemIndex::open(dir.path()).unwrap();
        put(&index, "/d/a.md", &["acknowledged write"]);
    }
    let wal = dir.path().join("wal.log");
    let mut f = std::fs::OpenOptions::new().append(true).open(&wal).unwrap();
    f.write_all(&[200, 0, 0, 0, 1, 2, 3, 4, 9, 9]).unwrap();
    drop(f);
    let index = MemIndex::open(dir.path()).unwrap();
    assert_eq!(
        index.chunks("/d/a.md", 0..=0).unwrap()[0].text,
        "acknowledged write"
    );
    put(&index, "/d/b.md", &["after the tear"]);
    drop(index);
    let index = MemIndex::open(dir.path()).unwrap();
    assert_eq!(index.stats().unwrap().source_count, 2);
}

/// Writes four sources across three snapshot generations and a live log.
fn three_generations(dir: &std::path::Path) {
    let index = MemIndex::open(dir).unwrap();
    put(&index, "/d/a.md", &["alpha one", "alpha two"]);
    index.compact().unwrap();
    put(&index, "/d/b.md", &["beta"]);
    put(&index, "/d/a.md", &["alpha again"]);
    index.compact().unwrap();
    put(&index, "/d/c.md", &["gamma"]);
    index.compact().unwrap();
    put(&index, "/d/d.md", &["delta"]);
    index.delete_source("/d/b.md").unwrap();
}

fn flip_last_byte(path: &std::path::Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xFF;
    std::fs::write(path, bytes).unwrap();
}

fn assert_three_generations(index: &MemIndex) {
    let texts = |s: &str| -> Vec<String> {
        index
            .chunks(s, 0..=10)
            .unwrap()
            .into_iter()
            .map(|c| c.text)
            .collect()
    };
    assert_eq!(texts("/d/a.md"), ["alpha again"]);
    assert!(index.source("/d/b.md").unwrap().is_none());
    assert_eq!(texts("/d/c.md"), ["gamma"]);
    assert_eq!(texts("/d/d.md"), ["delta"]);
    let near = index
        .vector_search(&vector("gamma"), 1, &Scope::all())
        .unwrap();
    assert_eq!(near[0].key.source, "/d/c.md");
    assert_eq!(index.stats().unwrap().chunk_count, 3);
}

#[test]
fn a_corrupt_snapshot_is_rebuilt_from_the_previous_one_and_the_logs() {
    let dir = tempfile::tempdir().unwrap();
    three_generations(dir.path());
    flip_last_byte(&dir.path().join("snapshot.meta"));
    let index = MemIndex::open(dir.path()).unwrap();
    assert_three_generations(&index);
    drop(index);
    // The rebuilt state was written as a new, good snapshot.
    let meta = std::fs::read(dir.path().join("snapshot.meta")).unwrap();
    std::fs::remove_file(dir.path().join("wal.prev.log")).unwrap();
    assert_three_generations(&MemIndex::open(dir.path()).unwrap());
    assert_eq!(
        std::fs::read(dir.path().join("snapshot.meta")).unwrap(),
        meta
    );
}

#[test]
fn a_corrupt_vector_file_is_rebuilt_too() {
    let dir = tempfile::tempdir().unwrap();
    three_generations(dir.path());
    let newest = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("vectors-"))
        .max_by_key(|n| {
            n.trim_start_matches("vectors-")
                .trim_end_matches(".f32")
                .parse::<u64>()
                .unwrap()
        })
        .unwrap();
    flip_last_byte(&dir.path().join(newest));
    assert_three_generations(&MemIndex::open(dir.path()).unwrap());
}

#[test]
fn a_corrupt_snapshot_without_its_history_is_named() {
    let dir = tempfile::tempdir().unwrap();
    three_generations(dir.path());
    flip_last_byte(&dir.path().join("snapshot.meta"));
    std::fs::remove_file(dir.path().join("wal.prev.log")).unwrap();
    let err = MemIndex::open(dir.path()).err().unwrap().to_string();
    assert!(
        err.contains("snapshot.meta") && err.contains("corrupt"),
        "{err}"
    );
}

#[test]
fn a_width_clash_is_refused_and_another_model_switches_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemIndex::open(dir.path()).unwrap();
    put(&index, "/d/a.md", &["x"]);
    // The same model cannot change width: one of the two is lying.
    let mut wide = minirag_core::ports::Embeddings::new(16);
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
    assert!(
        err.to_string().contains("8-dimensional") && err.to_string().contains("16-dimensional")
    );
    assert_eq!(
        index.stats().unwrap().source_count,
        1,
        "nothing half-written"
    );

    // Another model's vectors (here also another width) switch the index:
    // the old vectors go, the old chunks stay for keyword search.
    let mut other = record("/d/c.md", "T", 1);
    other.embedded_with = Some("other-model".into());
    let mut wide = minirag_core::ports::Embeddings::new(16);
    wide.push(&[0.25; 16]);
    index
        .replace_source(other, vec![chunk(0, "z")], Some(wide))
        .unwrap();
    for index in [index, MemIndex::open(dir.path()).unwrap()] {
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

#[test]
fn db_path_that_is_a_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let err = MemIndex::open(&file).err().unwrap().to_string();
    assert!(
        err.contains("DB_PATH") && err.contains("not-a-dir"),
        "{err}"
    );
}

#[test]
fn scope_applies_before_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemIndex::open(dir.path()).unwrap();
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
    let kw = index.keyword_search("common", 5, &scope).unwrap();
    assert_eq!(kw.len(), 1);
    assert_eq!(kw[0].key.source, "/d/proj/x.md");
    let vec = index
        .vector_search(&vector("common words galore common"), 5, &scope)
        .unwrap();
    assert_eq!(vec.len(), 1);
    assert_eq!(vec[0].key.source, "/d/proj/x.md");
}

#[test]
fn vectorless_sources_are_counted_and_get_vectors_later() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemIndex::open(dir.path()).unwrap();
    let mut rec = record("/d/a.md", "T", 1);
    rec.embedded_with = None;
    index
        .replace_source(rec, vec![chunk(0, "no vector yet")], None)
        .unwrap();
    assert_eq!(index.stats().unwrap().vectorless_chunk_count, 1);
    assert_eq!(
        index
            .keyword_search("vector", 5, &Scope::all())
            .unwrap()
            .len(),
        1
    );
    assert!(index
        .vector_search(&vector("no vector yet"), 5, &Scope::all())
        .unwrap()
        .is_empty());
    put(&index, "/d/a.md", &["no vector yet"]);
    assert_eq!(index.stats().unwrap().vectorless_chunk_count, 0);
    assert_eq!(
        index.cached_vectors("test-model", &["no vector yet", "unknown"]),
        vec![Some(vector("no vector yet")), None]
    );
    assert_eq!(
        index.cached_vectors("another-model", &["no vector yet"]),
        vec![None]
    );
}

#[test]
fn vectors_arrive_in_batches_each_durable_and_survive_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let texts: Vec<String> = (0..10).map(|i| format!("batch chunk number {i}")).collect();
    {
        let index = MemIndex::open(dir.path()).unwrap();
        let mut rec = record("/d/big.csv", "Big", texts.len());
        rec.embedded_with = None;
        index.replace_source(rec, chunks(&texts), None).unwrap();
        // A snapshot first, so the next batches hit rows of the mapped file
        // (moved to new slots) as well as rows appended since.
        index.compact().unwrap();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
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
        let s = index.stats().unwrap();
        assert_eq!(s.vectorless_chunk_count, 6);
        let rec = index.source("/d/big.csv").unwrap().unwrap();
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
    // Reopened from the log: the first batch is there, the rest follows.
    let index = MemIndex::open(dir.path()).unwrap();
    assert_eq!(index.stats().unwrap().vectorless_chunk_count, 6);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
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
    let check = |index: &MemIndex| {
        assert_eq!(index.stats().unwrap().vectorless_chunk_count, 0);
        let rec = index.source("/d/big.csv").unwrap().unwrap();
        assert_eq!(rec.embedded_with.as_deref(), Some("test-model"));
        for (i, t) in texts.iter().enumerate() {
            let hit = &index.vector_search(&vector(t), 1, &Scope::all()).unwrap()[0];
            assert_eq!(hit.key.index, i as u32, "{t}");
            let kw = index
                .keyword_search(&format!("number {i}"), 1, &Scope::all())
                .unwrap();
            assert_eq!(
                kw[0].key.index, i as u32,
                "{t}: keyword side after the move"
            );
        }
        let stored = index.chunks("/d/big.csv", 0..=u32::MAX).unwrap();
        assert_eq!(stored.len(), 10);
        assert_eq!(
            index.cached_vectors("test-model", &[&texts[0]]),
            vec![Some(vector(&texts[0]))]
        );
    };
    check(&index);
    index.compact().unwrap();
    check(&index);
    drop(index);
    check(&MemIndex::open(dir.path()).unwrap());
}
