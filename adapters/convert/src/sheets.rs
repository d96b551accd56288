//! Spreadsheets and delimited text → pipe tables: every XLSX sheet under a
//! `## <sheet>` heading with its first row as header (calamine; formula
//! cells carry the value cached by the saving program), CSV with `,` `;` or
//! tab sniffed from the first line.

use std::io::Cursor;

use calamine::{Reader, Xlsx};
use minirag_core::ports::{ConvertError, Converted};

use crate::office::{malformed_by, Archive, PipeTable};

pub fn xlsx(name: &str, bytes: &[u8]) -> Result<Converted, ConvertError> {
    // Same zip guards as the other office formats before calamine reads it.
    Archive::open(name, bytes)?;
    let mut book: Xlsx<_> =
        Xlsx::new(Cursor::new(bytes)).map_err(|e| malformed_by(name, e.to_string(), e))?;
    let mut blocks = Vec::new();
    for sheet in book.sheet_names().to_vec() {
        let range = book
            .worksheet_range(&sheet)
            .map_err(|e| malformed_by(name, format!("sheet '{sheet}': {e}"), e))?;
        blocks.push(format!("## {sheet}"));
        // Straight from the sheet into the table (a sheet of a million rows
        // is never a Vec of rows of strings); empty rows are left out.
        let mut table = String::new();
        let mut writer = PipeTable::new(&mut table, range.width());
        let mut cells: Vec<String> = Vec::new();
        for r in range.rows() {
            cells.clear();
            cells.extend(r.iter().map(|c| c.to_string()));
            if cells.iter().any(|c| !c.trim().is_empty()) {
                writer.row(cells.iter().map(String::as_str));
            }
        }
        drop(range);
        if !table.is_empty() {
            blocks.push(table);
        }
    }
    Ok(Converted {
        markdown: blocks.join("\n\n"),
        metadata_title: None,
        page_chars: Vec::new(),
        places: Vec::new(),
    })
}

pub fn csv(name: &str, text: &str) -> Result<Converted, ConvertError> {
    let first = text.lines().next().unwrap_or("");
    let delimiter = [b',', b';', b'\t']
        .into_iter()
        .max_by_key(|d| first.bytes().filter(|b| b == d).count())
        .unwrap_or(b',');
    let reader = || {
        csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(false)
            .flexible(true)
            .from_reader(text.as_bytes())
    };
    // Two passes, the first for the widest row, so the table is written as
    // the records are read (a 90 MB file is never held as rows of strings).
    let mut width = 0;
    let mut record = csv::StringRecord::new();
    let mut first = reader();
    while first
        .read_record(&mut record)
        .map_err(|e| malformed_by(name, e.to_string(), e))?
    {
        width = width.max(record.len());
    }
    let mut markdown = String::with_capacity(text.len() + text.len() / 4);
    let mut table = PipeTable::new(&mut markdown, width);
    let mut second = reader();
    while second
        .read_record(&mut record)
        .map_err(|e| malformed_by(name, e.to_string(), e))?
    {
        table.row(record.iter());
    }
    Ok(Converted {
        markdown,
        metadata_title: None,
        page_chars: Vec::new(),
        places: Vec::new(),
    })
}
