//! Every write, fsync, rename and link of a small sync fails in turn (the
//! fail points in `disk::faults`): whichever step fails, the index reopens
//! with every write that was acknowledged before it; and so does every step
//! of a compaction large enough to write an int8 copy of its vectors. And a
//! compaction writes its snapshot while a view is held. One test in its own
//! binary, because the fail and watch points are process-wide.

#[path = "mem/common/mod.rs"]
mod common;

use std::collections::BTreeMap;

use common::*;
use minirag_core::ports::Index;
use minirag_core::search::Scope;
use minirag_index_mem::disk::faults;
use minirag_index_mem::MemIndex;

/// One step of the small sync, and what the index holds once it is done.
enum Step {
    Put(&'static str, &'static str),
    Delete(&'static str),
    Compact,
}

const SYNC: &[Step] = &[
    Step::Put("/d/a.md", "alpha one"),
    Step::Put("/d/b.md", "bravo one"),
    Step::Compact,
    Step::Put("/d/c.md", "charlie one"),
    Step::Put("/d/a.md", "alpha two"),
    Step::Delete("/d/b.md"),
    Step::Compact,
    Step::Put("/d/d.md", "delta one"),
];

fn run(index: &MemIndex, step: &Step) -> Result<(), String> {
    match step {
        Step::Put(source, text) => {
            let texts = vec![text.to_string()];
            index
                .replace_source(
                    record(source, "T", 1),
                    chunks(&texts),
                    Some(vectors(&texts)),
                )
                .map_err(|e| e.to_string())
        }
        Step::Delete(source) => index
            .delete_source(source)
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Step::Compact => index.compact().map_err(|e| e.to_string()),
    }
}

fn apply(model: &mut BTreeMap<&'static str, &'static str>, step: &Step) {
    match step {
        Step::Put(s, t) => {
            model.insert(s, t);
        }
        Step::Delete(s) => {
            model.remove(s);
        }
        Step::Compact => {}
    }
}

fn held(index: &MemIndex) -> BTreeMap<String, String> {
    let view = index.read().unwrap();
    view.sources(&Scope::all())
        .unwrap()
        .into_iter()
        .map(|r| {
            let text = view.chunks(&r.source, 0..=0).unwrap()[0].text.clone();
            (r.source, text)
        })
        .collect()
}

#[test]
fn every_failing_step_leaves_every_acknowledged_write() {
    let mut failures = BTreeMap::<&str, usize>::new();
    for n in 1.. {
        let dir = tempfile::tempdir().unwrap();
        let mut acknowledged = BTreeMap::new();
        let mut failed_step = None;
        faults::arm(n);
        if let Ok(index) = MemIndex::open(dir.path()) {
            for (i, step) in SYNC.iter().enumerate() {
                match run(&index, step) {
                    Ok(()) => apply(&mut acknowledged, step),
                    // A failed step ends the sync, as a crash would.
                    Err(_) => {
                        failed_step = Some(i);
                        break;
                    }
                }
            }
        }
        let kind = faults::disarm();
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "step {n}: a failed write left {left:?}");
        let Some(kind) = kind else {
            assert!(failed_step.is_none(), "step {n}: an error with no fault");
            assert!(n > 10, "the sync has more steps than {n}");
            break;
        };
        *failures.entry(kind).or_default() += 1;
        let index = MemIndex::open(dir.path())
            .unwrap_or_else(|e| panic!("step {n} ({kind}): the index does not reopen: {e}"));
        let got = held(&index);
        // The failed step itself may or may not have become durable: what
        // it wrote is allowed either way, nothing acknowledged may be lost.
        let mut with_failed = acknowledged.clone();
        if let Some(i) = failed_step {
            apply(&mut with_failed, &SYNC[i]);
        }
        let as_strings = |m: &BTreeMap<&str, &str>| -> BTreeMap<String, String> {
            m.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert!(
            got == as_strings(&acknowledged) || got == as_strings(&with_failed),
            "step {n} ({kind}, sync step {failed_step:?}): holds {got:?}, acknowledged {acknowledged:?}"
        );
        // And it takes writes again.
        run(&index, &Step::Put("/d/z.md", "zulu")).unwrap();
    }
    for kind in ["write", "fsync", "rename", "link"] {
        assert!(
            failures.get(kind).copied().unwrap_or(0) > 0,
            "no {kind} failed: {failures:?}"
        );
    }
    println!("failed in turn: {failures:?}");
    a_large_compaction_fails_in_turn();
    a_compaction_writes_beside_a_held_view();
}

/// A compaction reads the state beside queries: with a view held (a query
/// in flight), it writes the next snapshot, and only its swap waits for
/// the view. It used to take the write lock first, so it wrote nothing
/// until every view had dropped.
fn a_compaction_writes_beside_a_held_view() {
    let dir = tempfile::tempdir().unwrap();
    let index = std::sync::Arc::new(MemIndex::open(dir.path()).unwrap());
    for step in &SYNC[..2] {
        run(&index, step).unwrap();
    }
    let (tx, rx) = std::sync::mpsc::channel();
    faults::watch(Some(tx));
    let view = index.read().unwrap();
    let compactor = std::thread::spawn({
        let index = index.clone();
        move || index.compact()
    });
    // A bound for a failing build, not a wait for a working one.
    let point = rx.recv_timeout(std::time::Duration::from_secs(120));
    faults::watch(None);
    assert_eq!(
        point,
        Ok(faults::Point::SnapshotWritten),
        "the compaction wrote nothing while a view was held"
    );
    assert!(dir.path().join("snapshot.meta").is_file());
    // The view still reads the generation it pinned.
    let hits = view.keyword_search("bravo", 5, &Scope::all()).unwrap();
    assert_eq!(hits[0].key.source, "/d/b.md");
    drop(view);
    compactor.join().unwrap().unwrap();
    let mut expected = BTreeMap::new();
    for step in &SYNC[..2] {
        apply(&mut expected, step);
    }
    let expected: BTreeMap<String, String> = expected
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(held(&index), expected);
}

/// Each step of a compaction that writes an int8 copy (the f32 vectors,
/// the int8 file, the meta) fails in turn: the index reopens with every
/// chunk and vector, its int8 copy read in place or built.
fn a_large_compaction_fails_in_turn() {
    let mut failed = 0;
    for n in 1.. {
        let dir = tempfile::tempdir().unwrap();
        let index = MemIndex::open(dir.path()).unwrap();
        put_big_source(&index);
        faults::arm(n);
        let compacted = index.compact();
        let Some(kind) = faults::disarm() else {
            compacted.unwrap();
            assert!(index.quantized_in_place().unwrap());
            break;
        };
        failed += 1;
        drop(index);
        let index = MemIndex::open(dir.path())
            .unwrap_or_else(|e| panic!("step {n} ({kind}): the index does not reopen: {e}"));
        index.warm().unwrap();
        let view = index.read().unwrap();
        assert_eq!(
            view.stats().unwrap().chunk_count,
            BIG_ROWS as u64,
            "step {n} ({kind})"
        );
        let hits = view
            .vector_search(&spread(4_321), 1, &Scope::all())
            .unwrap();
        assert_eq!(hits[0].key.index, 4_321, "step {n} ({kind})");
    }
    assert!(
        failed >= 6,
        "the compaction has fewer fail points than expected: {failed}"
    );
    println!("a large compaction failed in turn at {failed} steps");
}
