//! The f32 rows written since the snapshot. A few stay on the heap; past
//! [`SPILL_ROWS`] they move to an unnamed file in the index's folder, so a
//! sync that embeds a big file keeps its vectors in the page cache, not in
//! this process's memory (a 90 MB file is ~190k rows: 290 MB of f32).
//! Searches scan the rows' int8 copy and read back only the candidates they
//! rescore; compaction reads them row by row. The file is scratch: the log
//! holds every row, and a kill leaves nothing behind (it has no name).

use std::borrow::Cow;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// Rows kept on the heap before they spill (24 MiB at 384 floats a row).
/// At or above the int8 scan's threshold (checked where the matrix uses
/// both), so a matrix whose rows have spilled is always scanned through
/// their int8 copy.
pub(crate) const SPILL_ROWS: usize = 16_384;

/// Rows a heap block: a clone of the rows shares the blocks, and writing
/// through it copies only the block written (384 KB at 384 dimensions).
const BLOCK_ROWS: usize = 256;

/// A clone shares the heap's blocks and the spill file: a row appended
/// after the clone lies past its rows, and a row written in place was one
/// it holds as absent (rows of vector-less chunks), so it never reads a
/// change it did not make.
#[derive(Default, Clone)]
pub(crate) struct FreshRows {
    dim: usize,
    rows: usize,
    /// Blocks of [`BLOCK_ROWS`] rows (the last one may hold fewer).
    heap: Vec<Arc<Vec<f32>>>,
    file: Option<Arc<File>>,
    /// Where the spill file goes; `None` (or a failed spill) keeps every
    /// row on the heap.
    dir: Option<Arc<Path>>,
    spill_failed: bool,
}

impl FreshRows {
    pub(crate) fn new(dim: usize, dir: Option<Arc<Path>>) -> Self {
        Self {
            dim,
            dir,
            ..Self::default()
        }
    }

    pub(crate) fn dir(&self) -> Option<Arc<Path>> {
        self.dir.clone()
    }

    pub(crate) fn set_dir(&mut self, dir: Option<Arc<Path>>) {
        self.dir = dir;
    }

    pub(crate) fn set_dim(&mut self, dim: usize) {
        debug_assert!(self.rows == 0 || self.dim == dim);
        self.dim = dim;
    }

    /// Whether the rows live in the spill file (tests).
    #[cfg(test)]
    pub(crate) fn spilled(&self) -> bool {
        self.file.is_some()
    }

    /// Appends a row (zeros when `row` is `None`).
    pub(crate) fn push(&mut self, row: Option<&[f32]>) {
        if self.file.is_none() && self.rows >= SPILL_ROWS && self.dim > 0 {
            self.spill();
        }
        let e = self.rows;
        self.rows += 1;
        if self.file.is_some() {
            // A spilled row never written reads back as zeros.
            if let Some(r) = row {
                self.set(e, r);
            }
            return;
        }
        push_to_blocks(&mut self.heap, e, self.dim, row);
    }

    /// Overwrites row `e` (which exists).
    pub(crate) fn set(&mut self, e: usize, row: &[f32]) {
        let dim = self.dim;
        if let Some(file) = &self.file {
            match write_at(file, &le_bytes(row), (e * dim * 4) as u64) {
                Ok(()) => return,
                Err(err) => self.unspill(&err),
            }
        }
        let at = (e % BLOCK_ROWS) * dim;
        Arc::make_mut(&mut self.heap[e / BLOCK_ROWS])[at..at + dim].copy_from_slice(row);
    }

    /// Row `e`: borrowed from the heap, or read back from the spill file.
    pub(crate) fn get(&self, e: usize) -> Cow<'_, [f32]> {
        let dim = self.dim;
        match &self.file {
            None => {
                let at = (e % BLOCK_ROWS) * dim;
                Cow::Borrowed(&self.heap[e / BLOCK_ROWS][at..at + dim])
            }
            Some(file) => Cow::Owned(read_row(file, dim, e).unwrap_or_else(|_| vec![0.0; dim])),
        }
    }

    /// Moves the heap's rows to a new unnamed file in `dir`. On failure the
    /// rows stay on the heap, and no spill is tried again.
    fn spill(&mut self) {
        let Some(dir) = self.dir.as_deref().filter(|_| !self.spill_failed) else {
            return;
        };
        let written = tempfile::tempfile_in(dir).and_then(|file| {
            let step = BLOCK_ROWS * self.dim;
            for (k, block) in self.heap.iter().enumerate() {
                write_at(&file, &le_bytes(block), (k * step * 4) as u64)?;
            }
            Ok(file)
        });
        match written {
            Ok(file) => {
                self.file = Some(Arc::new(file));
                self.heap = Vec::new();
            }
            Err(_) => self.spill_failed = true,
        }
    }

    /// A write to the spill file failed (a full disk): every row comes back
    /// to the heap, where the next writes go. A row that cannot be read back
    /// is zeros until the log is replayed at the next open.
    fn unspill(&mut self, cause: &io::Error) {
        let Some(file) = self.file.take() else {
            return;
        };
        eprintln!(
            "warn: cannot write vectors to the scratch file in {} ({cause}); keeping them in memory",
            self.dir.as_deref().map_or("?".into(), |d| d.display().to_string())
        );
        self.spill_failed = true;
        let dim = self.dim;
        let mut heap = Vec::new();
        for e in 0..self.rows {
            push_to_blocks(&mut heap, e, dim, read_row(&file, dim, e).ok().as_deref());
        }
        self.heap = heap;
    }
}

/// Appends row `e` (zeros when `row` is `None`) to `blocks`, which hold
/// rows `0..e`: a new block every [`BLOCK_ROWS`] rows.
fn push_to_blocks(blocks: &mut Vec<Arc<Vec<f32>>>, e: usize, dim: usize, row: Option<&[f32]>) {
    if e.is_multiple_of(BLOCK_ROWS) {
        blocks.push(Arc::new(Vec::with_capacity(BLOCK_ROWS * dim)));
    }
    let block = Arc::make_mut(blocks.last_mut().expect("a block with room"));
    match row {
        Some(r) => block.extend_from_slice(r),
        None => block.extend(std::iter::repeat_n(0.0, dim)),
    }
}

fn le_bytes(row: &[f32]) -> Vec<u8> {
    row.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn read_row(file: &File, dim: usize, e: usize) -> io::Result<Vec<f32>> {
    let mut bytes = vec![0u8; dim * 4];
    match read_at(file, &mut bytes, (e * dim * 4) as u64) {
        Ok(()) => {}
        // Past the end: a row pushed empty and never written.
        Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => return Ok(vec![0.0; dim]),
        Err(err) => return Err(err),
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

// Unix only, as the rest of the crate (`disk.rs` reads by offset too).
fn write_at(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
}

fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(dim: usize, k: usize) -> Vec<f32> {
        (0..dim).map(|i| (k * dim + i) as f32).collect()
    }

    #[test]
    fn rows_past_the_threshold_spill_and_read_back_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let dim = 3;
        let mut rows = FreshRows::new(dim, Some(Arc::from(dir.path())));
        for k in 0..SPILL_ROWS + 10 {
            // Every third row empty, as a chunk stored before its vector.
            rows.push((k % 3 != 0).then(|| row(dim, k)).as_deref());
        }
        assert!(rows.spilled());
        rows.set(3, &row(dim, 3));
        rows.set(SPILL_ROWS + 9, &[7.0, 8.0, 9.0]);
        for k in 0..SPILL_ROWS + 9 {
            let want = if k % 3 != 0 || k == 3 {
                row(dim, k)
            } else {
                vec![0.0; dim]
            };
            assert_eq!(rows.get(k).as_ref(), want.as_slice(), "row {k}");
        }
        assert_eq!(rows.get(SPILL_ROWS + 9).as_ref(), &[7.0, 8.0, 9.0]);
        // Nothing is left in the folder: the file has no name.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn without_a_folder_every_row_stays_on_the_heap() {
        let mut rows = FreshRows::new(2, None);
        for k in 0..SPILL_ROWS + 1 {
            rows.push(Some(&row(2, k)));
        }
        assert!(!rows.spilled());
        assert_eq!(rows.get(SPILL_ROWS).as_ref(), row(2, SPILL_ROWS).as_slice());
    }

    #[test]
    fn an_unwritable_folder_keeps_the_rows_on_the_heap() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("removed");
        let mut rows = FreshRows::new(2, Some(Arc::from(gone.as_path())));
        for k in 0..SPILL_ROWS + 5 {
            rows.push(Some(&row(2, k)));
        }
        assert!(!rows.spilled());
        assert_eq!(
            rows.get(SPILL_ROWS + 4).as_ref(),
            row(2, SPILL_ROWS + 4).as_slice()
        );
    }
}
