//! Narrowing by what a document is: its format, when it last changed, and
//! where it sits under its root. A filter travels inside a [`Scope`], so
//! every list (vector, keyword, whole document) applies it before its cut,
//! as it applies the scope's folders: a filter never empties a page that
//! has matches further down.
//!
//! [`Scope`]: super::Scope

use super::glob::{Glob, GlobError};
use crate::formats::{FormatKind, FORMATS};
use crate::source::{SourceRecord, SourceType};
use crate::time::parse_instant;

/// What a caller asked for, as given.
#[derive(Debug, Clone, Copy, Default)]
pub struct FilterRequest<'a> {
    /// Format keys or extensions (`pdf`, `md`, `markdown`, `htm`).
    pub formats: &'a [String],
    /// RFC 3339 or a date: kept when changed at or after it.
    pub modified_after: Option<&'a str>,
    /// RFC 3339 or a date: kept when changed before it.
    pub modified_before: Option<&'a str>,
    /// Patterns a source's path under its root must match (any of them).
    pub paths: &'a [String],
    /// Patterns that leave a source out.
    pub exclude_paths: &'a [String],
    /// ISO 639-1 codes (`en`, `ru`): kept when the main language is one.
    pub languages: &'a [String],
    /// `(field, value)`: kept when the document declares every field with
    /// that value (for a list field, as one of its items).
    pub meta: &'a [(String, String)],
}

/// What a filter reads of a source, so an index answers from its own
/// record type without building a [`SourceRecord`] per source and query.
#[derive(Debug, Clone, Copy)]
pub struct SourceFacts<'a> {
    /// The source.
    pub source: &'a str,
    /// File, data or URL.
    pub source_type: SourceType,
    /// A file's modification time (0 for data and URL sources).
    pub mtime: f64,
    /// ISO-8601 UTC.
    pub ingested_at: &'a str,
    /// Its detected language, ISO 639-1.
    pub language: Option<&'a str>,
    /// As [`crate::meta::normalized`] leaves them.
    pub meta: &'a [(String, String)],
}

impl<'a> From<&'a SourceRecord> for SourceFacts<'a> {
    fn from(r: &'a SourceRecord) -> Self {
        Self {
            source: &r.source,
            source_type: r.source_type,
            mtime: r.mtime,
            ingested_at: &r.ingested_at,
            language: r.attributes.language.as_deref(),
            meta: &r.attributes.meta,
        }
    }
}

/// A checked filter; [`Filter::default`] keeps everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    formats: Vec<&'static str>,
    after: Option<f64>,
    before: Option<f64>,
    paths: Vec<Glob>,
    exclude: Vec<Glob>,
    languages: Vec<String>,
    /// Field names through [`crate::meta::field_name`].
    meta: Vec<(String, String)>,
    /// The configured roots, longest first: paths are matched below them.
    roots: Vec<String>,
}

/// A filter argument that cannot be used; each names the value and the fix.
#[derive(Debug, Clone, PartialEq)]
pub enum FilterError {
    /// A format that is no format key or extension.
    UnknownFormat {
        /// As given.
        given: String,
    },
    /// A date that is neither a date nor RFC 3339.
    BadDate {
        /// `modifiedAfter` or `modifiedBefore`.
        field: &'static str,
        /// As given.
        given: String,
    },
    /// `modifiedAfter` is not before `modifiedBefore`.
    EmptyRange,
    /// A path pattern that is no glob.
    BadPattern {
        /// As given.
        given: String,
        /// What is wrong with it.
        why: GlobError,
    },
    /// An absolute path pattern outside every root: patterns match a
    /// document's path below its root.
    PatternOutsideRoots {
        /// As given.
        given: String,
        /// The configured roots.
        roots: Vec<String>,
    },
    /// Not an ISO 639-1 code.
    BadLanguage {
        /// As given.
        given: String,
    },
    /// A `meta` field no document in the index declares; `known` lists
    /// those that some document does.
    UnknownMetaField {
        /// As given.
        given: String,
        /// The fields some document declares.
        known: Vec<String>,
    },
    /// A `meta` entry without a field name or a value.
    BadMeta {
        /// As given.
        given: String,
    },
}

/// Every format key a filter accepts, for messages.
pub(crate) fn format_keys() -> Vec<&'static str> {
    FORMATS.iter().map(|f| f.key).collect()
}

impl std::fmt::Display for FilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownFormat { given } => write!(
                f,
                "unknown format {given:?}; use one of: {}",
                format_keys().join(", ")
            ),
            Self::BadDate { field, given } => write!(
                f,
                "{field} {given:?} is not a date; write 2026-12-01 or 2026-12-01T09:30:00Z (RFC 3339, with its offset)"
            ),
            Self::EmptyRange => f.write_str(
                "modifiedAfter must be before modifiedBefore; no document can be in that range",
            ),
            Self::BadPattern { given, why } => write!(
                f,
                "path pattern {:?} cannot be used: {why}; write it relative to a root, as `**/specs/**` or `*.md`",
                shortened(given)
            ),
            Self::PatternOutsideRoots { given, roots } => write!(
                f,
                "path pattern {:?} is an absolute path outside every root ({}); patterns match \
                 a document's path below its root: write it relative, as `specs/*.md`",
                shortened(given),
                roots.join(", ")
            ),
            Self::BadLanguage { given } => write!(
                f,
                "language {given:?} is not a language code; write the two-letter ISO 639-1 code, as `en` or `ru`"
            ),
            Self::UnknownMetaField { given, known } if known.is_empty() => write!(
                f,
                "no document in the index declares the field {given:?}; none declares any field \
                 (front matter, document properties, PDF Info or HTML <meta>) yet"
            ),
            Self::UnknownMetaField { given, known } => write!(
                f,
                "no document in the index declares the field {given:?}; use one of: {}",
                known.join(", ")
            ),
            Self::BadMeta { given } => write!(
                f,
                "meta {given:?} needs a field and a value; write it as field=value, as `author=Ada Lovelace`"
            ),
        }
    }
}

impl std::error::Error for FilterError {}

/// A client's text as a message quotes it: its first 80 characters.
fn shortened(given: &str) -> String {
    match given.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &given[..at]),
        None => given.to_string(),
    }
}

/// The patterns, each matched below a root: an absolute one under a root
/// (`/home/me/docs/specs/*.md`) is made relative to it (`specs/*.md`).
/// `roots` are longest first.
fn patterns(given: &[String], roots: &[String]) -> Result<Vec<Glob>, FilterError> {
    given
        .iter()
        .map(|p| {
            let relative = match p.trim().starts_with('/') {
                false => p.as_str(),
                true => below_a_root(p.trim(), roots).ok_or_else(|| {
                    FilterError::PatternOutsideRoots {
                        given: p.clone(),
                        roots: roots.to_vec(),
                    }
                })?,
            };
            Glob::new(relative).map_err(|why| FilterError::BadPattern {
                given: p.clone(),
                why,
            })
        })
        .collect()
}

fn below_a_root<'a>(pattern: &'a str, roots: &[String]) -> Option<&'a str> {
    roots
        .iter()
        .find_map(|root| pattern.strip_prefix(root.as_str())?.strip_prefix('/'))
}

fn instant(field: &'static str, given: Option<&str>) -> Result<Option<f64>, FilterError> {
    given
        .map(|g| {
            parse_instant(g).ok_or_else(|| FilterError::BadDate {
                field,
                given: g.to_string(),
            })
        })
        .transpose()
}

impl Filter {
    /// Checks a request; `roots` are the configured folders paths are
    /// relative to.
    pub fn new(request: FilterRequest<'_>, roots: &[String]) -> Result<Filter, FilterError> {
        let mut formats = Vec::new();
        for given in request.formats {
            let wanted = given.trim().trim_start_matches('.').to_ascii_lowercase();
            let format = FORMATS
                .iter()
                .find(|f| f.key == wanted || f.extensions.contains(&wanted.as_str()))
                .filter(|f| f.kind == FormatKind::Document || f.key == "image")
                .ok_or_else(|| FilterError::UnknownFormat {
                    given: given.clone(),
                })?;
            if !formats.contains(&format.key) {
                formats.push(format.key);
            }
        }
        let after = instant("modifiedAfter", request.modified_after)?;
        let before = instant("modifiedBefore", request.modified_before)?;
        if let (Some(a), Some(b)) = (after, before) {
            if a >= b {
                return Err(FilterError::EmptyRange);
            }
        }
        let mut roots: Vec<String> = roots
            .iter()
            .map(|r| r.trim_end_matches('/').to_string())
            .collect();
        roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
        let mut languages = Vec::new();
        for given in request.languages {
            let code = given.trim().to_ascii_lowercase();
            if code.len() != 2 || !code.bytes().all(|b| b.is_ascii_lowercase()) {
                return Err(FilterError::BadLanguage {
                    given: given.clone(),
                });
            }
            if !languages.contains(&code) {
                languages.push(code);
            }
        }
        let mut meta = Vec::new();
        for (field, value) in request.meta {
            let name = crate::meta::field_name(field);
            if name.is_empty() || value.trim().is_empty() {
                return Err(FilterError::BadMeta {
                    given: format!("{field}={value}"),
                });
            }
            meta.push((name, value.clone()));
        }
        Ok(Filter {
            formats,
            after,
            before,
            paths: patterns(request.paths, &roots)?,
            exclude: patterns(request.exclude_paths, &roots)?,
            languages,
            meta,
            roots,
        })
    }

    /// Keeps everything.
    pub fn is_none(&self) -> bool {
        self.formats.is_empty()
            && self.after.is_none()
            && self.before.is_none()
            && self.paths.is_empty()
            && self.exclude.is_empty()
            && self.languages.is_empty()
            && self.meta.is_empty()
    }

    /// Asks for declared fields (the engine then checks their names).
    pub(crate) fn has_meta(&self) -> bool {
        !self.meta.is_empty()
    }

    /// Fails on a `meta` field that no document declares, naming those
    /// that some do: a misspelt field is an error, not an empty page.
    pub(crate) fn check_fields<'a>(
        &self,
        declared: impl IntoIterator<Item = &'a (String, String)>,
    ) -> Result<(), FilterError> {
        if self.meta.is_empty() {
            return Ok(());
        }
        let known: std::collections::BTreeSet<&str> =
            declared.into_iter().map(|(f, _)| f.as_str()).collect();
        match self.meta.iter().find(|(f, _)| !known.contains(f.as_str())) {
            None => Ok(()),
            Some((given, _)) => Err(FilterError::UnknownMetaField {
                given: given.clone(),
                known: known.into_iter().map(String::from).collect(),
            }),
        }
    }

    /// The filter in words, for a notice that it matched nothing.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.formats.is_empty() {
            parts.push(format!("format {}", self.formats.join(" or ")));
        }
        let day = |t: f64| crate::time::iso_utc(t as i64);
        if let Some(a) = self.after {
            parts.push(format!("changed at or after {}", day(a)));
        }
        if let Some(b) = self.before {
            parts.push(format!("changed before {}", day(b)));
        }
        let globs = |g: &[Glob]| g.iter().map(Glob::as_str).collect::<Vec<_>>().join(" or ");
        if !self.paths.is_empty() {
            parts.push(format!("path {}", globs(&self.paths)));
        }
        if !self.exclude.is_empty() {
            parts.push(format!("path not {}", globs(&self.exclude)));
        }
        if !self.languages.is_empty() {
            parts.push(format!("language {}", self.languages.join(" or ")));
        }
        for (field, value) in &self.meta {
            parts.push(format!("{field} = {value}"));
        }
        parts.join("; ")
    }

    /// The path patterns see: a file's path below its root; a URL or data
    /// id as it is.
    fn relative<'s>(&self, source: &'s str) -> &'s str {
        self.roots
            .iter()
            .find_map(|r| source.strip_prefix(r.as_str())?.strip_prefix('/'))
            .unwrap_or(source)
    }

    /// When a source last changed: a file's modification time; the ingest
    /// time of data and URL sources.
    fn changed(record: SourceFacts<'_>) -> Option<f64> {
        match record.source_type {
            SourceType::File if record.mtime > 0.0 => Some(record.mtime),
            _ => parse_instant(record.ingested_at),
        }
    }

    /// Whether the filter keeps a source.
    pub fn admits<'a>(&self, record: impl Into<SourceFacts<'a>>) -> bool {
        let record = record.into();
        if self.is_none() {
            return true;
        }
        if !self.formats.is_empty() {
            let format = crate::formats::of_source(record.source).map(|f| f.key);
            if !format.is_some_and(|k| self.formats.contains(&k)) {
                return false;
            }
        }
        if self.after.is_some() || self.before.is_some() {
            let Some(t) = Self::changed(record) else {
                return false;
            };
            if self.after.is_some_and(|a| t < a) || self.before.is_some_and(|b| t >= b) {
                return false;
            }
        }
        if !self.languages.is_empty()
            && !record
                .language
                .is_some_and(|l| self.languages.iter().any(|w| w == l))
        {
            return false;
        }
        let declares = |(field, wanted): &(String, String)| {
            record
                .meta
                .iter()
                .any(|(f, v)| f == field && crate::meta::value_matches(v, wanted))
        };
        if !self.meta.iter().all(declares) {
            return false;
        }
        let path = self.relative(record.source);
        (self.paths.is_empty() || self.paths.iter().any(|g| g.matches(path)))
            && !self.exclude.iter().any(|g| g.matches(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(source: &str, mtime: f64) -> SourceRecord {
        SourceRecord {
            source: source.into(),
            source_type: if source.starts_with('/') {
                SourceType::File
            } else {
                SourceType::Data
            },
            title: String::new(),
            title_seeded: false,
            file_hash: String::new(),
            mtime,
            ingested_at: "2026-11-15T08:00:00Z".into(),
            chunk_count: 1,
            scheme_version: crate::CHUNK_SCHEME,
            embedded_with: None,
            ocr_engine: String::new(),
            attributes: Default::default(),
        }
    }

    fn filter(request: FilterRequest<'_>) -> Filter {
        Filter::new(request, &["/r".into()]).unwrap()
    }

    #[test]
    fn language_and_meta_match_what_the_document_declares() {
        let mut ru = record("/r/a.md", 1.0);
        ru.attributes.language = Some("ru".into());
        ru.attributes.meta = crate::meta::normalized([
            ("Author".to_string(), "Finance Team".to_string()),
            ("tags".to_string(), "incident, db".to_string()),
        ]);
        let plain = record("/r/b.md", 1.0);
        let meta = [("tags".to_string(), "INCIDENT".to_string())];
        let f = filter(FilterRequest {
            languages: &["RU".into()],
            meta: &meta,
            ..Default::default()
        });
        assert!(f.admits(&ru));
        assert!(!f.admits(&plain), "no language, no fields");
        let both = [
            ("author".to_string(), "finance team".to_string()),
            ("tags".to_string(), "outage".to_string()),
        ];
        let f = filter(FilterRequest {
            meta: &both,
            ..Default::default()
        });
        assert!(!f.admits(&ru), "every field must match");
        let e = Filter::new(
            FilterRequest {
                languages: &["russian".into()],
                ..Default::default()
            },
            &[],
        )
        .unwrap_err();
        assert!(e.to_string().contains("ISO 639-1"), "{e}");
    }

    #[test]
    fn formats_by_key_or_extension() {
        let f = filter(FilterRequest {
            formats: &["markdown".into(), ".PDF".into()],
            ..Default::default()
        });
        assert!(f.admits(&record("/r/a.md", 1.0)));
        assert!(f.admits(&record("/r/b.pdf", 1.0)));
        assert!(!f.admits(&record("/r/c.txt", 1.0)));
        assert!(!f.admits(&record("note-1", 1.0)), "data has no format");
        let e = Filter::new(
            FilterRequest {
                formats: &["doc".into()],
                ..Default::default()
            },
            &[],
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("\"doc\"") && e.to_string().contains("docx"),
            "{e}"
        );
    }

    #[test]
    fn dates_bound_the_modification_or_ingest_time() {
        let f = filter(FilterRequest {
            modified_after: Some("2026-11-01"),
            modified_before: Some("2026-12-01T00:00:00Z"),
            ..Default::default()
        });
        let nov = parse_instant("2026-11-20").unwrap();
        let oct = parse_instant("2026-10-20").unwrap();
        let dec = parse_instant("2026-12-01").unwrap();
        assert!(f.admits(&record("/r/a.md", nov)));
        assert!(!f.admits(&record("/r/a.md", oct)));
        assert!(!f.admits(&record("/r/a.md", dec)), "the end is exclusive");
        assert!(f.admits(&record("note-1", 0.0)), "data: its ingest time");
        for (after, before, field) in [
            (Some("last week"), None, "modifiedAfter"),
            (None, Some("2026-02-30"), "modifiedBefore"),
        ] {
            let e = Filter::new(
                FilterRequest {
                    modified_after: after,
                    modified_before: before,
                    ..Default::default()
                },
                &[],
            )
            .unwrap_err();
            assert!(
                matches!(e, FilterError::BadDate { field: f, .. } if f == field),
                "{e}"
            );
        }
        let e = Filter::new(
            FilterRequest {
                modified_after: Some("2026-12-02"),
                modified_before: Some("2026-12-01"),
                ..Default::default()
            },
            &[],
        );
        assert_eq!(e, Err(FilterError::EmptyRange));
    }

    #[test]
    fn an_absolute_pattern_is_matched_below_its_root_or_refused() {
        let under = filter(FilterRequest {
            paths: &["/r/specs/*.md".into()],
            ..Default::default()
        });
        assert!(under.admits(&record("/r/specs/a.md", 1.0)));
        assert!(!under.admits(&record("/r/notes/a.md", 1.0)));
        let e = Filter::new(
            FilterRequest {
                paths: &["/elsewhere/*.md".into()],
                ..Default::default()
            },
            &["/r".into()],
        )
        .unwrap_err();
        assert!(matches!(e, FilterError::PatternOutsideRoots { .. }), "{e}");
        assert!(e.to_string().contains("/elsewhere/*.md") && e.to_string().contains("/r"));
    }

    #[test]
    fn paths_are_matched_below_the_root() {
        let f = filter(FilterRequest {
            paths: &["**/specs/**".into()],
            exclude_paths: &["*draft*".into()],
            ..Default::default()
        });
        assert!(f.admits(&record("/r/team/specs/api.md", 1.0)));
        assert!(!f.admits(&record("/r/team/specs/api-draft.md", 1.0)));
        assert!(!f.admits(&record("/r/team/notes/api.md", 1.0)));
        let top = filter(FilterRequest {
            paths: &["specs/*".into()],
            ..Default::default()
        });
        assert!(top.admits(&record("/r/specs/a.md", 1.0)));
        assert!(!top.admits(&record("/r/x/specs/a.md", 1.0)));
        let e = Filter::new(
            FilterRequest {
                paths: &["docs/[ab".into()],
                ..Default::default()
            },
            &[],
        )
        .unwrap_err();
        assert!(e.to_string().contains("docs/[ab"), "{e}");
    }
}
