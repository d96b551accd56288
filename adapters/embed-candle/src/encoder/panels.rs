//! `x · Wᵀ` for a few rows of `x` on AVX-512, with `W` packed once into
//! panels of 48 outputs (`Wᵀ` column blocks, contiguous per input). Each
//! step of the kernel loads three weight vectors and broadcasts one input
//! of up to eight rows: 24 FMAs for 3 loads and no horizontal sums. The
//! row-dot kernel of [`super::few_rows`] re-read every activation row for
//! each group of four weight rows and ran at a quarter of the FMA peak.

use rayon::prelude::*;

/// Outputs per panel: three 16-lane vectors.
const PANEL: usize = 48;
/// Up to this many rows (a query's tokens) the panels are used: 64 gave
/// the best p95 in `query_bench` (16 and 32 were slower on long queries).
pub const MAX_ROWS: usize = 64;
/// Rows of `x` per register tile: 8 × 3 accumulators of the 32 registers.
const TILE_ROWS: usize = 8;
/// Inputs ahead of the current one whose weights are prefetched.
const AHEAD: usize = 16;

/// `W` (`[outputs, inputs]`, PyTorch layout) repacked as panels: panel `p`
/// holds, input by input, `W[p·48 .. p·48 + 48][i]`.
pub struct Panels {
    data: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

impl Panels {
    /// The packed weights, or `None` where this kernel does not apply: a CPU
    /// without AVX-512F, or outputs not a multiple of 48.
    pub fn pack(w: &[f32], inputs: usize) -> Option<Self> {
        let outputs = w.len().checked_div(inputs)?;
        if !super::kernels::has_avx512() || outputs == 0 || !outputs.is_multiple_of(PANEL) {
            return None;
        }
        let mut data = vec![0f32; w.len()];
        for (p, panel) in data.chunks_exact_mut(PANEL * inputs).enumerate() {
            for (i, column) in panel.chunks_exact_mut(PANEL).enumerate() {
                for (c, v) in column.iter_mut().enumerate() {
                    *v = w[(p * PANEL + c) * inputs + i];
                }
            }
        }
        Some(Self {
            data,
            inputs,
            outputs,
        })
    }

    /// `dst = x · Wᵀ` for `x` of `rows × inputs`; panels split over the
    /// pool's threads, each part computed into a buffer of its own.
    pub fn apply(&self, x: &[f32], dst: &mut [f32]) {
        let (k, n) = (self.inputs, self.outputs);
        let rows = x.len() / k;
        assert_eq!(x.len(), rows * k);
        assert_eq!(dst.len(), rows * n);
        let panels = n / PANEL;
        let threads = rayon::current_num_threads().clamp(1, panels);
        let per = panels.div_ceil(threads);
        let parts: Vec<(usize, Vec<f32>)> = (0..panels)
            .step_by(per)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|first| {
                let count = per.min(panels - first);
                let width = count * PANEL;
                let mut part = vec![0f32; rows * width];
                for p in 0..count {
                    let panel = &self.data[(first + p) * PANEL * k..][..PANEL * k];
                    for start in (0..rows).step_by(TILE_ROWS) {
                        let tile = TILE_ROWS.min(rows - start);
                        let out = &mut part[start * width + p * PANEL..];
                        let xs = &x[start * k..(start + tile) * k];
                        // SAFETY: `pack` returned panels only where the CPU
                        // has AVX-512F; `xs` holds `tile` rows of `k`, the
                        // panel 48 × k values, and `out` reaches row
                        // `tile - 1` at `width` apart, 48 wide.
                        unsafe { tile_dispatch(tile, xs, panel, k, out, width) };
                    }
                }
                (first * PANEL, part)
            })
            .collect();
        for (start, part) in parts {
            let width = part.len() / rows.max(1);
            for r in 0..rows {
                dst[r * n + start..r * n + start + width]
                    .copy_from_slice(&part[r * width..(r + 1) * width]);
            }
        }
    }
}

/// [`tile`] for a run-time row count, 1 to 8.
///
/// # Safety
///
/// As [`tile`].
unsafe fn tile_dispatch(
    rows: usize,
    x: &[f32],
    panel: &[f32],
    k: usize,
    out: &mut [f32],
    stride: usize,
) {
    match rows {
        8 => tile::<8>(x, panel, k, out, stride),
        7 => tile::<7>(x, panel, k, out, stride),
        6 => tile::<6>(x, panel, k, out, stride),
        5 => tile::<5>(x, panel, k, out, stride),
        4 => tile::<4>(x, panel, k, out, stride),
        3 => tile::<3>(x, panel, k, out, stride),
        2 => tile::<2>(x, panel, k, out, stride),
        _ => tile::<1>(x, panel, k, out, stride),
    }
}

/// `R` rows of `x` times one panel into `R` rows of 48 outputs, `stride`
/// apart in `out`.
///
/// # Safety
///
/// The CPU must have AVX-512F; `x` holds `R` rows of `k`, `panel` 48·k
/// values, and `out` at least `(R - 1)·stride + 48`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn tile<const R: usize>(x: &[f32], panel: &[f32], k: usize, out: &mut [f32], stride: usize) {
    use std::arch::x86_64::*;
    assert!(x.len() >= R * k && panel.len() >= PANEL * k && out.len() >= (R - 1) * stride + PANEL);
    let (xp, wp) = (x.as_ptr(), panel.as_ptr());
    let mut acc = [[_mm512_setzero_ps(); 3]; R];
    for i in 0..k {
        let w = wp.add(i * PANEL);
        let ahead = w.wrapping_add(AHEAD * PANEL).cast::<i8>();
        _mm_prefetch::<_MM_HINT_T0>(ahead);
        _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(64));
        _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(128));
        let (w0, w1, w2) = (
            _mm512_loadu_ps(w),
            _mm512_loadu_ps(w.add(16)),
            _mm512_loadu_ps(w.add(32)),
        );
        for (r, a) in acc.iter_mut().enumerate() {
            let v = _mm512_set1_ps(*xp.add(r * k + i));
            a[0] = _mm512_fmadd_ps(v, w0, a[0]);
            a[1] = _mm512_fmadd_ps(v, w1, a[1]);
            a[2] = _mm512_fmadd_ps(v, w2, a[2]);
        }
    }
    for (r, a) in acc.iter().enumerate() {
        let o = out.as_mut_ptr().add(r * stride);
        _mm512_storeu_ps(o, a[0]);
        _mm512_storeu_ps(o.add(16), a[1]);
        _mm512_storeu_ps(o.add(32), a[2]);
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn tile<const R: usize>(_x: &[f32], _p: &[f32], _k: usize, _o: &mut [f32], _s: usize) {
    unreachable!("has_avx512() is false off x86-64")
}

#[cfg(test)]
mod tests {
    use super::super::product_check::{assert_product, operands};
    use super::*;

    #[test]
    fn panels_match_the_plain_product() {
        // 96 outputs: two panels, one per thread of a two-thread pool;
        // 11 rows: a full tile and a tile of three.
        let (rows, k, n) = (11, 40, 96);
        let (x, w) = operands(rows, k, n);
        let Some(panels) = Panels::pack(&w, k) else {
            assert!(
                !crate::encoder::kernels::has_avx512(),
                "48-multiple outputs pack on AVX-512"
            );
            return;
        };
        assert!(Panels::pack(&w[..40 * k], k).is_none(), "40 outputs do not");
        let mut got = vec![f32::NAN; rows * n];
        panels.apply(&x, &mut got);
        assert_product(&x, &w, k, &got);
    }
}
