//! Vectors as one contiguous row-major f32 matrix: the snapshot's rows are a
//! memory-mapped file scanned in place; rows written since are appended in
//! memory (spilling to a scratch file past a size, see `fresh_rows`). Small
//! matrices are scanned exactly with a k-sized heap; from `QUANTIZE_ROWS`
//! rows on, an int8 copy is scanned on all cores and the best candidates are
//! rescored exactly in f32.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::path::Path;

use std::sync::{Arc, OnceLock};

use memmap2::Mmap;

use crate::fresh_rows::FreshRows;
use crate::pages::Column;

/// At or above this many snapshot rows the scan reads an int8 copy of them
/// (a quarter of the bytes: the f32 scan is memory-bound) and rescores the
/// best candidates exactly in f32. Below it the exact scan is already fast.
pub const QUANTIZE_ROWS: usize = 8_192;

// Spilled rows are read back only to rescore: they must never be scanned in f32.
const _: () = assert!(crate::fresh_rows::SPILL_ROWS >= QUANTIZE_ROWS);

/// Candidates the int8 pass keeps per result wanted, before exact rescoring.
const RESCORE_FACTOR: usize = 4;

mod dot;
mod file_check;
mod fresh_codes;
mod int8;
mod scan_threads;
pub use dot::dot;
pub use file_check::FileCheck;
use fresh_codes::FreshCodes;
pub(crate) use int8::quantize_row;
use int8::*;
use scan_threads::ScanThreads;

/// A clone shares the mapped rows and the blocks of rows written since,
/// so the next generation of the index copies only what its write changes.
#[derive(Clone)]
pub struct Matrix {
    dim: usize,
    base: Option<Arc<Mmap>>,
    /// The base rows' file, read for rescoring (see [`Matrix::exact_dot`]).
    base_file: Option<Arc<std::fs::File>>,
    base_rows: usize,
    /// Built by a background thread that the first search of a large
    /// snapshot starts (never for small ones, and not during open, which it
    /// would slow); searches use the exact scan until it is ready.
    quantized: Arc<OnceLock<Quantized>>,
    /// Shared by the clones of one matrix: one background build at most.
    quantize_started: Arc<std::sync::atomic::AtomicBool>,
    /// The rows written since the snapshot (spilled to a scratch file
    /// when many, see [`FreshRows`]).
    extra: FreshRows,
    /// The rows written since the snapshot, quantized as they are written:
    /// after a sync that embeds in batches most vectors can live here until
    /// the next compaction.
    extra_q: FreshCodes,
    /// Row has a real vector (rows of vector-less chunks are zeros). In
    /// pages: a write copies those of the rows it changes.
    present: Column<bool>,
    /// Snapshot files too large to check at open, for `verify`.
    deferred: Vec<FileCheck>,
}

#[derive(PartialEq)]
struct Scored(f32, u32);

impl Eq for Scored {}

impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// View of a mapped file as f32 rows (little-endian, page-aligned by mmap).
fn as_f32(bytes: &[u8]) -> &[f32] {
    // SAFETY: f32 has no invalid bit patterns; align_to only yields the
    // correctly aligned middle, and mmap'd memory is page-aligned so the
    // prefix is empty (checked by the caller through the length).
    let (prefix, floats, _) = unsafe { bytes.align_to::<f32>() };
    assert!(prefix.is_empty(), "mapped vectors are page-aligned");
    floats
}

impl Matrix {
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            base: None,
            base_file: None,
            base_rows: 0,
            quantized: Arc::default(),
            quantize_started: Default::default(),
            extra: FreshRows::new(dim, None),
            extra_q: FreshCodes::default(),
            present: Column::default(),
            deferred: Vec::new(),
        }
    }

    /// Where rows written since the snapshot spill when they are many
    /// (the index's folder); without one they stay on the heap.
    pub fn set_spill_dir(&mut self, dir: Option<Arc<Path>>) {
        self.extra.set_dir(dir);
    }

    pub fn spill_dir(&self) -> Option<Arc<Path>> {
        self.extra.dir()
    }

    /// A matrix whose first rows live in a mapped snapshot file.
    pub fn with_base(dim: usize, base: Mmap, present: Vec<bool>) -> Self {
        const {
            assert!(
                cfg!(target_endian = "little"),
                "snapshot vectors are little-endian"
            )
        };
        let rows = as_f32(&base).len().checked_div(dim).unwrap_or(0);
        let base = Arc::new(base);
        let quantized: Arc<OnceLock<Quantized>> = Arc::default();
        Self {
            dim,
            base: Some(base),
            base_file: None,
            base_rows: rows,
            quantized,
            quantize_started: Default::default(),
            extra: FreshRows::new(dim, None),
            extra_q: FreshCodes::default(),
            present: Column::from_slice(&present),
            deferred: Vec::new(),
        }
    }

    /// Rescores the base rows through `file` (the mapped one), not the map.
    pub fn rescore_through(&mut self, file: std::fs::File) {
        self.base_file = Some(Arc::new(file));
    }

    /// The exact dot product of row `slot` with `query`, for rescoring a
    /// candidate. A snapshot row is read through its file when there is
    /// one: touching a mapped row maps its neighbours with it (the
    /// kernel's fault-around, up to a megabyte here), so rescoring through
    /// the map made the whole f32 matrix resident, where the int8 pass
    /// needs only its copy.
    fn exact_dot(&self, slot: u32, query: &[f32], buf: &mut Vec<u8>, row: &mut Vec<f32>) -> f32 {
        use std::os::unix::fs::FileExt;
        let s = slot as usize;
        if let (true, Some(file)) = (s < self.base_rows, &self.base_file) {
            buf.resize(self.dim * 4, 0);
            if file.read_exact_at(buf, (s * self.dim * 4) as u64).is_ok() {
                row.clear();
                row.extend(
                    buf.chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                );
                return dot(row, query);
            }
        }
        dot(&self.row(slot), query)
    }

    /// Takes a snapshot's int8 copy of the base rows (`rows` rows, scales
    /// from `scales_at`), read in place: a cold open scans it at once
    /// instead of building it. `false`, and nothing changes, when it is not
    /// the base's shape or the base is too small to be scanned in int8.
    pub fn adopt_quantized(&mut self, map: Mmap, rows: usize, scales_at: usize) -> bool {
        if rows != self.base_rows || rows < QUANTIZE_ROWS {
            return false;
        }
        let Some(q) = Quantized::mapped(map, rows, self.dim, scales_at) else {
            return false;
        };
        self.quantized = Arc::new(OnceLock::from(q));
        true
    }

    /// Whether the base rows' int8 copy is read in place from the snapshot.
    pub fn quantized_in_place(&self) -> bool {
        self.quantized.get().is_some_and(Quantized::is_mapped)
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn rows(&self) -> usize {
        self.present.len()
    }

    pub fn set_dim(&mut self, dim: usize) {
        debug_assert!(self.rows() == 0 || self.dim == dim);
        self.dim = dim;
        self.extra.set_dim(dim);
    }

    /// Appends a row (zeros and absent when `row` is `None`).
    pub fn push(&mut self, row: Option<&[f32]>) {
        self.extra.push(row);
        match row {
            Some(r) => self.extra_q.push(r),
            None => self.extra_q.push_zeros(self.dim),
        }
        self.present.push(row.is_some());
    }

    /// Writes a row appended since the snapshot; `false` for a row of the
    /// mapped snapshot, which is read-only.
    pub fn set_row(&mut self, slot: u32, row: &[f32]) -> bool {
        let s = slot as usize;
        if s < self.base_rows || s >= self.rows() || row.len() != self.dim {
            return false;
        }
        let e = s - self.base_rows;
        self.extra.set(e, row);
        self.extra_q.set(e, row);
        self.present[s] = true;
        true
    }

    pub fn clear_row(&mut self, slot: u32) {
        if let Some(p) = self.present.get_mut(slot as usize) {
            *p = false;
        }
    }

    pub fn has(&self, slot: u32) -> bool {
        self.present.get(slot as usize).copied().unwrap_or(false)
    }

    /// Row `slot`, borrowed unless it was read back from the spill file.
    #[inline(always)]
    pub fn row(&self, slot: u32) -> Cow<'_, [f32]> {
        let s = slot as usize;
        if s < self.base_rows {
            let base = as_f32(self.base.as_ref().expect("base rows"));
            Cow::Borrowed(&base[s * self.dim..(s + 1) * self.dim])
        } else {
            self.extra.get(s - self.base_rows)
        }
    }

    /// Whether any row has a vector.
    pub fn any_present(&self) -> bool {
        self.present.iter().any(|p| *p)
    }

    /// The `k` nearest rows to a unit `query` among rows `allowed` accepts,
    /// as (slot, squared L2 distance on unit vectors = 2 − 2·dot), nearest first.
    /// Large matrices are scanned by all cores, each over its own row range:
    /// small ones exactly; large ones by an int8 pass that keeps
    /// `RESCORE_FACTOR · k` candidates per core, rescored exactly.
    pub fn nearest(
        &self,
        query: &[f32],
        k: usize,
        allowed: impl Fn(u32) -> bool + Sync,
    ) -> Vec<(u32, f32)> {
        if k == 0 || query.len() != self.dim {
            return Vec::new();
        }
        let base = self.quantized.get();
        if base.is_none() {
            self.start_quantizing();
        }
        let rows = self.rows() as u32;
        let extra_rows = self.rows() - self.base_rows;
        let approximate = extra_rows + base.map_or(0, |_| self.base_rows) >= QUANTIZE_ROWS;
        let mut qcode = vec![0i8; self.dim];
        let qscale = quantize_row(query, &mut qcode);
        let estimate = Estimate {
            query,
            base: approximate.then_some(base).flatten(),
            extra: approximate.then_some(&self.extra_q),
            qcode: &qcode,
            qscale,
        };
        // The int8 pass keeps more candidates than wanted; the exact scan keeps k.
        let keep = if approximate { k * RESCORE_FACTOR } else { k };
        let share = ScanThreads::take();
        let threads = share.threads;
        let allowed = &allowed;
        let mut out: Vec<(u32, f32)> = if rows < PARALLEL_ROWS || threads == 1 {
            self.shortlist(&estimate, keep, allowed, 0..rows)
        } else {
            let step = rows.div_ceil(threads);
            let range = |t: u32| t * step..((t + 1) * step).min(rows);
            // The calling thread scans the first range itself: one thread
            // fewer to start and wake per query.
            std::thread::scope(|s| {
                let handles: Vec<_> = (1..threads)
                    .map(|t| {
                        let estimate = &estimate;
                        s.spawn(move || self.shortlist(estimate, keep, allowed, range(t)))
                    })
                    .collect();
                let mut out = self.shortlist(&estimate, keep, allowed, range(0));
                for h in handles {
                    out.extend(h.join().expect("scan thread"));
                }
                out
            })
        };
        if approximate {
            let (mut buf, mut row) = (Vec::new(), Vec::new());
            for (slot, d) in &mut out {
                *d = distance(self.exact_dot(*slot, query, &mut buf, &mut row));
            }
        }
        out.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        out.truncate(k);
        out
    }

    /// Starts building the int8 copy of a large snapshot in the background,
    /// once.
    fn start_quantizing(&self) {
        use std::sync::atomic::Ordering;
        if self.base_rows < QUANTIZE_ROWS || self.quantize_started.swap(true, Ordering::Relaxed) {
            return;
        }
        let (Some(base), quantized) = (self.base.clone(), self.quantized.clone()) else {
            return;
        };
        let (dim, rows) = (self.dim, self.base_rows);
        std::thread::spawn(move || {
            quantized.get_or_init(|| Quantized::build(dim, &as_f32(&base)[..rows * dim]));
        });
    }

    /// Waits for the int8 copy of a large snapshot (tests and benches that
    /// must measure the int8 path); a no-op for small ones.
    pub fn wait_quantized(&self) {
        if self.base_rows >= QUANTIZE_ROWS {
            let base = self.base.as_ref().expect("base rows");
            self.quantized.get_or_init(|| {
                Quantized::build(self.dim, &as_f32(base)[..self.base_rows * self.dim])
            });
        }
    }

    /// The best `keep` rows of `range` by estimated distance, in no order,
    /// compiled for AVX2 where the CPU has it.
    fn shortlist(
        &self,
        estimate: &Estimate,
        keep: usize,
        allowed: &impl Fn(u32) -> bool,
        range: std::ops::Range<u32>,
    ) -> Vec<(u32, f32)> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX-512F/BW (BW implies F), AVX2 and FMA,
            // checked just above.
            return unsafe { self.shortlist_avx512(estimate, keep, allowed, range) };
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA, checked just above.
            return unsafe { self.shortlist_avx2(estimate, keep, allowed, range) };
        }
        self.shortlist_body(estimate, keep, allowed, range, dot_i8)
    }

    /// # Safety
    ///
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn shortlist_avx2(
        &self,
        estimate: &Estimate,
        keep: usize,
        allowed: &impl Fn(u32) -> bool,
        range: std::ops::Range<u32>,
    ) -> Vec<(u32, f32)> {
        // SAFETY: this function runs only where AVX2 is present.
        let avx2 = |a: &[i8], b: &[i8]| unsafe { dot_i8_avx2(a, b) };
        self.shortlist_body(estimate, keep, allowed, range, avx2)
    }

    /// # Safety
    ///
    /// The CPU must support AVX-512F and AVX-512BW.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx2,fma")]
    unsafe fn shortlist_avx512(
        &self,
        estimate: &Estimate,
        keep: usize,
        allowed: &impl Fn(u32) -> bool,
        range: std::ops::Range<u32>,
    ) -> Vec<(u32, f32)> {
        // SAFETY: this function runs only where AVX-512F/BW are present.
        let wide = |a: &[i8], b: &[i8]| unsafe { dot_i8_avx512(a, b) };
        self.shortlist_body(estimate, keep, allowed, range, wide)
    }

    #[inline(always)]
    fn shortlist_body(
        &self,
        estimate: &Estimate,
        keep: usize,
        allowed: &impl Fn(u32) -> bool,
        range: std::ops::Range<u32>,
        dot_i8: impl Fn(&[i8], &[i8]) -> i32 + Copy,
    ) -> Vec<(u32, f32)> {
        let mut heap: BinaryHeap<Scored> = BinaryHeap::with_capacity(keep + 1);
        for slot in range {
            if !self.has(slot) || !allowed(slot) {
                continue;
            }
            let s = slot as usize;
            let score = match (s.checked_sub(self.base_rows), estimate.base, estimate.extra) {
                (None, Some(q), _) => q.dot(s, estimate.qcode, dot_i8) * estimate.qscale,
                (Some(e), _, Some(q)) => q.dot(e, estimate.qcode, dot_i8) * estimate.qscale,
                _ => dot(&self.row(slot), estimate.query),
            };
            let d = distance(score);
            if heap.len() < keep {
                heap.push(Scored(d, slot));
            } else if heap.peek().is_some_and(|top| d < top.0) {
                heap.pop();
                heap.push(Scored(d, slot));
            }
        }
        heap.into_iter().map(|s| (s.1, s.0)).collect()
    }

    /// Every allowed row of `range`, scored exactly (tests compare with it).
    #[cfg(test)]
    fn scan(
        &self,
        query: &[f32],
        k: usize,
        allowed: &impl Fn(u32) -> bool,
        range: std::ops::Range<u32>,
    ) -> Vec<(u32, f32)> {
        let exact = Estimate {
            query,
            base: None,
            extra: None,
            qcode: &[],
            qscale: 1.0,
        };
        self.shortlist(&exact, k, allowed, range)
    }
}

/// How one search scores a row: by its int8 copy where `base` (the
/// snapshot's rows) or `extra` (rows written since) is given, else exactly.
struct Estimate<'a> {
    query: &'a [f32],
    base: Option<&'a Quantized>,
    extra: Option<&'a FreshCodes>,
    qcode: &'a [i8],
    qscale: f32,
}

/// Squared L2 distance of two unit vectors from their dot product.
#[inline(always)]
fn distance(dot: f32) -> f32 {
    (2.0 - 2.0 * dot).max(0.0)
}

/// Below this many rows one thread scans faster than several start.
const PARALLEL_ROWS: u32 = 20_000;

#[cfg(test)]
mod tests;
