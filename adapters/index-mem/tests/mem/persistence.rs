//! Durability, sharing and error behaviour of the on-disk files (the
//! adapter-independent rules are in the conformance suite).

use crate::common;

use std::io::Write;

use common::*;
use minirag_core::ports::{Embeddings, Index};
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
    let before_kw = index
        .read()
        .unwrap()
        .keyword_search("apple 7", 50, &Scope::all())
        .unwrap();
    let before_vec = index
        .read()
        .unwrap()
        .vector_search(&vector("doc 7 pear"), 50, &Scope::all())
        .unwrap();
    let parent = |index: &MemIndex| index.read().unwrap().parent_chunks("/d/7.md", 0).unwrap();
    let before_parent = parent(&index);
    assert_eq!(before_parent.len(), 2);
    index.compact().unwrap();
    assert!(dir.path().join("snapshot.meta").is_file());
    // Read back from the snapshot's chunk table, each parent found alone.
    assert_eq!(parent(&index), before_parent);
    assert!(index
        .read()
        .unwrap()
        .parent_chunks("/d/7.md", 1)
        .unwrap()
        .is_empty());
    assert_eq!(
        index
            .read()
            .unwrap()
            .keyword_search("apple 7", 50, &Scope::all())
            .unwrap(),
        before_kw
    );
    assert_eq!(
        index
            .read()
            .unwrap()
            .vector_search(&vector("doc 7 pear"), 50, &Scope::all())
            .unwrap(),
        before_vec
    );
    drop(index);
    let reopened = MemIndex::open(dir.path()).unwrap();
    assert_eq!(
        reopened
            .read()
            .unwrap()
            .keyword_search("apple 7", 50, &Scope::all())
            .unwrap(),
        before_kw
    );
    assert_eq!(
        reopened
            .read()
            .unwrap()
            .vector_search(&vector("doc 7 pear"), 50, &Scope::all())
            .unwrap(),
        before_vec
    );
    assert_eq!(
        reopened
            .read()
            .unwrap()
            .source("/d/moved.md")
            .unwrap()
            .unwrap()
            .mtime,
        9.0
    );
    assert!(reopened
        .read()
        .unwrap()
        .source("/d/3.md")
        .unwrap()
        .is_none());
    // Writes after a compaction land in the new log.
    put(&reopened, "/d/new.md", &["fresh kiwi"]);
    drop(reopened);
    let again = MemIndex::open(dir.path()).unwrap();
    assert_eq!(
        again
            .read()
            .unwrap()
            .keyword_search("kiwi", 5, &Scope::all())
            .unwrap()[0]
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
        index.read().unwrap().chunks("/d/a.md", 0..=0).unwrap()[0].text,
        "acknowledged write"
    );
    put(&index, "/d/b.md", &["after the tear"]);
    drop(index);
    let index = MemIndex::open(dir.path()).unwrap();
    assert_eq!(index.read().unwrap().stats().unwrap().source_count, 2);
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
            .read()
            .unwrap()
            .chunks(s, 0..=10)
            .unwrap()
            .into_iter()
            .map(|c| c.text)
            .collect()
    };
    assert_eq!(texts("/d/a.md"), ["alpha again"]);
    assert!(index.read().unwrap().source("/d/b.md").unwrap().is_none());
    assert_eq!(texts("/d/c.md"), ["gamma"]);
    assert_eq!(texts("/d/d.md"), ["delta"]);
    let near = index
        .read()
        .unwrap()
        .vector_search(&vector("gamma"), 1, &Scope::all())
        .unwrap();
    assert_eq!(near[0].key.source, "/d/c.md");
    assert_eq!(index.read().unwrap().stats().unwrap().chunk_count, 3);
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
    flip_last_byte(&dir.path().join(&newest));
    let index = MemIndex::open(dir.path()).unwrap();
    assert_three_generations(&index);
    // The file set aside is the vector file, not the snapshot that named it.
    let kept: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".damaged-") && !n.ends_with(".txt"))
        .collect();
    assert!(
        kept.len() == 1 && kept[0].starts_with(&format!("{newest}.damaged-")),
        "{kept:?}"
    );
    let damage = index.read().unwrap().stats().unwrap().damage;
    assert!(damage.iter().any(|d| d.contains(&newest)), "{damage:?}");
}

/// Without its history, a snapshot whose sources and chunks cannot be read
/// does not open, and the error names it (damaged postings alone open:
/// see `without_history_a_damaged_snapshot_opens_with_what_is_sound`).
#[test]
fn a_corrupt_snapshot_without_its_history_is_named() {
    let dir = tempfile::tempdir().unwrap();
    three_generations(dir.path());
    flip(&dir.path().join("snapshot.meta"), 40);
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

/// A source embedded batch by batch after it was stored, as a sync embeds a
/// big file: past 16,384 rows the vectors written since the snapshot spill
/// to a scratch file. Searches, cached vectors, a compaction and a reopen
/// must all see exactly the vectors written.
#[test]
fn vectors_of_a_big_source_spill_and_read_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemIndex::open(dir.path()).unwrap();
    let texts: Vec<String> = (0..20_000)
        .map(|i| format!("row {i} of the ledger"))
        .collect();
    index
        .replace_source(
            record("/d/big.csv", "Big", texts.len()),
            chunks(&texts),
            None,
        )
        .unwrap();
    for (b, batch) in texts.chunks(1_000).enumerate() {
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        let mut rows = Embeddings::new(DIM);
        for i in b * 1_000..b * 1_000 + batch.len() {
            rows.push(&spread(i));
        }
        let last = (b + 1) * 1_000 >= texts.len();
        let n = index
            .set_vectors(
                "/d/big.csv",
                "test-model",
                (b * 1_000) as u32,
                &refs,
                rows,
                last,
            )
            .unwrap();
        assert_eq!(n, batch.len());
    }
    let probe = ["row 17 of the ledger", "row 19999 of the ledger"];
    let cached = index.cached_vectors("test-model", &probe);
    assert_eq!(cached[0].as_deref(), Some(spread(17).as_slice()));
    assert_eq!(cached[1].as_deref(), Some(spread(19_999).as_slice()));
    let query = spread(19_999);
    // The best hit is an exact match, rescored from the f32 row read back.
    let exact = |index: &MemIndex| {
        let hits = index
            .read()
            .unwrap()
            .vector_search(&query, 5, &Scope::all())
            .unwrap();
        assert_eq!(hits.len(), 5);
        assert!(hits[0].value < 1e-5, "{hits:?}");
    };
    exact(&index);
    let keyword = index
        .read()
        .unwrap()
        .keyword_search("19999 ledger", 3, &Scope::all())
        .unwrap();
    assert_eq!(keyword[0].key.index, 19_999);
    // The scratch file has no name: the folder holds only the index's files.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with(".tmp")), "{names:?}");
    index.compact().unwrap();
    exact(&index);
    drop(index);
    let reopened = MemIndex::open(dir.path()).unwrap();
    exact(&reopened);
    assert_eq!(reopened.cached_vectors("test-model", &probe), cached);
    // A compaction that renumbers nothing keeps the postings as they were.
    assert_eq!(
        reopened
            .read()
            .unwrap()
            .keyword_search("19999 ledger", 3, &Scope::all())
            .unwrap(),
        keyword
    );
}

/// A snapshot whose checksums hold but whose contents do not decode keeps
/// the decoder's error under the index's and the engine's.
#[test]
fn an_undecodable_snapshots_cause_is_kept_to_the_decoder() {
    use minirag_core::error::EngineError;
    let dir = tempfile::tempdir().unwrap();
    let payload = [0xffu8; 64];
    let mut meta = b"MRSNAP03".to_vec();
    meta.extend_from_slice(&1u64.to_le_bytes());
    for _ in 0..2 {
        meta.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        meta.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        meta.extend_from_slice(&payload);
    }
    std::fs::write(dir.path().join("snapshot.meta"), meta).unwrap();
    let err = MemIndex::open(dir.path()).err().unwrap();
    assert!(err.to_string().contains("snapshot.meta"), "{err}");
    let engine = EngineError::Index(err);
    let found = minirag_core::cause::in_chain::<bincode::error::DecodeError>(&engine).is_some();
    assert!(found, "the walk from {engine} reaches bincode's error");
}

/// The end of a sync folds a long log into a snapshot, so the next open
/// reads a snapshot instead of replaying the sync; a short log stays.
#[test]
fn settling_folds_a_long_log_and_leaves_a_short_one() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemIndex::open(dir.path()).unwrap();
    put(&index, "/d/small.md", &["a few words"]);
    let mut said = Vec::new();
    index.settle(&mut |l| said.push(l.to_string())).unwrap();
    assert!(said.is_empty(), "{said:?}");
    assert!(
        !dir.path().join("snapshot.meta").exists(),
        "a short log stays"
    );

    // Over a MiB of chunk text: the log passes the threshold.
    let text = "word ".repeat(2_000);
    for i in 0..120 {
        put(&index, &format!("/d/{i}.md"), &[&text]);
    }
    let log = std::fs::metadata(dir.path().join("wal.log")).unwrap().len();
    assert!(log > minirag_index_mem::SETTLE_AFTER_BYTES, "{log}");
    assert_eq!(
        index.read().unwrap().stats().unwrap().log_bytes,
        log - 16,
        "status shows what a cold open replays"
    );
    index.settle(&mut |l| said.push(l.to_string())).unwrap();
    assert_eq!(index.read().unwrap().stats().unwrap().log_bytes, 0);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("folding the index log"), "{said:?}");
    assert!(dir.path().join("snapshot.meta").is_file());
    let log = std::fs::metadata(dir.path().join("wal.log")).unwrap().len();
    assert!(log <= 64, "the log is folded: {log} bytes left");
    drop(index);
    let reopened = MemIndex::open(dir.path()).unwrap();
    let hits = reopened
        .read()
        .unwrap()
        .keyword_search("few", 5, &Scope::all())
        .unwrap();
    assert_eq!(hits[0].key.source, "/d/small.md");
    assert_eq!(
        reopened
            .read()
            .unwrap()
            .sources(&Scope::all())
            .unwrap()
            .len(),
        121
    );
}

/// Offsets of the log's records (after its 16-byte header).
fn record_offsets(wal: &std::path::Path) -> Vec<u64> {
    let bytes = std::fs::read(wal).unwrap();
    let mut out = Vec::new();
    let mut pos = 16usize;
    while pos + 8 <= bytes.len() {
        out.push(pos as u64);
        let len = u32::from_le_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize;
        pos += 8 + len;
    }
    out
}

fn flip(path: &std::path::Path, at: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at as usize] ^= 0x10;
    std::fs::write(path, bytes).unwrap();
}

/// Five writes: a, b, c; then b replaced and d added.
fn five_writes(dir: &std::path::Path) {
    let index = MemIndex::open(dir).unwrap();
    put(&index, "/d/a.md", &["alpha first"]);
    put(&index, "/d/b.md", &["bravo first"]);
    put(&index, "/d/c.md", &["charlie first"]);
    put(&index, "/d/b.md", &["bravo second"]);
    put(&index, "/d/d.md", &["delta first"]);
}

/// A flipped byte in a middle record is damage, not a torn tail: the index
/// opens with everything before it, sets the log aside under its own name,
/// marks the sources later records wrote stale, and says so in its stats;
/// nothing acknowledged before the damage is lost.
#[test]
fn a_bad_record_in_the_middle_of_the_log_is_named_and_contained() {
    for in_header in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        five_writes(dir.path());
        let wal = dir.path().join("wal.log");
        let offsets = record_offsets(&wal);
        assert_eq!(offsets.len(), 5);
        // The third record (c): its payload, or its length field.
        flip(
            &wal,
            if in_header {
                offsets[2] + 1
            } else {
                offsets[2] + 20
            },
        );
        let index = MemIndex::open(dir.path()).unwrap();
        let stats = index.read().unwrap().stats().unwrap();
        assert_eq!(stats.damage.len(), 1, "in_header {in_header}: {stats:?}");
        let message = &stats.damage[0];
        assert!(
            message.contains("damaged at byte") && message.contains("2 later records"),
            "{message}"
        );
        // Before the damage: a and b's first version.
        assert_eq!(
            index.read().unwrap().chunks("/d/a.md", 0..=0).unwrap()[0].text,
            "alpha first"
        );
        assert_eq!(
            index.read().unwrap().chunks("/d/b.md", 0..=0).unwrap()[0].text,
            "bravo first"
        );
        // b was written again after the damage: it is stale, so a sync
        // rebuilds it; c and d were never applied.
        assert!(stats.stale_chunk_count >= 1, "{stats:?}");
        assert!(index
            .read()
            .unwrap()
            .chunks("/d/d.md", 0..=0)
            .unwrap_or_default()
            .is_empty());
        let kept: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("wal.damaged-") && n.ends_with(".log"))
            .collect();
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert!(message.contains(&kept[0]), "{message}");
        // Writes go on, and a reopen still reports the damage it kept.
        put(&index, "/d/e.md", &["echo after"]);
        drop(index);
        let index = MemIndex::open(dir.path()).unwrap();
        assert_eq!(
            index.read().unwrap().chunks("/d/e.md", 0..=0).unwrap()[0].text,
            "echo after"
        );
        assert_eq!(index.read().unwrap().stats().unwrap().damage.len(), 1);
    }
}

/// A torn last write (one never acknowledged) is cut silently; an
/// acknowledged last record that is damaged or cut short afterwards is
/// named: `wal.end` notes where acknowledged records end.
#[test]
fn a_torn_write_is_silent_and_a_lost_acknowledged_record_is_named() {
    let dir = tempfile::tempdir().unwrap();
    five_writes(dir.path());
    let wal = dir.path().join("wal.log");
    let mut f = std::fs::OpenOptions::new().append(true).open(&wal).unwrap();
    f.write_all(&[200, 0, 0, 0, 1, 2, 3, 4, 9, 9]).unwrap();
    drop(f);
    let index = MemIndex::open(dir.path()).unwrap();
    let stats = index.read().unwrap().stats().unwrap();
    assert!(
        stats.damage.is_empty(),
        "a torn write is not damage: {stats:?}"
    );
    assert_eq!(stats.source_count, 4);
    drop(index);

    let dir = tempfile::tempdir().unwrap();
    five_writes(dir.path());
    let wal = dir.path().join("wal.log");
    let last = *record_offsets(&wal).last().unwrap();
    flip(&wal, last + 20);
    let index = MemIndex::open(dir.path()).unwrap();
    let stats = index.read().unwrap().stats().unwrap();
    assert_eq!(stats.damage.len(), 1, "{stats:?}");
    assert!(stats.damage[0].contains("cut short"), "{:?}", stats.damage);
    assert_eq!(stats.source_count, 3, "everything before it stays");
    assert_eq!(
        index.read().unwrap().chunks("/d/b.md", 0..=0).unwrap()[0].text,
        "bravo second"
    );
    // Named once: writes go on from the end found.
    put(&index, "/d/e.md", &["echo"]);
    drop(index);
    let index = MemIndex::open(dir.path()).unwrap();
    assert_eq!(index.read().unwrap().stats().unwrap().damage.len(), 1);
    assert_eq!(index.read().unwrap().stats().unwrap().source_count, 4);
}

/// A flipped bit in the log's header (its magic, or its generation) leaves
/// no record to trust: the index opens, applies none of them, and says so;
/// it does not take the log for an old one and drop it without a word, and
/// a generation that points past the snapshot does not send the open
/// round a loop.
#[test]
fn a_damaged_log_header_is_named_not_dropped() {
    for at in [3u64, 9] {
        let dir = tempfile::tempdir().unwrap();
        five_writes(dir.path());
        flip(&dir.path().join("wal.log"), at);
        let index = MemIndex::open(dir.path()).unwrap();
        let stats = index.read().unwrap().stats().unwrap();
        assert_eq!(stats.damage.len(), 1, "byte {at}: {stats:?}");
        assert!(
            stats.damage[0].contains("5 later records"),
            "{:?}",
            stats.damage
        );
        put(&index, "/d/e.md", &["echo after"]);
        drop(index);
        let index = MemIndex::open(dir.path()).unwrap();
        assert_eq!(
            index.read().unwrap().chunks("/d/e.md", 0..=0).unwrap()[0].text,
            "echo after"
        );
    }
}

/// `verify` finds a sound index sound, and names damage until a rebuild of
/// what it lost (here: writing the lost source again, as a sync would).
#[test]
fn verify_names_damage_until_what_it_lost_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    five_writes(dir.path());
    assert_eq!(
        MemIndex::open(dir.path()).unwrap().verify().unwrap(),
        Vec::<String>::new()
    );
    let wal = dir.path().join("wal.log");
    let offsets = record_offsets(&wal);
    flip(&wal, offsets[2] + 20);
    let index = MemIndex::open(dir.path()).unwrap();
    let problems = index.verify().unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("damaged at byte"), "{problems:?}");
    put(&index, "/d/b.md", &["bravo second"]);
    assert_eq!(index.verify().unwrap(), Vec::<String>::new());
    assert_eq!(
        index.read().unwrap().stats().unwrap().damage.len(),
        1,
        "the report stays for doctor"
    );
}

/// An index of [`five_writes`], folded into a snapshot with no earlier
/// generation kept beside it to rebuild from.
fn five_writes_without_history(dir: &std::path::Path) {
    five_writes(dir);
    MemIndex::open(dir).unwrap().compact().unwrap();
    for gone in ["wal.prev.log", "snapshot.prev.meta"] {
        let _ = std::fs::remove_file(dir.join(gone));
    }
}

/// With no earlier generation to rebuild from, a damaged snapshot opens
/// with what is sound: damaged postings are rebuilt from the chunks' text,
/// a damaged vector file is left out (the chunks stay, without vectors);
/// either way the damage is named and nothing else is lost.
#[test]
fn without_history_a_damaged_snapshot_opens_with_what_is_sound() {
    for part in ["postings", "vectors"] {
        let dir = tempfile::tempdir().unwrap();
        five_writes_without_history(dir.path());
        if part == "postings" {
            let meta = dir.path().join("snapshot.meta");
            // The second section: the postings.
            let (start, len) = sections(&meta)[1];
            flip(&meta, start + len - 10);
        } else {
            let vectors = std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|x| x == "f32"))
                .unwrap();
            flip(&vectors, 40);
        }
        let index = MemIndex::open(dir.path())
            .unwrap_or_else(|e| panic!("{part}: the index does not open: {e}"));
        let stats = index.read().unwrap().stats().unwrap();
        assert_eq!(stats.source_count, 4, "{part}: {stats:?}");
        assert_eq!(stats.damage.len(), 1, "{part}: {stats:?}");
        assert!(
            stats.damage[0].contains("what is sound"),
            "{part}: {:?}",
            stats.damage
        );
        let hits = index
            .read()
            .unwrap()
            .keyword_search("bravo", 5, &Scope::all())
            .unwrap();
        assert_eq!(hits[0].key.source, "/d/b.md", "{part}");
        if part == "vectors" {
            assert_eq!(stats.vectorless_chunk_count, 4, "{stats:?}");
        }
        assert_eq!(
            index.verify().unwrap(),
            Vec::<String>::new(),
            "{part}: what opened is consistent"
        );
        drop(index);
        let reopened = MemIndex::open(dir.path()).unwrap();
        assert_eq!(
            reopened.read().unwrap().stats().unwrap().source_count,
            4,
            "{part}: the salvage was written out"
        );
    }
}

#[test]
fn without_history_damaged_locations_open_and_the_next_sync_rebuilds_them() {
    // The locations' section, then the attributes'.
    for section in [2, 3] {
        let (_dir, index, stats) = open_with_section_flipped(section);
        assert_eq!(stats.source_count, 4, "{stats:?}");
        assert_eq!(stats.damage.len(), 1, "{stats:?}");
        assert!(
            stats.damage[0].contains("without their places"),
            "{:?}",
            stats.damage
        );
        // Every source is left to the next sync, which rebuilds its places.
        assert_eq!(stats.stale_chunk_count, stats.chunk_count, "{stats:?}");
        let hits = index
            .read()
            .unwrap()
            .keyword_search("bravo", 5, &Scope::all())
            .unwrap();
        assert_eq!(hits[0].key.source, "/d/b.md");
    }
}

/// Five writes with no history, the first byte of the snapshot's section
/// `section` flipped, then opened: the folder, the index and its stats.
fn open_with_section_flipped(
    section: usize,
) -> (tempfile::TempDir, MemIndex, minirag_core::ports::IndexStats) {
    let dir = tempfile::tempdir().unwrap();
    five_writes_without_history(dir.path());
    let meta = dir.path().join("snapshot.meta");
    let (start, _) = sections(&meta)[section];
    flip(&meta, start);
    let index = MemIndex::open(dir.path()).unwrap();
    let stats = index.read().unwrap().stats().unwrap();
    (dir, index, stats)
}

/// Where each section of a `snapshot.meta` starts (its payload) and how
/// long it is: a 20-byte header, then `[len u64][crc u32][payload]`.
fn sections(meta: &std::path::Path) -> Vec<(u64, u64)> {
    let bytes = std::fs::read(meta).unwrap();
    let mut at = 20usize;
    let mut out = Vec::new();
    while at + 12 <= bytes.len() {
        let len = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        out.push((at as u64 + 12, len));
        at += 12 + len as usize;
    }
    out
}

/// The fifth section (the int8 copy's record) and the seventh (the
/// sources' breadcrumb repeats) hold only what is derived: damaged with no
/// history, each is named, built again, and nothing else is lost.
#[test]
fn without_history_a_damaged_derived_section_is_named_and_nothing_else_is_lost() {
    for (section, named) in [(4, "int8"), (6, "repeats")] {
        let (_dir, index, stats) = open_with_section_flipped(section);
        assert_eq!(stats.source_count, 4, "{named}: {stats:?}");
        assert_eq!(stats.stale_chunk_count, 0, "{named}: {stats:?}");
        assert_eq!(stats.damage.len(), 1, "{named}: {stats:?}");
        assert!(stats.damage[0].contains(named), "{:?}", stats.damage);
        assert!(index.verify().unwrap().is_empty(), "{named}");
    }
}

/// Retired chunks' postings stay in the lists until compaction: once more
/// chunks were retired than are live (and a few thousand), the log is
/// folded whatever its size, and what a search finds is unchanged.
#[test]
fn mostly_retired_chunks_fold_the_log_whatever_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let index = MemIndex::open(dir.path()).unwrap();
    let texts: Vec<String> = (0..10).map(|i| format!("part {i} of the notes")).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let log_bytes = || index.read().unwrap().stats().unwrap().log_bytes;
    // Each write after the first retires the 10 chunks before it.
    let writes = minirag_index_mem::COMPACT_AFTER_RETIRED / 10 + 1;
    for _ in 0..writes {
        put(&index, "/d/edited.md", &texts);
    }
    assert!(log_bytes() > 0, "{} retired: not yet", (writes - 1) * 10);
    put(&index, "/d/edited.md", &texts);
    assert_eq!(log_bytes(), 0, "folded");
    assert!(dir.path().join("snapshot.meta").is_file());
    let hits = index
        .read()
        .unwrap()
        .keyword_search("notes", 20, &Scope::all())
        .unwrap();
    assert_eq!(hits.len(), 10);
}
