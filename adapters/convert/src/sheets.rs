//! Spreadsheets and delimited text → pipe tables: every XLSX sheet under a
//! `## <sheet>` heading with its first row as header (calamine; formula
//! cells carry the value cached by the saving program), CSV with `,` `;` or
//! tab sniffed from the first line.

use std::io::Cursor;

use calamine::{Reader, Xlsx};
use minirag_core::ports::{ConvertError, Converted};

use crate::office::{malformed, pipe_table, Archive};

pub fn xlsx(name: &str, bytes: &[u8]) -> Result<Converted, ConvertError> {
    // Same zip guards as the other office formats before calamine reads it.
    Archive::open(name, bytes)?;
    let mut book: Xlsx<_> = Xlsx::new(Cursor::new(bytes)).map_err(|e| malformed(name, e))?;
    let mut blocks = Vec::new();
    for sheet in book.sheet_names().to_vec() {
        let range = book
            .worksheet_range(&sheet)
            .map_err(|e| malformed(name, format!("sheet '{sheet}': {e}")))?;
        let rows: Vec<Vec<String>> = range
            .rows()
            .map(|r| r.iter().map(|c| c.to_string()).collect::<Vec<String>>())
            .filter(|r| r.iter().any(|c| !c.trim().is_empty()))
            .collect();
        blocks.push(format!("## {sheet}"));
        if !rows.is_empty() {
            blocks.push(pipe_table(&rows));
        }
    }
    Ok(Converted {
        markdown: blocks.join("\n\n"),
        metadata_title: None,
        page_chars: Vec::new(),
    })
}

pub fn csv(name: &str, text: &str) -> Result<Converted, ConvertError> {
    let first = text.lines().next().unwrap_or("");
    let delimiter = [b',', b';', b'\t']
        .into_iter()
        .max_by_key(|d| first.bytes().filter(|b| b == d).count())
        .unwrap_or(b',');
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| malformed(name, e))?;
        rows.push(record.iter().map(str::to_string).collect());
    }
    Ok(Converted {
        markdown: pipe_table(&rows),
        metadata_title: None,
        page_chars: Vec::new(),
    })
}
