//! Cuts a page of many MB into pieces converted one at a time: html5ever's
//! tree of a whole 90 MB page is about 8× the page. A cut goes before a
//! heading (`<h1>`–`<h6>`) outside any table, comment or raw-text element
//! (`<script>`, `<pre>`, …), so each piece is a run of whole sections and
//! its Markdown is what the whole page would give there. A page with no
//! such heading for a long stretch is cut before a top-level-looking `<p>`
//! instead; one with neither stays whole.

use std::ops::Range;

/// Pages up to this size are converted whole; bigger ones in pieces of
/// about this size.
pub(crate) const PIECE: usize = 4 << 20;

/// Elements whose content is not markup to cut in: their text up to the
/// matching end tag is skipped.
const OPAQUE: &[&str] = &[
    "script",
    "style",
    "textarea",
    "title",
    "xmp",
    "pre",
    "template",
    "iframe",
    "noembed",
    "noframes",
    "plaintext",
    "svg",
    "math",
];

/// Byte ranges that cover `html` in order; one range when it is no bigger
/// than `piece` (no cut is made before `piece` bytes).
pub(crate) fn pieces(html: &str, piece: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut tables = 0usize;
    let bytes = html.as_bytes();
    let mut at = 0;
    while let Some(lt) = memchr(b'<', bytes, at) {
        let rest = &bytes[lt..];
        at = lt + 1;
        if rest.starts_with(b"<!--") {
            at = find(bytes, lt + 4, b"-->").map_or(bytes.len(), |e| e + 3);
            continue;
        }
        if let Some(name) = OPAQUE.iter().find(|n| opens(rest, n)) {
            let close = format!("</{name}");
            at = find_ci(bytes, lt + 1 + name.len(), close.as_bytes()).unwrap_or(bytes.len());
            continue;
        }
        if opens(rest, "table") {
            tables += 1;
            continue;
        }
        if rest.len() >= 7 && rest[..7].eq_ignore_ascii_case(b"</table") {
            tables = tables.saturating_sub(1);
            continue;
        }
        let grown = lt - start;
        let heading = rest.len() > 2
            && rest[1].eq_ignore_ascii_case(&b'h')
            && (b'1'..=b'6').contains(&rest[2])
            && ends_name(rest, 3);
        let paragraph = opens(rest, "p");
        if tables == 0
            && ((heading && grown >= piece) || (paragraph && grown >= piece.saturating_mul(2)))
        {
            out.push(start..lt);
            start = lt;
        }
    }
    out.push(start..html.len());
    out
}

/// `rest` starts with the start tag `<name` (any case), the name complete.
fn opens(rest: &[u8], name: &str) -> bool {
    let n = name.len();
    rest.len() > n && rest[1..=n].eq_ignore_ascii_case(name.as_bytes()) && ends_name(rest, n + 1)
}

/// The tag name ends at `i`: a space, `>`, `/` or the end of the page.
fn ends_name(rest: &[u8], i: usize) -> bool {
    rest.get(i)
        .is_none_or(|c| c.is_ascii_whitespace() || *c == b'>' || *c == b'/')
}

fn memchr(c: u8, bytes: &[u8], from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .iter()
        .position(|&b| b == c)
        .map(|i| i + from)
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| i + from)
}

fn find_ci(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    let mut at = from;
    while let Some(lt) = memchr(b'<', bytes, at) {
        if bytes
            .get(lt..lt + needle.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(needle))
        {
            return Some(lt);
        }
        at = lt + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(html: &str, piece: usize) -> Vec<&str> {
        pieces(html, piece).into_iter().map(|r| &html[r]).collect()
    }

    #[test]
    fn a_small_page_is_one_piece() {
        assert_eq!(cut("<h1>a</h1><h2>b</h2>", 100), ["<h1>a</h1><h2>b</h2>"]);
    }

    #[test]
    fn cuts_fall_before_headings_and_cover_the_page() {
        let html = "<html><head><title>t</title></head><body><h2>one</h2><p>aaaa</p>\
                    <H2 class=x>two</H2><p>bbbb</p><h3>three</h3><p>cccc</p></body></html>";
        let parts = cut(html, 20);
        assert_eq!(parts.concat(), html);
        assert!(parts.len() >= 3, "{parts:?}");
        for p in &parts[1..] {
            assert!(p.to_ascii_lowercase().starts_with("<h"), "{p}");
        }
    }

    #[test]
    fn no_cut_inside_tables_comments_or_raw_text() {
        let html = "<body><p>start of the page</p>\
            <table><tr><td><h2>in a table</h2></td></tr></table>\
            <!-- <h2>in a comment</h2> -->\
            <script>let s = '<h2>in a script</h2>';</script>\
            <PRE><h2>in a pre</h2></PRE>\
            <header><hgroup>not a heading</hgroup></header>\
            <h2>outside</h2><p>end</p></body>";
        let parts = cut(html, 10);
        assert_eq!(parts.concat(), html);
        assert_eq!(parts.len(), 2, "{parts:?}");
        assert!(parts[1].starts_with("<h2>outside"), "{parts:?}");
    }

    #[test]
    fn a_page_without_headings_is_cut_before_paragraphs_and_a_broken_one_stays_whole() {
        let html = "<p>one one one</p><p>two two two</p><p>three three</p>";
        let parts = cut(html, 5);
        assert_eq!(parts.concat(), html);
        assert!(parts.len() > 1 && parts[1..].iter().all(|p| p.starts_with("<p>")));
        let open_comment = "<p>before</p><!-- never closed <h2>x</h2><p>y</p>";
        assert_eq!(
            cut(open_comment, 5),
            ["<p>before</p><!-- never closed <h2>x</h2><p>y</p>"]
        );
    }
}
