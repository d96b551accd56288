//! Older on-disk layouts, decoded and lifted to the current ones: sources
//! without `ocr_engine` (snapshot formats 1 and 2, WAL format 1). An index
//! written by an older build opens; its next write first folds an old log
//! into a new snapshot, so a log never mixes layouts.

use serde::{Deserialize, Serialize};

use crate::records::SourceEntry;
use crate::records::{DiskChunk, DiskSource, Op};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskSourceV1 {
    pub source: String,
    pub source_type: u8,
    pub title: String,
    pub title_seeded: bool,
    pub file_hash: String,
    pub mtime: f64,
    pub ingested_at: String,
    pub chunk_count: u32,
    pub scheme_version: u32,
    pub embedded_with: Option<String>,
}

impl From<DiskSourceV1> for DiskSource {
    fn from(d: DiskSourceV1) -> Self {
        Self {
            source: d.source,
            source_type: d.source_type,
            title: d.title,
            title_seeded: d.title_seeded,
            file_hash: d.file_hash,
            mtime: d.mtime,
            ingested_at: d.ingested_at,
            chunk_count: d.chunk_count,
            scheme_version: d.scheme_version,
            embedded_with: d.embedded_with,
            ocr_engine: String::new(),
            attributes: Default::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceEntryV1 {
    pub record: DiskSourceV1,
    pub slots: Vec<u32>,
}

impl From<SourceEntryV1> for SourceEntry {
    fn from(e: SourceEntryV1) -> Self {
        Self {
            record: e.record.into(),
            slots: e.slots,
        }
    }
}

/// WAL format 1's records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum OpV1 {
    Replace {
        source: DiskSourceV1,
        chunks: Vec<DiskChunk>,
        dim: u32,
        vectors: Option<Vec<f32>>,
    },
    Delete {
        source: String,
    },
    Move {
        from: String,
        to: String,
        mtime: f64,
    },
}

impl From<OpV1> for Op {
    fn from(op: OpV1) -> Self {
        match op {
            OpV1::Replace {
                source,
                chunks,
                dim,
                vectors,
            } => Op::Replace {
                source: source.into(),
                chunks,
                dim,
                vectors,
            },
            OpV1::Delete { source } => Op::Delete { source },
            OpV1::Move { from, to, mtime } => Op::Move { from, to, mtime },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemIndex;
    use minirag_core::chunk::{Chunk, Layout};
    use minirag_core::ports::{Index, SourceRecord, SourceType};
    use minirag_core::search::Scope;

    fn old_source(source: &str) -> DiskSourceV1 {
        DiskSourceV1 {
            source: source.into(),
            source_type: 0,
            title: "Old".into(),
            title_seeded: false,
            file_hash: "h".into(),
            mtime: 1.0,
            ingested_at: "2026-11-01T00:00:00Z".into(),
            chunk_count: 1,
            scheme_version: minirag_core::CHUNK_SCHEME,
            embedded_with: None,
        }
    }

    fn old_chunk(text: &str) -> DiskChunk {
        DiskChunk {
            index: 0,
            parent: 0,
            text: text.into(),
            prefix_len: 0,
            kind: 0,
            headings: Box::default(),
            heading_is_body: false,
            continues_section: false,
            location: Default::default(),
        }
    }

    /// A log as the previous build wrote it: format 1 header and records.
    fn write_v1_wal(dir: &std::path::Path, ops: &[OpV1]) {
        let mut bytes = b"MRWAL001".to_vec();
        bytes.extend_from_slice(&0u64.to_le_bytes());
        for op in ops {
            let payload = bincode::serde::encode_to_vec(op, bincode::config::standard()).unwrap();
            bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
            bytes.extend_from_slice(&payload);
        }
        std::fs::write(dir.join("wal.log"), bytes).unwrap();
    }

    #[test]
    fn an_older_builds_log_opens_and_its_next_write_moves_it_to_the_new_format() {
        let dir = tempfile::tempdir().unwrap();
        write_v1_wal(
            dir.path(),
            &[OpV1::Replace {
                source: old_source("/docs/old.md"),
                chunks: vec![old_chunk("written by the previous build")],
                dim: 0,
                vectors: None,
            }],
        );
        let index = MemIndex::open(dir.path()).unwrap();
        let old = index
            .read()
            .unwrap()
            .source("/docs/old.md")
            .unwrap()
            .unwrap();
        assert_eq!((old.title.as_str(), old.ocr_engine.as_str()), ("Old", ""));

        let record = SourceRecord {
            source: "/docs/scan.png".into(),
            source_type: SourceType::File,
            title: "scan".into(),
            title_seeded: false,
            file_hash: "s".into(),
            mtime: 2.0,
            ingested_at: "2026-11-30T00:00:00Z".into(),
            chunk_count: 1,
            scheme_version: minirag_core::CHUNK_SCHEME,
            embedded_with: None,
            ocr_engine: "tesseract 5.3.0 (rus+eng)".into(),
            attributes: Default::default(),
        };
        let chunk = Chunk {
            index: 0,
            parent: 0,
            text: "recognised words".into(),
            layout: Layout::default(),
        };
        index.replace_source(record, vec![chunk], None).unwrap();
        drop(index);
        let wal = std::fs::read(dir.path().join("wal.log")).unwrap();
        assert_eq!(&wal[..8], b"MRWAL002", "the new log is in the new format");

        let index = MemIndex::open(dir.path()).unwrap();
        let view = index.read().unwrap();
        let sources: Vec<String> = view
            .sources(&Scope::all())
            .unwrap()
            .into_iter()
            .map(|r| r.source)
            .collect();
        assert_eq!(sources, ["/docs/old.md", "/docs/scan.png"]);
        let scan = view.source("/docs/scan.png").unwrap().unwrap();
        assert_eq!(scan.ocr_engine, "tesseract 5.3.0 (rus+eng)");
    }
}
