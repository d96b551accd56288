//! The search view: the form (query, root, folder, format) and the results
//! as documents with their best passages.

use maud::{html, Markup};
use minirag_core::formats::{FormatKind, FORMATS};
use minirag_core::plural::counted;
use minirag_core::search::{QueryResponse, ResultItem};

use super::{doc_link, enc, page, Nav};
use crate::highlight;

/// What the search form holds (`/?q=…&root=…&folder=…&format=…`).
#[derive(Debug, Default, Clone, serde::Deserialize)]
pub(crate) struct Form {
    #[serde(default)]
    pub q: String,
    #[serde(default)]
    pub root: String,
    #[serde(default)]
    pub folder: String,
    /// Format keys; the key may repeat (`?format=pdf&format=docx`).
    #[serde(default)]
    pub format: Vec<String>,
    /// Changed on or after this day (`YYYY-MM-DD`, as a date input sends it).
    #[serde(default)]
    pub since: String,
    /// Changed on or before this day.
    #[serde(default)]
    pub until: String,
    /// The main language, an ISO 639-1 code.
    #[serde(default)]
    pub lang: String,
    /// One declared field, as `field=value`.
    #[serde(default)]
    pub meta: String,
}

impl Form {
    /// The query's scope: the chosen root, and the folder under it (or an
    /// absolute folder as given).
    pub(crate) fn scope(&self, roots: &[String]) -> Vec<String> {
        let folder = self.folder.trim().trim_end_matches('/');
        if folder.starts_with('/') {
            return vec![folder.to_string()];
        }
        let root = roots
            .iter()
            .find(|r| **r == self.root)
            .map(|r| r.trim_end_matches('/'));
        match (root, folder.is_empty()) {
            (Some(r), true) => vec![r.to_string()],
            (Some(r), false) => vec![format!("{r}/{folder}")],
            (None, false) => roots
                .iter()
                .map(|r| format!("{}/{folder}", r.trim_end_matches('/')))
                .collect(),
            (None, true) => Vec::new(),
        }
    }

    pub(crate) fn formats(&self) -> Vec<String> {
        self.format
            .iter()
            .map(|f| f.trim().to_string())
            .filter(|f| !f.is_empty())
            .collect()
    }

    pub(crate) fn languages(&self) -> Vec<String> {
        match self.lang.trim() {
            "" => Vec::new(),
            l => vec![l.to_string()],
        }
    }

    /// The field asked for; text without `=` goes through as a field with
    /// no value, so core's error says how to write it.
    pub(crate) fn meta(&self) -> Vec<(String, String)> {
        match self.meta.trim() {
            "" => Vec::new(),
            m => vec![m
                .split_once('=')
                .map_or((m.to_string(), String::new()), |(k, v)| {
                    (k.trim().to_string(), v.trim().to_string())
                })],
        }
    }

    /// The first day the search keeps, as core reads it (`None`: any).
    pub(crate) fn modified_after(&self) -> Option<&str> {
        Some(self.since.trim()).filter(|s| !s.is_empty())
    }

    /// The day after the last one kept: the page's range includes its last
    /// day, core's end is exclusive. A value that is no date goes through
    /// as it is, so core's error names it.
    pub(crate) fn modified_before(&self) -> Option<String> {
        let until = Some(self.until.trim()).filter(|s| !s.is_empty())?;
        Some(match minirag_core::time::parse_instant(until) {
            Some(t) => minirag_core::time::iso_utc(t as i64 + 86_400),
            None => until.to_string(),
        })
    }

    /// This search as a URL, to share or bookmark.
    pub(crate) fn url(&self) -> String {
        let mut url = format!("/?q={}", enc(&self.q));
        let mut pairs = vec![("root", self.root.clone()), ("folder", self.folder.clone())];
        pairs.extend(self.formats().into_iter().map(|f| ("format", f)));
        pairs.extend([
            ("since", self.since.clone()),
            ("until", self.until.clone()),
            ("lang", self.lang.clone()),
            ("meta", self.meta.clone()),
        ]);
        for (k, v) in pairs.iter().filter(|(_, v)| !v.is_empty()) {
            url.push_str(&format!("&{k}={}", enc(v)));
        }
        url
    }
}

/// What a search came to.
pub(crate) enum Outcome {
    /// No query yet.
    Empty,
    Found {
        response: QueryResponse,
        millis: f64,
    },
    Failed(String),
}

pub(crate) fn view(form: &Form, roots: &[String], outcome: &Outcome) -> Markup {
    let title = if form.q.is_empty() {
        "Search".to_string()
    } else {
        format!("{} – search", form.q)
    };
    page(
        &title,
        Nav::Search,
        None,
        html! {
            h1.visually-hidden { "Search the index" }
            form #search role="search" method="get" action="/" {
                div.query {
                    label.visually-hidden for="q" { "Search" }
                    input #q type="search" name="q" value=(form.q) placeholder="Search your documents  ( / )"
                        autocomplete="off" autofocus[form.q.is_empty()] aria-describedby="search-hint";
                    button type="submit" { "Search" }
                }
                div.filters {
                    label { "Root "
                        select name="root" {
                            option value="" { "all roots" }
                            @for r in roots {
                                option value=(r) selected[*r == form.root] { (r) }
                            }
                        }
                    }
                    label { "Folder "
                        input type="text" name="folder" value=(form.folder) placeholder="sub/folder";
                    }
                    label { "Format "
                        select name="format" {
                            option value="" { "any" }
                            @for f in FORMATS.iter().filter(|f| f.kind == FormatKind::Document) {
                                option value=(f.key) selected[form.format.iter().any(|k| k == f.key)] { (f.name) }
                            }
                        }
                    }
                    label { "Changed from "
                        input type="date" name="since" value=(form.since);
                    }
                    label { "to "
                        input type="date" name="until" value=(form.until);
                    }
                    label { "Language "
                        input type="text" name="lang" value=(form.lang) placeholder="en" size="3"
                            title="ISO 639-1 code: en, ru, de, …";
                    }
                    label { "Field "
                        input type="text" name="meta" value=(form.meta) placeholder="author=Ada"
                            title="A field the document declares, as field=value";
                    }
                }
                p #search-hint .hint { "↑ ↓ move through the results, Enter opens one." }
            }
            section #results aria-live="polite" aria-label="Results" {
                (results(form, outcome))
            }
        },
    )
}

/// The results list alone (also served to the page's script as it types).
pub(crate) fn results(form: &Form, outcome: &Outcome) -> Markup {
    match outcome {
        Outcome::Empty => html! {},
        Outcome::Failed(message) => html! { p.error role="alert" { (message) } },
        Outcome::Found { response, millis } => {
            let groups = group(&response.results);
            html! {
                p.meta data-q=(form.q) {
                    (counted(response.sources.len() as u64, "document", "documents")) ", " (counted(response.results.len() as u64, "passage", "passages"))
                    span.time { " · " (format!("{millis:.0}")) " ms" }
                    " · " a href=(form.url()) { "Link to this search" }
                }
                @if let Some(n) = &response.notice { p.notice { (n) } }
                @if groups.is_empty() { p.none { "Nothing found. Try other words, or widen the filters." } }
                ol.documents {
                    @for hits in &groups {
                        (document(form, response, hits))
                    }
                }
            }
        }
    }
}

/// Hits grouped by document, in the order documents first rank.
fn group(results: &[ResultItem]) -> Vec<Vec<&ResultItem>> {
    let mut out: Vec<Vec<&ResultItem>> = Vec::new();
    for r in results {
        match out.iter_mut().find(|g| g[0].source == r.source) {
            Some(g) => g.push(r),
            None => out.push(vec![r]),
        }
    }
    out
}

fn document(form: &Form, response: &QueryResponse, hits: &[&ResultItem]) -> Markup {
    let first = hits[0];
    let path = response
        .sources
        .iter()
        .find(|s| s.source == first.source)
        .map_or(first.source.as_str(), |s| s.display_path.as_str());
    let format = minirag_core::formats::of_source(&first.source).map(|f| f.name);
    html! {
        li.document {
            h2 { a href=(doc_link(&first.source, None, &form.q)) { (first.title) } }
            p.path {
                (path)
                @if let Some(f) = format { span.format { (f) } }
            }
            ul.passages {
                @for hit in hits {
                    li.hit {
                        a.passage href=(doc_link(&hit.source, Some(hit.chunk_index), &form.q)) {
                            span.where {
                                @if !hit.breadcrumb().is_empty() { span.crumb { (hit.breadcrumb()) } }
                                @if let Some(c) = hit.citation() { span.place { (c) } }
                            }
                            span.snippet { (highlight::marked(&form.q, &highlight::excerpt(&form.q, &crate::markdown::plain_text(hit.body()), 360))) }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_follows_root_and_folder() {
        let roots = vec!["/a".to_string(), "/b/".to_string()];
        let f = |root: &str, folder: &str| Form {
            root: root.into(),
            folder: folder.into(),
            ..Form::default()
        };
        assert!(f("", "").scope(&roots).is_empty());
        assert_eq!(f("/a", "").scope(&roots), ["/a"]);
        assert_eq!(f("/a", "x/y/").scope(&roots), ["/a/x/y"]);
        assert_eq!(f("", "x").scope(&roots), ["/a/x", "/b/x"]);
        assert_eq!(f("/nope", "/abs/dir").scope(&roots), ["/abs/dir"]);
        let url = Form {
            q: "a b&c".into(),
            format: vec!["pdf".into()],
            ..Form::default()
        }
        .url();
        assert_eq!(url, "/?q=a%20b%26c&format=pdf");
        let days = Form {
            since: "2026-11-01".into(),
            until: "2026-11-30".into(),
            ..Form::default()
        };
        assert_eq!(days.modified_after(), Some("2026-11-01"));
        assert_eq!(
            days.modified_before().as_deref(),
            Some("2026-12-01T00:00:00Z")
        );
        assert!(
            days.url().ends_with("&since=2026-11-01&until=2026-11-30"),
            "{}",
            days.url()
        );
    }
}
