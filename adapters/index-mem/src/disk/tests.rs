use std::fs;

use super::codec::config;
use super::*;
use crate::bm25::Field;
use crate::legacy::SourceEntryV1;
use crate::records::DiskChunk;

fn empty(model: &str) -> Snapshot {
    Snapshot {
        version: FORMAT_VERSION,
        dim: 0,
        model_id: Some(model.into()),
        sources: Vec::new(),
        chunks: Vec::new(),
        present: Vec::new(),
        text: Field::default(),
        title: Field::default(),
        vector_file: String::new(),
        vector_crc: 0,
        vector_bytes: 0,
        quantized: None,
        table: None,
        repeats: None,
        outdated: false,
    }
}

#[test]
fn format_1_snapshots_still_open() {
    let dir = tempfile::tempdir().unwrap();
    let payload = bincode::serde::encode_to_vec(empty("old-model"), config()).unwrap();
    let mut bytes = SNAP_MAGIC_V1.to_vec();
    bytes.extend_from_slice(&7u64.to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    bytes.extend_from_slice(&payload);
    let path = dir.path().join("snapshot.meta");
    fs::write(&path, bytes).unwrap();
    let (generation, snap) = read_snapshot_at(&path).unwrap().unwrap();
    assert_eq!(generation, 7);
    assert_eq!(snap.model_id.as_deref(), Some("old-model"));
}

#[test]
fn format_2_round_trips_and_checks_each_part() {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::new(dir.path().to_path_buf());
    write_snapshot(
        &paths,
        3,
        &mut empty("m"),
        std::iter::empty(),
        None,
        std::iter::empty(),
    )
    .unwrap();
    let (generation, snap) = read_snapshot(&paths).unwrap().unwrap();
    assert_eq!((generation, snap.model_id.as_deref()), (3, Some("m")));
    let mut bytes = fs::read(paths.meta()).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1; // inside the last section
    fs::write(paths.meta(), bytes).unwrap();
    let err = read_snapshot(&paths).err().unwrap().to_string();
    assert!(err.contains("checksum mismatch"), "{err}");
}

#[test]
fn format_2_snapshots_open_with_their_sources_lifted() {
    let dir = tempfile::tempdir().unwrap();
    let source = crate::legacy::DiskSourceV1 {
        source: "/docs/a.md".into(),
        source_type: 0,
        title: "A".into(),
        title_seeded: false,
        file_hash: "h".into(),
        mtime: 1.0,
        ingested_at: "2026-11-01T00:00:00Z".into(),
        chunk_count: 0,
        scheme_version: 3,
        embedded_with: None,
    };
    let head = Head {
        version: FORMAT_VERSION,
        dim: 0,
        model_id: None::<String>,
        sources: vec![SourceEntryV1 {
            record: source,
            slots: Vec::new(),
        }],
        chunks: Vec::<(u32, DiskChunk)>::new(),
        present: Vec::<bool>::new(),
        vector_file: String::new(),
        vector_crc: 0,
        vector_bytes: 0,
    };
    let first = bincode::serde::encode_to_vec(&head, config()).unwrap();
    let second =
        bincode::serde::encode_to_vec((Field::default(), Field::default()), config()).unwrap();
    let mut bytes = SNAP_MAGIC_V2.to_vec();
    bytes.extend_from_slice(&4u64.to_le_bytes());
    for payload in [&first, &second] {
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
        bytes.extend_from_slice(payload);
    }
    let path = dir.path().join("snapshot.meta");
    fs::write(&path, bytes).unwrap();
    let (generation, snap) = read_snapshot_at(&path).unwrap().unwrap();
    assert_eq!(generation, 4);
    assert_eq!(snap.sources[0].record.source, "/docs/a.md");
    assert_eq!(snap.sources[0].record.ocr_engine, "");
    assert!(snap.outdated);
    // The next settle rewrites it in the current format, however short the
    // log; the one after leaves it be.
    use minirag_core::ports::Index;
    let index = crate::MemIndex::open(dir.path()).unwrap();
    let mut said = Vec::new();
    index.settle(&mut |s| said.push(s.to_string())).unwrap();
    assert!(said[0].contains("current format"), "{said:?}");
    assert_eq!(&fs::read(&path).unwrap()[..8], SNAP_MAGIC);
    let identity = snapshot_identity(&Paths::new(dir.path().to_path_buf()));
    index.settle(&mut |s| said.push(s.to_string())).unwrap();
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(
        snapshot_identity(&Paths::new(dir.path().to_path_buf())),
        identity
    );
    let view = index.read().unwrap();
    assert!(view.source("/docs/a.md").unwrap().is_some());
}

fn table_chunk(i: u32) -> DiskChunk {
    DiskChunk {
        index: i,
        parent: i / 3,
        text: format!("chunk {i} of the table, ünïcode").into(),
        prefix_len: 5,
        kind: (i % 4) as u8,
        headings: vec![(1, format!("H{i}"), format!("# H{i}"))].into(),
        heading_is_body: i.is_multiple_of(2),
        continues_section: i.is_multiple_of(3),
        location: crate::records::DiskLocation {
            numbers: [i, i + 1, 0, 0, 0, 0, 0, 0],
            text: i.is_multiple_of(5).then(|| format!("Sheet{i}").into()),
        },
    }
}

/// The table's payload for `n` chunks, in a file, mapped.
fn table_file(dir: &std::path::Path, n: u32) -> (std::sync::Arc<memmap2::Mmap>, usize) {
    let chunks: Vec<DiskChunk> = (0..n).map(table_chunk).collect();
    let mut bytes = b"prefix".to_vec();
    chunk_table::write_chunk_table(
        &mut bytes,
        chunks
            .iter()
            .map(|c| Some((c.index % 7, std::borrow::Cow::Borrowed(c)))),
    )
    .unwrap();
    let path = dir.join("table");
    fs::write(&path, &bytes).unwrap();
    // SAFETY: the file is this test's own and is not changed while mapped.
    let map = unsafe { memmap2::Mmap::map(&fs::File::open(&path).unwrap()) }.unwrap();
    (std::sync::Arc::new(map), bytes.len() - 6)
}

#[test]
fn a_chunk_table_reads_back_every_chunk_and_column_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let (map, len) = table_file(dir.path(), 1_000);
    let table = ChunkTable::new(map, 6, len).unwrap();
    assert_eq!(table.len(), 1_000);
    for i in [0u32, 1, 499, 999] {
        let want = table_chunk(i);
        assert_eq!(table.chunk(i as usize).as_ref(), Some(&want));
        assert_eq!(table.sid(i as usize), i % 7);
        assert_eq!(table.index(i as usize), i);
        // Read alone from the blob's start (past 250: a wider varint).
        assert_eq!(table.parent(i as usize), Some(want.parent));
        assert_eq!(table.key(i as usize), text_key(&want.text));
    }
    let (empty, len) = table_file(dir.path(), 0);
    assert!(ChunkTable::new(empty, 6, len).unwrap().is_empty());
}

#[test]
fn a_chunk_table_of_the_wrong_shape_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (map, len) = table_file(dir.path(), 10);
    // A count larger than the table, a table cut short, and one whose
    // blob ends fall back: each refused, none read out of bounds.
    let mut bytes = map[..].to_vec();
    let count_at = bytes.len() - 8;
    bytes[count_at..].copy_from_slice(&u64::MAX.to_le_bytes());
    let path = dir.path().join("bad");
    let mapped = |bytes: &[u8]| {
        fs::write(&path, bytes).unwrap();
        // SAFETY: the file is this test's own; it is rewritten only after
        // the table over the previous map was checked and dropped.
        std::sync::Arc::new(unsafe { memmap2::Mmap::map(&fs::File::open(&path).unwrap()) }.unwrap())
    };
    let err = ChunkTable::new(mapped(&bytes), 6, len).unwrap_err();
    assert!(err.contains("count"), "{err}");
    assert!(ChunkTable::new(mapped(&map[..]), 6, 5).is_err());
    let mut fallen = map[..].to_vec();
    // The first blob end (after 10 × (4 + 4 + 8) bytes of columns).
    let ends = fallen.len() - 8 - 10 * 8;
    fallen[ends..ends + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let err = ChunkTable::new(mapped(&fallen), 6, len).unwrap_err();
    assert!(err.contains("fall back"), "{err}");
}
