//! The int8 copy of the rows written since the snapshot, in blocks a
//! clone of the matrix shares: the next generation copies only the block
//! its write changes.

use std::sync::Arc;

use super::int8::Quantized;

/// Rows a block (96 KB of codes at 384 dimensions).
const BLOCK_ROWS: usize = 256;

#[derive(Clone, Default)]
pub(crate) struct FreshCodes {
    blocks: Vec<Arc<Quantized>>,
    rows: usize,
}

impl FreshCodes {
    /// The block the next row goes to.
    fn open_block(&mut self) -> &mut Quantized {
        if self.rows.is_multiple_of(BLOCK_ROWS) {
            self.blocks.push(Arc::default());
        }
        self.rows += 1;
        Arc::make_mut(self.blocks.last_mut().expect("a block with room"))
    }

    pub(crate) fn push(&mut self, row: &[f32]) {
        self.open_block().push(row);
    }

    pub(crate) fn push_zeros(&mut self, dim: usize) {
        self.open_block().push_zeros(dim);
    }

    /// Overwrites row `r` (which exists).
    pub(crate) fn set(&mut self, r: usize, row: &[f32]) {
        Arc::make_mut(&mut self.blocks[r / BLOCK_ROWS]).set(r % BLOCK_ROWS, row);
    }

    /// Estimated dot product of row `r` with a query quantized to `qcode`.
    #[inline(always)]
    pub(crate) fn dot(&self, r: usize, qcode: &[i8], dot_i8: impl Fn(&[i8], &[i8]) -> i32) -> f32 {
        self.blocks[r / BLOCK_ROWS].dot(r % BLOCK_ROWS, qcode, dot_i8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_keeps_its_rows_when_the_original_is_written() {
        let dim = 4;
        let row = |k: usize| vec![k as f32 + 1.0, 0.5, -0.25, 0.0];
        let mut codes = FreshCodes::default();
        for k in 0..BLOCK_ROWS + 3 {
            codes.push(&row(k));
        }
        codes.push_zeros(dim);
        let before = codes.clone();
        codes.set(1, &[-1.0, 0.0, 0.0, 0.0]);
        let q = [127i8, 0, 0, 0];
        let plain = |a: &[i8], b: &[i8]| a.iter().zip(b).map(|(x, y)| *x as i32 * *y as i32).sum();
        assert!(before.dot(1, &q, plain) > 0.0, "the clone keeps row 1");
        assert!(codes.dot(1, &q, plain) < 0.0, "the original changed it");
        assert_eq!(codes.dot(BLOCK_ROWS + 3, &q, plain), 0.0, "zeros row");
        assert_eq!(
            codes.dot(BLOCK_ROWS + 2, &q, plain),
            before.dot(BLOCK_ROWS + 2, &q, plain)
        );
    }
}
