//! Resident memory of one loaded tokenizer: ours, or the `tokenizers`
//! crate's, each in its own process so neither counts the other.
//!
//! `cargo run --release -p minirag-tokenizer-hf --example tokenizer_memory -- ours|crate FILE`

use std::time::Instant;

fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (which, file) = match args.as_slice() {
        [_, w, f] if w == "ours" || w == "crate" => (w.as_str(), std::path::Path::new(f)),
        _ => {
            eprintln!("usage: tokenizer_memory ours|crate path/to/tokenizer.json");
            std::process::exit(2);
        }
    };
    let text =
        std::fs::read_to_string("README.md").unwrap_or_else(|_| "Проверка текста. ".repeat(5000));
    let before = rss_kb();
    let started = Instant::now();
    let count: Box<dyn Fn(&str) -> usize> = if which == "ours" {
        let t = minirag_tokenizer_hf::from_file(file).expect("ours loads");
        Box::new(move |s| t.encode_fast(s, true).map_or(0, |e| e.len()))
    } else {
        let t = tokenizers::Tokenizer::from_file(file).expect("the crate loads");
        Box::new(move |s| t.encode_fast(s, true).map_or(0, |e| e.len()))
    };
    let loaded = started.elapsed();
    let after = rss_kb();
    let started = Instant::now();
    let mut tokens = 0;
    for _ in 0..20 {
        tokens += text.split("\n\n").map(&count).sum::<usize>();
    }
    let encoded = started.elapsed();
    println!(
        "{which}: loaded in {:.2} s, resident {} MB more; {} tokens in {:.3} s ({:.0} tokens/s)",
        loaded.as_secs_f64(),
        after.saturating_sub(before) / 1024,
        tokens,
        encoded.as_secs_f64(),
        tokens as f64 / encoded.as_secs_f64()
    );
}
