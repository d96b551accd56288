//! Damage behind valid checksums, in any section of the current snapshot
//! format: the index opens with what is sound or names the damage, and
//! whatever it opens answers searches and reads without a panic.

use minirag_core::ports::Index;
use minirag_core::search::Scope;
use minirag_index_conformance::fixtures::{chunks, record, vector, vectors};
use minirag_index_mem::MemIndex;
use proptest::prelude::*;

/// A small snapshot written by the index itself, with no earlier
/// generation to rebuild from: its bytes.
fn snapshot(dir: &std::path::Path) -> Vec<u8> {
    let index = MemIndex::open(dir).unwrap();
    for (s, texts) in [
        ("/d/a.md", &["alpha beta", "beta gamma delta"][..]),
        ("/d/b.md", &["gamma epsilon"][..]),
        ("/d/c.md", &["zeta alpha alpha", "eta", "theta beta"][..]),
    ] {
        let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        index
            .replace_source(
                record(s, "T", texts.len()),
                chunks(&texts),
                Some(vectors(&texts)),
            )
            .unwrap();
    }
    index.compact().unwrap();
    drop(index);
    for gone in ["wal.prev.log", "snapshot.prev.meta"] {
        let _ = std::fs::remove_file(dir.join(gone));
    }
    std::fs::read(dir.join("snapshot.meta")).unwrap()
}

/// Each section's payload range: a 20-byte header, then
/// `[len u64][crc u32][payload]`.
fn sections(bytes: &[u8]) -> Vec<(usize, usize)> {
    let (mut at, mut out) = (20, Vec::new());
    while at + 12 <= bytes.len() {
        let len = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
        out.push((at + 12, len));
        at += 12 + len;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn damage_behind_valid_checksums_opens_or_is_named(
        section in 0usize..7,
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = snapshot(dir.path());
        let parts = sections(&bytes);
        prop_assert_eq!(parts.len(), 7);
        let (start, len) = parts[section];
        prop_assume!(len > 0);
        for (at, value) in &edits {
            bytes[start + at.index(len)] = *value;
        }
        let crc = crc32fast::hash(&bytes[start..start + len]);
        bytes[start - 4..start].copy_from_slice(&crc.to_le_bytes());
        std::fs::write(dir.path().join("snapshot.meta"), &bytes).unwrap();
        match MemIndex::open(dir.path()) {
            Ok(index) => {
                let view = index.read().unwrap();
                let _ = view.stats();
                let _ = view.keyword_search("alpha beta", 5, &Scope::all());
                let _ = view.document_search("gamma", 5, &Scope::all());
                let _ = view.vector_search(&vector("alpha"), 5, &Scope::all());
                for source in view.sources(&Scope::all()).unwrap() {
                    let _ = view.chunks(&source.source, 0..=10);
                    let _ = view.parent_chunks(&source.source, 0);
                }
                drop(view);
                let _ = index.verify();
            }
            Err(e) => prop_assert!(e.to_string().contains("snapshot.meta"), "{}", e),
        }
    }
}
