//! Reads: a document rebuilt from its chunks, the chunks around a hit,
//! and removal of a source.

use super::Engine;
use crate::chunk::{parent_id, Chunk};
use crate::error::EngineError;
use crate::ports::SourceRecord;
use crate::reconstruct::document;
use crate::search::ResultItem;

/// A document rebuilt from the index.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadDocument {
    pub record: SourceRecord,
    pub text: String,
}

impl Engine {
    /// Chunks `chunk_index - before ..= chunk_index + after` of a source, as
    /// result items with score 0 and no distance. Unknown source → empty.
    pub fn neighbors(
        &self,
        source: &str,
        chunk_index: u32,
        before: u32,
        after: u32,
    ) -> Result<Vec<ResultItem>, EngineError> {
        let view = self.ports.index.read()?;
        let Some(record) = view.source(source)? else {
            return Ok(Vec::new());
        };
        let range = chunk_index.saturating_sub(before)..=chunk_index.saturating_add(after);
        let chunks = view.chunks(source, range)?;
        Ok(chunks
            .into_iter()
            .map(|c: Chunk| ResultItem {
                parent_id: Some(parent_id(source, c.parent)),
                text: c.text,
                source: source.into(),
                title: record.title.clone(),
                chunk_index: c.index,
                score: 0.0,
                distance: None,
            })
            .collect())
    }

    /// The whole document rebuilt from its chunks, headings restored.
    pub fn read_document(&self, source: &str) -> Result<ReadDocument, EngineError> {
        let view = self.ports.index.read()?;
        let record = view.source(source)?.ok_or_else(|| EngineError::NotFound {
            source: source.into(),
        })?;
        let chunks = view.chunks(source, 0..=u32::MAX)?;
        let seeded = record.title_seeded.then_some(record.title.as_str());
        let text = document(&chunks, seeded);
        Ok(ReadDocument { record, text })
    }

    /// Removes a source from the index; unknown sources are an error.
    pub fn delete(&self, source: &str) -> Result<usize, EngineError> {
        match self.ports.index.delete_source(source)? {
            0 => Err(EngineError::NotFound {
                source: source.into(),
            }),
            n => Ok(n),
        }
    }
}
