//! Indexed documents as MCP resources: `minirag://doc/{source}`, the source
//! percent-encoded (RFC 6570 simple expansion), read back as Markdown like
//! `read_file`. File sources obey the same containment as `read_file`.

use anyhow::{anyhow, bail, Result};
use minirag_core::ports::SourceType;
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use crate::app::App;

pub(crate) const PREFIX: &str = "minirag://doc/";
pub(crate) const TEMPLATE: &str = "minirag://doc/{source}";
/// Resources per `resources/list` page.
pub(crate) const PAGE: usize = 100;

/// Everything but RFC 3986's unreserved characters is encoded.
const ENCODED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A fragment keeps `=`, `-` and `&` (`page=3-4`, `rows=2-3&sheet=…`); an anchor's other
/// characters are encoded.
const FRAGMENT: &AsciiSet = &ENCODED.remove(b'=').remove(b'&');

pub(crate) fn uri_of(source: &str) -> String {
    format!("{PREFIX}{}", utf8_percent_encode(source, ENCODED))
}

pub(crate) fn source_of(uri: &str) -> Result<String> {
    let Some(rest) = uri.strip_prefix(PREFIX) else {
        bail!("Unknown resource URI {uri}: minirag resources look like {TEMPLATE}");
    };
    percent_decode_str(rest)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| anyhow!("Resource URI {uri} does not decode to UTF-8"))
}

/// One listed document.
pub(crate) struct Listed {
    pub uri: String,
    pub source: String,
    pub title: String,
}

/// A page of indexed documents, sorted by source, and the next cursor.
pub(crate) fn list(app: &App, cursor: Option<&str>) -> Result<(Vec<Listed>, Option<String>)> {
    let start: usize = match cursor {
        None => 0,
        Some(c) => c.parse().map_err(|_| {
            anyhow!("Invalid cursor '{c}': pass the nextCursor of the previous page")
        })?,
    };
    let records = app.engine()?.visible_documents()?;
    let page: Vec<Listed> = records
        .iter()
        .skip(start)
        .take(PAGE)
        .map(|r| Listed {
            uri: uri_of(&r.source),
            source: r.source.clone(),
            title: r.title.clone(),
        })
        .collect();
    let next = (start + PAGE < records.len()).then(|| (start + PAGE).to_string());
    Ok((page, next))
}

/// The document behind a resource URI, as Markdown; a fragment
/// (`#page=12`, `#lines=40-52`…, as a hit's resource link carries) reads
/// only the part at that place.
pub(crate) fn read(app: &App, uri: &str) -> Result<String> {
    let (base, fragment) = match uri.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (uri, None),
    };
    let source = source_of(base)?;
    let engine = app.engine()?;
    let doc = match fragment {
        Some(f) => {
            let f = percent_decode_str(f).decode_utf8_lossy();
            engine.read_part(&source, &wanted(&f)?)?.0
        }
        None => engine.read_document(&source)?,
    };
    if doc.record.source_type == SourceType::File {
        app.contain(&source, true)?;
    }
    Ok(doc.text)
}

/// A part argument or URI fragment, or an error that says what is read.
pub(crate) fn wanted(part: &str) -> Result<minirag_core::location::Wanted> {
    minirag_core::location::Wanted::parse(part).ok_or_else(|| {
        anyhow!(
            "Unknown part '{part}': use page=N, page=A-B, lines=A-B, slide=N, rows=A-B (rows=A-B&sheet=NAME in a workbook), cell=N \
             or a heading's anchor, as a result's `location` names them"
        )
    })
}

/// The URI of a hit's place in its document (`minirag://doc/…#page=12`).
pub(crate) fn link_of(source: &str, location: Option<&minirag_core::location::Location>) -> String {
    match location.and_then(|l| l.fragment()) {
        Some(f) => format!("{}#{}", uri_of(source), utf8_percent_encode(&f, FRAGMENT)),
        None => uri_of(source),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_any_source() {
        for s in [
            "/home/me/docs/a b.md",
            "https://x.org/p?q=1#f",
            "notes-1",
            "/д/склад.md",
        ] {
            let uri = uri_of(s);
            assert!(!uri[PREFIX.len()..].contains('/'), "{uri}");
            assert_eq!(source_of(&uri).unwrap(), s);
        }
        assert!(source_of("file:///etc/passwd")
            .unwrap_err()
            .to_string()
            .contains("minirag://doc/"));
    }
}
