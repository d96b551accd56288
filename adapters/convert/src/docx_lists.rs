//! Word numbering (`word/numbering.xml`): which paragraphs are list items,
//! at what depth, and with what marker. Bullets become `-`, decimal items
//! `N.` with Word's own count (restarts included), lettered and roman items
//! `-` followed by their label (`a.`, `iv.`), since Markdown numbers only
//! with digits. Nesting is four spaces a level.

use std::collections::HashMap;

use minirag_core::ports::ConvertError;

use crate::office::{nodes, Node};

/// Deepest level Word defines (`w:ilvl` 0–8).
const MAX_LEVEL: u32 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Bullet,
    Decimal,
    LowerLetter,
    UpperLetter,
    LowerRoman,
    UpperRoman,
    /// `none`: a list level without a visible marker.
    Plain,
}

impl Format {
    fn of(value: &str) -> Self {
        match value {
            "bullet" => Self::Bullet,
            "lowerLetter" => Self::LowerLetter,
            "upperLetter" => Self::UpperLetter,
            "lowerRoman" => Self::LowerRoman,
            "upperRoman" => Self::UpperRoman,
            "none" => Self::Plain,
            // decimal, decimalZero, ordinal, cardinalText, …: counted.
            _ => Self::Decimal,
        }
    }
}

/// The numbering definitions of one document.
#[derive(Debug, Default)]
pub(crate) struct Numbering {
    /// numId → abstractNumId.
    nums: HashMap<String, String>,
    /// (abstractNumId, level) → (format, start).
    levels: HashMap<(String, u32), (Format, u32)>,
    /// (numId, level) → start override (a restart).
    starts: HashMap<(String, u32), u32>,
}

fn val(attrs: &[(String, String)], key: &str) -> Option<String> {
    attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
}

fn number(attrs: &[(String, String)], key: &str) -> Option<u32> {
    val(attrs, key).and_then(|v| v.parse().ok())
}

impl Numbering {
    pub(crate) fn parse(name: &str, xml: &str) -> Result<Self, ConvertError> {
        let mut n = Self::default();
        let mut abstract_id: Option<String> = None;
        let mut num_id: Option<String> = None;
        let mut level: Option<u32> = None;
        let mut override_level: Option<u32> = None;
        let (mut format, mut start) = (Format::Decimal, 1);
        for node in nodes(name, xml) {
            match node? {
                Node::Open(tag, a) => match tag.as_str() {
                    "w:abstractNum" => abstract_id = val(&a, "w:abstractNumId"),
                    "w:num" => num_id = val(&a, "w:numId"),
                    "w:abstractNumId" => {
                        if let (Some(id), Some(abs)) = (&num_id, val(&a, "w:val")) {
                            n.nums.insert(id.clone(), abs);
                        }
                    }
                    "w:lvlOverride" => override_level = number(&a, "w:ilvl"),
                    "w:startOverride" => {
                        if let (Some(id), Some(l), Some(s)) =
                            (&num_id, override_level, number(&a, "w:val"))
                        {
                            n.starts.insert((id.clone(), l), s);
                        }
                    }
                    "w:lvl" if num_id.is_none() => {
                        level = number(&a, "w:ilvl").filter(|l| *l <= MAX_LEVEL);
                        (format, start) = (Format::Decimal, 1);
                    }
                    "w:start" if num_id.is_none() => start = number(&a, "w:val").unwrap_or(1),
                    "w:numFmt" if num_id.is_none() => {
                        format = Format::of(&val(&a, "w:val").unwrap_or_default());
                    }
                    _ => {}
                },
                Node::Close(tag) => match tag.as_str() {
                    "w:lvl" => {
                        if let (Some(abs), Some(l)) = (&abstract_id, level.take()) {
                            n.levels.insert((abs.clone(), l), (format, start));
                        }
                    }
                    "w:abstractNum" => abstract_id = None,
                    "w:num" => num_id = None,
                    "w:lvlOverride" => override_level = None,
                    _ => {}
                },
                Node::Text(_) => {}
            }
        }
        Ok(n)
    }

    fn level(&self, num_id: &str, level: u32) -> (Format, u32) {
        let (format, start) = self
            .nums
            .get(num_id)
            .and_then(|abs| self.levels.get(&(abs.clone(), level)))
            .copied()
            .unwrap_or((Format::Bullet, 1));
        let start = self
            .starts
            .get(&(num_id.to_string(), level))
            .copied()
            .unwrap_or(start);
        (format, start)
    }
}

/// Counts items as the document goes, per list (numId) and level.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// numId → the next number of each level.
    next: HashMap<String, Vec<Option<u32>>>,
}

impl Counters {
    /// The Markdown line start for an item of `num_id` at `level`.
    pub(crate) fn marker(&mut self, numbering: &Numbering, num_id: &str, level: u32) -> String {
        let level = level.min(MAX_LEVEL);
        let (format, start) = numbering.level(num_id, level);
        let slots = self
            .next
            .entry(num_id.to_string())
            .or_insert_with(|| vec![None; MAX_LEVEL as usize + 1]);
        let n = slots[level as usize].unwrap_or(start);
        slots[level as usize] = Some(n + 1);
        // A new item restarts the deeper levels, as Word does.
        for deeper in slots.iter_mut().skip(level as usize + 1) {
            *deeper = None;
        }
        let indent = "    ".repeat(level as usize);
        match format {
            Format::Bullet | Format::Plain => format!("{indent}- "),
            Format::Decimal => format!("{indent}{n}. "),
            Format::LowerLetter => format!("{indent}- {}. ", letters(n)),
            Format::UpperLetter => format!("{indent}- {}. ", letters(n).to_uppercase()),
            Format::LowerRoman => format!("{indent}- {}. ", roman(n)),
            Format::UpperRoman => format!("{indent}- {}. ", roman(n).to_uppercase()),
        }
    }
}

/// 1 → a, 26 → z, 27 → aa (Word's lettering).
fn letters(n: u32) -> String {
    let n = n.max(1) - 1;
    let letter = (b'a' + (n % 26) as u8) as char;
    letter.to_string().repeat(n as usize / 26 + 1)
}

fn roman(mut n: u32) -> String {
    const TABLE: [(u32, &str); 13] = [
        (1000, "m"),
        (900, "cm"),
        (500, "d"),
        (400, "cd"),
        (100, "c"),
        (90, "xc"),
        (50, "l"),
        (40, "xl"),
        (10, "x"),
        (9, "ix"),
        (5, "v"),
        (4, "iv"),
        (1, "i"),
    ];
    let mut out = String::new();
    for (value, digits) in TABLE {
        while n >= value {
            out.push_str(digits);
            n -= value;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_word() {
        assert_eq!(letters(1), "a");
        assert_eq!(letters(27), "aa");
        assert_eq!(roman(4), "iv");
        assert_eq!(roman(1999), "mcmxcix");
    }
}
