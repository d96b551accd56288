//! Indexing the chunks a write placed: their terms into the text field,
//! all of a write's in one pass, and their vectors into the matrix.

use crate::disk::text_key;
use crate::records::DiskChunk;

use super::State;

impl State {
    /// Indexes the chunk placed at `slot` (the next row of the matrix):
    /// its terms, and its vector when it has one.
    pub(crate) fn index_slot(&mut self, slot: u32, row: Option<&[f32]>) {
        self.index_slots(&[slot], |_| row);
    }

    /// Indexes the chunks placed at `slots` (the next rows of the matrix):
    /// their terms, the postings of all of them added in one pass over the
    /// lists, and the vector `row(i)` of the `i`th slot when it has one.
    pub(crate) fn index_slots<'v>(
        &mut self,
        slots: &[u32],
        row: impl Fn(usize) -> Option<&'v [f32]>,
    ) {
        let mut analysed = Vec::with_capacity(slots.len());
        for (i, &slot) in slots.iter().enumerate() {
            let Some((_, chunk)) = self.chunks.get(slot) else {
                continue;
            };
            let terms = self.analyzer.terms(&chunk.text);
            let row = row(i);
            if row.is_some() {
                if let Some(map) = self.text_table().as_mut() {
                    map.insert(text_key(&chunk.text), slot);
                }
            } else {
                self.vectorless += 1;
            }
            // A vector-less chunk in a matrix of unknown width gets a width later.
            if self.vectors.dim() == 0 && row.is_none() {
                self.vectors.push(None);
            } else {
                self.vectors.push(row);
            }
            analysed.push((slot, terms));
        }
        self.text.add_all(
            analysed
                .iter()
                .map(|(slot, terms)| (*slot, terms.as_slice())),
        );
    }

    pub(crate) fn push_chunk(
        &mut self,
        slot: u32,
        sid: u32,
        chunk: DiskChunk,
        row: Option<&[f32]>,
    ) {
        debug_assert_eq!(slot as usize, self.chunks.len());
        self.chunks.push(sid, chunk);
        self.index_slot(slot, row);
    }
}
