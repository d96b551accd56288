//! The chunks by slot: the snapshot's read in place through its chunk
//! table, those written since on the heap. A query decodes only the chunks
//! it shows; its hot loops read a chunk's source and index from the
//! table's fixed-width columns.

use std::borrow::Cow;
use std::sync::Arc;

use crate::disk::{text_key, ChunkTable};
use crate::pages::{Column, Pages};
use crate::records::DiskChunk;

/// A clone shares the table and the chunks written since (see [`Pages`]).
#[derive(Debug, Default, Clone)]
pub struct Chunks {
    table: Option<ChunkTable>,
    /// The table's slots removed since the snapshot.
    gone: Column<bool>,
    /// Slots from the table's end on: (source id, chunk), `None` once removed.
    fresh: Pages<Option<Arc<(u32, DiskChunk)>>>,
}

impl Chunks {
    /// Every chunk on the heap (an older snapshot's, or none yet).
    pub fn owned(chunks: Vec<Option<(u32, DiskChunk)>>) -> Self {
        Self {
            table: None,
            gone: Column::default(),
            fresh: chunks.into_iter().map(|c| c.map(Arc::new)).collect(),
        }
    }

    /// A snapshot's chunks, read in place.
    pub fn mapped(table: ChunkTable) -> Self {
        Self {
            gone: Column::filled(table.len(), false),
            table: Some(table),
            fresh: Pages::default(),
        }
    }

    fn base(&self) -> usize {
        self.gone.len()
    }

    /// Slots, removed ones included.
    pub fn len(&self) -> usize {
        self.base() + self.fresh.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `slot` holds a chunk.
    pub fn live(&self, slot: u32) -> bool {
        let s = slot as usize;
        match s.checked_sub(self.base()) {
            None => !self.gone[s],
            Some(f) => self.fresh.get(f).is_some_and(Option::is_some),
        }
    }

    /// The source id of the chunk at `slot`.
    #[inline]
    pub fn sid(&self, slot: u32) -> Option<u32> {
        let s = slot as usize;
        match s.checked_sub(self.base()) {
            None => (!self.gone[s]).then(|| self.table.as_ref().map(|t| t.sid(s)))?,
            Some(f) => self.fresh.get(f)?.as_ref().map(|c| c.0),
        }
    }

    /// The index in its source of the chunk at `slot`.
    pub fn index(&self, slot: u32) -> Option<u32> {
        let s = slot as usize;
        match s.checked_sub(self.base()) {
            None => (!self.gone[s]).then(|| self.table.as_ref().map(|t| t.index(s)))?,
            Some(f) => self.fresh.get(f)?.as_ref().map(|c| c.1.index),
        }
    }

    /// The parent section of the chunk at `slot`, read without decoding
    /// the rest of it.
    pub fn parent(&self, slot: u32) -> Option<u32> {
        let s = slot as usize;
        match s.checked_sub(self.base()) {
            None => (!self.gone[s]).then(|| self.table.as_ref()?.parent(s))?,
            Some(f) => self.fresh.get(f)?.as_ref().map(|c| c.1.parent),
        }
    }

    /// The stable key of the text of the chunk at `slot` ([`text_key`]).
    pub fn key(&self, slot: u32) -> Option<u64> {
        let s = slot as usize;
        match s.checked_sub(self.base()) {
            None => (!self.gone[s]).then(|| self.table.as_ref().map(|t| t.key(s)))?,
            Some(f) => self.fresh.get(f)?.as_ref().map(|c| text_key(&c.1.text)),
        }
    }

    /// The chunk at `slot` with its source id: borrowed from the heap, or
    /// decoded from the table.
    pub fn get(&self, slot: u32) -> Option<(u32, Cow<'_, DiskChunk>)> {
        let s = slot as usize;
        match s.checked_sub(self.base()) {
            None if self.gone[s] => None,
            None => {
                let table = self.table.as_ref()?;
                Some((table.sid(s), Cow::Owned(table.chunk(s)?)))
            }
            Some(f) => self
                .fresh
                .get(f)?
                .as_ref()
                .map(|c| (c.0, Cow::Borrowed(&c.1))),
        }
    }

    /// Removes the chunk at `slot` and returns it.
    pub fn take(&mut self, slot: u32) -> Option<(u32, DiskChunk)> {
        let s = slot as usize;
        match s.checked_sub(self.base()) {
            None if self.gone[s] => None,
            None => {
                self.gone[s] = true;
                let table = self.table.as_ref()?;
                Some((table.sid(s), table.chunk(s)?))
            }
            Some(f) => {
                let chunk = self.fresh.get_mut(f)?.take()?;
                // Copied out when an older generation still shares it.
                Some(Arc::try_unwrap(chunk).unwrap_or_else(|c| (*c).clone()))
            }
        }
    }

    /// Removes the chunk at `slot` without reading it.
    pub fn remove(&mut self, slot: u32) {
        let s = slot as usize;
        match s.checked_sub(self.base()) {
            None => self.gone[s] = true,
            Some(f) => {
                if let Some(c) = self.fresh.get_mut(f) {
                    *c = None;
                }
            }
        }
    }

    /// Appends a chunk at slot [`Chunks::len`].
    pub fn push(&mut self, sid: u32, chunk: DiskChunk) {
        self.fresh.push(Some(Arc::new((sid, chunk))));
    }

    /// Appends a source's chunks as new slots. They are taken from the back
    /// of the record's list, which gives its memory back as it goes: a
    /// million-chunk file never has two lists of chunks.
    pub fn place(&mut self, sid: u32, mut chunks: Vec<DiskChunk>) {
        const GIVE_BACK_EVERY: usize = 1 << 16;
        let n = chunks.len();
        chunks.reverse();
        while let Some(chunk) = chunks.pop() {
            self.push(sid, chunk);
            if chunks.len().is_multiple_of(GIVE_BACK_EVERY) && n > GIVE_BACK_EVERY {
                chunks.shrink_to_fit();
            }
        }
    }

    /// Live slots.
    pub fn count(&self) -> usize {
        self.gone.iter().filter(|g| !**g).count() + self.fresh.iter().flatten().count()
    }
}
