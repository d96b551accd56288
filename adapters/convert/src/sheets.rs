//! Spreadsheets and delimited text → pipe tables: every XLSX sheet under a
//! `## <sheet>` heading with its first row as header (calamine; formula
//! cells carry the value cached by the saving program), CSV with `,` `;` or
//! tab sniffed from the first line.

use std::io::Cursor;

use calamine::{Reader, Xlsx};
use minirag_core::location::{Mark, Place};
use minirag_core::ports::{ConvertError, Converted};

use crate::office::{core_properties, malformed_by, Archive, PipeTable};

/// Converts a workbook: one table per sheet, rows marked.
pub fn xlsx(name: &str, bytes: &[u8]) -> Result<Converted, ConvertError> {
    // Same zip guards as the other office formats before calamine reads it.
    let properties = core_properties(&mut Archive::open(name, bytes)?, name);
    let mut book: Xlsx<_> =
        Xlsx::new(Cursor::new(bytes)).map_err(|e| malformed_by(name, e.to_string(), e))?;
    let mut blocks = Vec::new();
    let mut places = Vec::new();
    // The Markdown line the next block starts on (blocks are joined by a
    // blank line).
    let mut line = 0u32;
    for sheet in book.sheet_names().to_vec() {
        let range = book
            .worksheet_range(&sheet)
            .map_err(|e| malformed_by(name, format!("sheet '{sheet}': {e}"), e))?;
        blocks.push(format!("## {sheet}"));
        line += 2;
        // The sheet's own number of its first row (1-based).
        let top = range.start().map_or(1, |(r, _)| r + 1);
        // Straight from the sheet into the table (a sheet of a million rows
        // is never a Vec of rows of strings); empty rows are left out.
        let mut table = String::new();
        let mut writer = PipeTable::new(&mut table, range.width());
        let mut cells: Vec<String> = Vec::new();
        let mut rows = SheetRows::new(&sheet, line);
        for (i, r) in range.rows().enumerate() {
            cells.clear();
            cells.extend(r.iter().map(|c| c.to_string()));
            if cells.iter().any(|c| !c.trim().is_empty()) {
                writer.row(cells.iter().map(String::as_str));
                rows.written(top + i as u32);
            }
        }
        drop(range);
        if !table.is_empty() {
            line += table.matches('\n').count() as u32 + 2;
            places.extend(rows.finish());
            blocks.push(table);
        }
    }
    Ok(Converted {
        markdown: blocks.join("\n\n"),
        metadata_title: properties.title,
        page_chars: Vec::new(),
        places,
        meta: properties.meta,
    })
}

/// Converts a CSV: one table, records marked.
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
    let mut records = 0u32;
    while second
        .read_record(&mut record)
        .map_err(|e| malformed_by(name, e.to_string(), e))?
    {
        table.row(record.iter());
        records += 1;
    }
    // The header (record 1) is Markdown line 0; record n > 1 is line n,
    // after the delimiter row.
    let rows = |line, first, count| Place {
        line,
        word: 0,
        mark: Mark::Rows {
            sheet: None,
            first,
            count,
        },
    };
    let places = if records > 1 && width > 0 {
        vec![rows(0, 1, 1), rows(2, 2, records - 1)]
    } else {
        Vec::new()
    };
    Ok(Converted {
        markdown,
        metadata_title: None,
        page_chars: Vec::new(),
        places,
        meta: Default::default(),
    })
}

/// The data rows of one sheet's table as runs of consecutive sheet rows,
/// one [`Mark::Rows`] each (empty rows are left out of the table).
struct SheetRows {
    sheet: String,
    /// The table's first Markdown line (its header).
    start: u32,
    written: u32,
    runs: Vec<Place>,
}

impl SheetRows {
    fn new(sheet: &str, start: u32) -> Self {
        Self {
            sheet: sheet.into(),
            start,
            written: 0,
            runs: Vec::new(),
        }
    }

    /// The table got sheet row `row` as its next line.
    fn written(&mut self, row: u32) {
        self.written += 1;
        if self.written == 1 {
            return; // the header
        }
        // Data row k (from 1) is Markdown line start + 1 + k.
        let line = self.start + self.written;
        if let Some(Place {
            line: at,
            mark: Mark::Rows { first, count, .. },
            ..
        }) = self.runs.last_mut()
        {
            if *first + *count == row && *at + *count == line {
                *count += 1;
                return;
            }
        }
        self.runs.push(Place {
            line,
            word: 0,
            mark: Mark::Rows {
                sheet: Some(self.sheet.clone()),
                first: row,
                count: 1,
            },
        });
    }

    fn finish(self) -> Vec<Place> {
        self.runs
    }
}
