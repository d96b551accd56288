//! DOCX → Markdown: `Title`/`Heading N` styles (and outline levels) become
//! ATX headings, numbered and bulleted paragraphs become Markdown list items
//! ([`crate::docx_lists`]), tables become pipe tables, the core-properties
//! title is the metadata title.

use minirag_core::ports::{ConvertError, Converted};

use crate::docx_lists::{Counters, Numbering};
use crate::office::{core_properties, malformed, nodes, pipe_table, Archive, Node};

fn heading_level(style: &str) -> Option<usize> {
    let s = style.to_ascii_lowercase().replace(' ', "");
    if s == "title" {
        return Some(1);
    }
    s.strip_prefix("heading")
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| (1..=6).contains(n))
}

/// Converts a Word document: headings, lists, tables and core properties.
pub fn convert(name: &str, bytes: &[u8]) -> Result<Converted, ConvertError> {
    let mut archive = Archive::open(name, bytes)?;
    let xml = archive
        .text("word/document.xml")?
        .ok_or_else(|| malformed(name, "no word/document.xml: not a Word document"))?;
    let properties = core_properties(&mut archive, name);
    let title = properties.title;
    let numbering = match archive.text("word/numbering.xml")? {
        Some(xml) => Numbering::parse(name, &xml)?,
        None => Numbering::default(),
    };
    let mut counters = Counters::default();
    // The paragraph's list membership: (numId, level); numId 0 is "none".
    let mut list: (Option<String>, u32) = (None, 0);
    // The last block is a list: the next item joins it (a tight list).
    let mut in_list = false;
    let mut blocks: Vec<String> = Vec::new();
    let mut para = String::new();
    let mut level: Option<usize> = None;
    let mut in_text = false;
    // Table state: rows of cells while inside w:tbl (nested tables flatten).
    let mut table_depth = 0usize;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut cell = String::new();
    for n in nodes(name, &xml) {
        match n? {
            Node::Open(t, attrs) => match t.as_str() {
                "w:tbl" => {
                    table_depth += 1;
                    if table_depth == 1 {
                        rows.clear();
                    }
                }
                "w:tr" if table_depth == 1 => rows.push(Vec::new()),
                "w:tc" if table_depth == 1 => cell.clear(),
                "w:p" => {
                    para.clear();
                    level = None;
                    list = (None, 0);
                }
                "w:numId" => {
                    list.0 = attrs
                        .iter()
                        .find(|(k, _)| k == "w:val")
                        .map(|(_, v)| v.clone())
                        .filter(|v| v != "0");
                }
                "w:ilvl" => {
                    list.1 = attrs
                        .iter()
                        .find(|(k, _)| k == "w:val")
                        .and_then(|(_, v)| v.parse().ok())
                        .unwrap_or(0);
                }
                "w:pStyle" => {
                    if let Some((_, v)) = attrs.iter().find(|(k, _)| k == "w:val") {
                        level = heading_level(v).or(level);
                    }
                }
                "w:outlineLvl" => {
                    if let Some(l) = attrs
                        .iter()
                        .find(|(k, _)| k == "w:val")
                        .and_then(|(_, v)| v.parse::<usize>().ok())
                    {
                        level = level.or(Some((l + 1).min(6)));
                    }
                }
                "w:t" => in_text = true,
                "w:tab" => para.push(' '),
                "w:br" => para.push(' '),
                _ => {}
            },
            Node::Close(t) => match t.as_str() {
                "w:t" => in_text = false,
                "w:p" => {
                    let text = para.trim().to_string();
                    if table_depth > 0 {
                        if !cell.is_empty() && !text.is_empty() {
                            cell.push(' ');
                        }
                        cell.push_str(&text);
                    } else if !text.is_empty() {
                        match (&list.0, level) {
                            (Some(num_id), None) => {
                                let item = counters.marker(&numbering, num_id, list.1) + &text;
                                match blocks.last_mut() {
                                    Some(last) if in_list => {
                                        last.push('\n');
                                        last.push_str(&item);
                                    }
                                    _ => blocks.push(item),
                                }
                                in_list = true;
                            }
                            _ => {
                                in_list = false;
                                blocks.push(match level {
                                    Some(l) => format!("{} {text}", "#".repeat(l)),
                                    None => text,
                                });
                            }
                        }
                    }
                    para.clear();
                }
                "w:tc" if table_depth == 1 => {
                    if let Some(r) = rows.last_mut() {
                        r.push(std::mem::take(&mut cell));
                    }
                }
                "w:tbl" => {
                    table_depth = table_depth.saturating_sub(1);
                    if table_depth == 0 && !rows.is_empty() {
                        blocks.push(pipe_table(&rows));
                        rows.clear();
                        in_list = false;
                    }
                }
                _ => {}
            },
            Node::Text(s) if in_text => para.push_str(&s),
            Node::Text(_) => {}
        }
    }
    Ok(Converted {
        markdown: blocks.join("\n\n"),
        metadata_title: title,
        page_chars: Vec::new(),
        places: Vec::new(),
        meta: properties.meta,
    })
}
