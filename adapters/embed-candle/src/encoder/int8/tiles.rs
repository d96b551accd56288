//! The register tiles: a few quantized rows times one panel of 16
//! outputs, summed exactly in i32. Pair tiles take i16 rows and weights two
//! inputs at a time (`vpmaddwd`, or VNNI's `vpdpwssd`); quad tiles take
//! byte rows and i8 weights four inputs at a time (VNNI's `vpdpbusd`, twice
//! the multiply-adds per instruction). VNNI comes in two encodings: EVEX
//! (AVX-512 VNNI: 512-bit byte tiles, 32 vector registers) and VEX
//! (AVX-VNNI, the laptops' and desktops' without AVX-512: 256-bit, 16
//! registers), so each has its own tiles.
//! Every tile gives the integers the portable one gives.

#[cfg(target_arch = "x86_64")]
use super::VECS;
use super::{Kernel, PAIR_ROWS, PANEL, TILE_ROWS};
#[cfg(target_arch = "x86_64")]
use super::{AVX_VNNI_QUAD_ROWS, QUAD_ROWS};

/// Calls `$tile::<R>` for the `R` that `$rows` is, among `$r` (larger
/// than 1), else `$tile::<1>`: a tile's row count is a const generic, so
/// its accumulators live in registers.
#[cfg(target_arch = "x86_64")]
macro_rules! by_rows {
    ($rows:expr, $tile:ident $args:tt, [$($r:literal),*]) => {
        match $rows {
            $($r => $tile::<$r> $args,)*
            _ => $tile::<1> $args,
        }
    };
}

/// One tile of `rows` (1 to 4) quantized rows, as i16 pairs, times a
/// panel of pairs into `acc`.
pub(super) fn pair_tile(
    kernel: Kernel,
    rows: usize,
    xs: &[i16],
    kp: usize,
    panel: &[i16],
    acc: &mut [[i32; PANEL]; TILE_ROWS],
) {
    assert!(rows <= PAIR_ROWS && xs.len() >= rows * kp && panel.len() >= kp * PANEL);
    match kernel {
        Kernel::Portable => portable_tile(2, rows, xs, kp, panel, acc),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Kernel::Avx2` is chosen only where the CPU has AVX2
        // (`best`, or a test that checked); the assert above bounds every
        // read the tile makes.
        Kernel::Avx2 => unsafe { by_rows!(rows, avx2_tile(xs, kp, panel, acc), [4, 3, 2]) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Kernel::Vnni` is chosen only where the CPU has AVX2,
        // AVX-512 VNNI and AVX-512VL (`has_vnni`); the assert above bounds
        // every read the tile makes.
        Kernel::Vnni => unsafe { by_rows!(rows, vnni_tile(xs, kp, panel, acc), [4, 3, 2]) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Kernel::AvxVnni` is chosen only where the CPU has AVX2
        // and AVX-VNNI (`has_avx_vnni`); the assert above bounds every read
        // the tile makes.
        Kernel::AvxVnni => unsafe { by_rows!(rows, avx_vnni_tile(xs, kp, panel, acc), [4, 3, 2]) },
    }
}

/// A tile in plain integers, `group` inputs at a time (2 for pairs, 4 for
/// quads): each group's products summed exactly, then added to the running
/// sum wrapping, as `vpmaddwd` + `vpaddd` and `vpdpbusd` do (no sum reaches
/// the wrap, by [`MAX_INPUTS`](super::MAX_INPUTS)).
fn portable_tile<X: Copy + Into<i32>, W: Copy + Into<i32>>(
    group: usize,
    rows: usize,
    xs: &[X],
    width: usize,
    panel: &[W],
    acc: &mut [[i32; PANEL]; TILE_ROWS],
) {
    for (r, a) in acc.iter_mut().take(rows).enumerate() {
        let x = &xs[r * width..(r + 1) * width];
        *a = [0; PANEL];
        for (inputs, w) in x.chunks_exact(group).zip(panel.chunks_exact(group * PANEL)) {
            for (o, w) in a.iter_mut().zip(w.chunks_exact(group)) {
                let dot: i32 = inputs
                    .iter()
                    .zip(w)
                    .map(|(&x, &w)| x.into() * w.into())
                    .sum();
                *o = o.wrapping_add(dot);
            }
        }
    }
}

/// Declares a 256-bit x86 tile: `R` (at most `$max_rows`) quantized rows
/// of `$x` times a panel of `$w`, `$group` inputs at a time (2 for i16
/// pairs, 4 for byte quads: 4 bytes either way); per group one load per
/// weight vector, and per row one broadcast of its group and one `step`
/// (accumulator, broadcast group, weights → accumulator) per weight vector.
/// The kernels differ only in that step.
macro_rules! x86_tile {
    ($(#[$doc:meta])* $name:ident, $features:literal, $x:ty, $w_ty:ty, $group:literal, $max_rows:expr,
     |$a:ident, $v:ident, $w:ident| $step:expr) => {
        $(#[$doc])*
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
        unsafe fn $name<const R: usize>(
            xs: &[$x],
            width: usize,
            panel: &[$w_ty],
            out: &mut [[i32; PANEL]; TILE_ROWS],
        ) {
            use std::arch::x86_64::*;
            assert!(
                R <= $max_rows
                    && width.is_multiple_of($group)
                    && xs.len() >= R * width
                    && panel.len() >= width * PANEL
            );
            let (xp, wp) = (xs.as_ptr(), panel.as_ptr());
            let mut acc = [[_mm256_setzero_si256(); VECS]; R];
            for t in 0..width / $group {
                let w = wp.add(t * $group * PANEL).cast::<__m256i>();
                let mut ws = [_mm256_setzero_si256(); VECS];
                for (c, v) in ws.iter_mut().enumerate() {
                    *v = _mm256_loadu_si256(w.add(c));
                }
                for (r, a) in acc.iter_mut().enumerate() {
                    let group = xp.add(r * width + $group * t).cast::<i32>().read_unaligned();
                    let $v = _mm256_set1_epi32(group);
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
    /// The CPU must have AVX2; `xs` holds `R` rows of `width` (even) values
    /// and `panel` `width · PANEL`.
    avx2_tile, "avx2", i16, i16, 2, PAIR_ROWS,
    |a, v, w| _mm256_add_epi32(a, _mm256_madd_epi16(v, w))
}

x86_tile! {
    /// The VNNI tile: `vpdpwssd`, a pair's two products and the running sum
    /// in one instruction, the same exact i32 sums.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2, AVX-512 VNNI and AVX-512VL; `xs` holds `R`
    /// rows of `width` (even) values and `panel` `width · PANEL`.
    vnni_tile, "avx2,avx512f,avx512vl,avx512vnni", i16, i16, 2, PAIR_ROWS,
    |a, v, w| _mm256_dpwssd_epi32(a, v, w)
}

x86_tile! {
    /// The AVX-VNNI tile: the VEX `vpdpwssd`, as [`vnni_tile`] without
    /// AVX-512.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 and AVX-VNNI; `xs` holds `R` rows of `width`
    /// (even) values and `panel` `width · PANEL`.
    avx_vnni_tile, "avx2,avxvnni", i16, i16, 2, PAIR_ROWS,
    |a, v, w| _mm256_dpwssd_avx_epi32(a, v, w)
}

/// One tile of `rows` (1 to the kernel's [`Kernel::quad_rows`]) byte rows
/// times a panel of i8 quads into `acc`: the VNNI kernels' eight-bit path
/// (the others take quads only in plain integers, for tests).
pub(super) fn quad_tile(
    kernel: Kernel,
    rows: usize,
    xs: &[u8],
    kq: usize,
    panel: &[i8],
    acc: &mut [[i32; PANEL]; TILE_ROWS],
) {
    assert!(rows <= kernel.quad_rows() && xs.len() >= rows * kq && panel.len() >= kq * PANEL);
    match kernel {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Kernel::Vnni` is chosen only where the CPU has AVX2,
        // AVX-512F, AVX-512 VNNI and AVX-512VL (`has_vnni`); the assert
        // above bounds every read the tile makes.
        Kernel::Vnni => unsafe {
            by_rows!(
                rows,
                vnni_quad_tile(xs, kq, panel, acc),
                [12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2]
            )
        },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Kernel::AvxVnni` is chosen only where the CPU has AVX2
        // and AVX-VNNI (`has_avx_vnni`); the assert above bounds every read
        // the tile makes.
        Kernel::AvxVnni => unsafe {
            by_rows!(
                rows,
                avx_vnni_quad_tile(xs, kq, panel, acc),
                [6, 5, 4, 3, 2]
            )
        },
        _ => portable_tile(4, rows, xs, kq, panel, acc),
    }
}

/// The AVX-512 VNNI quad tile: a panel's 16 outputs in one 512-bit
/// accumulator a row, so each `vpdpbusd` does 64 multiply-adds (twice the
/// AVX-VNNI tile's), and per four inputs one weight load serves every row.
///
/// # Safety
///
/// The CPU must have AVX-512F and AVX-512 VNNI; `xs` holds `R` rows of `kq`
/// (a multiple of 4) bytes and `panel` `kq · PANEL`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vnni")]
unsafe fn vnni_quad_tile<const R: usize>(
    xs: &[u8],
    kq: usize,
    panel: &[i8],
    out: &mut [[i32; PANEL]; TILE_ROWS],
) {
    use std::arch::x86_64::*;
    assert!(
        R <= QUAD_ROWS && kq.is_multiple_of(4) && xs.len() >= R * kq && panel.len() >= kq * PANEL
    );
    let (xp, wp) = (xs.as_ptr(), panel.as_ptr());
    let mut acc = [_mm512_setzero_si512(); R];
    for t in 0..kq / 4 {
        let w = _mm512_loadu_si512(wp.add(t * 4 * PANEL).cast());
        for (r, a) in acc.iter_mut().enumerate() {
            let quad = xp.add(r * kq + 4 * t).cast::<i32>().read_unaligned();
            *a = _mm512_dpbusd_epi32(*a, _mm512_set1_epi32(quad), w);
        }
    }
    for (r, a) in acc.iter().enumerate() {
        _mm512_storeu_si512(out[r].as_mut_ptr().cast(), *a);
    }
}

x86_tile! {
    /// The AVX-VNNI quad tile (VEX `vpdpbusd` on 256-bit vectors: unsigned
    /// bytes times signed bytes, four products and the running sum, exact
    /// in i32): 16 registers hold 6 rows' two accumulators beside the two
    /// weight vectors and a broadcast.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 and AVX-VNNI; `xs` holds `R` rows of `width`
    /// (a multiple of 4) bytes and `panel` `width · PANEL`.
    avx_vnni_quad_tile, "avx2,avxvnni", u8, i8, 4, AVX_VNNI_QUAD_ROWS,
    |a, v, w| _mm256_dpbusd_avx_epi32(a, v, w)
}
