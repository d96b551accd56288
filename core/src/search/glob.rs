//! Path patterns for narrowing a search by folder: `**/specs/**`, `*.md`,
//! `notes/202?-*`, `[a-c]*`. Core takes no dependencies, and these few
//! rules fit in a page: `*` and `?` stay within one folder name, `**` as a
//! whole part spans any number of folders, `[…]` is a character class
//! (`[!…]` negated, `a-z` ranges). A pattern without `/` matches a file
//! name in any folder, as in `.gitignore`.

/// A checked pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    text: String,
    parts: Vec<String>,
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
}

impl std::fmt::Display for GlobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Empty => "the pattern is empty",
            Self::UnclosedClass => "a `[` has no closing `]`",
            Self::DoubleStarInName => {
                "`**` stands for any folders only as a whole part, as in `docs/**/*.md`"
            }
        })
    }
}

impl Glob {
    /// Parses `pattern`.
    pub fn new(pattern: &str) -> Result<Glob, GlobError> {
        let text = pattern.trim().trim_start_matches("./").trim_matches('/');
        if text.is_empty() {
            return Err(GlobError::Empty);
        }
        let mut parts: Vec<String> = text
            .split('/')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        for part in &parts {
            if part != "**" && part.contains("**") {
                return Err(GlobError::DoubleStarInName);
            }
            if !classes_closed(part) {
                return Err(GlobError::UnclosedClass);
            }
        }
        if parts.len() == 1 && parts[0] != "**" {
            parts.insert(0, "**".into());
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
        let names: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let parts: Vec<&str> = self.parts.iter().map(String::as_str).collect();
        match_parts(&parts, &names)
    }
}

fn classes_closed(part: &str) -> bool {
    let mut chars = part.chars();
    while let Some(c) = chars.next() {
        if c == '[' {
            let mut first = true;
            loop {
                match chars.next() {
                    None => return false,
                    Some(']') if !first => break,
                    Some('!') if first => {}
                    _ => first = false,
                }
            }
        }
    }
    true
}

fn match_parts(parts: &[&str], names: &[&str]) -> bool {
    match parts.split_first() {
        None => names.is_empty(),
        Some((&"**", rest)) => (0..=names.len()).any(|skip| match_parts(rest, &names[skip..])),
        Some((part, rest)) => names
            .split_first()
            .is_some_and(|(name, more)| match_name(part, name) && match_parts(rest, more)),
    }
}

/// `*`, `?` and classes within one name, by backtracking over the last `*`.
fn match_name(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
            continue;
        }
        if i < p.len() {
            if let Some((matched, width)) = match_one(&p[i..], n[j]) {
                if matched {
                    i += width;
                    j += 1;
                    continue;
                }
            }
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
    p[i..].iter().all(|&c| c == '*')
}

/// Whether the pattern's next element matches `c`, and how many pattern
/// characters it took; `None` at a `*`.
fn match_one(p: &[char], c: char) -> Option<(bool, usize)> {
    match p.first()? {
        '*' => None,
        '?' => Some((true, 1)),
        '[' => {
            let negated = p.get(1) == Some(&'!');
            let start = if negated { 2 } else { 1 };
            let end = start + 1 + p[start + 1..].iter().position(|&x| x == ']')?;
            let class = &p[start..end];
            let mut hit = false;
            let mut k = 0;
            while k < class.len() {
                if k + 2 < class.len() && class[k + 1] == '-' {
                    hit |= class[k] <= c && c <= class[k + 2];
                    k += 3;
                } else {
                    hit |= class[k] == c;
                    k += 1;
                }
            }
            Some((hit != negated, end + 1))
        }
        &x => Some((x == c, 1)),
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
    }
}
