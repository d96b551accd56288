//! Scope matching at separator boundaries: `/data/proj` covers
//! `/data/proj/f.md` but never `/data/project-secret/f.md`. A scope also
//! carries the search's [`Filter`] (format, dates, path patterns) and the
//! process's reach (its roots), which the index applies with the folders,
//! per source, before any cut.

use super::filter::{Filter, SourceFacts};
use crate::source::SourceType;

/// True iff `path` equals `prefix` (trailing `/` ignored) or lies below it.
/// The separator is always `/`, so URL and data ids scope the same way.
pub fn is_under(path: &str, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// A set of prefixes; a source matches when it is under any of them. No
/// prefixes means everything matches. The filter narrows further by what
/// a source's record says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope {
    prefixes: Vec<String>,
    filter: Filter,
    /// The roots a file must lie under; none meaning any.
    reach: Vec<String>,
}

impl Scope {
    /// Everything: no prefix and no filter.
    pub fn all() -> Self {
        Self::default()
    }

    /// Under any of `prefixes` (folders, files or data ids).
    pub fn new<I, S>(prefixes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            prefixes: prefixes.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// The same, with files only under `roots`: an index shared with other
    /// processes holds files this one may not read. Data and URL sources
    /// are in every process's reach.
    pub fn within_roots(self, roots: &[String]) -> Self {
        Self {
            reach: roots.to_vec(),
            ..self
        }
    }

    /// The same folders, narrowed by `filter`.
    pub fn with_filter(self, filter: Filter) -> Self {
        Self { filter, ..self }
    }

    /// The filter on documents' facts.
    pub fn filter(&self) -> &Filter {
        &self.filter
    }

    /// The prefixes, none meaning all.
    pub fn prefixes(&self) -> &[String] {
        &self.prefixes
    }

    /// Neither folders, a filter nor roots: every source is in reach.
    pub fn is_all(&self) -> bool {
        self.prefixes.is_empty() && self.filter.is_none() && self.reach.is_empty()
    }

    /// The same folders and filter, with no roots: where a document out of
    /// reach would be.
    pub fn anywhere(&self) -> Self {
        Self {
            reach: Vec::new(),
            ..self.clone()
        }
    }

    /// Whether `source` is under the scope's folders (the filter, which
    /// needs the source's record, aside).
    pub fn matches(&self, source: &str) -> bool {
        self.prefixes.is_empty() || self.prefixes.iter().any(|p| is_under(source, p))
    }

    /// Whether a source is in reach: under the folders and kept by the filter.
    pub fn admits<'a>(&self, record: impl Into<SourceFacts<'a>>) -> bool {
        let record = record.into();
        self.in_reach(record.source_type, record.source)
            && self.matches(record.source)
            && self.filter.admits(record)
    }

    fn in_reach(&self, source_type: SourceType, source: &str) -> bool {
        self.reach.is_empty()
            || source_type != SourceType::File
            || self.reach.iter().any(|root| is_under(source, root))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_at_separator_boundaries() {
        for (prefix, path) in [
            ("/data/proj", "/data/proj/f.md"),
            ("/data/proj/", "/data/proj/f.md"),
            ("/data/proj", "/data/proj"),
            ("/", "/any/absolute/path.md"),
            ("https://example.com/docs", "https://example.com/docs/page"),
            ("note-1", "note-1/part"),
        ] {
            assert!(is_under(path, prefix), "{prefix} should cover {path}");
        }
        for (prefix, path) in [
            ("/data/proj", "/data/project-secret/f.md"),
            ("/data/proj", "/data/projX"),
            ("/data/proj", "/data/pro"),
            (
                "https://example.com/docs",
                "https://example.com/docs-private/page",
            ),
            ("note-1", "note-10"),
        ] {
            assert!(!is_under(path, prefix), "{prefix} must not cover {path}");
        }
    }

    #[test]
    fn wildcard_characters_are_literal() {
        assert!(!is_under("/data/pXoj/a.md", "/data/p_oj"));
        assert!(!is_under("/data/anything/a.md", "/data/%"));
        assert!(is_under("/data/%/a.md", "/data/%"));
        assert!(is_under("/o'brien/a.md", "/o'brien"));
    }

    #[test]
    fn scope_is_an_or_of_prefixes() {
        let scope = Scope::new(["/a", "/b/"]);
        assert!(scope.matches("/a/x") && scope.matches("/b/y") && !scope.matches("/c/z"));
        assert!(Scope::all().matches("anything"));
    }

    #[test]
    fn files_out_of_reach_are_left_out_and_other_sources_kept() {
        let facts = |source, source_type| SourceFacts {
            source,
            source_type,
            mtime: 0.0,
            ingested_at: "",
            language: None,
            meta: &[],
        };
        let scope = Scope::all().within_roots(&["/b".to_string()]);
        assert!(scope.admits(facts("/b/x.md", SourceType::File)));
        assert!(!scope.admits(facts("/a/x.md", SourceType::File)));
        assert!(scope.admits(facts("note-1", SourceType::Data)));
        assert!(scope.admits(facts("https://a.example/x", SourceType::Url)));
        assert!(!scope.is_all());
        assert!(scope.anywhere().is_all());
    }
}
