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
            let chunks = index.chunks(source, 0..=100).unwrap();
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
        .keyword_search("papaya", 5, &Scope::all())
        .unwrap()
        .is_empty());
    let status = Command::new(CHILD)
        .arg(dir.path())
        .args(["once", "/d/two.md", "papaya harvest notes"])
        .status()
        .unwrap();
    assert!(status.success());
    let hits = index.keyword_search("papaya", 5, &Scope::all()).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].key.source, "/d/two.md");
    assert_eq!(
        index.source("/d/two.md").unwrap().unwrap().title,
        "title of /d/two.md"
    );
}
