//! PPTX → Markdown: one `<!-- Slide number: N -->` marker per slide (slides
//! in numeric order: slide10 after slide9), the title placeholder as a
//! heading, body paragraphs, tables, then the speaker notes.

use minirag_core::ports::{ConvertError, Converted};

use crate::office::{core_properties, node_list, nodes, pipe_table, Archive, Node};

/// Paragraphs and tables of one slide (or notes) part; the title
/// placeholder's text is returned separately.
fn shapes(name: &str, xml: &str) -> Result<(Option<String>, Vec<String>), ConvertError> {
    let mut title: Option<String> = None;
    let mut blocks = Vec::new();
    let mut in_title_shape = false;
    // Slide-number, date, header and footer placeholders: page furniture.
    let mut in_chrome_shape = false;
    let mut shape_text: Vec<String> = Vec::new();
    let mut para = String::new();
    let mut in_text = false;
    let mut in_table = false;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut cell = String::new();
    for n in nodes(name, xml) {
        match n? {
            Node::Open(t, attrs) => match t.as_str() {
                "p:sp" => {
                    in_title_shape = false;
                    in_chrome_shape = false;
                    shape_text.clear();
                }
                "p:ph" => {
                    let kind = attrs
                        .iter()
                        .find(|(k, _)| k == "type")
                        .map(|(_, v)| v.as_str());
                    in_title_shape = matches!(kind, Some("title" | "ctrTitle"));
                    in_chrome_shape = matches!(kind, Some("sldNum" | "dt" | "ftr" | "hdr"));
                }
                "a:tbl" => {
                    in_table = true;
                    rows.clear();
                }
                "a:tr" => rows.push(Vec::new()),
                "a:tc" => cell.clear(),
                "a:p" => para.clear(),
                "a:t" => in_text = true,
                _ => {}
            },
            Node::Close(t) => match t.as_str() {
                "a:t" => in_text = false,
                "a:p" => {
                    let text = para.trim().to_string();
                    if in_table {
                        if !cell.is_empty() && !text.is_empty() {
                            cell.push(' ');
                        }
                        cell.push_str(&text);
                    } else if !text.is_empty() {
                        shape_text.push(text);
                    }
                }
                "a:tc" => {
                    if let Some(r) = rows.last_mut() {
                        r.push(std::mem::take(&mut cell));
                    }
                }
                "a:tbl" => {
                    in_table = false;
                    if !rows.is_empty() {
                        blocks.push(pipe_table(&rows));
                    }
                }
                "p:sp" => {
                    if in_chrome_shape {
                    } else if in_title_shape && title.is_none() {
                        title = Some(shape_text.join(" "));
                    } else if !shape_text.is_empty() {
                        blocks.push(shape_text.join("\n"));
                    }
                    shape_text.clear();
                }
                _ => {}
            },
            Node::Text(s) if in_text => para.push_str(&s),
            Node::Text(_) => {}
        }
    }
    Ok((title, blocks))
}

/// The notes part a slide's relationships name (saving programs need not
/// number notes like slides), else `notesSlide<n>.xml`.
fn notes_part(name: &str, archive: &mut Archive<'_>, n: u32) -> Result<String, ConvertError> {
    let fallback = format!("ppt/notesSlides/notesSlide{n}.xml");
    let Some(rels) = archive.text(&format!("ppt/slides/_rels/slide{n}.xml.rels"))? else {
        return Ok(fallback);
    };
    let target = node_list(name, &rels)?
        .into_iter()
        .find_map(|node| match node {
            Node::Open(t, attrs) if t == "Relationship" => {
                let get = |k: &str| attrs.iter().find(|(a, _)| a == k).map(|(_, v)| v.clone());
                get("Type")
                    .filter(|ty| ty.ends_with("/notesSlide"))
                    .and(get("Target"))
            }
            _ => None,
        });
    Ok(match target {
        Some(t) => match t.strip_prefix("../") {
            Some(rest) => format!("ppt/{rest}"),
            None => format!("ppt/slides/{}", t.trim_start_matches('/')),
        },
        None => fallback,
    })
}

/// Converts a presentation: one section per slide, in order, slides marked.
pub fn convert(name: &str, bytes: &[u8]) -> Result<Converted, ConvertError> {
    let mut archive = Archive::open(name, bytes)?;
    let properties = core_properties(&mut archive, name);
    let title = properties.title;
    let mut numbers: Vec<u32> = archive
        .names()
        .iter()
        .filter_map(|n| {
            n.strip_prefix("ppt/slides/slide")?
                .strip_suffix(".xml")?
                .parse()
                .ok()
        })
        .collect();
    numbers.sort_unstable();
    let mut out = Vec::new();
    for n in numbers {
        let Some(xml) = archive.text(&format!("ppt/slides/slide{n}.xml"))? else {
            continue;
        };
        let (slide_title, blocks) = shapes(name, &xml)?;
        out.push(format!("<!-- Slide number: {n} -->"));
        if let Some(t) = slide_title.filter(|t| !t.is_empty()) {
            out.push(format!("# {t}"));
        }
        out.extend(blocks);
        let notes_path = notes_part(name, &mut archive, n)?;
        if let Some(notes) = archive.text(&notes_path)? {
            let (_, note_blocks) = shapes(name, &notes)?;
            let text: Vec<String> = note_blocks
                .into_iter()
                .filter(|b| b.trim() != n.to_string())
                .collect();
            if !text.is_empty() {
                out.push(format!("### Notes:\n{}", text.join("\n")));
            }
        }
    }
    Ok(Converted {
        markdown: out.join("\n\n"),
        metadata_title: title,
        page_chars: Vec::new(),
        places: Vec::new(),
        meta: properties.meta,
    })
}
