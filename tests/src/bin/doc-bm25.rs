//! The eval's whole-document BM25 baseline (issue 13): every document of an
//! index is rebuilt from its chunks, stored as one chunk in a scratch index
//! with our analyzer and BM25, and each query on stdin (one per line) is
//! answered with a JSON array of the best sources, best first, on stdout.
//!
//! With `--plain`, the baseline is plain BM25 instead, fixed and independent
//! of our analyzer and its constants: the title and the document as one
//! text, words as runs of letters and digits, lower-cased, no stemming and
//! no folding, k1 1.2 and b 0.75 (what a new user's "plain whole-document
//! BM25 without stemming" does).
//!
//! usage: doc-bm25 INDEX_DIR [K] [--plain] < queries
//!        doc-bm25 INDEX_DIR --dump > documents.jsonl (source, title, text:
//!        the rebuilt documents, for analysing the corpus outside the index)

use std::io::{BufRead, Write};

use minirag_core::chunk::{Chunk, Layout};
use minirag_core::ports::Index;
use minirag_core::reconstruct::document;
use minirag_core::search::Scope;
use minirag_index_mem::MemIndex;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: doc-bm25 INDEX_DIR [K] < queries (one per line)");
        std::process::exit(2);
    };
    let rest: Vec<String> = args.collect();
    let k = rest.iter().find_map(|a| a.parse().ok()).unwrap_or(10);
    let result = if rest.iter().any(|a| a == "--dump") {
        dump(&dir)
    } else if rest.iter().any(|a| a == "--plain") {
        plain(&dir, k)
    } else {
        run(&dir, k)
    };
    if let Err(e) = result {
        eprintln!("doc-bm25: {e}");
        std::process::exit(1);
    }
}

fn dump(dir: &str) -> Result<(), Box<dyn std::error::Error>> {
    let index = MemIndex::open(dir)?;
    let view = index.read()?;
    let mut out = std::io::stdout().lock();
    for record in view.sources(&Scope::all())? {
        let chunks = view.chunks(&record.source, 0..=u32::MAX)?;
        let seeded = record.title_seeded.then_some(record.title.as_str());
        let line = serde_json::json!({
            "source": record.source,
            "title": record.title,
            "text": document(&chunks, seeded),
            "chunks": chunks.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
        });
        writeln!(out, "{line}")?;
    }
    Ok(())
}

fn run(dir: &str, k: usize) -> Result<(), Box<dyn std::error::Error>> {
    let index = MemIndex::open(dir)?;
    let scratch_dir = tempfile::tempdir()?;
    let whole = MemIndex::open(scratch_dir.path())?;
    {
        let view = index.read()?;
        for mut record in view.sources(&Scope::all())? {
            let chunks = view.chunks(&record.source, 0..=u32::MAX)?;
            let seeded = record.title_seeded.then_some(record.title.as_str());
            let text = document(&chunks, seeded);
            record.chunk_count = 1;
            record.embedded_with = None;
            record.title_seeded = false;
            let one = Chunk {
                index: 0,
                parent: 0,
                text,
                layout: Layout::default(),
            };
            whole.replace_source(record, vec![one], None)?;
        }
    }
    let view = whole.read()?;
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let hits = view.keyword_search(line.trim(), k, &Scope::all())?;
        let sources: Vec<&str> = hits.iter().map(|h| h.key.source.as_str()).collect();
        writeln!(out, "{}", serde_json::to_string(&sources)?)?;
        out.flush()?;
    }
    Ok(())
}

/// Lower-cased runs of letters and digits: no stemming, no folding.
fn plain_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

fn plain(dir: &str, k: usize) -> Result<(), Box<dyn std::error::Error>> {
    const K1: f64 = 1.2;
    const B: f64 = 0.75;
    let index = MemIndex::open(dir)?;
    let view = index.read()?;
    let mut sources = Vec::new();
    let mut lengths = Vec::new();
    let mut postings: std::collections::HashMap<String, Vec<(u32, u32)>> = Default::default();
    for record in view.sources(&Scope::all())? {
        let chunks = view.chunks(&record.source, 0..=u32::MAX)?;
        let seeded = record.title_seeded.then_some(record.title.as_str());
        let text = format!("{}\n{}", record.title, document(&chunks, seeded));
        let doc = sources.len() as u32;
        let mut tf: std::collections::HashMap<String, u32> = Default::default();
        let mut len = 0u32;
        for w in plain_words(&text) {
            *tf.entry(w).or_default() += 1;
            len += 1;
        }
        for (w, n) in tf {
            postings.entry(w).or_default().push((doc, n));
        }
        sources.push(record.source);
        lengths.push(f64::from(len));
    }
    let n = sources.len() as f64;
    let avg = (lengths.iter().sum::<f64>() / n.max(1.0)).max(1.0);
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let mut terms: Vec<String> = plain_words(&line).collect();
        terms.sort();
        terms.dedup();
        let mut score = vec![0f64; sources.len()];
        for t in &terms {
            let Some(list) = postings.get(t) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(d, tf) in list {
                let tf = f64::from(tf);
                let dl = lengths[d as usize];
                score[d as usize] += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / avg));
            }
        }
        let mut ranked: Vec<(usize, f64)> = score
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0.0)
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let top: Vec<&str> = ranked
            .iter()
            .take(k)
            .map(|(d, _)| sources[*d].as_str())
            .collect();
        writeln!(out, "{}", serde_json::to_string(&top)?)?;
        out.flush()?;
    }
    Ok(())
}
