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
    let paths = Paths {
        dir: dir.path().to_path_buf(),
    };
    write_snapshot(&paths, 3, &mut empty("m"), std::iter::empty(), None).unwrap();
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
}
