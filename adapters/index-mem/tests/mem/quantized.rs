//! A large snapshot's int8 copy of its vectors, kept beside them: read in
//! place at open, and only rebuilt when it is missing or damaged.

use crate::common;

use std::path::{Path, PathBuf};

use common::*;
use minirag_core::ports::{Candidate, Index};
use minirag_core::search::Scope;
use minirag_index_mem::MemIndex;

fn big_index(dir: &Path) -> MemIndex {
    let index = MemIndex::open(dir).unwrap();
    put_big_source(&index);
    index.compact().unwrap();
    index
}

fn int8_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "i8"))
        .collect();
    files.sort();
    files
}

/// The top 10 of a few queries, each near a known row.
fn answers(index: &MemIndex) -> Vec<Vec<Candidate>> {
    let view = index.read().unwrap();
    [3, 4_321, 9_999]
        .iter()
        .map(|&i| {
            let hits = view.vector_search(&spread(i), 10, &Scope::all()).unwrap();
            assert_eq!(hits[0].key.index, i as u32, "{hits:?}");
            hits
        })
        .collect()
}

#[test]
fn a_large_snapshot_keeps_its_int8_copy_and_reads_it_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let index = big_index(dir.path());
    let files = int8_files(dir.path());
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(index.quantized_in_place().unwrap());
    let expected = answers(&index);
    drop(index);

    let reopened = MemIndex::open(dir.path()).unwrap();
    assert!(reopened.quantized_in_place().unwrap());
    assert_eq!(answers(&reopened), expected);
    // Two more generations: the copies of older ones go with their vectors.
    reopened.compact().unwrap();
    reopened.compact().unwrap();
    let now = int8_files(dir.path());
    assert_eq!(now.len(), 2, "the current and previous generation: {now:?}");
    assert!(!now.contains(&files[0]), "{now:?}");
    assert!(reopened.quantized_in_place().unwrap());
    assert_eq!(answers(&reopened), expected);
}

#[test]
fn a_missing_or_damaged_int8_copy_is_built_again_with_the_same_answers() {
    let dir = tempfile::tempdir().unwrap();
    let index = big_index(dir.path());
    let expected = answers(&index);
    drop(index);
    let file = int8_files(dir.path()).pop().unwrap();
    let good = std::fs::read(&file).unwrap();
    type Damage = Box<dyn Fn(&Path)>;
    let damages: [(&str, Damage); 3] = [
        (
            "missing",
            Box::new(|p: &Path| std::fs::remove_file(p).unwrap()),
        ),
        (
            "one code flipped",
            Box::new(|p: &Path| {
                let mut bytes = std::fs::read(p).unwrap();
                bytes[DIM * 4_321] ^= 0x40;
                std::fs::write(p, bytes).unwrap();
            }),
        ),
        (
            "cut short",
            Box::new(|p: &Path| {
                let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
                f.set_len(100).unwrap();
            }),
        ),
    ];
    for (what, damage) in damages {
        std::fs::write(&file, &good).unwrap();
        damage(&file);
        let index = MemIndex::open(dir.path()).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(!index.quantized_in_place().unwrap(), "{what}");
        index.warm().unwrap();
        assert_eq!(answers(&index), expected, "{what}");
        assert!(index.verify().unwrap().is_empty(), "{what}");
    }
}

#[test]
fn a_small_snapshot_has_no_int8_copy() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemIndex::open(dir.path()).unwrap();
    let texts: Vec<String> = (0..100).map(|i| format!("entry {i}")).collect();
    index
        .replace_source(
            record("/d/a.md", "A", 100),
            chunks(&texts),
            Some(vectors(&texts)),
        )
        .unwrap();
    index.compact().unwrap();
    assert!(int8_files(dir.path()).is_empty());
    assert!(!index.quantized_in_place().unwrap());
}

/// The newest file of the snapshot's with extension `ext`.
fn newest(dir: &Path, ext: &str) -> PathBuf {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort_by_key(|p| {
        let stem = p.file_stem().unwrap().to_str().unwrap();
        stem.trim_start_matches("vectors-").parse::<u64>().unwrap()
    });
    files.pop().unwrap()
}

/// Vector files larger than open reads whole are checked by `verify`
/// (`doctor --deep`) instead: a flipped byte opens and searches without
/// a panic, and verify names the file; sound files verify clean.
#[test]
fn large_vector_files_are_checked_by_verify_not_at_open() {
    let dir = tempfile::tempdir().unwrap();
    drop(big_index(dir.path()));
    let small_limit = 1024;
    let sound = MemIndex::open_checking(dir.path(), small_limit).unwrap();
    assert!(sound.quantized_in_place().unwrap());
    assert_eq!(sound.verify().unwrap(), Vec::<String>::new());
    drop(sound);
    for ext in ["f32", "i8"] {
        let file = newest(dir.path(), ext);
        let good = std::fs::read(&file).unwrap();
        let mut bad = good.clone();
        bad[good.len() / 2] ^= 0x40;
        std::fs::write(&file, &bad).unwrap();
        let index = MemIndex::open_checking(dir.path(), small_limit)
            .unwrap_or_else(|e| panic!("{ext}: {e}"));
        let view = index.read().unwrap();
        for i in [3, 4_321, 9_999] {
            assert!(!view
                .vector_search(&spread(i), 10, &Scope::all())
                .unwrap()
                .is_empty());
        }
        drop(view);
        let problems = index.verify().unwrap();
        let name = file.file_name().unwrap().to_str().unwrap();
        assert_eq!(problems.len(), 1, "{ext}: {problems:?}");
        assert!(
            problems[0].contains(name) && problems[0].contains("checksum mismatch"),
            "{ext}: {problems:?}"
        );
        drop(index);
        std::fs::write(&file, &good).unwrap();
    }
}
