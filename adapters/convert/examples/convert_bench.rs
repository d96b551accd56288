//! Conversion speed per format on a folder (the eval corpus by default):
//! every readable file converted a few rounds, MB/s printed per format.
//!
//! `cargo run --release -p minirag-convert --example convert_bench -- eval/corpus`

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use minirag_convert::Converters;
use minirag_core::formats::{by_extension, FormatKind};
use minirag_core::ports::{ConvertRequest, Converter};

/// Each format is converted until this much time has passed (at least once).
const BUDGET: Duration = Duration::from_secs(2);

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let root = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "eval/corpus".into());
    let mut all = Vec::new();
    files(Path::new(&root), &mut all);
    let mut by_format: BTreeMap<&'static str, Vec<(String, Vec<u8>)>> = BTreeMap::new();
    for p in all {
        let ext = p
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        let Some(format) = by_extension(&ext).filter(|f| f.kind == FormatKind::Document) else {
            continue;
        };
        if let Ok(bytes) = std::fs::read(&p) {
            by_format
                .entry(format.key)
                .or_default()
                .push((p.display().to_string(), bytes));
        }
    }
    println!("| format | files | MB | rounds | MB/s |");
    println!("|---|---|---|---|---|");
    for (key, docs) in by_format {
        let bytes: usize = docs.iter().map(|(_, b)| b.len()).sum();
        let started = Instant::now();
        let mut rounds = 0u32;
        while rounds == 0 || started.elapsed() < BUDGET {
            for (name, b) in &docs {
                let _ = Converters.convert(ConvertRequest {
                    name,
                    format: key,
                    bytes: b,
                });
            }
            rounds += 1;
        }
        let mb = bytes as f64 / 1e6;
        let secs = started.elapsed().as_secs_f64();
        println!(
            "| {key} | {} | {mb:.2} | {rounds} | {:.1} |",
            docs.len(),
            mb * rounds as f64 / secs
        );
    }
}
