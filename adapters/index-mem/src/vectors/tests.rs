use super::*;

#[test]
fn dot_matches_naive() {
    let a: Vec<f32> = (0..37).map(|i| i as f32 * 0.1).collect();
    let b: Vec<f32> = (0..37).map(|i| 1.0 - i as f32 * 0.01).collect();
    let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    assert!((dot(&a, &b) - naive).abs() < 1e-3);
}

/// Pseudo-random unit rows (xorshift, fixed seed).
fn unit_rows(dim: usize, rows: usize, seed: u64) -> impl Iterator<Item = Vec<f32>> {
    let mut x = seed;
    (0..rows).map(move |_| {
        let row: Vec<f32> = (0..dim)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 2001) as f32 / 1000.0 - 1.0
            })
            .collect();
        let n = row.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-6);
        row.into_iter().map(|v| v / n).collect()
    })
}

#[test]
fn the_parallel_scan_equals_one_sequential_scan() {
    let dim = 8;
    let mut m = Matrix::new(dim);
    for row in unit_rows(dim, PARALLEL_ROWS as usize * 2 + 7, 12345) {
        m.push(Some(&row));
    }
    let q = m.row(3).to_vec();
    let allowed = |s: u32| !s.is_multiple_of(3);
    let mut sequential = m.scan(&q, 50, &allowed, 0..m.rows() as u32);
    sequential.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    assert_eq!(m.nearest(&q, 50, allowed), sequential);
    assert_eq!(m.nearest(&q, 50, |_| true)[0].0, 3);
}

#[test]
fn dot_i8_matches_naive() {
    let a: Vec<i8> = (0..37).map(|i| (i * 7 % 255 - 127) as i8).collect();
    let b: Vec<i8> = (0..37).map(|i| (i * 13 % 255 - 127) as i8).collect();
    let naive: i32 = a.iter().zip(&b).map(|(x, y)| *x as i32 * *y as i32).sum();
    assert_eq!(dot_i8(&a, &b), naive);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 checked just above.
        assert_eq!(unsafe { dot_i8_avx2(&a, &b) }, naive);
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512bw") {
        // SAFETY: AVX-512BW checked just above.
        assert_eq!(unsafe { dot_i8_avx512(&a, &b) }, naive);
        let (long_a, long_b) = (a.repeat(11), b.repeat(11));
        // SAFETY: as above.
        assert_eq!(unsafe { dot_i8_avx512(&long_a, &long_b) }, 11 * naive);
    }
}

/// A large snapshot matrix (mapped from a file, as the index opens it).
fn mapped(dim: usize, rows: usize, seed: u64) -> (tempfile::TempDir, Matrix) {
    let bytes: Vec<u8> = unit_rows(dim, rows, seed)
        .flatten()
        .flat_map(f32::to_le_bytes)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.f32");
    std::fs::write(&path, bytes).unwrap();
    // SAFETY: the file is this test's own and is not modified while mapped.
    let map = unsafe { Mmap::map(&std::fs::File::open(&path).unwrap()) }.unwrap();
    (dir, Matrix::with_base(dim, map, vec![true; rows]))
}

#[test]
fn the_int8_pass_with_exact_rescoring_finds_the_exact_neighbours() {
    let dim = 32;
    let (_dir, mut m) = mapped(dim, QUANTIZE_ROWS + 3, 99);
    m.push(Some(&[1.0 / (dim as f32).sqrt(); 32]));
    let mut found = 0;
    let mut total = 0;
    m.wait_quantized();
    for probe in [5u32, QUANTIZE_ROWS as u32 / 2, QUANTIZE_ROWS as u32 - 1] {
        let q = m.row(probe).to_vec();
        let allowed = |s: u32| s % 5 != 1;
        let mut exact = m.scan(&q, 10, &allowed, 0..m.rows() as u32);
        exact.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        let got = m.nearest(&q, 10, allowed);
        assert_eq!(
            got[0], exact[0],
            "the probe itself comes first, exactly scored"
        );
        assert!(got.iter().all(|(s, _)| s % 5 != 1), "filter applied");
        total += exact.len();
        found += got.iter().filter(|g| exact.contains(g)).count();
    }
    assert!(found * 100 >= total * 95, "recall {found}/{total}");
    // Rows written after the snapshot are searched too.
    let extra = vec![1.0 / (dim as f32).sqrt(); 32];
    assert_eq!(
        m.nearest(&extra, 1, |_| true)[0].0,
        QUANTIZE_ROWS as u32 + 3
    );
}

#[test]
fn rows_written_since_the_snapshot_are_found_through_their_int8_copy() {
    // As a sync that embeds in batches leaves them: vector-less rows
    // first, their vectors set later, none in a snapshot.
    let dim = 32;
    let rows: Vec<Vec<f32>> = unit_rows(dim, QUANTIZE_ROWS + 100, 7).collect();
    let mut m = Matrix::new(dim);
    for _ in &rows {
        m.push(None);
    }
    for (slot, row) in rows.iter().enumerate() {
        assert!(m.set_row(slot as u32, row));
    }
    let (mut found, mut total) = (0, 0);
    for probe in [0u32, 4_000, QUANTIZE_ROWS as u32 + 99] {
        let q = m.row(probe).to_vec();
        let mut exact = m.scan(&q, 10, &|_| true, 0..m.rows() as u32);
        exact.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        let got = m.nearest(&q, 10, |_| true);
        assert_eq!(got[0], exact[0], "the probe itself, exactly scored");
        total += exact.len();
        found += got.iter().filter(|g| exact.contains(g)).count();
    }
    assert!(found * 100 >= total * 95, "recall {found}/{total}");
    // A rewritten row is found by its new vector, not its old codes.
    let moved = vec![1.0 / (dim as f32).sqrt(); 32];
    assert!(m.set_row(17, &moved));
    assert_eq!(m.nearest(&moved, 1, |_| true)[0].0, 17);
}

#[test]
fn nearest_orders_by_distance_and_filters() {
    let mut m = Matrix::new(2);
    m.push(Some(&[1.0, 0.0]));
    m.push(Some(&[0.0, 1.0]));
    m.push(None);
    m.push(Some(&[0.6, 0.8]));
    let got = m.nearest(&[1.0, 0.0], 10, |_| true);
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [0, 3, 1]);
    assert!((got[0].1).abs() < 1e-6 && (got[2].1 - 2.0).abs() < 1e-6);
    let got = m.nearest(&[1.0, 0.0], 1, |s| s != 0);
    assert_eq!(got[0].0, 3);
}

/// Rescoring reads a snapshot's rows through its file: the same distances
/// as through the map, bit for bit.
#[test]
fn rescoring_through_the_file_gives_the_maps_distances() {
    let dim = 24;
    let (dir, through_map) = mapped(dim, QUANTIZE_ROWS + 50, 7);
    let (_, mut through_file) = mapped(dim, QUANTIZE_ROWS + 50, 7);
    through_file.rescore_through(std::fs::File::open(dir.path().join("v.f32")).unwrap());
    through_map.wait_quantized();
    through_file.wait_quantized();
    for probe in [0u32, 4_000, QUANTIZE_ROWS as u32 + 49] {
        let q = through_map.row(probe).to_vec();
        let a = through_map.nearest(&q, 20, |_| true);
        let b = through_file.nearest(&q, 20, |_| true);
        assert_eq!(a, b);
        assert_eq!(a[0].0, probe);
    }
}
