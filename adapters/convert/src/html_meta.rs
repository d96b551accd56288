//! A page's `<meta name=… content=…>` fields, for the `meta` filter: the
//! author, keywords and other fields the page declares about itself.
//! Fields that steer browsers and crawlers (`viewport`, `robots`, …) say
//! nothing about the document and are left out.

/// How far into a page `<meta>` tags are looked for: they sit in the head.
const HEAD_BYTES: usize = 256 * 1024;

/// Names (or name prefixes, ending in `-` or `:`) of fields for machines.
const TECHNICAL: [&str; 15] = [
    "viewport",
    "robots",
    "googlebot",
    "referrer",
    "theme-color",
    "color-scheme",
    "format-detection",
    "generator",
    "application-name",
    "msapplication-",
    "apple-",
    "google-",
    "twitter:",
    "og:",
    "fb:",
];

/// `(name, content)` of every document-describing `<meta>` in the head,
/// the content as written (character references not yet decoded).
pub(crate) fn fields(html: &str) -> Vec<(String, String)> {
    let mut end = html.len().min(HEAD_BYTES);
    while !html.is_char_boundary(end) {
        end -= 1;
    }
    let head = &html[..end];
    let head = match find_ci(head, "<body") {
        Some(at) => &head[..at],
        None => head,
    };
    let mut out = Vec::new();
    let mut rest = head;
    while let Some(at) = find_ci(rest, "<meta") {
        rest = &rest[at + 5..];
        let close = tag_end(rest);
        let attrs = attributes(&rest[..close]);
        rest = &rest[close..];
        let get = |key: &str| {
            attrs
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .map(|(_, v)| v.as_str())
        };
        if let (Some(name), Some(content)) = (get("name"), get("content")) {
            let lower = name.trim().to_ascii_lowercase();
            let technical = TECHNICAL.iter().any(|t| {
                if t.ends_with('-') || t.ends_with(':') {
                    lower.starts_with(t)
                } else {
                    lower == *t
                }
            });
            if !technical {
                out.push((lower, content.to_string()));
            }
        }
    }
    out
}

/// Where a tag's inside ends: its first `>` outside a quoted value (a
/// quote opens one only right after `=`, as in `content="a > b"`).
fn tag_end(rest: &str) -> usize {
    let mut quote = None;
    let mut after_equals = false;
    for (at, c) in rest.char_indices() {
        match (quote, c) {
            (None, '>') => return at,
            (None, '"' | '\'') if after_equals => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        if !c.is_whitespace() {
            after_equals = quote.is_none() && c == '=';
        }
    }
    rest.len()
}

fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    hay.as_bytes()
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// `key=value` pairs of one tag's inside: values quoted with `"` or `'`,
/// or bare up to whitespace.
fn attributes(tag: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = tag.trim_start_matches('/');
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
        if rest.is_empty() {
            break;
        }
        let key_end = rest
            .find(|c: char| c.is_whitespace() || c == '=' || c == '/')
            .unwrap_or(rest.len());
        let key = &rest[..key_end];
        rest = rest[key_end..].trim_start();
        let Some(after_eq) = rest.strip_prefix('=') else {
            if key.is_empty() {
                rest = &rest[rest.chars().next().map_or(0, char::len_utf8)..];
            }
            continue;
        };
        let after_eq = after_eq.trim_start();
        let (value, next) = match after_eq.chars().next() {
            Some(q @ ('"' | '\'')) => {
                let body = &after_eq[1..];
                let end = body.find(q).unwrap_or(body.len());
                (&body[..end], &body[(end + 1).min(body.len())..])
            }
            _ => {
                let end = after_eq.find(char::is_whitespace).unwrap_or(after_eq.len());
                (&after_eq[..end], &after_eq[end..])
            }
        };
        out.push((key.to_string(), value.to_string()));
        rest = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_fields_are_read_and_browser_fields_left_out() {
        let html = r#"<html><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width">
            <META NAME=Author CONTENT='Ada &amp; Co'>
            <meta content="storage, backup" name="keywords"/>
            <meta property="og:title" content="x">
            </head><body><meta name="author" content="in the body"></body></html>"#;
        assert_eq!(
            fields(html),
            vec![
                ("author".to_string(), "Ada &amp; Co".to_string()),
                ("keywords".to_string(), "storage, backup".to_string()),
            ]
        );
    }

    #[test]
    fn a_quoted_greater_than_sign_does_not_end_the_tag() {
        let html = r#"<meta name="description" content="costs > benefits, isn't it"><meta name=author content=Ada>"#;
        assert_eq!(
            fields(html),
            vec![
                (
                    "description".to_string(),
                    "costs > benefits, isn't it".to_string()
                ),
                ("author".to_string(), "Ada".to_string()),
            ]
        );
    }

    #[test]
    fn broken_tags_end_without_a_panic() {
        for html in [
            "<meta name=",
            "<meta name='a content=",
            "<meta =x",
            "<meta name=\"é\" content=é",
        ] {
            let _ = fields(html);
        }
    }
}
