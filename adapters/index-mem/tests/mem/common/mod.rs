//! Helpers shared by the index tests: the conformance suite's fixtures.
#![allow(unused_imports)]

pub(crate) use minirag_index_conformance::fixtures::*;

/// A unit vector spread over every direction (the fixtures' text vectors
/// crowd together, closer than the int8 pass can tell apart).
pub(crate) fn spread(i: usize) -> Vec<f32> {
    let mut x = i as u64 ^ 0x9E37_79B9_7F4A_7C15;
    let v: Vec<f32> = (0..DIM)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

/// Rows from which the vector scan runs in int8 (and a snapshot keeps an
/// int8 copy), and some.
pub(crate) const BIG_ROWS: usize = 10_000;

/// Stores one source of [`BIG_ROWS`] chunks, each with a [`spread`] vector.
pub(crate) fn put_big_source(index: &minirag_index_mem::MemIndex) {
    use minirag_core::ports::{Embeddings, Index};
    let texts: Vec<String> = (0..BIG_ROWS).map(|i| format!("entry {i}")).collect();
    let mut rows = Embeddings::new(DIM);
    (0..BIG_ROWS).for_each(|i| rows.push(&spread(i)));
    index
        .replace_source(
            record("/d/big.csv", "Big", BIG_ROWS),
            chunks(&texts),
            Some(rows),
        )
        .unwrap();
}
