//! Dense layers with int8 weights (quantized once per output channel) and
//! 12-bit activations (quantized per token row), products summed exactly
//! in i32, then one multiply by the two scales. f32 has no headroom left on
//! AVX2 (the gemm runs near the FMA peak); `vpmaddwd` does 16 multiply-adds
//! per instruction where an FMA does 8. Both operands are held as i16, and
//! each pair of products is summed in i32, so nothing saturates (as
//! `vpmaddubsw` would) and the AVX2 kernel and the portable one give the
//! same integers. Where the CPU has AVX-512 VNNI, `vpdpwssd` does the
//! multiply-add and the sum in one instruction (AVX2 needs a `vpaddd`
//! after each `vpmaddwd`, and the two compete for the same ports).

use std::cell::RefCell;

use rayon::prelude::*;

use super::kernels::{has_avx2, has_avx512};

/// Weight levels each side of zero: symmetric int8, so -128 never appears.
const WEIGHT_LEVELS: f32 = 127.0;
/// Activation levels each side of zero. The i16 multiply takes more than
/// eight bits at no cost; see [`MAX_INPUTS`] for the bound this sets.
pub const ACTIVATION_LEVELS: f32 = 2047.0;
/// Outputs per panel: two 8-lane i32 accumulators per row.
const PANEL: usize = 16;
/// AVX2 vectors per panel row.
#[cfg(target_arch = "x86_64")]
const VECS: usize = PANEL / 8;
/// Rows of `x` per register tile: 4 × 2 accumulators, 2 weight vectors,
/// a broadcast and a product take 12 of AVX2's 16 registers (4 × 3
/// spilled an accumulator to the stack, a quarter slower; 3 × 3 was about
/// 10 % slower than this).
const TILE_ROWS: usize = 4;
/// Rows per parallel task when a batch has rows enough for every thread.
const ROWS_PER_TASK: usize = 32;
/// Longest input row the i32 sums take without overflow: every product is
/// at most `WEIGHT_LEVELS · ACTIVATION_LEVELS`.
pub const MAX_INPUTS: usize =
    (i32::MAX as f64 / (WEIGHT_LEVELS as f64 * ACTIVATION_LEVELS as f64)) as usize;

/// `W` quantized per output and packed in panels: panel `p`, input pair `t`
/// holds, for each of its `PANEL` outputs, `(q[2t], q[2t + 1])`.
pub struct QuantWeights {
    packed: Vec<i16>,
    /// One scale per output, padded with zeros to whole panels.
    scales: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

/// Which kernel runs the tiles: picked once per call, forced in tests.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kernel {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-512 VNNI on 256-bit vectors (EVEX `vpdpwssd`, with AVX-512VL).
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
        if has_vnni() {
            all.push(Kernel::Vnni);
        }
        all
    }
}

/// AVX-512 VNNI with 256-bit (VL) forms, beside the AVX2 the tile shares.
#[cfg(target_arch = "x86_64")]
fn has_vnni() -> bool {
    std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("avx512vnni")
        && std::is_x86_feature_detected!("avx512vl")
}

/// Symmetric quantization of `xs` with a scale for `max |x|`: the scale,
/// and each value as `round(x / scale)` in ±127.
#[inline(always)]
fn quantize_into(xs: &[f32], out: &mut [i16], levels: f32) -> f32 {
    let max = xs.iter().fold(0f32, |m, &v| m.max(v.abs()));
    if !(max.is_finite() && max > 0.0) {
        out.iter_mut().for_each(|q| *q = 0);
        return 0.0;
    }
    let inv = levels / max;
    for (q, &v) in out.iter_mut().zip(xs) {
        *q = (v * inv).round_ties_even().clamp(-levels, levels) as i16;
    }
    max / levels
}

super::kernels::simd_kernel! {
/// Quantizes each `k`-wide row of `x` into a `kp`-wide row of `q` (the pad
/// stays zero) and its scale.
pub fn quantize_rows(x: &[f32], k: usize, kp: usize, q: &mut [i16], scales: &mut [f32]) {
    for ((row, qrow), s) in x.chunks_exact(k).zip(q.chunks_exact_mut(kp)).zip(scales.iter_mut()) {
        *s = quantize_into(row, &mut qrow[..k], ACTIVATION_LEVELS);
    }
}
}

impl QuantWeights {
    /// Quantizes `w` (`[outputs, inputs]`, PyTorch layout), or `None` for
    /// rows too long for exact i32 sums.
    pub fn quantize(w: &[f32], inputs: usize) -> Option<Self> {
        let outputs = w.len().checked_div(inputs)?;
        if inputs > MAX_INPUTS || outputs * inputs != w.len() {
            return None;
        }
        let pairs = inputs.div_ceil(2);
        let panels = outputs.div_ceil(PANEL);
        let mut packed = vec![0i16; panels * pairs * 2 * PANEL];
        let mut scales = vec![0f32; panels * PANEL];
        let mut row = vec![0i16; inputs];
        for (j, weights) in w.chunks_exact(inputs).enumerate() {
            scales[j] = quantize_into(weights, &mut row, WEIGHT_LEVELS);
            let (p, c) = (j / PANEL, j % PANEL);
            let panel = &mut packed[p * pairs * 2 * PANEL..][..pairs * 2 * PANEL];
            for (i, &q) in row.iter().enumerate() {
                panel[(i / 2) * 2 * PANEL + 2 * c + i % 2] = q;
            }
        }
        Some(Self {
            packed,
            scales,
            inputs,
            outputs,
        })
    }

    /// Inputs rounded up to whole pairs: the width of a quantized row.
    fn padded_inputs(&self) -> usize {
        self.inputs.next_multiple_of(2)
    }

    fn panel(&self, p: usize) -> &[i16] {
        let len = self.padded_inputs() * PANEL;
        &self.packed[p * len..][..len]
    }

    /// `dst = x · Wᵀ` for `x` of `rows × inputs` (the bias is left to the
    /// element-wise pass that follows, as for the f32 layers).
    pub fn apply(&self, x: &[f32], dst: &mut [f32]) {
        self.apply_with(Kernel::best(), x, dst)
    }

    pub fn apply_with(&self, kernel: Kernel, x: &[f32], dst: &mut [f32]) {
        let (k, n) = (self.inputs, self.outputs);
        let rows = x.len() / k;
        assert_eq!(x.len(), rows * k);
        assert_eq!(dst.len(), rows * n);
        if rows == 0 {
            return;
        }
        let kp = self.padded_inputs();
        thread_local! {
            /// Quantized activations, reused across calls of this thread.
            static ROWS: RefCell<(Vec<i16>, Vec<f32>)> = RefCell::default();
        }
        // Taken out, not borrowed: while this thread waits on the parallel
        // work below, rayon may run another pass's layer on it, which
        // then finds an empty pair and allocates its own.
        let (mut xq, mut sx) = ROWS.take();
        xq.clear();
        xq.resize(rows * kp, 0);
        sx.clear();
        sx.resize(rows, 0.0);
        x.par_chunks(ROWS_PER_TASK * k)
            .zip(xq.par_chunks_mut(ROWS_PER_TASK * kp))
            .zip(sx.par_chunks_mut(ROWS_PER_TASK))
            .for_each(|((x, q), s)| quantize_rows(x, k, kp, q, s));
        let panels = n.div_ceil(PANEL);
        let threads = rayon::current_num_threads().max(1);
        if rows >= ROWS_PER_TASK * threads {
            dst.par_chunks_mut(ROWS_PER_TASK * n)
                .zip(xq.par_chunks(ROWS_PER_TASK * kp))
                .zip(sx.par_chunks(ROWS_PER_TASK))
                .for_each(|((d, q), s)| self.block(kernel, q, s, 0..panels, d, n, 0));
        } else {
            self.by_panels(kernel, &xq, &sx, dst);
        }
        ROWS.set((xq, sx));
    }

    /// A few rows (a query): the panels split over the threads, each part
    /// computed into a buffer of its own.
    fn by_panels(&self, kernel: Kernel, xq: &[i16], sx: &[f32], dst: &mut [f32]) {
        let n = self.outputs;
        let rows = sx.len();
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
                self.block(kernel, xq, sx, first..last, &mut part, width, start);
                (start, width, part)
            })
            .collect();
        for (start, width, part) in parts {
            for (r, src) in part.chunks_exact(width).enumerate() {
                dst[r * n + start..][..width].copy_from_slice(src);
            }
        }
    }

    /// Rows of `xq` times panels `panels` into `dst`, whose rows are
    /// `stride` wide and whose column 0 is output `first_output`.
    #[allow(clippy::too_many_arguments)]
    fn block(
        &self,
        kernel: Kernel,
        xq: &[i16],
        sx: &[f32],
        panels: std::ops::Range<usize>,
        dst: &mut [f32],
        stride: usize,
        first_output: usize,
    ) {
        let kp = self.padded_inputs();
        let rows = sx.len();
        let mut acc = [[0i32; PANEL]; TILE_ROWS];
        for p in panels {
            let panel = self.panel(p);
            let col0 = p * PANEL;
            let cols = PANEL.min(self.outputs - col0);
            let sw = &self.scales[col0..col0 + cols];
            for start in (0..rows).step_by(TILE_ROWS) {
                let tile = TILE_ROWS.min(rows - start);
                let xs = &xq[start * kp..(start + tile) * kp];
                run_tile(kernel, tile, xs, kp, panel, &mut acc);
                for (r, a) in acc.iter().take(tile).enumerate() {
                    let s = sx[start + r];
                    let out = &mut dst[(start + r) * stride + col0 - first_output..][..cols];
                    for ((o, &v), &w) in out.iter_mut().zip(a).zip(sw) {
                        *o = v as f32 * (s * w);
                    }
                }
            }
        }
    }
}

/// One tile of `rows` (1 to 4) quantized rows times a panel into `acc`.
fn run_tile(
    kernel: Kernel,
    rows: usize,
    xs: &[i16],
    kp: usize,
    panel: &[i16],
    acc: &mut [[i32; PANEL]; TILE_ROWS],
) {
    assert!(rows <= TILE_ROWS && xs.len() >= rows * kp && panel.len() >= kp * PANEL);
    match kernel {
        Kernel::Portable => portable_tile(rows, xs, kp, panel, acc),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Kernel::Avx2` is chosen only where the CPU has AVX2
        // (`best`, or a test that checked); the assert above bounds every
        // read the tile makes.
        Kernel::Avx2 => unsafe {
            match rows {
                4 => avx2_tile::<4>(xs, kp, panel, acc),
                3 => avx2_tile::<3>(xs, kp, panel, acc),
                2 => avx2_tile::<2>(xs, kp, panel, acc),
                _ => avx2_tile::<1>(xs, kp, panel, acc),
            }
        },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Kernel::Vnni` is chosen only where the CPU has AVX2,
        // AVX-512 VNNI and AVX-512VL (`has_vnni`); the assert above bounds
        // every read the tile makes.
        Kernel::Vnni => unsafe {
            match rows {
                4 => vnni_tile::<4>(xs, kp, panel, acc),
                3 => vnni_tile::<3>(xs, kp, panel, acc),
                2 => vnni_tile::<2>(xs, kp, panel, acc),
                _ => vnni_tile::<1>(xs, kp, panel, acc),
            }
        },
    }
}

/// The tile in plain integers: what `vpmaddwd` then `vpaddd` compute,
/// wrapping as they do (no sum reaches the wrap, by [`MAX_INPUTS`]).
fn portable_tile(
    rows: usize,
    xs: &[i16],
    kp: usize,
    panel: &[i16],
    acc: &mut [[i32; PANEL]; TILE_ROWS],
) {
    for (r, a) in acc.iter_mut().take(rows).enumerate() {
        let x = &xs[r * kp..(r + 1) * kp];
        *a = [0; PANEL];
        for (pair, w) in x.chunks_exact(2).zip(panel.chunks_exact(2 * PANEL)) {
            for (c, o) in a.iter_mut().enumerate() {
                let dot = pair[0] as i32 * w[2 * c] as i32 + pair[1] as i32 * w[2 * c + 1] as i32;
                *o = o.wrapping_add(dot);
            }
        }
    }
}

/// Declares an x86 tile: `R` quantized rows times a panel, per input pair
/// one load per weight vector, and per row one broadcast of its pair and
/// one `step` (accumulator, broadcast pair, weights → accumulator) per
/// weight vector. The kernels differ only in that step.
macro_rules! x86_tile {
    ($(#[$doc:meta])* $name:ident, $features:literal, |$a:ident, $v:ident, $w:ident| $step:expr) => {
        $(#[$doc])*
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
        unsafe fn $name<const R: usize>(
            xs: &[i16],
            kp: usize,
            panel: &[i16],
            out: &mut [[i32; PANEL]; TILE_ROWS],
        ) {
            use std::arch::x86_64::*;
            assert!(
                R <= TILE_ROWS
                    && kp.is_multiple_of(2)
                    && xs.len() >= R * kp
                    && panel.len() >= kp * PANEL
            );
            let (xp, wp) = (xs.as_ptr(), panel.as_ptr());
            let mut acc = [[_mm256_setzero_si256(); VECS]; R];
            for t in 0..kp / 2 {
                let w = wp.add(t * 2 * PANEL).cast::<__m256i>();
                let mut ws = [_mm256_setzero_si256(); VECS];
                for (c, v) in ws.iter_mut().enumerate() {
                    *v = _mm256_loadu_si256(w.add(c));
                }
                for (r, a) in acc.iter_mut().enumerate() {
                    let pair = xp.add(r * kp + 2 * t).cast::<i32>().read_unaligned();
                    let $v = _mm256_set1_epi32(pair);
                    for (a, w) in a.iter_mut().zip(&ws) {
                        let ($a, $w) = (*a, *w);
                        *a = $step;
                    }
                }
            }
            for (r, a) in acc.iter().enumerate() {
                let o = out[r].as_mut_ptr().cast::<__m256i>();
                for (c, v) in a.iter().enumerate() {
                    _mm256_storeu_si256(o.add(c), *v);
                }
            }
        }
    };
}

x86_tile! {
    /// The AVX2 tile: `vpmaddwd` then `vpaddd`.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2; `xs` holds `R` rows of `kp` (even) values and
    /// `panel` `kp · PANEL`.
    avx2_tile, "avx2", |a, v, w| _mm256_add_epi32(a, _mm256_madd_epi16(v, w))
}

x86_tile! {
    /// The VNNI tile: `vpdpwssd`, a pair's two products and the running sum
    /// in one instruction, the same exact i32 sums.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2, AVX-512 VNNI and AVX-512VL; `xs` holds `R`
    /// rows of `kp` (even) values and `panel` `kp · PANEL`.
    vnni_tile, "avx2,avx512f,avx512vl,avx512vnni", |a, v, w| _mm256_dpwssd_epi32(a, v, w)
}

#[cfg(test)]
mod tests {
    use super::super::product_check::operands;
    use super::*;

    /// The product by plain integer arithmetic from the unpacked quantized
    /// operands, dequantized by the same float steps.
    fn reference(x: &[f32], w: &[f32], k: usize) -> Vec<f32> {
        let quant = |levels: f32| {
            move |v: &[f32]| {
                let mut q = vec![0i16; k];
                let s = quantize_into(v, &mut q, levels);
                (q, s)
            }
        };
        let xs: Vec<_> = x.chunks_exact(k).map(quant(ACTIVATION_LEVELS)).collect();
        let ws: Vec<_> = w.chunks_exact(k).map(quant(WEIGHT_LEVELS)).collect();
        let mut out = Vec::new();
        for (xq, sx) in &xs {
            for (wq, sw) in &ws {
                let dot: i32 = xq.iter().zip(wq).map(|(&a, &b)| a as i32 * b as i32).sum();
                out.push(dot as f32 * (sx * sw));
            }
        }
        out
    }

    fn kernels() -> Vec<Kernel> {
        Kernel::available()
    }

    #[test]
    fn every_kernel_matches_the_integer_reference_exactly() {
        // Odd inputs (a padded pair), outputs that end in a partial panel,
        // rows that end in a partial tile; many rows (row tasks) and few
        // (panel tasks).
        for (rows, k, n) in [(7, 41, 50), (3, 8, 24), (150, 64, 72), (1, 384, 48)] {
            let (x, w) = operands(rows, k, n);
            let want = reference(&x, &w, k);
            let q = QuantWeights::quantize(&w, k).unwrap();
            for kernel in kernels() {
                let mut got = vec![f32::NAN; rows * n];
                q.apply_with(kernel, &x, &mut got);
                assert_eq!(got, want, "{kernel:?} {rows}×{k}×{n}");
            }
        }
    }

    #[test]
    fn passes_on_many_threads_at_once_share_the_pool_safely() {
        // Each call waits on the pool, which may run another call's work
        // on the waiting thread: the reused buffers must not be borrowed
        // across that wait.
        let (rows, k, n) = (300, 64, 48);
        let (x, w) = operands(rows, k, n);
        let q = QuantWeights::quantize(&w, k).unwrap();
        let mut want = vec![0f32; rows * n];
        q.apply(&x, &mut want);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..20 {
                        let mut got = vec![0f32; rows * n];
                        rayon::scope(|_| q.apply(&x, &mut got));
                        assert_eq!(got, want);
                    }
                });
            }
        });
    }

    #[test]
    fn extreme_values_do_not_saturate() {
        // Every product at ±127 · ±127, the case `vpmaddubsw` would clip.
        let k = 1536;
        let x: Vec<f32> = (0..2 * k)
            .map(|i| if i % 3 == 0 { -1.0 } else { 1.0 })
            .collect();
        let w: Vec<f32> = (0..24 * k)
            .map(|i| if i % 5 == 0 { 1.0 } else { -1.0 })
            .collect();
        let want = reference(&x, &w, k);
        let q = QuantWeights::quantize(&w, k).unwrap();
        for kernel in kernels() {
            let mut got = vec![0f32; 2 * 24];
            q.apply_with(kernel, &x, &mut got);
            assert_eq!(got, want, "{kernel:?}");
        }
    }

    #[test]
    fn quantized_product_is_close_to_the_float_one() {
        let (rows, k, n) = (9, 384, 48);
        let (x, w) = operands(rows, k, n);
        let q = QuantWeights::quantize(&w, k).unwrap();
        let mut got = vec![0f32; rows * n];
        q.apply(&x, &mut got);
        for r in 0..rows {
            for j in 0..n {
                let exact: f32 = (0..k).map(|i| x[r * k + i] * w[j * k + i]).sum();
                let tolerance = 0.02 * k as f32 / 10.0;
                assert!((got[r * n + j] - exact).abs() < tolerance, "{r},{j}");
            }
        }
    }

    #[test]
    fn zero_and_non_finite_rows_give_zeros_not_nan() {
        let k = 8;
        let w = vec![0.5f32; 24 * k];
        let q = QuantWeights::quantize(&w, k).unwrap();
        let mut x = vec![0f32; 2 * k];
        x[k] = f32::INFINITY;
        let mut got = vec![f32::NAN; 2 * 24];
        q.apply(&x, &mut got);
        assert!(got.iter().all(|v| *v == 0.0), "{got:?}");
    }
}
