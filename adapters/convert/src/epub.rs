//! EPUB → Markdown: chapters in spine order through the HTML converter
//! (headings kept), `dc:title` as the metadata title.

use minirag_core::location::{Mark, Place};
use minirag_core::ports::{ConvertError, Converted};

use crate::office::{malformed, node_list, nodes, Archive, Node};

fn attr<'a>(attrs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Resolves `href` relative to the folder of `base` (both archive paths).
fn join(base: &str, href: &str) -> String {
    let mut parts: Vec<&str> = base
        .rsplit_once('/')
        .map_or(Vec::new(), |(dir, _)| dir.split('/').collect());
    for seg in href.split('#').next().unwrap_or(href).split('/') {
        match seg {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// Table-of-contents entries as (depth from 1, document path, label): from
/// the EPUB 3 navigation document, else the EPUB 2 NCX.
fn table_of_contents(
    name: &str,
    archive: &mut Archive<'_>,
    opf_path: &str,
    manifest: &[(String, String, String, String)],
) -> Result<Vec<(usize, String, String)>, ConvertError> {
    let nav = manifest
        .iter()
        .find(|(.., props)| props.split_whitespace().any(|p| p == "nav"));
    let ncx = manifest
        .iter()
        .find(|(_, _, media, _)| media == "application/x-dtbncx+xml");
    let Some((_, href, media, _)) = nav.or(ncx) else {
        return Ok(Vec::new());
    };
    let path = join(opf_path, href);
    let Some(xml) = archive.text(&path)? else {
        return Ok(Vec::new());
    };
    let is_ncx = media == "application/x-dtbncx+xml";
    let (level_tag, link_tag) = if is_ncx {
        ("navPoint", "content")
    } else {
        ("ol", "a")
    };
    let mut entries = Vec::new();
    let mut depth = 0usize;
    let mut target: Option<String> = None;
    let mut label = String::new();
    let mut collecting = false;
    for n in nodes(name, &xml) {
        match n? {
            Node::Open(t, _) if t.ends_with(level_tag) => depth += 1,
            Node::Close(t) if t.ends_with(level_tag) => depth = depth.saturating_sub(1),
            // NCX: <navLabel><text>label</text></navLabel><content src=".."/>
            Node::Open(t, _) if is_ncx && t.ends_with("text") => {
                label.clear();
                collecting = true;
            }
            Node::Close(t) if is_ncx && t.ends_with("text") => collecting = false,
            Node::Open(t, a) if t.ends_with(link_tag) => {
                let src = attr(&a, if is_ncx { "src" } else { "href" }).map(|h| join(&path, h));
                if is_ncx {
                    if let Some(src) = src {
                        entries.push((depth, src, label.trim().to_string()));
                    }
                } else {
                    target = src;
                    label.clear();
                    collecting = true;
                }
            }
            Node::Close(t) if !is_ncx && t.ends_with(link_tag) => {
                collecting = false;
                if let Some(src) = target.take() {
                    entries.push((depth, src, label.trim().to_string()));
                }
            }
            Node::Text(s) if collecting => label.push_str(&s),
            _ => {}
        }
    }
    Ok(entries
        .into_iter()
        .filter(|(_, _, l)| !l.is_empty())
        .map(|(d, p, l)| {
            (
                d.clamp(1, 6),
                p,
                l.split_whitespace().collect::<Vec<_>>().join(" "),
            )
        })
        .collect())
}

/// Exporters that style headings as plain paragraphs (LibreOffice's EPUB
/// export does) still list them in the table of contents: the first line
/// that equals a listed label becomes a heading of the entry's depth.
fn promote_toc_headings(md: &str, entries: &[&(usize, String, String)]) -> String {
    let mut lines: Vec<String> = md.lines().map(str::to_string).collect();
    let mut from = 0;
    for (depth, _, label) in entries {
        if let Some(i) = (from..lines.len()).find(|&i| lines[i].trim() == label) {
            lines[i] = format!("{} {label}", "#".repeat(*depth));
            from = i + 1;
        }
    }
    lines.join("\n")
}

/// Converts an EPUB: its spine's chapters in reading order.
pub fn convert(name: &str, bytes: &[u8]) -> Result<Converted, ConvertError> {
    let mut archive = Archive::open(name, bytes)?;
    let container = archive
        .text("META-INF/container.xml")?
        .ok_or_else(|| malformed(name, "no META-INF/container.xml: not an EPUB"))?;
    let opf_path = node_list(name, &container)?
        .into_iter()
        .find_map(|n| match n {
            Node::Open(t, a) if t.ends_with("rootfile") => {
                attr(&a, "full-path").map(str::to_string)
            }
            _ => None,
        })
        .ok_or_else(|| malformed(name, "the container names no package file"))?;
    let opf = archive
        .text(&opf_path)?
        .ok_or_else(|| malformed(name, format!("missing package file {opf_path}")))?;
    // (id, href, media type, properties)
    let mut manifest: Vec<(String, String, String, String)> = Vec::new();
    let mut spine: Vec<String> = Vec::new();
    let mut title = String::new();
    let mut in_title = false;
    for n in nodes(name, &opf) {
        match n? {
            Node::Open(t, a) if t.ends_with("item") => {
                if let (Some(id), Some(href)) = (attr(&a, "id"), attr(&a, "href")) {
                    manifest.push((
                        id.to_string(),
                        href.to_string(),
                        attr(&a, "media-type").unwrap_or("").to_string(),
                        attr(&a, "properties").unwrap_or("").to_string(),
                    ));
                }
            }
            Node::Open(t, a) if t.ends_with("itemref") => {
                spine.extend(attr(&a, "idref").map(str::to_string))
            }
            Node::Open(t, _) if t == "dc:title" => in_title = true,
            Node::Close(t) if t == "dc:title" => in_title = false,
            Node::Text(s) if in_title && title.is_empty() => title = s.trim().to_string(),
            _ => {}
        }
    }
    let toc = table_of_contents(name, &mut archive, &opf_path, &manifest)?;
    let mut chapters = Vec::new();
    // The headings' own ids, at their lines in the joined Markdown.
    let mut places = Vec::new();
    let mut line = 0u32;
    for id in spine {
        let Some((_, href, _, _)) = manifest.iter().find(|(m, ..)| *m == id) else {
            continue;
        };
        let path = join(&opf_path, href);
        if let Some(xhtml) = archive.text(&path)? {
            let converted = crate::html::convert(&xhtml)?;
            let mut md = converted.markdown;
            let mut anchors: Vec<Place> = converted
                .places
                .into_iter()
                .filter(|p| matches!(p.mark, Mark::Anchor(_)))
                .collect();
            let entries: Vec<&(usize, String, String)> =
                toc.iter().filter(|(_, p, _)| *p == path).collect();
            if !entries.is_empty() && !md.lines().any(|l| l.starts_with('#')) {
                md = promote_toc_headings(&md, &entries);
                anchors.clear();
            }
            let kept = md.trim();
            if !kept.is_empty() {
                let cut = md[..md.len() - md.trim_start().len()].matches('\n').count() as u32;
                places.extend(
                    anchors
                        .into_iter()
                        .filter(|p| p.line >= cut)
                        .map(|p| Place {
                            line: p.line - cut + line,
                            ..p
                        }),
                );
                line += kept.matches('\n').count() as u32 + 2;
                chapters.push(kept.to_string());
            }
        }
    }
    Ok(Converted {
        markdown: chapters.join("\n\n"),
        metadata_title: (!title.is_empty()).then_some(title),
        page_chars: Vec::new(),
        places,
        meta: Default::default(),
    })
}
