//! Text that extraction got wrong: glyphs without a Unicode mapping
//! (replacement and private-use characters), and the interleaved pattern
//! some PDFs print for emphasis (`b’’иb’’b’’мb’’b’’яb’’`, a filler around
//! every letter). The interleaved form can be undone; the rest is only
//! reported, and never becomes a heading's anchor.

use std::borrow::Cow;
use std::collections::HashMap;

/// Share of a text's visible characters that, unmapped, make it unreadable.
const JUNK_SHARE: f64 = 0.3;
/// How often a filler must repeat in a word, and how much of it it must
/// cover, to be a filler and not a word's own letters.
const FILLER_REPEATS: usize = 3;
const FILLER_SHARE: f64 = 0.6;

/// Where a text's characters came from, which decides what a private-use
/// character means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Glyphs {
    /// Drawn with fonts (a PDF): a private-use character is a glyph the
    /// font gave no Unicode meaning.
    FromFonts,
    /// Typed (text, HTML, office files): a private-use character is an
    /// icon font's symbol (Sphinx's link icon U+F0C1), not damage.
    Typed,
}

fn is_junk(c: char, glyphs: Glyphs) -> bool {
    let private = ('\u{e000}'..='\u{f8ff}').contains(&c) || c >= '\u{f0000}';
    c == '\u{fffd}'
        || (private && glyphs == Glyphs::FromFonts)
        || (c.is_control() && !c.is_whitespace())
}

/// Longer runs without a space are not words a filler was printed around
/// (a hash, a data URI, a minified line): they are left as they are, and
/// a hostile one costs no more than its reading.
const MAX_WORD_CHARS: usize = 512;

/// The three characters repeated around a word's letters, when the word is
/// made of them: mixed letter and non-letter, at least three times, most of
/// the word. One pass over the word's windows (the first of equally
/// frequent ones wins).
fn filler(word: &str) -> Option<String> {
    let chars: Vec<char> = word.chars().take(MAX_WORD_CHARS + 1).collect();
    if chars.len() < FILLER_REPEATS * 3 || chars.len() > MAX_WORD_CHARS {
        return None;
    }
    // window -> (occurrences, first position)
    let mut counts: HashMap<[char; 3], (usize, usize)> = HashMap::new();
    for (at, w) in chars.windows(3).enumerate() {
        let mixed = w.iter().any(|c| c.is_alphanumeric()) && w.iter().any(|c| !c.is_alphanumeric());
        if mixed {
            counts.entry([w[0], w[1], w[2]]).or_insert((0, at)).0 += 1;
        }
    }
    let (w, (count, _)) = counts
        .into_iter()
        .max_by_key(|(_, (n, first))| (*n, std::cmp::Reverse(*first)))?;
    let covered = count * 3;
    if count < FILLER_REPEATS || (covered as f64) < FILLER_SHARE * chars.len() as f64 {
        return None;
    }
    printed_around_letters(&chars, &w).then(|| w.iter().collect())
}

/// Whether the filler was printed around single letters, on both sides of
/// each (`b’’иb’’b’’мb’’`: the filler comes twice in a row between
/// letters): cut at the filler, the word falls into pieces that are mostly
/// one letter each (`и`, `м`), two at least. ASCII art (`o--o--O`),
/// `G-W-W-W-B` and addresses (`4.4.4.4`) are not that.
fn printed_around_letters(chars: &[char], filler: &[char; 3]) -> bool {
    let word: String = chars.iter().collect();
    let filler: String = filler.iter().collect();
    if !word.contains(&filler.repeat(2)) {
        return false;
    }
    let pieces: Vec<&str> = word.split(&filler).filter(|p| !p.is_empty()).collect();
    let letters = pieces
        .iter()
        .filter(|p| {
            let mut c = p.chars();
            c.next().is_some_and(char::is_alphabetic) && c.next().is_none()
        })
        .count();
    letters >= 2 && 2 * letters >= pieces.len()
}

/// The line with every interleaved word reduced to its letters
/// (`b’’иb’’b’’мb’’b’’яb’’` → `имя`); borrowed when there is none.
pub fn repair_interleaved(line: &str) -> Cow<'_, str> {
    if !line.split_whitespace().any(|w| filler(w).is_some()) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while !rest.is_empty() {
        let space = rest.len() - rest.trim_start().len();
        out.push_str(&rest[..space]);
        rest = &rest[space..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        match filler(word) {
            Some(f) => out.push_str(&word.replace(&f, "")),
            None => out.push_str(word),
        }
        rest = &rest[end..];
    }
    Cow::Owned(out)
}

/// Whether a line reads as badly encoded: mostly characters no font map
/// gave meaning, or interleaved words.
pub fn is_unreadable(text: &str, glyphs: Glyphs) -> bool {
    // Counted, not collected: every line of every document passes here.
    let (mut visible, mut junk) = (0usize, 0usize);
    for c in text.chars().filter(|c| !c.is_whitespace()) {
        visible += 1;
        junk += usize::from(is_junk(c, glyphs));
    }
    if visible == 0 {
        return false;
    }
    if junk as f64 >= JUNK_SHARE * visible as f64 {
        return true;
    }
    let interleaved: usize = text
        .split_whitespace()
        .filter(|w| filler(w).is_some())
        .map(|w| w.chars().count())
        .sum();
    interleaved as f64 >= 0.5 * visible as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_words_are_reduced_to_their_letters() {
        assert_eq!(
            repair_interleaved(
                "apt-mark hold b’’иb’’b’’мb’’b’’яb’’_b’’пb’’b’’аb’’b’’кb’’b’’еb’’b’’тb’’b’’аb’’"
            ),
            "apt-mark hold имя_пакета"
        );
        assert!(is_unreadable(
            "b’’кb’’b’’уb’’b’’дb’’b’’аb’’",
            Glyphs::FromFonts
        ));
        assert!(!is_unreadable(
            &repair_interleaved("b’’кb’’b’’уb’’b’’дb’’b’’аb’’"),
            Glyphs::FromFonts
        ));
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for text in [
            "Настройка сети: ifupdown и systemd-networkd",
            "see http://example.com/a/b/c?x=1&y=2",
            "0x7f7f7f7f 1.1.1.1 a-b-c-d-e-f ----------- ...........",
            "naïve café déjà-vu",
            "o--o--O--o--o--o <-- origin",
            "G-W-W-W-B",
            "ping '4.4.4.4' and 8.8.8.8",
            "",
        ] {
            assert_eq!(repair_interleaved(text), text);
            assert!(!is_unreadable(text, Glyphs::FromFonts), "{text}");
        }
    }

    #[test]
    fn an_icon_in_typed_text_is_no_damage() {
        let heading = "\u{f0c1}";
        assert!(!is_unreadable(heading, Glyphs::Typed));
        assert!(is_unreadable(heading, Glyphs::FromFonts));
    }

    /// A megabyte without a space (a data URI, a hash dump) is read once,
    /// not once per window, and left as it is.
    #[test]
    fn a_long_run_without_spaces_is_left_alone() {
        let run = "a’’".repeat(400_000);
        assert_eq!(repair_interleaved(&run), run.as_str());
        assert!(!is_unreadable(&run, Glyphs::FromFonts));
    }

    #[test]
    fn unmapped_glyphs_make_a_line_unreadable() {
        assert!(is_unreadable("\u{fffd}\u{fffd}\u{fffd} ab", Glyphs::Typed));
        assert!(is_unreadable(
            "\u{e001}\u{e002}\u{e003}\u{e004}",
            Glyphs::FromFonts
        ));
        assert!(!is_unreadable("Chapter 3 \u{fffd}", Glyphs::Typed));
    }
}
