//! Jupyter notebooks → Markdown: markdown cells as they are, code cells as
//! fenced code in the notebook's language; outputs are left out.

use minirag_core::location::{Mark, Place};
use minirag_core::ports::{ConvertError, Converted};
use serde_json::Value;

use crate::office::{malformed, malformed_by};

fn source(cell: &Value) -> String {
    match &cell["source"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// Converts a Jupyter notebook: Markdown cells as they are, code cells fenced.
pub fn convert(name: &str, text: &str) -> Result<Converted, ConvertError> {
    let nb: Value = serde_json::from_str(text)
        .map_err(|e| malformed_by(name, format!("not a notebook (invalid JSON: {e})"), e))?;
    let cells = nb["cells"]
        .as_array()
        .ok_or_else(|| malformed(name, "not a notebook (no cells)"))?;
    let lang = nb["metadata"]["language_info"]["name"]
        .as_str()
        .or(nb["metadata"]["kernelspec"]["language"].as_str())
        .unwrap_or("")
        .to_string();
    let mut blocks = Vec::new();
    // Each cell's first Markdown line, numbered as the notebook numbers its
    // cells (from 1, empty ones counted).
    let mut places = Vec::new();
    let mut line = 0u32;
    for (n, cell) in cells.iter().enumerate() {
        let src = source(cell).trim_end().to_string();
        if src.trim().is_empty() {
            continue;
        }
        let block = match cell["cell_type"].as_str() {
            Some("code") => format!("```{lang}\n{src}\n```"),
            _ => src,
        };
        places.push(Place {
            line,
            word: 0,
            mark: Mark::Cell(n as u32 + 1),
        });
        line += block.matches('\n').count() as u32 + 2;
        blocks.push(block);
    }
    Ok(Converted {
        markdown: blocks.join("\n\n"),
        metadata_title: None,
        page_chars: Vec::new(),
        places,
        meta: Default::default(),
    })
}
