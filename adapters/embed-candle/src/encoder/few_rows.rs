//! `x · Wᵀ` for a few rows of `x` (a short query's tokens): each weight row
//! is read once, straight from the model file, and used for every row of
//! `x`. gemm spent most of a query's embedding on its blocking and thread
//! hand-offs, built for many rows.

use rayon::prelude::*;

/// Up to this many rows the few-rows path is taken.
pub const FEW_ROWS: usize = 64;

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
    let wide = super::kernels::has_avx512() && inputs.is_multiple_of(16);
    let threads = rayon::current_num_threads().clamp(1, 8);
    let per = outputs.div_ceil(threads).next_multiple_of(4);
    let parts: Vec<(usize, Vec<f32>)> = (0..outputs)
        .step_by(per)
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|start| {
            let end = (start + per).min(outputs);
            let mut part = vec![0f32; rows * (end - start)];
            let w = &w[start * inputs..end * inputs];
            if wide {
                // SAFETY: `wide` checked AVX-512F and `inputs` a multiple of
                // 16; `end - start` is a multiple of 4; `part` is
                // rows × (end - start).
                unsafe { kernel512(x, w, inputs, &mut part) };
            } else {
                // SAFETY: `applies` checked AVX2+FMA; the weight slice holds
                // whole rows of `inputs` (a multiple of 8) and `end - start`
                // is a multiple of 4; `part` is rows × (end - start).
                unsafe { kernel(x, w, inputs, &mut part) };
            }
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

/// [`kernel`] sixteen lanes wide, two rows of `x` at a time against four
/// weight rows (eight accumulators: six loads feed eight FMAs).
///
/// # Safety
///
/// The CPU must have AVX-512F; `k` a multiple of 16, `w.len() / k` a
/// multiple of 4, `dst.len()` = rows of `x` × rows of `w`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn kernel512(x: &[f32], w: &[f32], k: usize, dst: &mut [f32]) {
    use std::arch::x86_64::*;
    let rows = x.len() / k;
    let outs = w.len() / k;
    assert!(k.is_multiple_of(16) && outs.is_multiple_of(4) && dst.len() == rows * outs);
    for j in (0..outs).step_by(4) {
        let w0 = w.as_ptr().add(j * k);
        let (w1, w2, w3) = (w0.add(k), w0.add(2 * k), w0.add(3 * k));
        for r in (0..rows).step_by(2) {
            // An odd last row is computed twice into the same place.
            let r2 = (r + 1).min(rows - 1);
            let (xa, xb) = (x.as_ptr().add(r * k), x.as_ptr().add(r2 * k));
            let mut acc = [_mm512_setzero_ps(); 8];
            let mut i = 0;
            while i < k {
                let (va, vb) = (_mm512_loadu_ps(xa.add(i)), _mm512_loadu_ps(xb.add(i)));
                for (n, wr) in [w0, w1, w2, w3].into_iter().enumerate() {
                    let wv = _mm512_loadu_ps(wr.add(i));
                    acc[n] = _mm512_fmadd_ps(va, wv, acc[n]);
                    acc[4 + n] = _mm512_fmadd_ps(vb, wv, acc[4 + n]);
                }
                i += 16;
            }
            for (row, sums) in [(r, &acc[..4]), (r2, &acc[4..])] {
                let out = dst.as_mut_ptr().add(row * outs + j);
                for (n, a) in sums.iter().enumerate() {
                    *out.add(n) = _mm512_reduce_add_ps(*a);
                }
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn kernel512(_x: &[f32], _w: &[f32], _k: usize, _dst: &mut [f32]) {
    unreachable!("has_avx512() is false off x86-64")
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn kernel(_x: &[f32], _w: &[f32], _k: usize, _dst: &mut [f32]) {
    unreachable!("applies() is false without AVX2")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_rows_match_the_plain_product() {
        if !super::super::kernels::has_avx2() {
            return;
        }
        // Seven rows: the AVX-512 kernel's odd last row; 48 inputs: a
        // multiple of 16, so both kernels run where the CPU has them.
        let (rows, k, n) = (7, 48, 12);
        let x: Vec<f32> = (0..rows * k)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0)
            .collect();
        let w: Vec<f32> = (0..n * k)
            .map(|i| ((i * 53 % 97) as f32 - 48.0) / 48.0)
            .collect();
        let mut got = vec![0f32; rows * n];
        dot_rows(&x, &w, k, &mut got);
        let mut narrow = vec![0f32; rows * n];
        // SAFETY: AVX2+FMA checked at the top; 48 is a multiple of 8, 12 of 4.
        unsafe { kernel(&x, &w, k, &mut narrow) };
        assert!(got.iter().zip(&narrow).all(|(a, b)| (a - b).abs() < 1e-4));
        for r in 0..rows {
            for j in 0..n {
                let want: f32 = (0..k).map(|i| x[r * k + i] * w[j * k + i]).sum();
                assert!(
                    (got[r * n + j] - want).abs() < 1e-4,
                    "{r},{j}: {} vs {want}",
                    got[r * n + j]
                );
            }
        }
    }
}
