//! Durability, sharing and error behaviour of the on-disk files (the
//! adapter-independent rules are in the conformance suite).

mod common;

use std::io::Write;

use common::*;
use minirag_core::ports::Index;
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
