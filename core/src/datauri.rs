//! Data-URI image stripping: embedded base64 images are noise to both
//! the embedder and BM25, so `![alt](data:…)` outside fenced code becomes its
//! alt text.

use std::borrow::Cow;

use crate::markdown::code_lines;

/// Replaces every `![alt](data:…)` outside fenced code by its trimmed alt
/// text. If that would blank a non-blank document, the original is kept.
pub fn strip_data_uri_images(markdown: &str) -> Cow<'_, str> {
    // Borrowed when there is no data URI (nearly always): a big document is
    // not copied, nor lower-cased whole to look.
    let has_data_uri = markdown.match_indices("](").any(|(at, _)| {
        markdown.as_bytes()[at + 2..]
            .get(..5)
            .is_some_and(|b| b.eq_ignore_ascii_case(b"data:"))
    });
    if !has_data_uri {
        return Cow::Borrowed(markdown);
    }
    let lines: Vec<&str> = markdown.split('\n').collect();
    let code = code_lines(&lines);
    let stripped: Vec<String> = lines
        .iter()
        .zip(&code)
        .map(|(line, in_code)| {
            if *in_code {
                line.to_string()
            } else {
                strip_line(line)
            }
        })
        .collect();
    let out = stripped.join("\n");
    if out.trim().is_empty() && !markdown.trim().is_empty() {
        Cow::Borrowed(markdown)
    } else {
        Cow::Owned(out)
    }
}

fn strip_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("![") {
        let after = &rest[start + 2..];
        let image = after.find(']').and_then(|close| {
            let alt = &after[..close];
            let target = &after[close + 1..];
            let is_data = target.len() >= 6 && target[..6].eq_ignore_ascii_case("(data:");
            let end = if is_data { target.find(')') } else { None }?;
            Some((alt, close + 1 + end + 1))
        });
        match image {
            Some((alt, len)) => {
                out.push_str(&rest[..start]);
                out.push_str(alt.trim());
                rest = &after[len..];
            }
            None => {
                out.push_str(&rest[..start + 2]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_becomes_alt_text() {
        let md =
            "Intro paragraph.\n\n![Схема обмена](data:image/png;base64,iVBORw0KGgo=)\n\nOutro.";
        assert_eq!(
            strip_data_uri_images(md),
            "Intro paragraph.\n\nСхема обмена\n\nOutro."
        );
    }

    #[test]
    fn empty_alt_leaves_nothing() {
        let md = "Intro paragraph.\n\n![](data:image/png;base64,AAAA)\n\nOutro.";
        assert_eq!(strip_data_uri_images(md), "Intro paragraph.\n\n\n\nOutro.");
    }

    #[test]
    fn links_to_paths_and_http_stay() {
        let md = "![a](img/a.png) and ![b](https://x.io/b.png)";
        assert_eq!(strip_data_uri_images(md), md);
    }

    #[test]
    fn code_is_untouched() {
        let md = "```\n![x](data:image/png;base64,AAAA)\n```\n![y](data:image/png;base64,AAAA)";
        assert_eq!(
            strip_data_uri_images(md),
            "```\n![x](data:image/png;base64,AAAA)\n```\ny"
        );
    }

    #[test]
    fn a_document_that_is_only_an_empty_image_is_kept() {
        let md = "![](data:image/png;base64,AAAA)";
        assert_eq!(strip_data_uri_images(md), md);
    }
}
