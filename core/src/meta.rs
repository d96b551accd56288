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

/// The pairs a converter found, as the index keeps them: names through
/// [`field_name`], list fields split into one pair per item, empty values,
/// control characters and duplicates dropped, long values cut, sorted.
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
    out.sort();
    out.dedup();
    out.truncate(MAX_PAIRS);
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
    fn values_match_ignoring_case_and_spacing() {
        assert!(value_matches("Finance Team", "finance  team"));
        assert!(!value_matches("Finance", "finance team"));
    }
}
