use super::super::product_check::operands;
use super::activations::{asymmetric, symmetric, TWELVE_LEVELS};
use super::*;

const BOTH: [ActivationBits; 2] = [ActivationBits::Twelve, ActivationBits::Eight];

/// The product by plain integer arithmetic from the unpacked quantized
/// operands, `Σ (x − zero) · w`, dequantized by the same float steps.
fn reference(x: &[f32], w: &[f32], k: usize, bits: ActivationBits) -> Vec<f32> {
    let xs: Vec<(Vec<i32>, RowScale)> = x
        .chunks_exact(k)
        .map(|row| {
            let mut q = vec![0i16; k];
            let s = match bits {
                ActivationBits::Twelve => RowScale {
                    scale: symmetric(row, &mut q, TWELVE_LEVELS),
                    zero: 0,
                },
                ActivationBits::Eight => asymmetric(row, &mut q),
            };
            (q.iter().map(|&v| v as i32 - s.zero).collect(), s)
        })
        .collect();
    let ws: Vec<(Vec<i16>, f32)> = w
        .chunks_exact(k)
        .map(|row| {
            let mut q = vec![0i16; k];
            let s = symmetric(row, &mut q, WEIGHT_LEVELS);
            (q, s)
        })
        .collect();
    let mut out = Vec::new();
    for (xq, sx) in &xs {
        for (wq, sw) in &ws {
            let dot: i32 = xq.iter().zip(wq).map(|(&a, &b)| a * b as i32).sum();
            out.push(dot as f32 * (sx.scale * sw));
        }
    }
    out
}

#[test]
fn a_cpu_with_avx_vnni_or_avx512_vnni_runs_a_vnni_byte_tile() {
    #[cfg(target_arch = "x86_64")]
    {
        let all = Kernel::available();
        assert_eq!(all.contains(&Kernel::AvxVnni), has_avx_vnni());
        assert_eq!(all.contains(&Kernel::Vnni), has_vnni());
        if has_avx_vnni() || has_vnni() {
            assert!(Kernel::best().takes_quads(), "{:?}", Kernel::best());
        }
    }
}

#[test]
fn every_kernel_matches_the_integer_reference_exactly() {
    // Inputs that are not a multiple of 2 or 4 (padded pairs and quads),
    // outputs that end in a partial panel, rows that end in a partial
    // tile; many rows (row tasks) and few (panel tasks).
    for bits in BOTH {
        for (rows, k, n) in [(7, 41, 50), (3, 8, 24), (150, 66, 72), (1, 384, 48)] {
            let (x, w) = operands(rows, k, n);
            let want = reference(&x, &w, k, bits);
            let q = QuantWeights::quantize(&w, k, bits).unwrap();
            for kernel in Kernel::available() {
                let mut got = vec![f32::NAN; rows * n];
                q.apply_with(kernel, &x, &mut got);
                assert_eq!(got, want, "{kernel:?} {bits:?} {rows}×{k}×{n}");
            }
        }
    }
}

#[test]
fn the_portable_quad_tile_sums_what_the_pair_tile_sums() {
    // The quad tile only the VNNI kernel takes, checked on any CPU against
    // the pair tile on the same integers.
    let (kq, rows) = (12, 3);
    let xs: Vec<u8> = (0..rows * kq).map(|i| (i * 89 % 256) as u8).collect();
    let w: Vec<f32> = (0..PANEL * kq)
        .map(|i| ((i * 53 % 97) as f32 - 48.0) / 48.0)
        .collect();
    let q = QuantWeights::quantize(&w, kq, ActivationBits::Eight).unwrap();
    let weight = |j, i| q.weight(j, i);
    let quads = q.pack(4, |v| v, &weight);
    let pairs = q.pack(2, i16::from, &weight);
    let wide: Vec<i16> = xs.iter().map(|&v| v as i16).collect();
    let (mut a, mut b) = ([[0i32; PANEL]; TILE_ROWS], [[0i32; PANEL]; TILE_ROWS]);
    tiles::quad_tile(Kernel::Portable, rows, &xs, kq, &quads, &mut a);
    tiles::pair_tile(Kernel::Portable, rows, &wide, kq, &pairs, &mut b);
    assert_eq!(a, b);
}

#[test]
fn passes_on_many_threads_at_once_share_the_pool_safely() {
    // Each call waits on the pool, which may run another call's work
    // on the waiting thread: the reused buffers must not be borrowed
    // across that wait.
    let (rows, k, n) = (300, 64, 48);
    let (x, w) = operands(rows, k, n);
    for bits in BOTH {
        let q = QuantWeights::quantize(&w, k, bits).unwrap();
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
}

#[test]
fn extreme_values_do_not_saturate() {
    // Every product at its largest magnitude, the case `vpmaddubsw` would
    // clip.
    let k = 1536;
    let x: Vec<f32> = (0..2 * k)
        .map(|i| if i % 3 == 0 { -1.0 } else { 1.0 })
        .collect();
    let w: Vec<f32> = (0..24 * k)
        .map(|i| if i % 5 == 0 { 1.0 } else { -1.0 })
        .collect();
    for bits in BOTH {
        let want = reference(&x, &w, k, bits);
        let q = QuantWeights::quantize(&w, k, bits).unwrap();
        for kernel in Kernel::available() {
            let mut got = vec![0f32; 2 * 24];
            q.apply_with(kernel, &x, &mut got);
            assert_eq!(got, want, "{kernel:?} {bits:?}");
        }
    }
}

#[test]
fn quantized_product_is_close_to_the_float_one() {
    let (rows, k, n) = (9, 384, 48);
    let (x, w) = operands(rows, k, n);
    for bits in BOTH {
        let q = QuantWeights::quantize(&w, k, bits).unwrap();
        let mut got = vec![0f32; rows * n];
        q.apply(&x, &mut got);
        for r in 0..rows {
            for j in 0..n {
                let exact: f32 = (0..k).map(|i| x[r * k + i] * w[j * k + i]).sum();
                let tolerance = 0.02 * k as f32 / 10.0;
                assert!(
                    (got[r * n + j] - exact).abs() < tolerance,
                    "{bits:?} {r},{j}"
                );
            }
        }
    }
}

#[test]
fn zero_and_non_finite_rows_give_zeros_not_nan() {
    let k = 8;
    let w = vec![0.5f32; 24 * k];
    for bits in BOTH {
        let q = QuantWeights::quantize(&w, k, bits).unwrap();
        let mut x = vec![0f32; 2 * k];
        x[k] = f32::INFINITY;
        let mut got = vec![f32::NAN; 2 * 24];
        q.apply(&x, &mut got);
        assert!(got.iter().all(|v| *v == 0.0), "{bits:?} {got:?}");
    }
}

#[test]
fn weights_read_back_from_either_packing_are_the_quantized_ones() {
    // Eight-bit weights pack as quads on a VNNI CPU and as pairs elsewhere;
    // a kernel that takes the other packing reads them back from the first.
    let (k, n) = (41, 50);
    let (_, w) = operands(1, k, n);
    let q = QuantWeights::quantize(&w, k, ActivationBits::Eight).unwrap();
    let first: Vec<i8> = (0..n)
        .flat_map(|j| (0..k).map(move |i| (j, i)))
        .map(|(j, i)| q.weight(j, i))
        .collect();
    assert!(first.iter().any(|&v| v != 0));
    for kernel in Kernel::available() {
        q.pack_for(kernel);
    }
    let weight = |j, i| q.weight(j, i);
    let quads = q.pack(4, |v| v, &weight);
    let pairs = q.pack(2, i16::from, &weight);
    for j in 0..n {
        for i in 0..k {
            let want = first[j * k + i];
            assert_eq!(quads[q.packed_at(4, j, i)], want);
            assert_eq!(pairs[q.packed_at(2, j, i)], i16::from(want));
        }
    }
}
