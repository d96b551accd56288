//! Prints the chunker's time on one unbroken line (base64-like text with no
//! space) of 1, 2, 4 and 8 MB, with the estimate counter the product uses
//! without a tokenizer. Splitting must grow linearly: each doubling about
//! doubles the time.
//!
//! Run: `cargo run --release -p minirag-core --example unbroken_lines`

use std::time::Instant;

use minirag_core::chunk::{chunk_markdown, ChunkOptions};
use minirag_core::tokens::EstimateCounter;

fn main() {
    println!("| MB | chunks | seconds | seconds per MB |");
    println!("|---|---|---|---|");
    for mb in [1usize, 2, 4, 8] {
        let line = unbroken(mb << 20);
        let started = Instant::now();
        let chunked = chunk_markdown(
            &line,
            ChunkOptions {
                budget: 128,
                title: None,
                counter: &EstimateCounter,
            },
        );
        let secs = started.elapsed().as_secs_f64();
        println!(
            "| {mb} | {} | {secs:.2} | {:.2} |",
            chunked.chunks.len(),
            secs / mb as f64
        );
    }
}

/// `bytes` of base64's alphabet, from a fixed xorshift: no space, no line
/// break.
fn unbroken(bytes: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    (0..bytes)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ALPHABET[(state % 64) as usize] as char
        })
        .collect()
}
