//! The fields a document declares about itself, in one shape whatever the
//! format: Markdown front matter, Office core properties, PDF Info and
//! HTML `<meta>` all name an author, a list of keywords and a subject in
//! their own way. The `meta` filter compares against this shape.

/// Fields whose single value is a list written as text (`a, b; c`).
const LIST_FIELDS: [&str; 3] = ["keywords", "tags", "categories"];
/// Other names formats use for the same field.
const ALIASES: [(&str, &str); 7] = [
    ("creator", "author"),
    ("authors", "author"),
    ("dc.creator", "author"),
    ("tag", "tags"),
    ("keyword", "keywords"),
    ("category", "categories"),
    ("dc.subject", "subject"),
];
/// Fields kept first when a document declares more than [`MAX_PAIRS`]:
/// junk fields cannot push out the ones people filter on.
const KNOWN_FIELDS: [&str; 8] = [
    "title",
    "author",
    "subject",
    "keywords",
    "tags",
    "categories",
    "date",
    "description",
];
/// Caps that keep a hostile file's fields from filling the index.
const MAX_PAIRS: usize = 128;
const MAX_FIELD_CHARS: usize = 64;
const MAX_VALUE_CHARS: usize = 256;

/// One field name as stored and matched: trimmed, lower-case, aliases
/// folded (`Creator` → `author`).
pub(crate) fn field_name(given: &str) -> String {
    let name = given.trim().to_lowercase();
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, canonical)| canonical.to_string())
}

/// Whitespace runs as one space, ends trimmed.
fn tidy(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What a converter may gather of a document's declared fields before it
/// stops reading them: one value, all of them together, and their count.
/// Real documents declare a few hundred bytes; these bound what a hostile
/// one costs in memory before [`normalized`] cuts it to what is stored.
pub const MAX_DECLARED_VALUE_BYTES: usize = 16 * 1024;
/// See [`MAX_DECLARED_VALUE_BYTES`].
pub const MAX_DECLARED_BYTES: usize = 64 * 1024;
/// See [`MAX_DECLARED_VALUE_BYTES`].
pub const MAX_DECLARED_PAIRS: usize = 1024;
/// The largest properties part a converter reads (`docProps/core.xml`):
/// real ones are a few kilobytes.
pub const MAX_DECLARING_PART_BYTES: usize = 1 << 20;

/// Why a document's declared fields were dropped (its text is indexed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverBudget {
    /// One value is longer than [`MAX_DECLARED_VALUE_BYTES`].
    LongValue,
    /// All values together pass [`MAX_DECLARED_BYTES`].
    TooMuch,
    /// More than [`MAX_DECLARED_PAIRS`] fields.
    TooMany,
    /// The part holding them is larger than [`MAX_DECLARING_PART_BYTES`].
    LargePart,
    /// Front matter with YAML aliases (`&a` … `*a`), which can expand a few
    /// bytes into gigabytes; they are not read.
    Aliases,
}

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::LongValue => write!(
                f,
                "a declared field's value is over {} KiB",
                MAX_DECLARED_VALUE_BYTES / 1024
            ),
            Self::TooMuch => write!(
                f,
                "its declared fields are over {} KiB together",
                MAX_DECLARED_BYTES / 1024
            ),
            Self::TooMany => write!(f, "it declares over {MAX_DECLARED_PAIRS} fields"),
            Self::LargePart => write!(
                f,
                "the part holding its properties is over {} MiB",
                MAX_DECLARING_PART_BYTES >> 20
            ),
            Self::Aliases => f.write_str("its front matter uses YAML aliases (`*name`)"),
        }
    }
}

/// A document's declared fields as a converter gathers them, under the one
/// budget every format shares. Past a cap the fields are dropped, all of
/// them, and [`Declared::over_budget`] says why, for the file's notice.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Declared {
    pairs: Vec<(String, String)>,
    bytes: usize,
    over: Option<OverBudget>,
}

impl Declared {
    /// Adds one field as the format names it; ignored once over budget.
    pub fn push(&mut self, field: impl Into<String>, value: impl Into<String>) {
        if self.over.is_some() {
            return;
        }
        let (field, value) = (field.into(), value.into());
        let size = field.len() + value.len();
        if value.len() > MAX_DECLARED_VALUE_BYTES {
            self.refuse(OverBudget::LongValue);
        } else if self.bytes + size > MAX_DECLARED_BYTES {
            self.refuse(OverBudget::TooMuch);
        } else if self.pairs.len() >= MAX_DECLARED_PAIRS {
            self.refuse(OverBudget::TooMany);
        } else {
            self.bytes += size;
            self.pairs.push((field, value));
        }
    }

    /// Drops every field, saying why.
    pub fn refuse(&mut self, why: OverBudget) {
        self.pairs = Vec::new();
        self.bytes = 0;
        self.over = Some(why);
    }

    /// Why the fields were dropped, if they were.
    pub fn over_budget(&self) -> Option<OverBudget> {
        self.over
    }

    /// The fields gathered, in the document's order.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    /// The fields gathered, in the document's order.
    pub fn into_pairs(self) -> Vec<(String, String)> {
        self.pairs
    }
}

impl<F: Into<String>, V: Into<String>> FromIterator<(F, V)> for Declared {
    fn from_iter<I: IntoIterator<Item = (F, V)>>(iter: I) -> Self {
        let mut declared = Declared::default();
        for (field, value) in iter {
            declared.push(field, value);
        }
        declared
    }
}

/// The pairs a converter found, as the index keeps them: names through
/// [`field_name`], list fields split into one pair per item, empty values,
/// control characters and duplicates dropped, long values cut, the well-known
/// fields kept first under the cap, sorted.
pub fn normalized(pairs: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (field, value) in pairs {
        let field = field_name(&field);
        let usable = |s: &str| !s.is_empty() && !s.chars().any(char::is_control);
        if !usable(&field) || field.chars().count() > MAX_FIELD_CHARS {
            continue;
        }
        let items: Vec<&str> = if LIST_FIELDS.contains(&field.as_str()) {
            value.split([',', ';']).collect()
        } else {
            vec![value.as_str()]
        };
        for item in items {
            let item: String = tidy(item).chars().take(MAX_VALUE_CHARS).collect();
            if usable(&item) {
                out.push((field.clone(), item));
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|pair| seen.insert(pair.clone()));
    out.sort_by_key(|(field, _)| !KNOWN_FIELDS.contains(&field.as_str()));
    out.truncate(MAX_PAIRS);
    out.sort();
    out
}

/// Whether a stored value is the one asked for: equal ignoring case and
/// spacing, so `Finance Team` matches `finance  team`.
pub(crate) fn value_matches(stored: &str, wanted: &str) -> bool {
    stored.to_lowercase() == tidy(wanted).to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn names_fold_lists_split_and_duplicates_go() {
        let got = normalized(pairs(&[
            (" Creator ", "Ada  Lovelace"),
            ("Keywords", "storage, backup; storage"),
            ("status", "  "),
            ("title", "Plan\u{7}"),
            ("Tags", "incident"),
        ]));
        assert_eq!(
            got,
            pairs(&[
                ("author", "Ada Lovelace"),
                ("keywords", "backup"),
                ("keywords", "storage"),
                ("tags", "incident"),
            ])
        );
    }

    #[test]
    fn a_hostile_file_cannot_fill_the_index() {
        let many = (0..1000).map(|i| (format!("f{i}"), "x".repeat(10_000)));
        let got = normalized(many);
        assert_eq!(got.len(), MAX_PAIRS);
        assert!(got
            .iter()
            .all(|(_, v)| v.chars().count() == MAX_VALUE_CHARS));
    }

    #[test]
    fn junk_fields_cannot_push_out_the_known_ones() {
        let mut many: Vec<(String, String)> = (0..500)
            .map(|i| (format!("a{i:03}"), "junk".into()))
            .collect();
        many.push(("author".into(), "Ada".into()));
        let got = normalized(many);
        assert_eq!(got.len(), MAX_PAIRS);
        assert!(got.contains(&("author".into(), "Ada".into())), "{got:?}");
    }

    #[test]
    fn a_declaration_over_budget_is_dropped_whole_and_named() {
        let mut d = Declared::default();
        d.push("author", "Ada");
        d.push("keywords", "a,".repeat(MAX_DECLARED_VALUE_BYTES));
        d.push("title", "After");
        assert_eq!(d.over_budget(), Some(OverBudget::LongValue));
        assert!(d.pairs().is_empty());
        let d: Declared = (0..MAX_DECLARED_PAIRS + 1)
            .map(|i| (format!("f{i}"), ""))
            .collect();
        assert_eq!(d.over_budget(), Some(OverBudget::TooMany));
        let d: Declared = (0..100)
            .map(|i| (format!("f{i}"), "x".repeat(1000)))
            .collect();
        assert_eq!(d.over_budget(), Some(OverBudget::TooMuch));
        assert!(OverBudget::TooMuch.to_string().contains("64 KiB"));
    }

    #[test]
    fn values_match_ignoring_case_and_spacing() {
        assert!(value_matches("Finance Team", "finance  team"));
        assert!(!value_matches("Finance", "finance team"));
    }
}
