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
    let e = exp(2.0 * x.clamp(-15.0, 15.0));
    1.0 - 2.0 / (e + 1.0)
}

/// e^x for x in [-87, 88] (clamped outside) by the Cephes `expf` scheme:
/// 2^n · p(r), with n rounded and 2^n built by float tricks rather than
/// casts (a saturating `as i32` kept the loop scalar), so a loop of it
/// vectorises; libm's `expf` is a scalar call.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0; // 1.5 · 2²³: adding it rounds to an integer
    const BIAS: f32 = 8_388_735.0; // 2²³ + 127: n + BIAS keeps n + 127 in the low mantissa bits
    let x = x.clamp(-87.0, 88.0);
    let n = (x * std::f32::consts::LOG2_E + ROUND) - ROUND;
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let p = ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 0.166_666_65)
        * r
        + 0.5;
    let y = p * r * r + r + 1.0;
    // (n + 127) sits in the mantissa's low bits; shifting them into the
    // exponent field (the rest falls off the top) gives 2^n.
    let scale = f32::from_bits((n + BIAS).to_bits() << 23);
    y * scale
}

/// Whether this CPU runs the AVX2+FMA builds of the kernels.
#[inline]
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether this CPU runs the AVX-512 builds of the kernels.
#[inline]
pub fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        has_avx2() && std::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Defines a kernel compiled three times: for AVX-512 and for AVX2+FMA
/// (picked at run time when the CPU has them; the default x86-64 target is
/// SSE2, so the loops would otherwise vectorise only 4 wide) and as
/// portable code.
macro_rules! simd_kernel {
    ($(#[$m:meta])* pub fn $name:ident ($($arg:ident : $ty:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        pub fn $name($($arg: $ty),*) {
            #[inline(always)]
            fn portable($($arg: $ty),*) $body
            /// # Safety
            ///
            /// The CPU must support AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            unsafe fn avx2($($arg: $ty),*) {
                portable($($arg),*)
            }
            /// # Safety
            ///
            /// The CPU must support AVX-512F, AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx2,fma")]
            unsafe fn avx512($($arg: $ty),*) {
                portable($($arg),*)
            }
            #[cfg(target_arch = "x86_64")]
            if has_avx512() {
                // SAFETY: the CPU has the features `avx512` is compiled for.
                return unsafe { avx512($($arg),*) };
            }
            #[cfg(target_arch = "x86_64")]
            if has_avx2() {
                // SAFETY: the CPU has the features `avx2` is compiled for.
                return unsafe { avx2($($arg),*) };
            }
            portable($($arg),*)
        }
    };
}
pub(crate) use simd_kernel;

simd_kernel! {
/// `x = act(x + bias)` for every `bias`-wide row.
pub fn bias_activate(act: Activation, xs: &mut [f32], bias: &[f32]) {
    for row in xs.chunks_exact_mut(bias.len()) {
        match act {
            Activation::GeluErf => {
                for (x, b) in row.iter_mut().zip(bias) {
                    let v = *x + b;
                    *x = 0.5 * v * (1.0 + erf(v * std::f32::consts::FRAC_1_SQRT_2));
                }
            }
            Activation::GeluTanh => {
                const C: f32 = 0.797_884_6; // sqrt(2 / pi)
                for (x, b) in row.iter_mut().zip(bias) {
                    let v = *x + b;
                    *x = 0.5 * v * (1.0 + tanh(C * (v + 0.044_715 * v * v * v)));
                }
            }
            Activation::Relu => {
                for (x, b) in row.iter_mut().zip(bias) {
                    *x = (*x + b).max(0.0);
                }
            }
        }
    }
}
}

simd_kernel! {
/// `x += bias` for every `bias`-wide row.
pub fn add_bias(xs: &mut [f32], bias: &[f32]) {
    for row in xs.chunks_exact_mut(bias.len()) {
        for (x, b) in row.iter_mut().zip(bias) {
            *x += b;
        }
    }
}
}

/// A LayerNorm's parameters.
pub struct NormParams<'a> {
    pub gamma: &'a [f32],
    pub beta: &'a [f32],
    pub eps: f32,
}

simd_kernel! {
/// `x = LayerNorm(x + residual + bias)` for every `bias`-wide row: the
/// residual add of a BERT sub-layer and its norm in one pass.
pub fn add_norm(xs: &mut [f32], residual: &[f32], bias: &[f32], norm: &NormParams) {
    let width = bias.len();
    for (row, res) in xs.chunks_exact_mut(width).zip(residual.chunks_exact(width)) {
        for ((x, r), b) in row.iter_mut().zip(res).zip(bias) {
            *x += r + b;
        }
        layer_norm_row(row, norm);
    }
}
}

/// LayerNorm of one row, in place.
#[inline(always)]
pub fn layer_norm_row(row: &mut [f32], norm: &NormParams) {
    let width = row.len() as f32;
    let mean = lanes(row, 0.0, |a, b| a + b) / width;
    let mut centred = [0f32; 8];
    let mut chunks = row.chunks_exact(8);
    for c in &mut chunks {
        for (a, &v) in centred.iter_mut().zip(c) {
            *a += (v - mean) * (v - mean);
        }
    }
    let tail: f32 = chunks
        .remainder()
        .iter()
        .map(|v| (v - mean) * (v - mean))
        .sum();
    let var = (centred.iter().sum::<f32>() + tail) / width;
    let inv = 1.0 / (var + norm.eps).sqrt();
    for ((v, g), b) in row.iter_mut().zip(norm.gamma).zip(norm.beta) {
        *v = (*v - mean) * inv * g + b;
    }
}

simd_kernel! {
/// Softmax of every `width`-wide row of `xs`, in place.
pub fn softmax_rows(xs: &mut [f32], width: usize) {
    for row in xs.chunks_exact_mut(width) {
        softmax(row);
    }
}
}

/// Softmax of one row, in place.
#[inline(always)]
pub fn softmax(row: &mut [f32]) {
    let max = lanes(row, f32::NEG_INFINITY, f32::max);
    for v in row.iter_mut() {
        *v = exp(*v - max);
    }
    let inv = 1.0 / lanes(row, 0.0, |a, b| a + b);
    for v in row.iter_mut() {
        *v *= inv;
    }
}

/// Folds `xs` with `f` in eight independent lanes, then folds the lanes:
/// a single running sum or max is a serial chain the compiler may not
/// reorder (strict float semantics), eight lanes are one vector register.
#[inline(always)]
fn lanes(xs: &[f32], init: f32, f: impl Fn(f32, f32) -> f32) -> f32 {
    let mut acc = [init; 8];
    let mut chunks = xs.chunks_exact(8);
    for c in &mut chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a = f(*a, v);
        }
    }
    let mut out = chunks.remainder().iter().fold(init, |a, &v| f(a, v));
    for a in acc {
        out = f(out, a);
    }
    out
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
    fn exp_is_within_two_ulps_of_libm() {
        for i in -8700..=8800 {
            let x = i as f32 / 100.0;
            let (got, want) = (exp(x), x.exp());
            assert!(
                (got - want).abs() <= 2.5e-7 * want,
                "exp({x}) = {got}, want {want}"
            );
        }
        assert_eq!(exp(-1000.0), (-87f32).exp());
        assert!(exp(f32::NEG_INFINITY) < 1e-37);
    }

    #[test]
    fn layer_norm_centres_and_scales_each_row() {
        let mut xs = vec![1.0, 2.0, 3.0, 4.0, 10.0, 10.0, 10.0, 10.0];
        let residual = [0.0; 8];
        let norm = NormParams {
            gamma: &[1.0; 4],
            beta: &[0.5; 4],
            eps: 1e-12,
        };
        add_norm(&mut xs, &residual, &[0.0; 4], &norm);
        let row: f32 = xs[..4].iter().sum::<f32>() / 4.0;
        assert!((row - 0.5).abs() < 1e-6);
        assert!((xs[3] - xs[0] - 2.0 * 1.341_640_8).abs() < 1e-5);
        assert!(xs[4..].iter().all(|v| (v - 0.5).abs() < 1e-6));
    }

    #[test]
    fn fused_passes_add_bias_and_residual_before_the_norm() {
        let mut xs = vec![1.0, 1.0, 1.0, 1.0];
        let norm = NormParams {
            gamma: &[2.0, 2.0],
            beta: &[0.0, 0.0],
            eps: 1e-12,
        };
        // Rows become (1+0+0, 1+2+0) and (1+0+1, 1+0+1): the second is flat.
        add_norm(&mut xs, &[0.0, 2.0, 0.0, 0.0], &[0.0, 0.0], &norm);
        assert_eq!(&xs[2..], &[0.0, 0.0]);
        assert!((xs[0] + 2.0).abs() < 1e-5 && (xs[1] - 2.0).abs() < 1e-5);
        let mut ys = vec![-3.0, 0.0, 1.0, 2.0];
        bias_activate(Activation::Relu, &mut ys, &[1.0, 1.0]);
        assert_eq!(ys, [0.0, 1.0, 2.0, 3.0]);
        bias_activate(Activation::GeluErf, &mut ys, &[0.0, 0.0]);
        assert!((ys[1] - 0.841_344_7).abs() < 1e-6, "{}", ys[1]);
        assert!((ys[3] - 2.995_950_6).abs() < 1e-6, "{}", ys[3]);
    }

    #[test]
    fn softmax_sums_to_one_and_keeps_order() {
        let mut row = vec![1.0, 3.0, 2.0, -1e9];
        softmax(&mut row);
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(row[1] > row[2] && row[2] > row[0] && row[3] < 1e-30);
    }
}
