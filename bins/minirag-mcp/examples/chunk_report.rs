//! Chunk sizes of an index by format: how many units, and how many tokens
//! they count by the model's own tokenizer (median, p10, p90, the share
//! under 16 tokens).
//!
//! `cargo run --release -p minirag-mcp --example chunk_report -- DB_PATH TOKENIZER_JSON [--list N]`
//!
//! `--list N` also prints the N shortest chunks with their source, to see
//! what the chunker cut.

use minirag_core::ports::{Index, TokenCounter};
use minirag_core::search::Scope;
use minirag_index_mem::MemIndex;
use minirag_tokenizer_hf::TokenizerCounter;
use std::collections::BTreeMap;
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: chunk_report DB_PATH TOKENIZER_JSON [--list N]");
        std::process::exit(2);
    }
    let list: usize = args
        .iter()
        .position(|a| a == "--list")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let index = MemIndex::open(Path::new(&args[0])).unwrap_or_else(|e| fail(&args[0], &e));
    let tokenizer =
        minirag_tokenizer_hf::from_file(Path::new(&args[1])).unwrap_or_else(|e| fail(&args[1], &e));
    let counter = TokenizerCounter::new(tokenizer);
    let sources = index
        .read()
        .unwrap()
        .sources(&Scope::all())
        .unwrap_or_else(|e| fail(&args[0], &e));
    let mut by_format: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut shortest: Vec<(usize, String, String)> = Vec::new();
    for record in &sources {
        if record.chunk_count == 0 {
            continue;
        }
        let chunks = index
            .read()
            .unwrap()
            .chunks(&record.source, 0..=record.chunk_count - 1)
            .unwrap_or_else(|e| fail(&record.source, &e));
        let format = minirag_core::formats::of_source(&record.source)
            .map_or("other", |f| f.key)
            .to_string();
        for chunk in chunks {
            let tokens = counter.count(&chunk.text);
            by_format.entry(format.clone()).or_default().push(tokens);
            if list > 0 {
                shortest.push((tokens, record.source.clone(), chunk.text));
            }
        }
    }
    println!("| format | chunks | p10 | median | p90 | under 16 tokens |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut all = Vec::new();
    for (format, mut counts) in by_format {
        row(&format, &mut counts);
        all.extend(counts);
    }
    row("all", &mut all);
    shortest.sort();
    for (tokens, source, text) in shortest.into_iter().take(list) {
        println!(
            "{tokens:>4} {source}: {:?}",
            text.chars().take(120).collect::<String>()
        );
    }
}

fn row(name: &str, counts: &mut [usize]) {
    counts.sort_unstable();
    let at = |q: f64| counts[((counts.len() - 1) as f64 * q).round() as usize];
    let small = counts.iter().filter(|&&t| t < 16).count();
    println!(
        "| {name} | {} | {} | {} | {} | {:.1} % |",
        counts.len(),
        at(0.1),
        at(0.5),
        at(0.9),
        100.0 * small as f64 / counts.len() as f64
    );
}

fn fail(what: &str, error: &dyn std::fmt::Display) -> ! {
    eprintln!("error: {what}: {error}");
    std::process::exit(1);
}
