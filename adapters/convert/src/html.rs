//! HTML → Markdown with htmd; script, style, head and navigation chrome are
//! skipped (htmd would keep their text otherwise); `<title>` is the metadata title.

use minirag_core::ports::{ConvertError, Converted};

pub fn convert(html: &str) -> Result<Converted, ConvertError> {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "head", "nav", "noscript", "template", "iframe", "svg", "footer",
        ])
        .build();
    let markdown = converter
        .convert(html)
        .map_err(|e| ConvertError::Malformed {
            name: "HTML".into(),
            reason: e.to_string(),
        })?;
    Ok(Converted {
        markdown,
        metadata_title: title(html),
    })
}

/// Text of the first `<title>` element, entities decoded for the common cases.
fn title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let raw = html[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let text = raw
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'");
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_tables_and_title_survive_chrome_does_not() {
        let html = "<html><head><title>Guide &amp; Notes</title><style>p{}</style></head><body>\
            <nav>Home | About</nav><h1>Install</h1><p>Run it.</p><script>evil()</script>\
            <table><tr><th>os</th><th>cmd</th></tr><tr><td>debian</td><td>apt</td></tr></table></body></html>";
        let c = convert(html).unwrap();
        assert_eq!(c.metadata_title.as_deref(), Some("Guide & Notes"));
        assert!(c.markdown.contains("# Install"), "{}", c.markdown);
        let table: Vec<&str> = c.markdown.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(table.len(), 3, "{}", c.markdown);
        assert!(table[0].contains("os") && table[0].contains("cmd") && table[2].contains("debian"));
        assert!(
            !c.markdown.contains("evil")
                && !c.markdown.contains("Home | About")
                && !c.markdown.contains("p{}")
        );
    }
}
