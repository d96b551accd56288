//! `x · Wᵀ` for a few rows of `x` (a short query's tokens): each weight row
//! is read once, straight from the model file, and used for every row of
//! `x`. gemm spent most of a query's embedding on its blocking and thread
//! hand-offs, built for many rows.

use rayon::prelude::*;

/// Up to this many rows the row-dot path is taken (on AVX2-only CPUs; a
/// wider limit made the slowest queries slower there).
pub const FEW_ROWS: usize = 16;

/// Whether [`dot_rows`] applies: AVX2+FMA, and widths its kernel takes.
pub fn applies(rows: usize, inputs: usize, outputs: usize) -> bool {
    rows <= FEW_ROWS
        && inputs.is_multiple_of(8)
        && outputs.is_multiple_of(4)
        && super::kernels::has_avx2()
}

/// `dst = x · Wᵀ` (`W` is `[outputs, inputs]`), the outputs split over the
/// pool's threads, each part computed into a buffer of its own.
pub fn dot_rows(x: &[f32], w: &[f32], inputs: usize, dst: &mut [f32]) {
    let rows = x.len() / inputs;
    let outputs = w.len() / inputs;
    assert!(applies(rows, inputs, outputs));
    assert_eq!(dst.len(), rows * outputs);
    let threads = rayon::current_num_threads().clamp(1, 8);
    let per = outputs.div_ceil(threads).next_multiple_of(4);
    let parts: Vec<(usize, Vec<f32>)> = (0..outputs)
        .step_by(per)
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|start| {
            let end = (start + per).min(outputs);
            let mut part = vec![0f32; rows * (end - start)];
            // SAFETY: `applies` checked AVX2+FMA; the weight slice holds
            // whole rows of `inputs` (a multiple of 8) and `end - start`
            // is a multiple of 4; `part` is rows × (end - start).
            unsafe { kernel(x, &w[start * inputs..end * inputs], inputs, &mut part) };
            (start, part)
        })
        .collect();
    for (start, part) in parts {
        let width = part.len() / rows;
        for r in 0..rows {
            dst[r * outputs + start..r * outputs + start + width]
                .copy_from_slice(&part[r * width..(r + 1) * width]);
        }
    }
}

/// Four weight rows at a time against every row of `x`, eight lanes per
/// FMA, four accumulators so the FMAs overlap.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA; `k` a multiple of 8, `w.len() / k` a
/// multiple of 4, `dst.len()` = rows of `x` × rows of `w`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn kernel(x: &[f32], w: &[f32], k: usize, dst: &mut [f32]) {
    use std::arch::x86_64::*;
    let rows = x.len() / k;
    let outs = w.len() / k;
    assert!(k.is_multiple_of(8) && outs.is_multiple_of(4) && dst.len() == rows * outs);
    for j in (0..outs).step_by(4) {
        let w0 = w.as_ptr().add(j * k);
        let (w1, w2, w3) = (w0.add(k), w0.add(2 * k), w0.add(3 * k));
        for r in 0..rows {
            let xr = x.as_ptr().add(r * k);
            let mut a0 = _mm256_setzero_ps();
            let mut a1 = _mm256_setzero_ps();
            let mut a2 = _mm256_setzero_ps();
            let mut a3 = _mm256_setzero_ps();
            let mut i = 0;
            while i < k {
                let xv = _mm256_loadu_ps(xr.add(i));
                a0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w0.add(i)), a0);
                a1 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w1.add(i)), a1);
                a2 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w2.add(i)), a2);
                a3 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w3.add(i)), a3);
                i += 8;
            }
            // [a0 a1 a2 a3] each summed over its eight lanes.
            let t0 = _mm256_hadd_ps(a0, a1);
            let t1 = _mm256_hadd_ps(a2, a3);
            let t2 = _mm256_hadd_ps(t0, t1);
            let sum = _mm_add_ps(_mm256_castps256_ps128(t2), _mm256_extractf128_ps(t2, 1));
            _mm_storeu_ps(dst.as_mut_ptr().add(r * outs + j), sum);
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn kernel(_x: &[f32], _w: &[f32], _k: usize, _dst: &mut [f32]) {
    unreachable!("applies() is false without AVX2")
}

#[cfg(test)]
mod tests {
    use super::super::product_check::{assert_product, operands};
    use super::*;

    #[test]
    fn few_rows_match_the_plain_product() {
        if !super::super::kernels::has_avx2() {
            return;
        }
        let (rows, k, n) = (7, 48, 12);
        let (x, w) = operands(rows, k, n);
        let mut got = vec![0f32; rows * n];
        dot_rows(&x, &w, k, &mut got);
        assert_product(&x, &w, k, &got);
    }
}
