//! Dense layers with int8 weights (quantized once per output channel) and
//! activations quantized per token row, products summed exactly in i32,
//! then one multiply by the two scales. f32 has no headroom left on AVX2
//! (the gemm runs near the FMA peak), so only fewer bits per multiply go
//! faster.
//!
//! A layer's inputs keep twelve or eight bits ([`ActivationBits`]).
//! Twelve-bit rows and i8 weights are both held as i16 and summed a pair at
//! a time (`vpmaddwd`, or VNNI's `vpdpwssd`), so nothing saturates (as
//! `vpmaddubsw` would). Eight-bit rows are bytes with a zero point; where
//! the CPU has VNNI (AVX-512 VNNI or AVX-VNNI) they go four at a time
//! through `vpdpbusd`, and elsewhere through the pair kernels as i16.
//! Every kernel sums the same integers, so a precision gives the same
//! vectors on every CPU.
//!
//! - [`activations`]: quantizing a layer's inputs.
//! - [`tiles`]: the register tiles.

pub mod activations;
mod tiles;

#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::sync::OnceLock;

use rayon::prelude::*;

pub use activations::ActivationBits;
use activations::RowScale;

/// Weight levels each side of zero: symmetric int8, so -128 never appears.
const WEIGHT_LEVELS: f32 = 127.0;
/// Outputs per panel: two 8-lane i32 accumulators per row.
const PANEL: usize = 16;
/// AVX2 vectors per panel row.
#[cfg(target_arch = "x86_64")]
const VECS: usize = PANEL / 8;
/// Rows of `x` per pair tile: 4 × 2 accumulators, 2 weight vectors, a
/// broadcast and a product take 12 of AVX2's 16 registers (4 × 3 spilled
/// an accumulator to the stack, a quarter slower; 3 × 3 was about 10 %
/// slower than this).
const PAIR_ROWS: usize = 4;
/// Rows of `x` per AVX-512 VNNI quad tile: one 512-bit accumulator a row
/// (a panel's 16 outputs), so 12 rows, a weight vector and a broadcast
/// take 14 of its 32 registers; each weight load serves 12 rows (8 were
/// about 10 % slower, 16 no faster).
const QUAD_ROWS: usize = 12;
/// Rows of `x` per AVX-VNNI quad tile: 6 × 2 accumulators, 2 weight vectors
/// and a broadcast take 15 of its 16 registers.
const AVX_VNNI_QUAD_ROWS: usize = 6;
/// Rows of the largest tile, for the accumulators' buffer.
const TILE_ROWS: usize = QUAD_ROWS;
/// Rows per parallel task when a batch has rows enough for every thread.
const ROWS_PER_TASK: usize = 32;
/// Longest input row the i32 sums take without overflow: every product is
/// at most `WEIGHT_LEVELS · 2047` (twelve-bit rows; a byte row's products
/// are smaller).
pub const MAX_INPUTS: usize =
    (i32::MAX as f64 / (WEIGHT_LEVELS as f64 * activations::TWELVE_LEVELS as f64)) as usize;

/// `W` quantized per output, its panels packed for the kernel in use. The
/// row-major weights are not kept (e5-small's would be 21 MB more): a
/// kernel that takes the other packing (tests and benches pin kernels)
/// reads the weights back from the packing there is.
pub struct QuantWeights {
    /// One scale per output, padded with zeros to whole panels.
    scales: Vec<f32>,
    /// Each output's sum of quantized weights, padded like `scales`: a
    /// byte row's zero point times it is what the zero point added.
    sums: Vec<i32>,
    bits: ActivationBits,
    inputs: usize,
    outputs: usize,
    /// Panel `p`, input pair `t`: for each of its `PANEL` outputs,
    /// `(q[2t], q[2t + 1])` as i16.
    pairs: OnceLock<Vec<i16>>,
    /// Panel `p`, input quad `t`: for each of its `PANEL` outputs,
    /// `q[4t..4t + 4]`.
    quads: OnceLock<Vec<i8>>,
}

/// Which kernel runs the tiles: picked once per call, forced in tests.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kernel {
    /// Plain integer code, on any CPU.
    Portable,
    /// AVX2 `vpmaddwd` then `vpaddd`.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-VNNI (VEX `vpdpwssd` for pairs, `vpdpbusd` for byte quads): the
    /// VNNI of CPUs without AVX-512, with AVX2's 16 registers.
    #[cfg(target_arch = "x86_64")]
    AvxVnni,
    /// AVX-512 VNNI: EVEX `vpdpwssd` on 256-bit vectors for pairs (with
    /// AVX-512VL), `vpdpbusd` on 512-bit vectors for byte quads.
    #[cfg(target_arch = "x86_64")]
    Vnni,
}

/// A kernel a bench pins to compare two in one process (index into
/// [`Kernel::available`], plus one); 0 leaves the choice to the CPU.
static PINNED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Makes [`Kernel::best`] answer `kernel` (when this CPU runs it) until
/// unpinned with `None`: for benches that set kernels side by side.
#[doc(hidden)]
pub fn pin_kernel(kernel: Option<Kernel>) {
    let slot = kernel
        .and_then(|k| Kernel::available().iter().position(|a| *a == k))
        .map_or(0, |i| i + 1);
    PINNED.store(slot, std::sync::atomic::Ordering::Relaxed);
}

impl Kernel {
    /// The fastest kernel this CPU runs (or the one a bench pinned).
    pub fn best() -> Self {
        let pinned = PINNED.load(std::sync::atomic::Ordering::Relaxed);
        if pinned > 0 {
            if let Some(k) = Kernel::available().get(pinned - 1) {
                return *k;
            }
        }
        #[cfg(target_arch = "x86_64")]
        if has_vnni() {
            return Kernel::Vnni;
        }
        #[cfg(target_arch = "x86_64")]
        if has_avx_vnni() {
            return Kernel::AvxVnni;
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            return Kernel::Avx2;
        }
        Kernel::Portable
    }

    /// Every kernel this CPU runs, slowest first (for tests and benches).
    pub fn available() -> Vec<Kernel> {
        let mut all = vec![Kernel::Portable];
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            all.push(Kernel::Avx2);
        }
        #[cfg(target_arch = "x86_64")]
        if has_avx_vnni() {
            all.push(Kernel::AvxVnni);
        }
        #[cfg(target_arch = "x86_64")]
        if has_vnni() {
            all.push(Kernel::Vnni);
        }
        all
    }

    /// Whether this kernel takes eight-bit rows as byte quads (else as
    /// i16 pairs).
    fn takes_quads(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        if matches!(self, Kernel::Vnni | Kernel::AvxVnni) {
            return true;
        }
        false
    }

    /// Rows per quad tile (the portable tile takes any number; tests run
    /// it at the widest).
    fn quad_rows(self) -> usize {
        #[cfg(target_arch = "x86_64")]
        if self == Kernel::AvxVnni {
            return AVX_VNNI_QUAD_ROWS;
        }
        QUAD_ROWS
    }
}

/// AVX-512 VNNI with its 512-bit and 256-bit (VL) forms, beside the AVX2
/// the pair tile shares.
#[cfg(target_arch = "x86_64")]
fn has_vnni() -> bool {
    std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512vnni")
        && std::is_x86_feature_detected!("avx512vl")
}

/// AVX-VNNI (the VEX encoding, on CPUs with or without AVX-512) beside AVX2.
#[cfg(target_arch = "x86_64")]
fn has_avx_vnni() -> bool {
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("avxvnni")
}

/// A layer's quantized inputs, reused across calls of a thread.
#[derive(Default)]
struct Rows {
    pairs: Vec<i16>,
    bytes: Vec<u8>,
    scales: Vec<RowScale>,
}

/// Quantized rows as one tile kind takes them.
#[derive(Clone, Copy)]
enum RowsOf<'a> {
    /// i16 rows `kp` wide (inputs rounded up to pairs).
    Pairs(&'a [i16]),
    /// Byte rows `kq` wide (inputs rounded up to quads).
    Quads(&'a [u8]),
}

impl QuantWeights {
    /// Quantizes `w` (`[outputs, inputs]`, PyTorch layout) for inputs of
    /// `bits`, or `None` for rows too long for exact i32 sums.
    pub fn quantize(w: &[f32], inputs: usize, bits: ActivationBits) -> Option<Self> {
        let outputs = w.len().checked_div(inputs)?;
        if inputs > MAX_INPUTS || outputs * inputs != w.len() {
            return None;
        }
        let padded = outputs.next_multiple_of(PANEL);
        let mut q = vec![0i8; outputs * inputs];
        let mut scales = vec![0f32; padded];
        let mut sums = vec![0i32; padded];
        let mut row = vec![0i16; inputs];
        for (j, weights) in w.chunks_exact(inputs).enumerate() {
            scales[j] = activations::symmetric(weights, &mut row, WEIGHT_LEVELS);
            sums[j] = row.iter().map(|&v| v as i32).sum();
            for (q, &v) in q[j * inputs..][..inputs].iter_mut().zip(&row) {
                *q = v as i8;
            }
        }
        let weights = Self {
            scales,
            sums,
            bits,
            inputs,
            outputs,
            pairs: OnceLock::new(),
            quads: OnceLock::new(),
        };
        // Packed now for the kernel this CPU runs, so the first pass does
        // not pay for it; `q` goes once packed.
        weights.pack_for_from(Kernel::best(), |j, i| q[j * inputs + i]);
        Some(weights)
    }

    /// Packs the weights for `kernel`'s tiles (once), and says which.
    fn pack_for(&self, kernel: Kernel) -> bool {
        self.pack_for_from(kernel, |j, i| self.weight(j, i))
    }

    /// [`QuantWeights::pack_for`] reading weight (output `j`, input `i`)
    /// from `w`.
    fn pack_for_from(&self, kernel: Kernel, w: impl Fn(usize, usize) -> i8) -> bool {
        let quads = self.bits == ActivationBits::Eight && kernel.takes_quads();
        if quads {
            self.quads.get_or_init(|| self.pack(4, |v| v, &w));
        } else {
            self.pairs.get_or_init(|| self.pack(2, i16::from, &w));
        }
        quads
    }

    /// Where weight (output `j`, input `i`) lies in a packing of `group`
    /// inputs at a time: panel `p`, group `t`, output `c`, input `i` of the
    /// group at `(t · PANEL + c) · group + i` within the panel.
    fn packed_at(&self, group: usize, j: usize, i: usize) -> usize {
        let width = self.inputs.next_multiple_of(group);
        (j / PANEL) * width * PANEL + ((i / group) * PANEL + j % PANEL) * group + i % group
    }

    /// Weight (output `j`, input `i`), read back from a packing there is.
    fn weight(&self, j: usize, i: usize) -> i8 {
        match (self.pairs.get(), self.quads.get()) {
            // Every pair holds an i8 widened to i16.
            (Some(pairs), _) => pairs[self.packed_at(2, j, i)] as i8,
            (None, Some(quads)) => quads[self.packed_at(4, j, i)],
            // Never: `quantize` packs before it returns.
            (None, None) => 0,
        }
    }

    /// The panels of `group` inputs at a time ([`QuantWeights::packed_at`]).
    fn pack<T: Copy + Default>(
        &self,
        group: usize,
        cast: impl Fn(i8) -> T,
        w: &impl Fn(usize, usize) -> i8,
    ) -> Vec<T> {
        let width = self.inputs.next_multiple_of(group);
        let panels = self.outputs.div_ceil(PANEL);
        let mut packed = vec![T::default(); panels * width * PANEL];
        for j in 0..self.outputs {
            let panel = &mut packed[(j / PANEL) * width * PANEL..][..width * PANEL];
            let c = j % PANEL;
            for i in 0..self.inputs {
                panel[((i / group) * PANEL + c) * group + i % group] = cast(w(j, i));
            }
        }
        packed
    }

    /// What this layer's inputs are quantized to.
    pub fn bits(&self) -> ActivationBits {
        self.bits
    }

    /// `dst = x · Wᵀ` for `x` of `rows × inputs` (the bias is left to the
    /// element-wise pass that follows, as for the f32 layers).
    pub fn apply(&self, x: &[f32], dst: &mut [f32]) {
        self.apply_with(Kernel::best(), x, dst)
    }

    /// [`apply`](Self::apply) on `kernel`'s tiles.
    pub fn apply_with(&self, kernel: Kernel, x: &[f32], dst: &mut [f32]) {
        let (k, n) = (self.inputs, self.outputs);
        let rows = x.len() / k;
        assert_eq!(x.len(), rows * k);
        assert_eq!(dst.len(), rows * n);
        if rows == 0 {
            return;
        }
        let quads = self.pack_for(kernel);
        thread_local! {
            static ROWS: RefCell<Rows> = RefCell::default();
        }
        // Taken out, not borrowed: while this thread waits on the parallel
        // work below, rayon may run another pass's layer on it, which
        // then finds empty buffers and allocates its own.
        let mut buf = ROWS.take();
        buf.scales.clear();
        buf.scales.resize(rows, RowScale::default());
        let xs = if quads {
            let kq = k.next_multiple_of(4);
            buf.bytes.clear();
            buf.bytes.resize(rows * kq, 0);
            x.par_chunks(ROWS_PER_TASK * k)
                .zip(buf.bytes.par_chunks_mut(ROWS_PER_TASK * kq))
                .zip(buf.scales.par_chunks_mut(ROWS_PER_TASK))
                .for_each(|((x, q), s)| activations::rows_as_bytes(x, k, kq, q, s));
            RowsOf::Quads(&buf.bytes)
        } else {
            let kp = k.next_multiple_of(2);
            buf.pairs.clear();
            buf.pairs.resize(rows * kp, 0);
            let bits = self.bits;
            x.par_chunks(ROWS_PER_TASK * k)
                .zip(buf.pairs.par_chunks_mut(ROWS_PER_TASK * kp))
                .zip(buf.scales.par_chunks_mut(ROWS_PER_TASK))
                .for_each(|((x, q), s)| activations::rows_as_i16(x, k, kp, bits, q, s));
            RowsOf::Pairs(&buf.pairs)
        };
        let panels = n.div_ceil(PANEL);
        let threads = rayon::current_num_threads().max(1);
        if rows >= ROWS_PER_TASK * threads {
            dst.par_chunks_mut(ROWS_PER_TASK * n)
                .zip(buf.scales.par_chunks(ROWS_PER_TASK))
                .enumerate()
                .for_each(|(task, (d, s))| {
                    let xs = xs.rows(task * ROWS_PER_TASK, s.len(), k);
                    self.block(kernel, xs, s, 0..panels, d, n, 0)
                });
        } else {
            self.by_panels(kernel, xs, &buf.scales, dst);
        }
        ROWS.set(buf);
    }

    /// A few rows (a query): the panels split over the threads, each part
    /// computed into a buffer of its own.
    fn by_panels(&self, kernel: Kernel, xs: RowsOf, scales: &[RowScale], dst: &mut [f32]) {
        let n = self.outputs;
        let rows = scales.len();
        let panels = n.div_ceil(PANEL);
        let threads = rayon::current_num_threads().clamp(1, panels);
        let per = panels.div_ceil(threads);
        let parts: Vec<(usize, usize, Vec<f32>)> = (0..panels)
            .step_by(per)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|first| {
                let last = (first + per).min(panels);
                let start = first * PANEL;
                let width = (last * PANEL).min(n) - start;
                let mut part = vec![0f32; rows * width];
                self.block(kernel, xs, scales, first..last, &mut part, width, start);
                (start, width, part)
            })
            .collect();
        for (start, width, part) in parts {
            for (r, src) in part.chunks_exact(width).enumerate() {
                dst[r * n + start..][..width].copy_from_slice(src);
            }
        }
    }

    /// Rows `xs` times panels `panels` into `dst`, whose rows are `stride`
    /// wide and whose column 0 is output `first_output`.
    #[allow(clippy::too_many_arguments)]
    fn block(
        &self,
        kernel: Kernel,
        xs: RowsOf,
        scales: &[RowScale],
        panels: std::ops::Range<usize>,
        dst: &mut [f32],
        stride: usize,
        first_output: usize,
    ) {
        let rows = scales.len();
        let mut acc = [[0i32; PANEL]; TILE_ROWS];
        let (step, group) = match xs {
            RowsOf::Pairs(_) => (PAIR_ROWS, 2),
            RowsOf::Quads(_) => (kernel.quad_rows(), 4),
        };
        let width = self.inputs.next_multiple_of(group);
        // `pack_for` packed the kind these rows take before any block ran;
        // the other kind may be unpacked (empty), and is never read.
        let pairs = self.pairs.get().map_or(&[][..], Vec::as_slice);
        let quads = self.quads.get().map_or(&[][..], Vec::as_slice);
        for p in panels {
            let col0 = p * PANEL;
            let cols = PANEL.min(self.outputs - col0);
            let sw = &self.scales[col0..col0 + cols];
            let sums = &self.sums[col0..col0 + cols];
            let panel = p * width * PANEL..(p + 1) * width * PANEL;
            for start in (0..rows).step_by(step) {
                let tile = step.min(rows - start);
                match xs.rows(start, tile, self.inputs) {
                    RowsOf::Pairs(x) => {
                        tiles::pair_tile(kernel, tile, x, width, &pairs[panel.clone()], &mut acc)
                    }
                    RowsOf::Quads(x) => {
                        tiles::quad_tile(kernel, tile, x, width, &quads[panel.clone()], &mut acc)
                    }
                }
                for (r, a) in acc.iter().take(tile).enumerate() {
                    let RowScale { scale, zero } = scales[start + r];
                    let out = &mut dst[(start + r) * stride + col0 - first_output..][..cols];
                    for (((o, &v), &w), &sum) in out.iter_mut().zip(a).zip(sw).zip(sums) {
                        *o = v.wrapping_sub(zero.wrapping_mul(sum)) as f32 * (scale * w);
                    }
                }
            }
        }
    }
}

impl<'a> RowsOf<'a> {
    /// Rows `start..start + count` of rows `inputs` wide before padding.
    fn rows(self, start: usize, count: usize, inputs: usize) -> RowsOf<'a> {
        match self {
            RowsOf::Pairs(x) => {
                let kp = inputs.next_multiple_of(2);
                RowsOf::Pairs(&x[start * kp..(start + count) * kp])
            }
            RowsOf::Quads(x) => {
                let kq = inputs.next_multiple_of(4);
                RowsOf::Quads(&x[start * kq..(start + count) * kq])
            }
        }
    }
}
