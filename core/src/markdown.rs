//! Line-level Markdown facts shared by the chunker, titles and reconstruction.
//!
//! Hand-written matchers instead of a regex engine: core carries no
//! dependencies, and each rule here is a few lines.

/// Per-line flags: `true` when the line is inside a fenced code block,
/// fence marker lines included.
pub fn code_lines(lines: &[&str]) -> Vec<bool> {
    let mut out = Vec::with_capacity(lines.len());
    let mut open: Option<(char, usize)> = None;
    for line in lines {
        let run = fence_run(line);
        match (open, run) {
            (None, Some(r)) => {
                open = Some(r);
                out.push(true);
            }
            (Some((ch, len)), Some((rch, rlen))) if rch == ch && rlen >= len => {
                open = None;
                out.push(true);
            }
            (Some(_), _) => out.push(true),
            (None, None) => out.push(false),
        }
    }
    out
}

/// The fence character and run length when the left-trimmed line starts with
/// at least three backticks or tildes.
pub fn fence_run(line: &str) -> Option<(char, usize)> {
    let t = line.trim_start();
    let ch = t.chars().next()?;
    if ch != '`' && ch != '~' {
        return None;
    }
    let len = t.chars().take_while(|&c| c == ch).count();
    (len >= 3).then_some((ch, len))
}

/// An ATX heading `^#{1,6}[ \t]+text`: its level and raw text after the marks.
pub fn atx_heading(line: &str) -> Option<(u8, &str)> {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &line[hashes..];
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let text = rest.trim_matches([' ', '\t']);
    (!text.trim().is_empty()).then_some((hashes as u8, text))
}

/// A line that starts a heading for the block splitter (`^#{1,6}\s`).
pub(crate) fn starts_heading(line: &str) -> bool {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&hashes) && line[hashes..].starts_with(char::is_whitespace)
}

/// A table row `^\s*\|.*\|\s*$`.
pub(crate) fn is_table_row(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 2 && t.starts_with('|') && t.ends_with('|')
}

/// A GitHub table delimiter row such as `| --- | :-: |`.
pub(crate) fn is_delimiter_row(line: &str) -> bool {
    if !is_table_row(line) {
        return false;
    }
    let t = line.trim();
    let inner = &t[1..t.len() - 1];
    inner.split('|').all(|cell| {
        let c = cell.trim();
        let c = c.strip_prefix(':').unwrap_or(c);
        let c = c.strip_suffix(':').unwrap_or(c);
        !c.is_empty() && c.bytes().all(|b| b == b'-')
    })
}

/// A slide marker `<!-- Slide number: N -->` (whitespace tolerant).
pub(crate) fn slide_marker(line: &str) -> Option<u64> {
    let t = line.trim();
    let inner = t.strip_prefix("<!--")?.strip_suffix("-->")?.trim();
    let num = inner.strip_prefix("Slide number:")?.trim();
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    num.parse().ok()
}

/// Seconds of a transcript timestamp line: optional indentation,
/// optional `**speaker**`, then `[H]H:MM:SS` or `[M]M:SS`, then only blanks.
pub(crate) fn timestamp_seconds(line: &str) -> Option<u64> {
    let mut rest = line.trim_start_matches([' ', '\t']);
    if let Some(after) = rest.strip_prefix("**") {
        let end = after.find("**")?;
        let name = &after[..end];
        let n = name.chars().count();
        if n == 0 || n > 80 || name.contains('\n') {
            return None;
        }
        rest = after[end + 2..].trim_start_matches([' ', '\t']);
    }
    let stamp = rest.trim_end_matches([' ', '\t']);
    let parts: Vec<&str> = stamp.split(':').collect();
    let digits = |s: &str, min: usize, max: usize| {
        (min..=max).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
    };
    let num = |s: &str| s.parse::<u64>().ok();
    match parts.as_slice() {
        [m, s] if digits(m, 1, 2) && digits(s, 2, 2) => Some(num(m)? * 60 + num(s)?),
        [h, m, s] if digits(h, 1, 2) && digits(m, 1, 2) && digits(s, 2, 2) => {
            Some(num(h)? * 3600 + num(m)? * 60 + num(s)?)
        }
        _ => None,
    }
}

/// An ordered list item's marker: digits with dots (`4.`, `2.1.`) or one
/// letter (`b.`), ending in `.` or `)`, escaped or not (`4\.`: a converter
/// of plain text escapes what Markdown would read as a list).
pub fn is_list_marker(s: &str) -> bool {
    let Some(body) = s.strip_suffix(['.', ')']) else {
        return false;
    };
    let body = body.strip_suffix('\\').unwrap_or(body);
    let numbered = !body.is_empty()
        && body.len() <= 12
        && body
            .split('.')
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let lettered = body.chars().count() == 1 && body.chars().all(char::is_alphabetic);
    numbered || lettered
}

/// Python's `\w`: letters, digits and the underscore.
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Splits `text` after each sentence end (`.`, `!`, `?`, `…` followed by
/// whitespace). Pieces keep their own text without the separating whitespace.
/// An ordered list's marker at the start (`4.`, `2.1.`, `b.`) ends no
/// sentence: the step and its number stay one piece.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<char> = None;
    let mut iter = text.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        if c.is_whitespace()
            && matches!(prev, Some('.' | '!' | '?' | '…'))
            && !(start == 0 && is_list_marker(text[..i].trim()))
        {
            let piece = text[start..i].trim();
            if !piece.is_empty() {
                out.push(piece);
            }
            let mut next = i + c.len_utf8();
            while let Some(&(j, d)) = iter.peek() {
                if !d.is_whitespace() {
                    break;
                }
                next = j + d.len_utf8();
                iter.next();
            }
            start = next;
            prev = None;
            continue;
        }
        prev = Some(c);
    }
    let piece = text[start..].trim();
    if !piece.is_empty() {
        out.push(piece);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_open_and_close_with_runs_at_least_as_long() {
        let lines = ["````", "```", "code", "````", "after"];
        assert_eq!(code_lines(&lines), [true, true, true, true, false]);
        let tildes = ["~~~", "x", "```", "~~~~", "y"];
        assert_eq!(code_lines(&tildes), [true, true, true, true, false]);
    }

    #[test]
    fn headings_need_space_and_no_indent() {
        assert_eq!(atx_heading("## Title"), Some((2, "Title")));
        assert_eq!(atx_heading("#Title"), None);
        assert_eq!(atx_heading(" # Title"), None);
        assert_eq!(atx_heading("####### seven"), None);
        assert_eq!(atx_heading("#   "), None);
    }

    #[test]
    fn table_rows_and_delimiters() {
        assert!(is_table_row(" | a | b | "));
        assert!(!is_table_row("| a"));
        assert!(is_delimiter_row("| --- | :-: |"));
        assert!(is_delimiter_row("|---|"));
        assert!(!is_delimiter_row("| a | --- |"));
    }

    #[test]
    fn timestamps() {
        assert_eq!(timestamp_seconds("0:02"), Some(2));
        assert_eq!(timestamp_seconds("61:00"), Some(3660));
        assert_eq!(timestamp_seconds("1:02:03"), Some(3723));
        assert_eq!(timestamp_seconds("**Marx, Dana** 00:02"), Some(2));
        assert_eq!(timestamp_seconds("  00:06  "), Some(6));
        assert_eq!(timestamp_seconds("в 12:30"), None);
        assert_eq!(timestamp_seconds("1:2"), None);
        assert_eq!(timestamp_seconds("123:00"), None);
    }

    #[test]
    fn slide_markers() {
        assert_eq!(slide_marker("<!-- Slide number: 12 -->"), Some(12));
        assert_eq!(slide_marker("<!--Slide number:3-->"), Some(3));
        assert_eq!(slide_marker("<!-- Slide: 3 -->"), None);
    }

    #[test]
    fn sentence_split() {
        assert_eq!(
            sentences("More text here. Second sentence! Third… end"),
            ["More text here.", "Second sentence!", "Third…", "end"]
        );
        assert_eq!(sentences("v1.2 is out"), ["v1.2 is out"]);
        // A list item keeps its number; a later number still ends one.
        assert_eq!(
            sentences("4. Restart the server. Then wait."),
            ["4. Restart the server.", "Then wait."]
        );
        assert_eq!(sentences("2.1. Install it."), ["2.1. Install it."]);
        assert_eq!(sentences("3\\. Escaped. Next"), ["3\\. Escaped.", "Next"]);
        assert_eq!(sentences("b. Open it. Close"), ["b. Open it.", "Close"]);
        assert_eq!(
            sentences("It is step 4. Next comes 5."),
            ["It is step 4.", "Next comes 5."]
        );
    }
}
