//! Times 1 KiB patterns that no run of `**` collapses (341 name parts; 170
//! `**` each followed by a name part, which keeps the most states alive)
//! against 100,000 paths four to twelve folders deep: the most a query's
//! path filter can cost.
//!
//! Run: `cargo run --release -p minirag-core --example glob_worst`

use std::time::Instant;

use minirag_core::search::glob::Glob;

fn main() {
    let paths: Vec<String> = (0..100_000)
        .map(|i| {
            (0..4 + i % 9)
                .map(|d| format!("a{}", (i + d) % 7))
                .collect::<Vec<_>>()
                .join("/")
                + ".md"
        })
        .collect();
    for pattern in ["a*/".repeat(341), "**/a*/".repeat(170)] {
        let pattern = pattern.trim_end_matches('/');
        let glob = Glob::new(pattern).unwrap();
        let started = Instant::now();
        let hits = paths.iter().filter(|p| glob.matches(p)).count();
        println!(
            "{}…, {} bytes, 100,000 paths: {hits} match, {:.3} s",
            &pattern[..12],
            pattern.len(),
            started.elapsed().as_secs_f64()
        );
    }
}
