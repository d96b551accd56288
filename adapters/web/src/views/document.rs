//! The document view: the document's Markdown as HTML, the passage marked
//! and scrolled to (`#passage`), with its place and the original file.

use maud::{html, Markup, PreEscaped};
use minirag_core::engine::ReadDocument;
use minirag_core::location::Location;

use super::{enc, page, Nav};
use crate::markdown;

/// `/doc?source=…&chunk=N&q=…`
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct Wanted {
    pub source: String,
    pub chunk: Option<u32>,
    #[serde(default)]
    pub q: String,
}

pub(crate) struct Shown<'a> {
    pub doc: &'a ReadDocument,
    pub passage: Option<std::ops::Range<usize>>,
    /// The passage's place and citation, when known.
    pub place: Option<(Location, String)>,
    /// The original can be opened (a local file under a root).
    pub original: bool,
}

pub(crate) fn view(wanted: &Wanted, shown: &Shown<'_>) -> Markup {
    let record = &shown.doc.record;
    let body = markdown::render(&shown.doc.text, shown.passage.clone(), &wanted.q);
    page(
        &record.title,
        Nav::None,
        None,
        html! {
            article.document-view {
                header {
                    p.back {
                        @if wanted.q.is_empty() { a href="/" { "← Search" } }
                        @else { a href=(format!("/?q={}", enc(&wanted.q))) { "← Results for “" (wanted.q) "”" } }
                    }
                    h1 { (record.title) }
                    p.path {
                        (record.source)
                        @if shown.original {
                            " · " a href=(format!("/file?source={}", enc(&record.source))) { "Open the original" }
                        }
                    }
                    @if let Some((_, citation)) = &shown.place {
                        p.place { "Passage at " a href="#passage" { (citation) } }
                    }
                    @if wanted.chunk.is_some() && shown.passage.is_none() {
                        p.notice { "The passage could not be placed in the rebuilt document; the whole document follows." }
                    }
                }
                div.markdown { (PreEscaped(body)) }
            }
        },
    )
}
