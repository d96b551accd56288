//! Real processes: kill -9 at random moments, and a second process's writes.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use minirag_core::ports::Index;
use minirag_core::search::Scope;
use minirag_index_mem::MemIndex;

const CHILD: &str = env!("CARGO_BIN_EXE_minirag-index-child");

/// A small deterministic generator (no rand dependency for one number a round).
fn pseudo_random(seed: u64) -> u64 {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    x ^= x >> 33;
    x.wrapping_mul(0xff51afd7ed558ccd) ^ (x >> 29)
}

/// Whether a new view of `index` reads `source`.
fn holds(index: &MemIndex, source: &str) -> bool {
    index.read().unwrap().source(source).unwrap().is_some()
}

/// Writes one source of one chunk from a child process, durably.
fn write_once(dir: &std::path::Path, source: &str, text: &str) {
    let status = Command::new(CHILD)
        .arg(dir)
        .args(["once", source, text])
        .status()
        .unwrap();
    assert!(status.success());
}

fn crash_rounds(rounds: u64) {
    let dir = tempfile::tempdir().unwrap();
    // Last acknowledged round per source, across every crash so far.
    let mut acked: std::collections::HashMap<String, (u64, usize)> = Default::default();
    for round in 0..rounds {
        let mut child = Command::new(CHILD)
            .arg(dir.path())
            .arg("loop")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let wanted = 1 + pseudo_random(round) % 40;
        for _ in 0..wanted {
            let line = lines.next().expect("child alive").unwrap();
            let mut parts = line.split(' ');
            let source = parts.next().unwrap().to_string();
            let i: u64 = parts.next().unwrap().parse().unwrap();
            let n: usize = parts.next().unwrap().parse().unwrap();
            acked.insert(source, (i, n));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();

        let index = MemIndex::open(dir.path())
            .unwrap_or_else(|e| panic!("round {round}: the index does not open: {e}"));
        for (source, (i, n)) in &acked {
            let chunks = index.read().unwrap().chunks(source, 0..=100).unwrap();
            // A later, unacknowledged write of the same source may have landed whole.
            let round_of = |t: &str| {
                t.split(' ')
                    .nth(1)
                    .and_then(|r| r.parse::<u64>().ok())
                    .unwrap()
            };
            assert!(!chunks.is_empty(), "round {round}: {source} lost");
            let r = round_of(&chunks[0].text);
            assert!(
                r >= *i,
                "round {round}: {source} went back from write {i} to {r}"
            );
            if r == *i {
                assert_eq!(chunks.len(), *n, "round {round}: {source} not whole");
            }
            assert!(
                chunks.iter().all(|c| round_of(&c.text) == r),
                "round {round}: {source} mixes two writes"
            );
            assert_eq!(
                chunks.len(),
                1 + (r % 5) as usize,
                "round {round}: {source} partially written"
            );
        }
    }
}

#[test]
fn kill_9_during_writes_loses_no_acknowledged_write() {
    crash_rounds(20);
}

#[test]
#[ignore = "long: 200 crash rounds"]
fn kill_9_during_writes_loses_no_acknowledged_write_200_rounds() {
    crash_rounds(200);
}

#[test]
fn a_second_process_write_is_seen_by_an_open_index() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemIndex::open(dir.path()).unwrap();
    assert!(index
        .read()
        .unwrap()
        .keyword_search("papaya", 5, &Scope::all())
        .unwrap()
        .is_empty());
    let status = Command::new(CHILD)
        .arg(dir.path())
        .args(["once", "/d/two.md", "papaya harvest notes"])
        .status()
        .unwrap();
    assert!(status.success());
    let hits = index
        .read()
        .unwrap()
        .keyword_search("papaya", 5, &Scope::all())
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].key.source, "/d/two.md");
    assert_eq!(
        index
            .read()
            .unwrap()
            .source("/d/two.md")
            .unwrap()
            .unwrap()
            .title,
        "title of /d/two.md"
    );
}

/// A thread that holds a view and calls the index again while another
/// process has appended to the log: the call catches up without waiting
/// for the view (it used to wait forever), and the view stays on its
/// generation.
#[test]
fn a_thread_holding_a_view_calls_the_index_again_after_another_process_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemIndex::open(dir.path()).unwrap();
    write_once(dir.path(), "/d/first.md", "written before the view");
    let view = index.read().unwrap();
    write_once(dir.path(), "/d/second.md", "written while the view is held");
    // Another method on the same thread, and another view.
    let first = index.read().unwrap().source("/d/first.md").unwrap();
    assert!(first.is_some(), "the state the view holds is read");
    let again = index.read().unwrap();
    assert!(again.source("/d/first.md").unwrap().is_some());
    assert!(
        again.source("/d/second.md").unwrap().is_some(),
        "a new view reads the other process's write"
    );
    drop(again);
    // The view stays on its generation; once it is dropped, the other
    // process's write is read.
    assert!(view.source("/d/second.md").unwrap().is_none());
    drop(view);
    assert!(holds(&index, "/d/second.md"));
}

/// An index that read `/d/first.md`, written by another process.
fn index_after_a_first_write(dir: &std::path::Path) -> MemIndex {
    let index = MemIndex::open(dir).unwrap();
    write_once(dir, "/d/first.md", "written before the reads");
    assert!(holds(&index, "/d/first.md"));
    index
}

/// Runs `body` while another thread holds a view of `index` taken before
/// it; returns whether that view reads `/d/second.md` at the end.
fn with_a_read_in_flight(index: &MemIndex, body: impl FnOnce()) -> bool {
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        // Made here, so a failed assertion drops it and frees the reader.
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let reader = s.spawn(move || {
            let view = index.read().unwrap();
            held_tx.send(()).unwrap();
            let _ = release_rx.recv();
            view.source("/d/second.md").unwrap().is_some()
        });
        held_rx.recv().unwrap();
        body();
        release_tx.send(()).unwrap();
        reader.join().unwrap()
    })
}

/// With a read in flight on another thread, a call does not replay another
/// process's records itself: a helper thread catches up beside the reads
/// and publishes the generation, which the next view reads. A call with no
/// other read in flight catches up itself (the test above).
#[test]
fn with_reads_in_flight_a_helper_catches_up_beside_them() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_after_a_first_write(dir.path());
    assert_eq!(
        index.join_catch_up_helper(),
        None,
        "a lone read caught up itself"
    );
    let pinned_sees_it = with_a_read_in_flight(&index, || {
        write_once(
            dir.path(),
            "/d/second.md",
            "written while another thread reads",
        );
        // This call starts the helper and reads what is published.
        let _ = index.read().unwrap().source("/d/second.md").unwrap();
        assert_eq!(
            index.join_catch_up_helper(),
            Some(1),
            "the helper caught up"
        );
        assert!(
            holds(&index, "/d/second.md"),
            "the helper's generation holds the other process's write"
        );
    });
    assert!(
        !pinned_sees_it,
        "the view in flight keeps the generation it pinned"
    );
}

/// A helper that cannot catch up (the log unreadable: a folder where the
/// file was) leaves it to the next read, which catches up itself and says
/// why it cannot; once the log is back, reads go on.
#[test]
fn a_failed_helper_leaves_the_catch_up_and_its_error_to_the_next_read() {
    let dir = tempfile::tempdir().unwrap();
    let index = index_after_a_first_write(dir.path());
    let (wal, aside) = (dir.path().join("wal.log"), dir.path().join("wal.aside"));
    with_a_read_in_flight(&index, || {
        write_once(
            dir.path(),
            "/d/second.md",
            "written while another thread reads",
        );
        std::fs::rename(&wal, &aside).unwrap();
        std::fs::create_dir(&wal).unwrap();
        assert!(
            index.read().is_ok(),
            "the read leaves the catch-up to the helper"
        );
        assert_eq!(index.join_catch_up_helper(), Some(0), "the helper failed");
        let failed = index.read().err().expect("the next read catches up itself");
        assert!(failed.to_string().contains("wal.log"), "{failed}");
        std::fs::remove_dir(&wal).unwrap();
        std::fs::rename(&aside, &wal).unwrap();
        // With the reader's view still held, the next read starts a helper.
        assert!(index.read().is_ok());
        assert_eq!(index.join_catch_up_helper(), Some(1));
        assert!(holds(&index, "/d/second.md"));
    });
}

/// A write from a thread that holds a view goes through (it used to be
/// refused, since it would have waited for that view forever): writes never
/// wait for views, and the view keeps the generation it pinned.
#[test]
fn a_write_from_a_thread_holding_a_view_goes_through_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemIndex::open(dir.path()).unwrap();
    let fixtures = |source: &str, text: &str| {
        (
            minirag_index_conformance::fixtures::record(source, "A", 1),
            vec![minirag_index_conformance::fixtures::chunk(0, text)],
        )
    };
    let (record, chunks) = fixtures("/d/a.md", "first words");
    index.replace_source(record, chunks, None).unwrap();
    let view = index.read().unwrap();
    let (record, chunks) = fixtures("/d/a.md", "second words");
    index.replace_source(record, chunks, None).unwrap();
    let (record, chunks) = fixtures("/d/b.md", "other words");
    index.replace_source(record, chunks, None).unwrap();
    assert_eq!(index.delete_source("/d/none.md").unwrap(), 0);
    let texts = |view: &dyn minirag_core::ports::IndexView| {
        let keys: Vec<_> = view
            .keyword_search("words", 10, &Scope::all())
            .unwrap()
            .into_iter()
            .map(|c| c.key)
            .collect();
        view.get_chunks(&keys)
            .unwrap()
            .into_iter()
            .map(|c| c.expect("a chunk the search found").text)
            .collect::<std::collections::BTreeSet<_>>()
    };
    assert_eq!(
        texts(&*view),
        ["first words".to_string()].into(),
        "the held view reads the generation it pinned"
    );
    assert_eq!(view.sources(&Scope::all()).unwrap().len(), 1);
    drop(view);
    let now = index.read().unwrap();
    assert_eq!(
        texts(&*now),
        ["other words".to_string(), "second words".to_string()].into()
    );
    drop(now);
    // And a fresh open reads the same: every write was logged.
    let reopened = MemIndex::open(dir.path()).unwrap();
    assert_eq!(
        reopened
            .read()
            .unwrap()
            .sources(&Scope::all())
            .unwrap()
            .len(),
        2
    );
}

/// Another process's records caught up in one go, one of them replacing
/// what an earlier one wrote: the terms counted out must be the chunks'
/// that were there. The index that caught up scores exactly as one that
/// opened after the writes.
#[test]
fn records_caught_up_together_score_as_a_fresh_open() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemIndex::open(dir.path()).unwrap();
    write_once(dir.path(), "/d/a.md", "alpha one bravo bravo");
    write_once(dir.path(), "/d/b.md", "bravo two delta");
    assert!(holds(&index, "/d/b.md"));
    // Two replaces of the same source, caught up in one go.
    write_once(dir.path(), "/d/a.md", "alpha three delta");
    write_once(dir.path(), "/d/a.md", "charlie four alpha alpha");
    let queries = ["alpha", "bravo", "charlie delta", "three", "one two four"];
    let answers = |index: &MemIndex| {
        let view = index.read().unwrap();
        queries
            .iter()
            .map(|q| {
                (
                    view.keyword_search(q, 10, &Scope::all()).unwrap(),
                    view.document_search(q, 10, &Scope::all()).unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    let caught_up = answers(&index);
    let fresh = answers(&MemIndex::open(dir.path()).unwrap());
    assert_eq!(caught_up, fresh);
    assert!(caught_up[2].0.iter().any(|c| c.key.source == "/d/a.md"));
    assert!(caught_up[3].0.is_empty(), "{:?}", caught_up[3]);
}
