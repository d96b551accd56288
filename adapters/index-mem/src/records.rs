//! What is written to disk: mirrors of the core's types (core has no serde)
//! and the log operations.

use minirag_core::chunk::{Chunk, Heading, Layout, UnitKind};
use minirag_core::location::Packed;
use minirag_core::ports::{SourceRecord, SourceType};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskSource {
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
    /// Added in WAL format 2 / snapshot format 3 (see [`crate::legacy`]).
    pub ocr_engine: String,
    /// Not in this struct's encoding, so older logs and snapshots decode
    /// unchanged: a log carries it in [`Op::ReplaceDescribed`], a snapshot
    /// in a section of its own (format 6).
    #[serde(skip)]
    pub attributes: DiskAttributes,
}

/// A source's language and declared fields on disk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskAttributes {
    pub language: Option<String>,
    pub meta: Vec<(String, String)>,
}

impl DiskAttributes {
    pub fn is_empty(&self) -> bool {
        self.language.is_none() && self.meta.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskChunk {
    pub index: u32,
    pub parent: u32,
    /// Boxed, not `String`: no capacity field, and the boxes serialize as a
    /// string and a list did (a big file keeps a million of these).
    pub text: Box<str>,
    pub prefix_len: u32,
    pub kind: u8,
    /// (level, cleaned text, original line)
    pub headings: Box<[(u8, String, String)]>,
    pub heading_is_body: bool,
    pub continues_section: bool,
    /// Not in this struct's encoding, so logs and snapshots of older builds
    /// decode unchanged: a log carries it in [`Op::ReplaceLocated`], a
    /// snapshot in a section of its own. Inline and empty when unknown: a
    /// million chunks keep no million boxes.
    #[serde(skip)]
    pub location: DiskLocation,
}

/// A chunk's [`Packed`] location on disk (numbers 1-based, 0 absent; the
/// sheet and the cue time the only text).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskLocation {
    /// Pages, rows and lines as first/last pairs, then slide and cell.
    pub numbers: [u32; 8],
    /// The sheet, then `\u{1f}`, then the cue time; absent when neither.
    pub text: Option<Box<str>>,
}

impl DiskLocation {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// One logged mutation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Op {
    Replace {
        source: DiskSource,
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
    /// One batch of vectors for chunks `first..` of a stored source (added
    /// last, so older logs decode unchanged). `hashes` are the texts' hashes
    /// the vectors were made from, checked before the record is written.
    SetVectors {
        source: String,
        model: String,
        dim: u32,
        first: u32,
        hashes: Vec<u64>,
        vectors: Vec<f32>,
        complete: bool,
    },
    /// [`Op::Replace`] whose chunks have locations: `locations[i]` is chunk
    /// i's (added last, so older logs decode unchanged). Only the log holds
    /// this form: [`Op::merged`] turns it back into a replace.
    ReplaceLocated {
        source: DiskSource,
        chunks: Vec<DiskChunk>,
        dim: u32,
        vectors: Option<Vec<f32>>,
        locations: Vec<DiskLocation>,
    },
    /// [`Op::ReplaceLocated`] whose source has a language or declared
    /// fields (added last, so older logs decode unchanged); `locations` is
    /// empty when the chunks have none. Only the log holds this form.
    ReplaceDescribed {
        source: DiskSource,
        chunks: Vec<DiskChunk>,
        dim: u32,
        vectors: Option<Vec<f32>>,
        locations: Vec<DiskLocation>,
        attributes: DiskAttributes,
    },
}

impl Op {
    /// The form written to the log: a replace with locations carries them
    /// beside its chunks (moved, not copied).
    pub fn into_logged(self) -> Op {
        match self {
            Op::Replace {
                mut source,
                mut chunks,
                dim,
                vectors,
            } if !source.attributes.is_empty() => {
                let located = chunks.iter().any(|c| !c.location.is_empty());
                let locations = if located {
                    chunks
                        .iter_mut()
                        .map(|c| std::mem::take(&mut c.location))
                        .collect()
                } else {
                    Vec::new()
                };
                let attributes = std::mem::take(&mut source.attributes);
                Op::ReplaceDescribed {
                    source,
                    chunks,
                    dim,
                    vectors,
                    locations,
                    attributes,
                }
            }
            Op::Replace {
                source,
                mut chunks,
                dim,
                vectors,
            } if chunks.iter().any(|c| !c.location.is_empty()) => {
                let locations = chunks
                    .iter_mut()
                    .map(|c| std::mem::take(&mut c.location))
                    .collect();
                Op::ReplaceLocated {
                    source,
                    chunks,
                    dim,
                    vectors,
                    locations,
                }
            }
            op => op,
        }
    }

    /// The form applied: locations back on their chunks.
    pub fn merged(self) -> Op {
        match self {
            Op::ReplaceDescribed {
                mut source,
                mut chunks,
                dim,
                vectors,
                locations,
                attributes,
            } => {
                for (c, l) in chunks.iter_mut().zip(locations) {
                    c.location = l;
                }
                source.attributes = attributes;
                Op::Replace {
                    source,
                    chunks,
                    dim,
                    vectors,
                }
            }
            Op::ReplaceLocated {
                source,
                mut chunks,
                dim,
                vectors,
                locations,
            } => {
                for (c, l) in chunks.iter_mut().zip(locations) {
                    c.location = l;
                }
                Op::Replace {
                    source,
                    chunks,
                    dim,
                    vectors,
                }
            }
            op => op,
        }
    }
}

impl From<&SourceRecord> for DiskSource {
    fn from(r: &SourceRecord) -> Self {
        Self {
            source: r.source.clone(),
            source_type: match r.source_type {
                SourceType::File => 0,
                SourceType::Data => 1,
                SourceType::Url => 2,
            },
            title: r.title.clone(),
            title_seeded: r.title_seeded,
            file_hash: r.file_hash.clone(),
            mtime: r.mtime,
            ingested_at: r.ingested_at.clone(),
            chunk_count: r.chunk_count,
            scheme_version: r.scheme_version,
            embedded_with: r.embedded_with.clone(),
            ocr_engine: r.ocr_engine.clone(),
            attributes: DiskAttributes {
                language: r.attributes.language.clone(),
                meta: r.attributes.meta.clone(),
            },
        }
    }
}

impl<'a> From<&'a DiskSource> for minirag_core::search::SourceFacts<'a> {
    fn from(d: &'a DiskSource) -> Self {
        Self {
            source: &d.source,
            source_type: source_type(d.source_type),
            mtime: d.mtime,
            ingested_at: &d.ingested_at,
            language: d.attributes.language.as_deref(),
            meta: &d.attributes.meta,
        }
    }
}

fn source_type(code: u8) -> SourceType {
    match code {
        1 => SourceType::Data,
        2 => SourceType::Url,
        _ => SourceType::File,
    }
}

impl From<&DiskSource> for SourceRecord {
    fn from(d: &DiskSource) -> Self {
        Self {
            source: d.source.clone(),
            source_type: source_type(d.source_type),
            title: d.title.clone(),
            title_seeded: d.title_seeded,
            file_hash: d.file_hash.clone(),
            mtime: d.mtime,
            ingested_at: d.ingested_at.clone(),
            chunk_count: d.chunk_count,
            scheme_version: d.scheme_version,
            embedded_with: d.embedded_with.clone(),
            ocr_engine: d.ocr_engine.clone(),
            attributes: minirag_core::ports::SourceAttributes {
                language: d.attributes.language.clone(),
                meta: d.attributes.meta.clone(),
            },
        }
    }
}

impl From<&Chunk> for DiskChunk {
    fn from(c: &Chunk) -> Self {
        Self::from(c.clone())
    }
}

impl From<Chunk> for DiskChunk {
    /// Moves the text and headings: a large source is not copied on its
    /// way to the log.
    fn from(c: Chunk) -> Self {
        Self {
            index: c.index,
            parent: c.parent,
            text: c.text.into_boxed_str(),
            prefix_len: c.layout.prefix_len,
            kind: match c.layout.kind {
                UnitKind::Text => 0,
                UnitKind::Rows => 1,
                UnitKind::Code => 2,
                UnitKind::CodePiece => 3,
            },
            headings: c
                .layout
                .headings
                .into_iter()
                .map(|h| (h.level, h.text, h.line))
                .collect(),
            heading_is_body: c.layout.heading_is_body,
            continues_section: c.layout.continues_section,
            location: DiskLocation {
                numbers: c.layout.location.numbers,
                text: c.layout.location.text,
            },
        }
    }
}

impl From<&DiskChunk> for Chunk {
    fn from(d: &DiskChunk) -> Self {
        Self {
            index: d.index,
            parent: d.parent,
            text: d.text.to_string(),
            layout: Layout {
                prefix_len: d.prefix_len.min(d.text.len() as u32),
                kind: match d.kind {
                    1 => UnitKind::Rows,
                    2 => UnitKind::Code,
                    3 => UnitKind::CodePiece,
                    _ => UnitKind::Text,
                },
                headings: d
                    .headings
                    .iter()
                    .map(|(level, text, line)| Heading {
                        level: *level,
                        text: text.clone(),
                        line: line.clone(),
                    })
                    .collect(),
                heading_is_body: d.heading_is_body,
                continues_section: d.continues_section,
                location: Packed {
                    numbers: d.location.numbers,
                    text: d.location.text.clone(),
                },
            },
        }
    }
}

/// A source as the state and the snapshot hold it: its record and its
/// chunks' slots.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SourceEntry {
    pub record: DiskSource,
    /// Chunk slots in chunk-index order.
    pub slots: Vec<u32>,
}
