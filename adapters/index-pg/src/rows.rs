//! Core types to and from rows.

use minirag_core::chunk::{Chunk, Heading, Layout, UnitKind};
use minirag_core::location::{Location, Packed};
use minirag_core::ports::{SourceAttributes, SourceRecord, SourceType};
use postgres::Row;
use serde_json::{json, Value};

/// The `sources` columns [`record`] reads, in order.
pub(crate) const SOURCE_COLUMNS: &str =
    "source, source_type, title, title_seeded, file_hash, mtime, \
     ingested_at, chunk_count, scheme_version, embedded_with, ocr_engine, language, meta::text";

/// The `chunks` columns [`chunk`] reads, in order.
pub(crate) const CHUNK_COLUMNS: &str = "idx, parent, text, prefix_len, kind, headings::text, \
     heading_is_body, continues_section, location";

pub(crate) fn source_type_code(t: SourceType) -> i16 {
    match t {
        SourceType::File => 0,
        SourceType::Data => 1,
        SourceType::Url => 2,
    }
}

pub(crate) fn record(row: &Row) -> SourceRecord {
    SourceRecord {
        source: row.get(0),
        source_type: match row.get::<_, i16>(1) {
            1 => SourceType::Data,
            2 => SourceType::Url,
            _ => SourceType::File,
        },
        title: row.get(2),
        title_seeded: row.get(3),
        file_hash: row.get(4),
        mtime: row.get(5),
        ingested_at: row.get(6),
        chunk_count: row.get::<_, i32>(7) as u32,
        scheme_version: row.get::<_, i32>(8) as u32,
        embedded_with: row.get(9),
        ocr_engine: row.get(10),
        attributes: SourceAttributes {
            language: row.get(11),
            meta: meta_pairs(row.get(12)),
        },
    }
}

/// Declared fields as stored: a JSON array of `[field, value]` pairs.
pub(crate) fn meta_json(meta: &[(String, String)]) -> String {
    serde_json::to_string(meta).unwrap_or_else(|_| "[]".into())
}

/// The stored pairs back; a row written by hand that does not parse reads
/// as none, as a row from before the column did.
fn meta_pairs(stored: &str) -> Vec<(String, String)> {
    serde_json::from_str(stored).unwrap_or_default()
}

pub(crate) fn kind_code(k: UnitKind) -> i16 {
    match k {
        UnitKind::Text => 0,
        UnitKind::Rows => 1,
        UnitKind::Code => 2,
        UnitKind::CodePiece => 3,
    }
}

/// Headings as JSON `[[level, text, line], …]`.
pub(crate) fn headings_json(headings: &[Heading]) -> String {
    serde_json::Value::Array(
        headings
            .iter()
            .map(|h| serde_json::json!([h.level, h.text, h.line]))
            .collect(),
    )
    .to_string()
}

fn headings(json: &str) -> Vec<Heading> {
    let Ok(serde_json::Value::Array(items)) = serde_json::from_str(json) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|h| {
            Some(Heading {
                level: h.get(0)?.as_u64()? as u8,
                text: h.get(1)?.as_str()?.to_string(),
                line: h.get(2)?.as_str()?.to_string(),
            })
        })
        .collect()
}

pub(crate) fn chunk(row: &Row) -> Chunk {
    chunk_at(row, 0)
}

/// A chunk from [`CHUNK_COLUMNS`] starting at column `at`.
pub(crate) fn chunk_at(row: &Row, at: usize) -> Chunk {
    Chunk {
        index: row.get::<_, i32>(at) as u32,
        parent: row.get::<_, i32>(at + 1) as u32,
        text: row.get(at + 2),
        layout: Layout {
            prefix_len: row.get::<_, i32>(at + 3) as u32,
            kind: match row.get::<_, i16>(at + 4) {
                1 => UnitKind::Rows,
                2 => UnitKind::Code,
                3 => UnitKind::CodePiece,
                _ => UnitKind::Text,
            },
            headings: headings(row.get(at + 5)),
            heading_is_body: row.get(at + 6),
            continues_section: row.get(at + 7),
            location: row
                .get::<_, Option<&str>>(at + 8)
                .and_then(location)
                .map(|l| Packed::from(&l))
                .unwrap_or_default(),
        },
    }
}

/// A chunk's place as a JSON object of its known fields (`None`: no place).
pub(crate) fn location_json(location: Option<&Location>) -> Option<String> {
    let l = location?;
    let pair = |p: Option<(u32, u32)>| p.map(|(a, b)| json!([a, b]));
    let mut o = serde_json::Map::new();
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            o.insert(k.into(), v);
        }
    };
    put("pages", pair(l.pages));
    put("slide", l.slide.map(Value::from));
    put("sheet", l.sheet.clone().map(Value::from));
    put("rows", pair(l.rows));
    put("lines", pair(l.lines));
    put("anchor", l.anchor.clone().map(Value::from));
    put("cell", l.cell.map(Value::from));
    put("start", l.start.clone().map(Value::from));
    Some(Value::Object(o).to_string())
}

/// [`location_json`] read back; a malformed value is no place.
fn location(json: &str) -> Option<Location> {
    let v: Value = serde_json::from_str(json).ok()?;
    let num = |k: &str| v.get(k).and_then(Value::as_u64).map(|n| n as u32);
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let pair = |k: &str| {
        let a = v.get(k)?.as_array()?;
        Some((a.first()?.as_u64()? as u32, a.get(1)?.as_u64()? as u32))
    };
    Some(Location {
        pages: pair("pages"),
        slide: num("slide"),
        sheet: text("sheet"),
        rows: pair("rows"),
        lines: pair("lines"),
        anchor: text("anchor"),
        cell: num("cell"),
        start: text("start"),
    })
}
