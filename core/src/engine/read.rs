//! Reads: a document rebuilt from its chunks, the chunks around a hit,
//! and removal of a source.

use super::Engine;
use crate::chunk::{parent_id, Chunk};
use crate::error::EngineError;
use crate::location::{Location, Wanted};
use crate::ports::{BlindFolder, IndexStats, SourceRecord};
use crate::reconstruct::document;
use crate::search::{ResultItem, Scope};

/// A document rebuilt from the index.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadDocument {
    /// The source's record.
    pub record: SourceRecord,
    /// Its text, rebuilt from its chunks.
    pub text: String,
}

/// The index's counts, and the model its vectors were made with.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexState {
    /// What the index holds, counted.
    pub stats: IndexStats,
    /// The model whose vectors the index holds, if any.
    pub vector_model: Option<String>,
}

/// The files a list of path arguments names: folders scanned as a sync
/// scans them, files as given (so an unsupported file gets its error).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IngestTargets {
    /// Sorted, without repeats.
    pub files: Vec<String>,
    /// Folders that could not be read.
    pub blind: Vec<BlindFolder>,
}

impl Engine {
    /// The indexed documents a client may see, sorted by source: every data
    /// and URL source, and the files under this process's roots (a shared
    /// index also holds other machines' files).
    pub fn visible_documents(&self) -> Result<Vec<SourceRecord>, EngineError> {
        let reach = Scope::all().within_roots(&self.settings.roots);
        let mut records: Vec<SourceRecord> = self.ports.index.read()?.sources(&reach)?;
        records.sort_by(|a, b| a.source.cmp(&b.source));
        Ok(records)
    }

    /// A number that changes whenever the visible document list does: a
    /// document ingested (again), moved, retitled or removed, by this
    /// process or another sharing the index. Subscribers compare it to
    /// decide whether the resource list changed.
    pub fn documents_fingerprint(&self) -> Result<u64, EngineError> {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        for r in self.visible_documents()? {
            (&r.source, &r.title, &r.ingested_at).hash(&mut hasher);
        }
        Ok(hasher.finish())
    }

    /// Counts and vector model, read from one view.
    pub fn index_state(&self) -> Result<IndexState, EngineError> {
        let view = self.ports.index.read()?;
        Ok(IndexState {
            stats: view.stats()?,
            vector_model: view.vector_model(),
        })
    }

    /// What `paths` (already contained) name for an ingest.
    pub fn ingest_targets(&self, paths: &[String]) -> IngestTargets {
        let files = &self.ports.files;
        let mut out = IngestTargets::default();
        for p in paths {
            if files.is_folder(p) {
                let scan = files.scan(
                    &self.settings.roots,
                    std::slice::from_ref(p),
                    self.reads_images(),
                );
                out.files.extend(scan.files.into_iter().map(|f| f.path));
                out.blind.extend(scan.blind);
            } else {
                out.files.push(p.clone());
            }
        }
        out.files.sort();
        out.files.dedup();
        out
    }

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
                location: c.location(),
                prefix_len: c.layout.prefix_len as usize,
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
        self.rebuilt(source).map(|(doc, _)| doc)
    }

    /// The document rebuilt, with the chunks it was rebuilt from.
    fn rebuilt(&self, source: &str) -> Result<(ReadDocument, Vec<Chunk>), EngineError> {
        let view = self.ports.index.read()?;
        let record = view.source(source)?.ok_or_else(|| EngineError::NotFound {
            source: source.into(),
        })?;
        let chunks = view.chunks(source, 0..=u32::MAX)?;
        let seeded = record.title_seeded.then_some(record.title.as_str());
        let text = document(&chunks, seeded);
        Ok((ReadDocument { record, text }, chunks))
    }

    /// The whole document, and where chunk `chunk_index`'s text lies in it
    /// (see [`crate::reconstruct::passage`]).
    pub fn read_passage(
        &self,
        source: &str,
        chunk_index: u32,
    ) -> Result<(ReadDocument, Option<std::ops::Range<usize>>), EngineError> {
        let (doc, chunks) = self.rebuilt(source)?;
        let at = chunks
            .iter()
            .find(|c| c.index == chunk_index)
            .and_then(|c| crate::reconstruct::passage(&doc.text, c));
        Ok((doc, at))
    }

    /// The part of a document at a place (a page, lines, a slide…), rebuilt
    /// from the chunks there, with the place they span.
    pub fn read_part(
        &self,
        source: &str,
        wanted: &Wanted,
    ) -> Result<(ReadDocument, Location), EngineError> {
        let view = self.ports.index.read()?;
        let record = view.source(source)?.ok_or_else(|| EngineError::NotFound {
            source: source.into(),
        })?;
        let all = view.chunks(source, 0..=u32::MAX)?;
        let chunks: Vec<Chunk> = all
            .iter()
            .filter(|c| c.location().is_some_and(|l| l.is_in(wanted)))
            .cloned()
            .collect();
        let Some(place) = chunks
            .iter()
            .filter_map(Chunk::location)
            .reduce(|a, b| a.joined(&b))
        else {
            // What the document does have, to ask for instead.
            let has = all
                .iter()
                .filter_map(Chunk::location)
                .reduce(|a, b| a.joined(&b));
            return Err(EngineError::NoSuchPart {
                source: source.into(),
                wanted: wanted.to_string(),
                has: has.and_then(|h| Some((h.place(), all.first()?.location()?.fragment()?))),
            });
        };
        if let Wanted::Rows(first, last, None) = wanted {
            let mut sheets: Vec<String> = Vec::new();
            for sheet in chunks.iter().filter_map(|c| c.location()?.sheet) {
                if !sheets.contains(&sheet) {
                    sheets.push(sheet);
                }
            }
            if sheets.len() > 1 {
                let rows = Location {
                    rows: Some((*first, *last)),
                    ..Location::default()
                };
                return Err(EngineError::WhichSheet {
                    source: source.into(),
                    rows: rows.fragment().unwrap_or_default(),
                    sheets,
                });
            }
        }
        let text = document(&chunks, None);
        Ok((ReadDocument { record, text }, place))
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
