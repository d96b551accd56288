//! Path patterns for narrowing a search by folder: `**/specs/**`, `*.md`,
//! `notes/202?-*`, `[a-c]*`. Core takes no dependencies, and these few
//! rules fit in a page: `*` and `?` stay within one folder name, `**` as a
//! whole part spans any number of folders (at the end, at least one: what
//! is inside a folder), `[…]` is a character class
//! (`[!…]` negated, `a-z` ranges, a `]` or `!` first in it taken as
//! itself). A pattern without `/` matches a file name in any folder, as in
//! `.gitignore`.
//!
//! Patterns come from clients, so matching must cost the same whatever
//! they write: a pattern is at most [`MAX_PATTERN_BYTES`], runs of `**`
//! count as one, and a path is matched by advancing the set of parts that
//! can stand at each folder name (no backtracking across names), so the
//! work grows with the path's length times the pattern's, never faster.
//! `proptests` checks these rules against `globset`.

/// The longest pattern accepted: real ones are a few dozen bytes.
pub const MAX_PATTERN_BYTES: usize = 1024;

/// A checked pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    text: String,
    parts: Vec<Part>,
}

/// One `/`-separated part of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// `**`: any number of folder names, none included.
    AnyFolders,
    /// A name pattern: characters, `*`, `?` and classes.
    Name(Vec<Element>),
}

/// One element of a name pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Element {
    Char(char),
    AnyChar,
    AnyRun,
    Class {
        negated: bool,
        items: Vec<(char, char)>,
    },
}

/// Why a pattern cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobError {
    /// An empty pattern.
    Empty,
    /// A `[` without its `]`.
    UnclosedClass,
    /// `**` inside a name (`a**b`): it means any folders only as a whole part.
    DoubleStarInName,
    /// Longer than [`MAX_PATTERN_BYTES`].
    TooLong {
        /// The pattern's length in bytes.
        bytes: usize,
    },
}

impl std::fmt::Display for GlobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => f.write_str("the pattern is empty"),
            Self::UnclosedClass => f.write_str("a `[` has no closing `]`"),
            Self::DoubleStarInName => f.write_str(
                "`**` stands for any folders only as a whole part, as in `docs/**/*.md`",
            ),
            Self::TooLong { bytes } => write!(
                f,
                "it is {bytes} bytes long, over the limit of {MAX_PATTERN_BYTES}"
            ),
        }
    }
}

impl Glob {
    /// Parses `pattern`.
    pub fn new(pattern: &str) -> Result<Glob, GlobError> {
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(GlobError::TooLong {
                bytes: pattern.len(),
            });
        }
        let text = pattern.trim().trim_start_matches("./").trim_matches('/');
        if text.is_empty() {
            return Err(GlobError::Empty);
        }
        let mut parts: Vec<Part> = Vec::new();
        for given in text.split('/').filter(|p| !p.is_empty()) {
            let part = parse_part(given)?;
            if !(part == Part::AnyFolders && parts.last() == Some(&Part::AnyFolders)) {
                parts.push(part);
            }
        }
        if parts.len() == 1 && parts[0] != Part::AnyFolders {
            parts.insert(0, Part::AnyFolders);
        }
        // `docs/**` is what is inside `docs`: at least one more name.
        if parts.len() > 1 && parts.last() == Some(&Part::AnyFolders) {
            parts.insert(parts.len() - 1, Part::Name(vec![Element::AnyRun]));
        }
        Ok(Glob {
            text: text.to_string(),
            parts,
        })
    }

    /// The pattern as given (for messages).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `path` (parts separated by `/`) matches.
    pub fn matches(&self, path: &str) -> bool {
        let n = self.parts.len();
        let mut now = vec![false; n + 1];
        let mut next = vec![false; n + 1];
        now[0] = true;
        self.close(&mut now);
        for name in path.split('/').filter(|p| !p.is_empty()) {
            next.fill(false);
            let mut any = false;
            for (at, part) in self.parts.iter().enumerate() {
                if !now[at] {
                    continue;
                }
                match part {
                    Part::AnyFolders => next[at] = true,
                    Part::Name(elements) if match_name(elements, name) => next[at + 1] = true,
                    Part::Name(_) => continue,
                }
                any = true;
            }
            if !any {
                return false;
            }
            self.close(&mut next);
            std::mem::swap(&mut now, &mut next);
        }
        now[n]
    }

    /// Adds the states reached by letting each `**` stand for no folder.
    fn close(&self, states: &mut [bool]) {
        for (at, part) in self.parts.iter().enumerate() {
            if states[at] && *part == Part::AnyFolders {
                states[at + 1] = true;
            }
        }
    }
}

fn parse_part(given: &str) -> Result<Part, GlobError> {
    if given == "**" {
        return Ok(Part::AnyFolders);
    }
    if given.contains("**") {
        return Err(GlobError::DoubleStarInName);
    }
    let mut elements = Vec::new();
    let mut chars = given.chars();
    while let Some(c) = chars.next() {
        elements.push(match c {
            '*' => Element::AnyRun,
            '?' => Element::AnyChar,
            '[' => parse_class(&mut chars)?,
            c => Element::Char(c),
        });
    }
    Ok(Part::Name(elements))
}

/// A class after its `[`: an optional `!`, then a first character taken as
/// itself (even `]` or `!`), then characters and `a-z` ranges up to `]`.
fn parse_class(chars: &mut std::str::Chars<'_>) -> Result<Element, GlobError> {
    let mut rest: Vec<char> = Vec::new();
    let mut negated = false;
    let mut first = true;
    loop {
        match chars.next() {
            None => return Err(GlobError::UnclosedClass),
            Some('!') if first && !negated && rest.is_empty() => negated = true,
            Some(']') if !first => break,
            Some(c) => {
                rest.push(c);
                first = false;
            }
        }
    }
    let mut items = Vec::new();
    let mut k = 0;
    while k < rest.len() {
        if k + 2 < rest.len() && rest[k + 1] == '-' {
            items.push((rest[k], rest[k + 2]));
            k += 3;
        } else {
            items.push((rest[k], rest[k]));
            k += 1;
        }
    }
    Ok(Element::Class { negated, items })
}

/// `*`, `?` and classes within one name, by going back only to the last
/// `*`: time proportional to the pattern's length times the name's.
fn match_name(pattern: &[Element], name: &str) -> bool {
    let n: Vec<char> = name.chars().collect();
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        match pattern.get(i) {
            Some(Element::AnyRun) => {
                star = Some((i, j));
                i += 1;
                continue;
            }
            Some(element) if element_matches(element, n[j]) => {
                i += 1;
                j += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((si, sj)) => {
                i = si + 1;
                j = sj + 1;
                star = Some((si, sj + 1));
            }
            None => return false,
        }
    }
    pattern[i..].iter().all(|e| *e == Element::AnyRun)
}

fn element_matches(element: &Element, c: char) -> bool {
    match element {
        Element::Char(x) => *x == c,
        Element::AnyChar => true,
        Element::AnyRun => false,
        Element::Class { negated, items } => {
            items.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        Glob::new(pattern).unwrap().matches(path)
    }

    #[test]
    fn stars_stay_in_a_name_and_double_stars_span_folders() {
        assert!(m("**/specs/**", "team/specs/api.md"));
        assert!(m("**/specs/**", "specs/a/b.md"));
        assert!(!m("docs/**", "docs"));
        assert!(!m("**/specs/**", "team/spec/api.md"));
        assert!(m("docs/*.md", "docs/a.md"));
        assert!(!m("docs/*.md", "docs/sub/a.md"));
        assert!(m("docs/**/*.md", "docs/sub/deeper/a.md"));
        assert!(m("docs/**/*.md", "docs/a.md"));
        assert!(m("notes/202?-*", "notes/2026-12-01.md"));
        assert!(!m("notes/202?-*", "notes/20266-12.md"));
    }

    #[test]
    fn a_bare_name_pattern_matches_in_any_folder() {
        assert!(m("*.md", "a.md"));
        assert!(m("*.md", "x/y/a.md"));
        assert!(!m("*.md", "x/a.md.txt"));
        assert!(m("README*", "proj/README.txt"));
    }

    #[test]
    fn classes_ranges_and_negation() {
        assert!(m("[a-c]*.txt", "b-notes.txt"));
        assert!(!m("[a-c]*.txt", "d-notes.txt"));
        assert!(m("[!a-c]*.txt", "d-notes.txt"));
        assert!(m("v[0-9].md", "v7.md"));
        assert!(m("*a*b*c", "xaybzc"));
        assert!(!m("*a*b*c", "xaybz"));
    }

    #[test]
    fn bad_patterns_are_named() {
        assert_eq!(Glob::new("  "), Err(GlobError::Empty));
        assert_eq!(Glob::new("docs/[ab"), Err(GlobError::UnclosedClass));
        assert_eq!(Glob::new("a**b"), Err(GlobError::DoubleStarInName));
        assert!(GlobError::UnclosedClass.to_string().contains('['));
        assert_eq!(
            Glob::new(&"a".repeat(MAX_PATTERN_BYTES + 1)),
            Err(GlobError::TooLong {
                bytes: MAX_PATTERN_BYTES + 1
            })
        );
    }

    #[test]
    fn a_bang_or_bracket_first_in_a_class_is_itself() {
        assert!(m("[!!]*", "a.md"));
        assert!(!m("[!!]*", "!a.md"));
        assert!(m("[]]x", "]x"));
    }

    #[test]
    fn runs_of_double_stars_and_deep_paths_stay_cheap() {
        let many = "**/".repeat(300) + "zzz";
        assert!(m(&many, "a/b/c/zzz"));
        assert!(!m(&many, "a/b/c/d"));
        let deep = "x/".repeat(3_000) + "y";
        assert!(!m("**/x/**/x/**/q.md", &deep));
        assert!(m("**/x/**/x/**/y", &deep));
    }
}
