//! Quantizing a layer's inputs, one token row at a time: one scale per row
//! (and a zero point for byte rows), so a row of small values keeps its
//! resolution beside a row of large ones.

#[cfg(target_arch = "x86_64")]
use super::super::kernels::{has_avx2, has_avx512};

/// How many bits a layer's inputs keep once quantized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActivationBits {
    /// Symmetric, ±2047: the i16 multiply takes them at no cost, and they
    /// carry no measurable error.
    Twelve,
    /// Asymmetric, 0..=255 with a zero point per row: four products per
    /// 32-bit lane (`vpdpbusd`) where the CPU has VNNI, twice as many
    /// multiply-adds per instruction as twelve bits get.
    Eight,
}

/// Levels each side of zero of a twelve-bit row.
pub const TWELVE_LEVELS: f32 = 2047.0;
/// The largest value of an eight-bit row.
pub const BYTE_MAX: f32 = 255.0;

/// 1.5 · 2²³: a float in [0, 255] plus this holds the float rounded to an
/// integer in its low eight bits.
const ROUND: f32 = 12_582_912.0;

/// A row's scale and zero point: `x ≈ scale · (q − zero)`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RowScale {
    /// The value of one level.
    pub scale: f32,
    /// The level that stands for 0.0 (0 for twelve-bit rows).
    pub zero: i32,
}

/// Symmetric quantization of `xs` with a scale for `max |x|`: the scale,
/// and each value as `round(x / scale)` in `±levels`.
#[inline(always)]
pub fn symmetric(xs: &[f32], out: &mut [i16], levels: f32) -> f32 {
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

/// Asymmetric quantization of `xs` over `[min(x, 0), max(x, 0)]` into
/// 0..=255 (0.0 lands exactly on the zero point), written as any integer
/// type: bytes for the four-product kernel, i16 for the pair kernels,
/// which then sum the same integers.
#[inline(always)]
pub fn asymmetric<T: From<u8>>(xs: &[f32], out: &mut [T]) -> RowScale {
    let (min, max) = xs
        .iter()
        .fold((0f32, 0f32), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let range = max - min;
    if !(range.is_finite() && range > 0.0) {
        out.iter_mut().for_each(|q| *q = T::from(0));
        return RowScale::default();
    }
    let inv = BYTE_MAX / range;
    let zero = (-min * inv).round_ties_even().clamp(0.0, BYTE_MAX);
    for (q, &v) in out.iter_mut().zip(xs) {
        // Adding 1.5 · 2²³ rounds to the nearest integer, ties to even, and
        // leaves it in the low mantissa bits: a float-to-int conversion
        // that vectorises where `as u8` (saturating) did not.
        let level = (v * inv + zero).clamp(0.0, BYTE_MAX) + ROUND;
        *q = T::from(level.to_bits() as u8);
    }
    RowScale {
        scale: range / BYTE_MAX,
        zero: zero as i32,
    }
}

super::super::kernels::simd_kernel! {
/// Quantizes each `k`-wide row of `x` into a `kp`-wide i16 row of `q` (the
/// pad stays zero), in `bits`, with its scale.
pub fn rows_as_i16(x: &[f32], k: usize, kp: usize, bits: ActivationBits, q: &mut [i16], scales: &mut [RowScale]) {
    for ((row, qrow), s) in x.chunks_exact(k).zip(q.chunks_exact_mut(kp)).zip(scales.iter_mut()) {
        *s = match bits {
            ActivationBits::Twelve => RowScale {
                scale: symmetric(row, &mut qrow[..k], TWELVE_LEVELS),
                zero: 0,
            },
            ActivationBits::Eight => asymmetric(row, &mut qrow[..k]),
        };
    }
}
}

super::super::kernels::simd_kernel! {
/// Quantizes each `k`-wide row of `x` into a `kp`-wide byte row of `q`
/// (the pad stays zero) in eight bits, with its scale.
pub fn rows_as_bytes(x: &[f32], k: usize, kp: usize, q: &mut [u8], scales: &mut [RowScale]) {
    for ((row, qrow), s) in x.chunks_exact(k).zip(q.chunks_exact_mut(kp)).zip(scales.iter_mut()) {
        *s = asymmetric(row, &mut qrow[..k]);
    }
}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_lands_on_the_zero_point_and_the_ends_on_0_and_255() {
        let xs = [-1.0f32, 0.0, 3.0, 1.0];
        let mut q = [0u8; 4];
        let s = asymmetric(&xs, &mut q);
        assert_eq!(q[0], 0);
        assert_eq!(q[2], 255);
        assert_eq!(q[1] as i32, s.zero);
        for (&x, &q) in xs.iter().zip(&q) {
            let back = s.scale * (q as i32 - s.zero) as f32;
            assert!((back - x).abs() <= s.scale / 2.0 + 1e-6, "{x} → {back}");
        }
    }

    #[test]
    fn a_row_of_one_sign_keeps_zero_in_range() {
        let mut q = [0u8; 3];
        let s = asymmetric(&[1.0f32, 2.0, 4.0], &mut q);
        assert_eq!(s.zero, 0);
        assert_eq!(q, [64, 128, 255]);
        let s = asymmetric(&[-1.0f32, -2.0, -4.0], &mut q);
        assert_eq!(s.zero, 255);
    }

    #[test]
    fn byte_and_i16_rows_hold_the_same_levels() {
        let xs: Vec<f32> = (0..50)
            .map(|i| (i as f32 * 0.37).sin() * 3.0 - 0.4)
            .collect();
        let (mut b, mut w) = (vec![0u8; 52], vec![0i16; 52]);
        let (mut sb, mut sw) = ([RowScale::default()], [RowScale::default()]);
        rows_as_bytes(&xs, 50, 52, &mut b, &mut sb);
        rows_as_i16(&xs, 50, 52, ActivationBits::Eight, &mut w, &mut sw);
        assert_eq!(sb, sw);
        assert!(b.iter().zip(&w).all(|(&b, &w)| b as i16 == w));
    }

    #[test]
    fn empty_zero_and_non_finite_rows_quantize_to_zeros() {
        for xs in [
            vec![0f32; 4],
            vec![1.0, f32::INFINITY, 0.0, 2.0],
            vec![f32::NAN; 4],
        ] {
            let mut q = [7u8; 4];
            assert_eq!(asymmetric(&xs, &mut q), RowScale::default());
            assert_eq!(q, [0; 4]);
        }
    }
}
