//! HTML → Markdown with htmd; script, style, head and navigation chrome are
//! skipped (htmd would keep their text otherwise); `<title>` is the metadata title.

use minirag_core::ports::{ConvertError, Converted};

pub fn convert(html: &str) -> Result<Converted, ConvertError> {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "head", "nav", "noscript", "template", "iframe", "svg", "footer",
        ])
        // Images are reduced to their alt text: a link to a picture the
        // index cannot show is noise in a chunk.
        .add_handler(
            vec!["img"],
            |_: &dyn htmd::element_handler::Handlers, img: htmd::Element| {
                img.attrs
                    .iter()
                    .find(|a| &*a.name.local == "alt")
                    .map(|a| a.value.trim().to_string())
                    .filter(|alt| !alt.is_empty())
                    .map(Into::into)
            },
        )
        .build();
    let markdown =
        converter
            .convert(&promote_header_rows(html))
            .map_err(|e| ConvertError::Malformed {
                name: "HTML".into(),
                reason: e.to_string(),
            })?;
    Ok(Converted {
        markdown,
        metadata_title: title(html),
    })
}

/// htmd writes a pipe table only when the table has `<th>` cells; office
/// exports (LibreOffice's EPUB and HTML among them) mark none. As the sheet
/// converters do, the first row of such a table becomes its header.
fn promote_header_rows(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len());
    let mut done = 0;
    let mut from = 0;
    while let Some(open) = lower[from..].find("<table").map(|i| i + from) {
        let Some(end) = lower[open + 6..].find("</table").map(|i| i + open + 6) else {
            break;
        };
        from = end;
        let table = &lower[open..end];
        if table.contains("<th") || table[6..].contains("<table") {
            continue;
        }
        let Some(row) = table.find("<tr") else {
            continue;
        };
        let row_end = table[row..].find("</tr").map_or(table.len(), |i| i + row);
        let (row, row_end) = (open + row, open + row_end);
        out.push_str(&html[done..row]);
        let mut i = row;
        while i < row_end {
            let rest = &lower[i..row_end];
            if rest.starts_with("<td") || rest.starts_with("</td") {
                let slash = usize::from(rest.starts_with("</"));
                out.push_str(&html[i..i + 1 + slash]);
                out.push_str("th");
                i += 3 + slash;
            } else {
                let ch = html[i..].chars().next().unwrap_or(' ');
                out.push(ch);
                i += ch.len_utf8();
            }
        }
        done = row_end;
    }
    out.push_str(&html[done..]);
    out
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
    fn a_table_without_header_cells_gets_its_first_row_as_header() {
        let html = "<table><tbody><tr><td><p class=\"p\"><span>Документ</span></p></td><td><p>Срок</p></td></tr>\
                    <tr><td><p>ТОРГ-12</p></td><td><p>5</p></td></tr></tbody></table><p>after</p>";
        let md = convert(html).unwrap().markdown;
        assert_eq!(
            md, "| Документ | Срок |\n| -------- | ---- |\n| ТОРГ-12  | 5    |\n\nafter",
            "{md}"
        );
    }

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
