//! EPUB → Markdown: chapters in spine order through the HTML converter
//! (headings kept), `dc:title` as the metadata title.

use minirag_core::ports::{ConvertError, Converted};

use crate::office::{malformed, nodes, Archive, Node};

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

pub fn convert(name: &str, bytes: &[u8]) -> Result<Converted, ConvertError> {
    let mut archive = Archive::open(name, bytes)?;
    let container = archive
        .text("META-INF/container.xml")?
        .ok_or_else(|| malformed(name, "no META-INF/container.xml: not an EPUB"))?;
    let opf_path = nodes(name, &container)?
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
    let mut manifest: Vec<(String, String)> = Vec::new();
    let mut spine: Vec<String> = Vec::new();
    let mut title = String::new();
    let mut in_title = false;
    for n in nodes(name, &opf)? {
        match n {
            Node::Open(t, a) if t.ends_with("item") => {
                if let (Some(id), Some(href)) = (attr(&a, "id"), attr(&a, "href")) {
                    manifest.push((id.to_string(), href.to_string()));
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
    let mut chapters = Vec::new();
    for id in spine {
        let Some((_, href)) = manifest.iter().find(|(m, _)| *m == id) else {
            continue;
        };
        let path = join(&opf_path, href);
        if let Some(xhtml) = archive.text(&path)? {
            let md = crate::html::convert(&xhtml)?.markdown;
            if !md.trim().is_empty() {
                chapters.push(md.trim().to_string());
            }
        }
    }
    Ok(Converted {
        markdown: chapters.join("\n\n"),
        metadata_title: (!title.is_empty()).then_some(title),
    })
}
