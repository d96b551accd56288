//! The int8 copy of f32 rows the large scan reads, and its dot products
//! (AVX-512 and AVX2 where the CPU has them, portable otherwise).

use std::sync::Arc;

use memmap2::Mmap;

/// An int8 copy of f32 rows: row r ≈ scales[r] · codes[r·dim..].
#[derive(Default, Clone)]
pub(crate) struct Quantized {
    codes: Vec<i8>,
    scales: Vec<f32>,
    /// A snapshot's int8 file, read in place; then `codes` and `scales`
    /// stay empty (only rows written since the snapshot are pushed or set).
    mapped: Option<Arc<Mapped>>,
}

/// The codes and the 4-byte aligned scales of an int8 file's map.
struct Mapped {
    map: Mmap,
    codes: usize,
    scales_at: usize,
    rows: usize,
}

/// Codes of one row, scaled so its largest magnitude is 127; returns the scale.
pub(crate) fn quantize_row(row: &[f32], code: &mut [i8]) -> f32 {
    let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    for (c, v) in code.iter_mut().zip(row) {
        *c = (v / scale).round().clamp(-127.0, 127.0) as i8;
    }
    scale
}

impl Quantized {
    /// A mapped int8 file of `rows` rows of `dim` codes, its scales from
    /// `scales_at`; `None` when the map is not that shape.
    pub(crate) fn mapped(map: Mmap, rows: usize, dim: usize, scales_at: usize) -> Option<Self> {
        let codes = rows.checked_mul(dim)?;
        let end = rows.checked_mul(4)?.checked_add(scales_at)?;
        let aligned = scales_at.is_multiple_of(4) && (map.as_ptr() as usize).is_multiple_of(4);
        if codes > scales_at || end != map.len() || !aligned {
            return None;
        }
        let mapped = Mapped {
            map,
            codes,
            scales_at,
            rows,
        };
        Some(Self {
            mapped: Some(Arc::new(mapped)),
            ..Self::default()
        })
    }

    /// Whether the codes are read in place from a file.
    pub(crate) fn is_mapped(&self) -> bool {
        self.mapped.is_some()
    }

    fn codes(&self) -> &[i8] {
        match &self.mapped {
            Some(m) => {
                let bytes = &m.map[..m.codes];
                // SAFETY: i8 and u8 have the same size and alignment, and
                // every byte is a valid i8.
                unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<i8>(), bytes.len()) }
            }
            None => &self.codes,
        }
    }

    fn scales(&self) -> &[f32] {
        match &self.mapped {
            Some(m) => {
                let bytes = &m.map[m.scales_at..m.scales_at + 4 * m.rows];
                // SAFETY: `mapped` checked that the map's start and
                // `scales_at` are 4-byte aligned and that `rows` scales fit;
                // every bit pattern is a valid f32 (the file is
                // little-endian, as `Matrix::with_base` requires of the host).
                unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<f32>(), m.rows) }
            }
            None => &self.scales,
        }
    }

    /// The snapshot's rows, quantized by all cores.
    pub(crate) fn build(dim: usize, rows: &[f32]) -> Self {
        let n = rows.len() / dim.max(1);
        let mut codes = vec![0i8; n * dim];
        let mut scales = vec![0f32; n];
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
        let per = n.div_ceil(threads).max(1);
        std::thread::scope(|s| {
            for ((codes, scales), rows) in codes
                .chunks_mut(per * dim)
                .zip(scales.chunks_mut(per))
                .zip(rows.chunks(per * dim))
            {
                s.spawn(move || {
                    for ((code, scale), row) in codes
                        .chunks_mut(dim)
                        .zip(scales.iter_mut())
                        .zip(rows.chunks(dim))
                    {
                        *scale = quantize_row(row, code);
                    }
                });
            }
        });
        Self {
            codes,
            scales,
            mapped: None,
        }
    }

    pub(crate) fn push_zeros(&mut self, dim: usize) {
        self.codes.resize(self.codes.len() + dim, 0);
        self.scales.push(1.0);
    }

    pub(crate) fn push(&mut self, row: &[f32]) {
        let start = self.codes.len();
        self.codes.resize(start + row.len(), 0);
        self.scales
            .push(quantize_row(row, &mut self.codes[start..]));
    }

    pub(crate) fn set(&mut self, r: usize, row: &[f32]) {
        let dim = row.len();
        self.scales[r] = quantize_row(row, &mut self.codes[r * dim..(r + 1) * dim]);
    }

    /// Estimated dot product of row `r` with a query quantized to `qcode`.
    #[inline(always)]
    pub(crate) fn dot(&self, r: usize, qcode: &[i8], dot_i8: impl Fn(&[i8], &[i8]) -> i32) -> f32 {
        let dim = qcode.len();
        dot_i8(&self.codes()[r * dim..(r + 1) * dim], qcode) as f32 * self.scales()[r]
    }
}

/// [`dot_i8`] with AVX-512BW: thirty-two codes per step, twice the AVX2
/// kernel's width.
///
/// # Safety
///
/// The CPU must support AVX-512F and AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn dot_i8_avx512(a: &[i8], b: &[i8]) -> i32 {
    use std::arch::x86_64::*;
    let n = a.len().min(b.len());
    let mut acc = _mm512_setzero_si512();
    let mut i = 0;
    while i + 32 <= n {
        // SAFETY: i + 32 <= n, so both 32-byte loads are in bounds.
        let (va, vb) = unsafe {
            (
                _mm256_loadu_si256(a.as_ptr().add(i).cast()),
                _mm256_loadu_si256(b.as_ptr().add(i).cast()),
            )
        };
        let prod = _mm512_madd_epi16(_mm512_cvtepi8_epi16(va), _mm512_cvtepi8_epi16(vb));
        acc = _mm512_add_epi32(acc, prod);
        i += 32;
    }
    let mut sum = _mm512_reduce_add_epi32(acc);
    while i < n {
        sum += a[i] as i32 * b[i] as i32;
        i += 1;
    }
    sum
}

/// [`dot_i8`] with AVX2: sixteen codes widened to i16 and multiplied-and-
/// pair-added (`vpmaddwd`) per step; the auto-vectoriser does not find this.
///
/// # Safety
///
/// The CPU must support AVX2 (`is_x86_feature_detected!("avx2")`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
    use std::arch::x86_64::*;
    let n = a.len().min(b.len());
    let mut acc = _mm256_setzero_si256();
    let mut i = 0;
    while i + 16 <= n {
        // SAFETY: i + 16 <= n, so both 16-byte loads are in bounds.
        let (va, vb) = unsafe {
            (
                _mm_loadu_si128(a.as_ptr().add(i).cast()),
                _mm_loadu_si128(b.as_ptr().add(i).cast()),
            )
        };
        let prod = _mm256_madd_epi16(_mm256_cvtepi8_epi16(va), _mm256_cvtepi8_epi16(vb));
        acc = _mm256_add_epi32(acc, prod);
        i += 16;
    }
    let s = _mm_add_epi32(
        _mm256_castsi256_si128(acc),
        _mm256_extracti128_si256(acc, 1),
    );
    let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01_00_11_10));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b10_11_00_01));
    let mut sum = _mm_cvtsi128_si32(s);
    while i < n {
        sum += a[i] as i32 * b[i] as i32;
        i += 1;
    }
    sum
}

/// Integer dot product of two int8 codes. Adjacent products are summed in
/// i16 → i32 pairs, the shape of the multiply-add-pairs instruction
/// (`pmaddwd`), sixteen pairs per step.
#[inline(always)]
pub(super) fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 16];
    let ca = a.chunks_exact(32);
    let cb = b.chunks_exact(32);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..16 {
            let p0 = x[2 * i] as i16 * y[2 * i] as i16;
            let p1 = x[2 * i + 1] as i16 * y[2 * i + 1] as i16;
            acc[i] += p0 as i32 + p1 as i32;
        }
    }
    let mut sum: i32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        sum += *x as i32 * *y as i32;
    }
    sum
}
