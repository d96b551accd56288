//! Text from a source with no Markdown syntax of its own (a PDF's text
//! layer): what Markdown would read as structure at a line's start is
//! escaped, so a code comment `# DO NOT EDIT` stays text and does not become
//! a heading, nor a line starting with `|` a table row.

use std::borrow::Cow;

/// `line` with a backslash before a line-start `#`, `>`, `|`, fence,
/// bullet (`-`, `+`, `*` and a space) or ordered-list marker (`4.`, `4)`).
pub(crate) fn escape_line_start(line: &str) -> Cow<'_, str> {
    let body = line.trim_start_matches(' ');
    let indent = line.len() - body.len();
    if indent > 3 {
        return Cow::Borrowed(line);
    }
    let at = match body.as_bytes() {
        [b'#' | b'>' | b'|', ..] => Some(0),
        [b'`', b'`', b'`', ..] | [b'~', b'~', b'~', ..] => Some(0),
        [b'-' | b'+' | b'*', b' ' | b'\t', ..] => Some(0),
        [b'-' | b'+' | b'*'] => Some(0),
        _ => ordered_marker(body),
    };
    match at {
        Some(at) => {
            let mut out = String::with_capacity(line.len() + 1);
            out.push_str(&line[..indent + at]);
            out.push('\\');
            out.push_str(&line[indent + at..]);
            Cow::Owned(out)
        }
        None => Cow::Borrowed(line),
    }
}

/// Where the `.` or `)` of a leading `1.`…`999999999.` marker followed by a
/// space (or the line's end) is.
fn ordered_marker(body: &str) -> Option<usize> {
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let rest = &body.as_bytes()[digits..];
    match rest {
        [b'.' | b')'] | [b'.' | b')', b' ' | b'\t', ..] => Some(digits),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::escape_line_start as e;

    #[test]
    fn structure_at_a_line_start_is_escaped() {
        assert_eq!(e("# DO NOT EDIT"), "\\# DO NOT EDIT");
        assert_eq!(e("  > quoted"), "  \\> quoted");
        assert_eq!(e("| a | b |"), "\\| a | b |");
        assert_eq!(e("```rust"), "\\```rust");
        assert_eq!(e("- item"), "\\- item");
        assert_eq!(e("* item"), "\\* item");
        assert_eq!(e("4. Restart it"), "4\\. Restart it");
        assert_eq!(e("12) twelve"), "12\\) twelve");
    }

    #[test]
    fn text_stays_as_it_is() {
        for line in [
            "Plain text.",
            "-1 is negative",
            "3.14 is pi",
            "2026 was a year",
            "*emphasis*",
            "    # indented code",
            "C# is a language",
        ] {
            assert_eq!(e(line), line);
        }
    }
}
