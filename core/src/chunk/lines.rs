//! Which Markdown lines each unit came from. A section's body lines are
//! found among the document's lines (in order, a little ahead of the last
//! one found), and a unit's words among its section's body. The chunker
//! rearranges text (repeated table headers, sentence pieces, glued
//! blocks), so this finds rather than counts; a line it cannot find is
//! unknown, never guessed.

use super::Section;
use crate::location::{word_count, At, Mark, Place};
use crate::markdown::{is_delimiter_row, is_word_char, slide_marker};

/// A body line not found among the Markdown lines.
pub(crate) const UNKNOWN: u32 = u32::MAX;
/// Markdown lines searched ahead of the last one found.
const WINDOW: usize = 256;
/// Words a unit is recognised by at its start and at its end.
const KEY_WORDS: usize = 4;

fn worth_finding(line: &str) -> bool {
    line.chars().any(is_word_char) && !is_delimiter_row(line)
}

/// Sets each section's `line_map` (the Markdown line of every body line)
/// and `word_offsets` (the words before it on that line: a sentence piece
/// of a longer line starts inside it).
pub(crate) fn map_sections(markdown: &str, sections: &mut [Section]) {
    let lines = Lines::of(markdown);
    let mut cursor = 0usize;
    for section in sections {
        let body: Vec<&str> = section.body.split('\n').map(str::trim).collect();
        // A section whose only text is its heading is that heading's line,
        // not a later line that happens to read the same.
        let heading = section.heading_is_body;
        let found: Vec<(u32, u32)> = body
            .iter()
            .map(|l| find(&lines, &mut cursor, l, heading))
            .collect();
        let mut map: Vec<u32> = found.iter().map(|f| f.0).collect();
        fill_neighbours(&lines, &body, &mut map);
        section.word_offsets = found.iter().map(|f| f.1).collect();
        section.line_map = map;
    }
}

/// The document's lines by their starts (4 bytes a line, not a slice's 16:
/// a 90 MB file has millions), each read trimmed.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<u32>,
}

impl<'a> Lines<'a> {
    fn of(text: &'a str) -> Self {
        let mut starts = vec![0u32];
        starts.extend(text.match_indices('\n').map(|(i, _)| i as u32 + 1));
        Self { text, starts }
    }

    fn len(&self) -> usize {
        self.starts.len()
    }

    fn get(&self, i: usize) -> Option<&'a str> {
        let start = *self.starts.get(i)? as usize;
        let end = self
            .starts
            .get(i + 1)
            .map_or(self.text.len(), |e| *e as usize - 1);
        Some(self.text[start..end].trim())
    }
}

/// Lines too bare to search for (a closing fence, a delimiter row, a blank)
/// are placed beside a found neighbour when the Markdown has them there.
fn fill_neighbours(lines: &Lines<'_>, body: &[&str], map: &mut [u32]) {
    for i in 1..map.len() {
        let next = map[i - 1].wrapping_add(1);
        if map[i] == UNKNOWN && map[i - 1] != UNKNOWN && lines.get(next as usize) == Some(body[i]) {
            map[i] = next;
        }
    }
    for i in (0..map.len().saturating_sub(1)).rev() {
        let before = map[i + 1].wrapping_sub(1);
        if map[i] == UNKNOWN
            && map[i + 1] != UNKNOWN
            && map[i + 1] > 0
            && lines.get(before as usize) == Some(body[i])
        {
            map[i] = before;
        }
    }
}

/// The Markdown line `line` is, and the words before it there.
fn find(lines: &Lines<'_>, cursor: &mut usize, line: &str, heading: bool) -> (u32, u32) {
    if !worth_finding(line) {
        return (UNKNOWN, 0);
    }
    let end = (*cursor + WINDOW).min(lines.len());
    let at = |i: usize| lines.get(i).unwrap_or("");
    // A table row is only ever itself: neither a heading nor a sentence
    // piece (and a repeated header is not ahead, so not looked for twice).
    let prose = !line.starts_with('|');
    let exact = || (*cursor..end).find(|&i| at(i) == line);
    // A heading that is its section's only text, without its `#`s.
    let as_heading = || {
        prose
            .then(|| {
                (*cursor..end).find(|&i| {
                    at(i).starts_with('#') && at(i).trim_start_matches('#').trim() == line
                })
            })
            .flatten()
    };
    let hit = match heading {
        true => as_heading().or_else(exact),
        false => exact().or_else(as_heading),
    }
    // A piece of a longer line: a sentence the cap split off.
    .or_else(|| {
        (prose && line.len() >= 16)
            .then(|| (*cursor..end).find(|&i| at(i).contains(line)))
            .flatten()
    });
    match hit {
        Some(i) => {
            *cursor = i;
            // Only a sentence piece starts inside its line.
            let before = match at(i) == line {
                true => 0,
                false => at(i)
                    .find(line)
                    .filter(|p| *p > 0)
                    .map_or(0, |p| word_count(&at(i)[..p])),
            };
            (i as u32, before)
        }
        None => (UNKNOWN, 0),
    }
}

/// The slides a deck's Markdown marks (`<!-- Slide n -->` lines).
pub(crate) fn slide_places(markdown: &str) -> Vec<Place> {
    markdown
        .split('\n')
        .enumerate()
        .filter_map(|(i, l)| {
            slide_marker(l).map(|n| Place {
                line: i as u32,
                word: 0,
                mark: Mark::Slide(n as u32),
            })
        })
        .collect()
}

fn hash(word: &str) -> u64 {
    word.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// A word of a text: its hash, its line and its index on that line.
pub type Word = (u64, u32, u32);

/// The words of `text` (runs of word characters), each with its place.
pub fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    for (n, line) in text.split('\n').enumerate() {
        let on_line = line
            .split(|c: char| !is_word_char(c))
            .filter(|w| !w.is_empty());
        for (k, w) in on_line.enumerate() {
            out.push((hash(w), n as u32, k as u32));
        }
    }
    out
}

fn matches(hay: &[Word], at: usize, key: &[Word]) -> bool {
    hay.get(at..at + key.len())
        .is_some_and(|h| h.iter().zip(key).all(|(a, b)| a.0 == b.0))
}

/// Where in the section body a unit starts and ends (body line, word on
/// it), found from `cursor` on in the body's `body_words`; `skip` leading
/// lines of the unit body are not looked for (a repeated table header, a
/// split note).
pub(crate) fn unit_lines(
    body_words: &[Word],
    cursor: &mut usize,
    unit_body: &str,
    skip: usize,
) -> Option<(At, At)> {
    let mut own: std::borrow::Cow<'_, str> = match skip {
        0 => unit_body.into(),
        n => unit_body
            .split('\n')
            .skip(n)
            .collect::<Vec<_>>()
            .join("\n")
            .into(),
    };
    let mut unit = words(&own);
    if unit.is_empty() && skip > 0 {
        // Nothing but the skipped lines (a table with no rows): find those.
        own = unit_body.into();
        unit = words(&own);
    }
    if unit.is_empty() {
        return None;
    }
    // The packer may cut a long word at a unit's edge: a unit is recognised
    // by its first words, else by those after a cut first word, and ends at
    // its last words, else at those before a cut last word.
    let edge = usize::from(unit.len() > KEY_WORDS + 1);
    let k = unit.len().min(KEY_WORDS);
    // Units follow each other through the body: a unit is looked for a
    // little past the last one only, so a unit that cannot be found costs
    // no scan of a huge section.
    let reach = |from: usize| (from + 2 * unit.len() + 256).min(body_words.len());
    let found_start = (0..=edge).find_map(|cut| {
        let key = &unit[cut..cut + k];
        (*cursor..reach(*cursor))
            .find(|&s| matches(body_words, s, key))
            .map(|s| (s, cut))
    });
    let Some((start, cut)) = found_start else {
        // Passed over by its length, so the next unit is looked for after it.
        *cursor = (*cursor + unit.len()).min(body_words.len());
        return None;
    };
    let end = (0..=edge).find_map(|cut_end| {
        let tail = &unit[unit.len() - k - cut_end..unit.len() - cut_end];
        let expected = start + unit.len() - k - cut_end - cut;
        if matches(body_words, expected, tail) {
            return Some(expected);
        }
        (start..reach(start)).find(|&e| matches(body_words, e, tail))
    })?;
    *cursor = start + 1;
    // Lines with no word after the last word (a closing fence) are the
    // unit's too.
    let bare_tail = own
        .split('\n')
        .rev()
        .take_while(|l| !l.chars().any(is_word_char))
        .count() as u32;
    // A cut first word is the body's word before the key.
    let (first, last) = (
        &body_words[start.saturating_sub(cut)],
        &body_words[end + k - 1],
    );
    let last = match bare_tail {
        0 => At {
            line: last.1,
            word: last.2,
        },
        n => At {
            line: last.1 + n,
            word: u32::MAX,
        },
    };
    Some((
        At {
            line: first.1,
            word: first.2,
        },
        last,
    ))
}

/// A unit's body positions as Markdown positions, through the section's
/// maps; unknown lines at either end are passed over.
pub(crate) fn to_markdown(section: &Section, first: At, last: At) -> Option<(At, At)> {
    let known = |i: u32| {
        let line = section
            .line_map
            .get(i as usize)
            .copied()
            .filter(|l| *l != UNKNOWN)?;
        Some((
            line,
            section.word_offsets.get(i as usize).copied().unwrap_or(0),
        ))
    };
    let Some((a, a_line)) = (first.line..=last.line).find_map(|i| known(i).map(|k| (k, i))) else {
        // No line of the unit has a mark (a seeded title alone): it is
        // placed where the text it names begins, the next line with one.
        let (line, word) = (last.line..section.line_map.len() as u32).find_map(known)?;
        let at = At { line, word };
        return Some((at, at));
    };
    let (b, b_line) = (first.line..=last.line)
        .rev()
        .find_map(|i| known(i).map(|k| (k, i)))?;
    let start = At {
        line: a.0,
        word: a.1 + if a_line == first.line { first.word } else { 0 },
    };
    let end = At {
        line: b.0,
        word: if b_line == last.line {
            b.1.saturating_add(last.word)
        } else {
            u32::MAX
        },
    };
    Some((start, end.max(start)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(body: &str) -> Section {
        Section::plain(body.into())
    }

    #[test]
    fn body_lines_are_found_in_order_and_pieces_inside_their_line() {
        let md = "# T\n\nFirst paragraph here.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\nA long line. With a second sentence that the cap split off.";
        let mut s = [
            section("First paragraph here."),
            section("| a | b |\n|---|---|\n| 1 | 2 |"),
            section("| a | b |\n|---|---|\n| 3 | 4 |"),
            section("With a second sentence that the cap split off."),
        ];
        map_sections(md, &mut s);
        assert_eq!(s[0].line_map, [2]);
        assert_eq!(s[1].line_map, [4, 5, 6]);
        // The repeated header is not ahead of the cursor: unknown, not guessed.
        assert_eq!(s[2].line_map, [UNKNOWN, UNKNOWN, 7]);
        assert_eq!(s[3].line_map, [9]);
        // The piece starts after the first sentence's three words.
        assert_eq!(s[3].word_offsets, [3]);
    }

    #[test]
    fn units_are_found_by_their_first_and_last_words() {
        let body = "alpha beta gamma delta\nepsilon zeta eta theta\niota kappa lambda mu\nnu xi";
        let w = words(body);
        let mut cursor = 0;
        let at = |line, word| At { line, word };
        assert_eq!(
            unit_lines(&w, &mut cursor, "alpha beta gamma delta\nepsilon zeta", 0),
            Some((at(0, 0), at(1, 1)))
        );
        assert_eq!(
            unit_lines(
                &w,
                &mut cursor,
                "HEADER\neta theta iota kappa lambda mu nu xi",
                1
            ),
            Some((at(1, 2), at(3, 1)))
        );
        assert_eq!(unit_lines(&w, &mut cursor, "not in the body", 0), None);
        let mut s = section("x\ny\nz\nw");
        s.line_map = vec![UNKNOWN, 7, 9, UNKNOWN];
        s.word_offsets = vec![0, 3, 0, 0];
        assert_eq!(
            to_markdown(&s, at(0, 2), at(3, 1)),
            Some((at(7, 3), at(9, u32::MAX)))
        );
        assert_eq!(
            to_markdown(&s, at(1, 2), at(2, 1)),
            Some((at(7, 5), at(9, 1)))
        );
        s.line_map = vec![UNKNOWN; 4];
        assert_eq!(to_markdown(&s, at(0, 0), at(0, 0)), None);
        // A seeded title alone is placed at the first marked line after it.
        s.line_map = vec![UNKNOWN, UNKNOWN, 4, 5];
        assert_eq!(
            to_markdown(&s, at(0, 0), at(1, 0)),
            Some((at(4, 0), at(4, 0)))
        );
    }

    #[test]
    fn a_heading_only_section_is_its_headings_line_not_a_later_same_line() {
        // Found by the property test: the section "ёё" (its heading only)
        // once matched the code line "ёё" below.
        let md = "# ёё\n\n# a\n\n```text\nёё";
        let options = crate::chunk::ChunkOptions {
            budget: 16,
            title: Some("T"),
            counter: &crate::testing::WordPunctCounter,
        };
        let s =
            crate::chunk::section_markdown(md, options).with_places(crate::location::file_lines());
        let starts: Vec<u32> = crate::chunk::pack_sections(s, options)
            .chunks
            .iter()
            .filter_map(|c| c.location().and_then(|l| l.lines).map(|l| l.0))
            .collect();
        assert_eq!(starts.first(), Some(&1), "{starts:?}");
        assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
    }
}
