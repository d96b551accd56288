//! Element-wise and row kernels of the encoder, written so the compiler
//! vectorises them (no calls into libm in the hot loops).

use super::config::Activation;

/// erf by Abramowitz & Stegun 7.1.28 (absolute error ≤ 3e-7): only
/// multiplies and one division, so a slice of it vectorises; glibc's `erff`
/// is a scalar call and was 6.6 % of the old forward pass.
#[inline(always)]
fn erf(x: f32) -> f32 {
    const A: [f32; 6] = [
        0.070_523_08,
        0.042_282_01,
        0.009_270_527,
        0.000_152_014_3,
        0.000_276_567_2,
        0.000_043_063_8,
    ];
    let a = x.abs();
    // With p = 1 + u, carry u through the squarings ((1+u)² - 1 = u(2+u))
    // so small |x| keeps its relative precision: erf = 1 - 1/p¹⁶ = u₁₆/(1+u₁₆).
    let u = a * (A[0] + a * (A[1] + a * (A[2] + a * (A[3] + a * (A[4] + a * A[5])))));
    let u2 = u * (2.0 + u);
    let u4 = u2 * (2.0 + u2);
    let u8 = u4 * (2.0 + u4);
    let u16 = u8 * (2.0 + u8);
    let e = if u16.is_finite() {
        u16 / (1.0 + u16)
    } else {
        1.0
    };
    if x < 0.0 {
        -e
    } else {
        e
    }
}

#[inline(always)]
fn tanh(x: f32) -> f32 {
    // tanh(x) = 1 - 2 / (exp(2x) + 1); clamped so exp never overflows.
    let e = (2.0 * x.clamp(-15.0, 15.0)).exp();
    1.0 - 2.0 / (e + 1.0)
}

pub fn activate(act: Activation, xs: &mut [f32]) {
    match act {
        Activation::GeluErf => {
            for x in xs {
                *x = 0.5 * *x * (1.0 + erf(*x * std::f32::consts::FRAC_1_SQRT_2));
            }
        }
        Activation::GeluTanh => {
            const C: f32 = 0.797_884_6; // sqrt(2 / pi)
            for x in xs {
                let v = *x;
                *x = 0.5 * v * (1.0 + tanh(C * (v + 0.044_715 * v * v * v)));
            }
        }
        Activation::Relu => {
            for x in xs {
                *x = x.max(0.0);
            }
        }
    }
}

/// LayerNorm of every `width`-wide row of `xs`, in place.
pub fn layer_norm(xs: &mut [f32], width: usize, gamma: &[f32], beta: &[f32], eps: f32) {
    for row in xs.chunks_exact_mut(width) {
        let mean = row.iter().sum::<f32>() / width as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / width as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

/// Softmax of one row, in place.
pub fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    let inv = 1.0 / sum;
    for v in row.iter_mut() {
        *v *= inv;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_is_within_its_bound_of_the_series() {
        // erf by its Taylor series in f64, accurate for |x| ≤ 3.
        fn series(x: f64) -> f64 {
            let mut term = x;
            let mut sum = x;
            for n in 1..200 {
                term *= -x * x / n as f64;
                sum += term / (2 * n + 1) as f64;
            }
            sum * 2.0 / std::f64::consts::PI.sqrt()
        }
        for i in -300..=300 {
            let x = i as f64 / 100.0;
            let got = erf(x as f32) as f64;
            assert!(
                (got - series(x)).abs() < 1e-6,
                "erf({x}) = {got}, want {}",
                series(x)
            );
        }
        assert_eq!(erf(40.0), 1.0);
        assert_eq!(erf(-40.0), -1.0);
    }

    #[test]
    fn layer_norm_centres_and_scales_each_row() {
        let mut xs = vec![1.0, 2.0, 3.0, 4.0, 10.0, 10.0, 10.0, 10.0];
        layer_norm(&mut xs, 4, &[1.0; 4], &[0.5; 4], 1e-12);
        let row: f32 = xs[..4].iter().sum::<f32>() / 4.0;
        assert!((row - 0.5).abs() < 1e-6);
        assert!((xs[3] - xs[0] - 2.0 * 1.341_640_8).abs() < 1e-5);
        assert!(xs[4..].iter().all(|v| (v - 0.5).abs() < 1e-6));
    }

    #[test]
    fn softmax_sums_to_one_and_keeps_order() {
        let mut row = vec![1.0, 3.0, 2.0, -1e9];
        softmax(&mut row);
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(row[1] > row[2] && row[2] > row[0] && row[3] == 0.0);
    }
}
