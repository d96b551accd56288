//! A document's Markdown as safe HTML: the document's own HTML is shown as
//! text, links keep only web and mail schemes, images become their alt text
//! (nothing is loaded from outside), and the passage is marked (`<mark
//! class="passage">`, the first one `id="passage"`) with the query's words
//! in `<strong class="term">`.

use std::ops::Range;

use pulldown_cmark::{html, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

use crate::highlight;

/// Renders `markdown`; `passage` is a byte range of it, `query` the search.
pub(crate) fn render(markdown: &str, passage: Option<Range<usize>>, query: &str) -> String {
    let parser = Parser::new_ext(
        markdown,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    );
    let mut events: Vec<Event<'_>> = Vec::new();
    let mut anchored = false;
    for (event, range) in parser.into_offset_iter() {
        // The document's own HTML is shown as the text it is.
        let event = match event {
            Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
            other => other,
        };
        match event {
            // The alt text between these stays, as text.
            Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => {}
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => events.push(Event::Start(Tag::Link {
                link_type: if safe_url(&dest_url) {
                    link_type
                } else {
                    LinkType::Inline
                },
                dest_url: if safe_url(&dest_url) {
                    dest_url
                } else {
                    CowStr::Borrowed("#")
                },
                title,
                id,
            })),
            Event::Text(text) => {
                let inside = passage
                    .as_ref()
                    .is_some_and(|p| range.start < p.end && range.end > p.start);
                if !inside {
                    events.push(Event::Text(text));
                    continue;
                }
                let id = if anchored { "" } else { " id=\"passage\"" };
                anchored = true;
                events.push(Event::InlineHtml(
                    format!("<mark class=\"passage\"{id}>").into(),
                ));
                push_terms(&mut events, text, query);
                events.push(Event::InlineHtml("</mark>".into()));
            }
            other => events.push(other),
        }
    }
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, events.into_iter());
    out
}

/// `text` with the query's words in `<strong class="term">`.
/// The words a reader sees in `markdown`, for a result's snippet: code
/// without its backticks, links as their text, emphasis and escapes gone,
/// blocks separated by a space.
pub(crate) fn plain_text(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let parser = Parser::new_ext(
        markdown,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    );
    for event in parser {
        match event {
            Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) => {
                out.push_str(&t)
            }
            Event::SoftBreak | Event::HardBreak => out.push(' '),
            // Inline markup ends inside a sentence; a block's end is a break.
            Event::End(
                TagEnd::Emphasis
                | TagEnd::Strong
                | TagEnd::Strikethrough
                | TagEnd::Link
                | TagEnd::Image,
            ) => {}
            Event::End(_) => out.push(' '),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn push_terms<'a>(events: &mut Vec<Event<'a>>, text: CowStr<'a>, query: &str) {
    let ranges = highlight::matches(query, &text);
    if ranges.is_empty() {
        events.push(Event::Text(text));
        return;
    }
    let mut at = 0;
    for r in ranges {
        events.push(Event::Text(text[at..r.start].to_string().into()));
        events.push(Event::InlineHtml("<strong class=\"term\">".into()));
        events.push(Event::Text(text[r.clone()].to_string().into()));
        events.push(Event::InlineHtml("</strong>".into()));
        at = r.end;
    }
    events.push(Event::Text(text[at..].to_string().into()));
}

fn safe_url(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    ["http://", "https://", "mailto:", "#"]
        .iter()
        .any(|s| lower.starts_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_shows_the_words_not_the_markup() {
        let md = "## Setup\n\nRun `cargo build` with **care**, see [the guide](https://a.org) and 1\\. \\# not a heading.\n\n```\nlet x = 1;\n```";
        assert_eq!(
            plain_text(md),
            "Setup Run cargo build with care, see the guide and 1. # not a heading. let x = 1;"
        );
    }

    #[test]
    fn the_documents_html_is_text_and_links_are_tamed() {
        let md = "# T\n\n<script>alert(1)</script>\n\nSee [x](javascript:alert(1)) and <img src=x onerror=y> ![a](http://evil/p.png) [ok](https://a.org).";
        let out = render(md, None, "");
        assert!(!out.contains("<script"), "{out}");
        assert!(
            out.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{out}"
        );
        assert!(!out.contains("<img"), "{out}");
        assert!(!out.contains("javascript:"), "{out}");
        assert!(out.contains("href=\"https://a.org\""), "{out}");
    }

    #[test]
    fn the_passage_is_marked_with_its_terms() {
        let md = "# Guide\n\nFirst paragraph.\n\nThe port is 8080 for the service.\n\nLast.";
        let start = md.find("The port").unwrap();
        let out = render(md, Some(start..start + 33), "port");
        assert!(
            out.contains("<mark class=\"passage\" id=\"passage\">The <strong class=\"term\">port</strong> is 8080"),
            "{out}"
        );
        assert!(
            !out.contains("<mark class=\"passage\" id=\"passage\">First"),
            "{out}"
        );
        assert_eq!(out.matches("id=\"passage\"").count(), 1);
    }
}
