//! Text with the query's words marked, as the keyword side matched them
//! (the analyzer's own terms, so `документов` marks `Документы`).

use std::ops::Range;
use std::sync::OnceLock;

use maud::{html, Markup};
use minirag_rank::Analyzer;

fn analyzer() -> &'static Analyzer {
    static ANALYZER: OnceLock<Analyzer> = OnceLock::new();
    ANALYZER.get_or_init(Analyzer::default)
}

/// Byte ranges of `text`'s words that match `query`.
pub(crate) fn matches(query: &str, text: &str) -> Vec<Range<usize>> {
    analyzer().matches(query, text)
}

/// `text` as escaped HTML, its matched words in `<mark>`.
pub(crate) fn marked(query: &str, text: &str) -> Markup {
    let ranges = matches(query, text);
    let mut parts: Vec<(&str, bool)> = Vec::new();
    let mut at = 0;
    for r in ranges {
        parts.push((&text[at..r.start], false));
        parts.push((&text[r.clone()], true));
        at = r.end;
    }
    parts.push((&text[at..], false));
    html! {
        @for (part, hit) in parts {
            @if hit { mark { (part) } } @else { (part) }
        }
    }
}

/// Up to `max` bytes of `text` around its first match, cut at spaces, with
/// `…` where it was cut.
pub(crate) fn excerpt(query: &str, text: &str, max: usize) -> String {
    let text = text.trim();
    if text.len() <= max {
        return text.to_string();
    }
    let first = matches(query, text).first().map_or(0, |r| r.start);
    let mut start = first.saturating_sub(max / 4);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    if start > 0 {
        start = text[..start]
            .rfind(char::is_whitespace)
            .map_or(0, |i| i + 1);
    }
    let mut end = (start + max).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end < text.len() {
        end = text[..end].rfind(char::is_whitespace).unwrap_or(end);
    }
    let lead = if start > 0 { "… " } else { "" };
    let tail = if end < text.len() { " …" } else { "" };
    format!("{lead}{}{tail}", text[start..end].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_escaped_and_follow_the_analyzer() {
        let html = marked("documents", "<b>Документы</b> and documented <script>").into_string();
        assert_eq!(
            html,
            "&lt;b&gt;Документы&lt;/b&gt; and <mark>documented</mark> &lt;script&gt;"
        );
    }

    #[test]
    fn an_excerpt_holds_the_first_match() {
        let text = format!("{} needle {}", "hay ".repeat(200), "straw ".repeat(200));
        let e = excerpt("needle", &text, 120);
        assert!(
            e.contains("needle") && e.starts_with("… ") && e.ends_with(" …"),
            "{e}"
        );
        assert!(e.len() <= 130);
        assert_eq!(excerpt("x", "short", 120), "short");
    }
}
