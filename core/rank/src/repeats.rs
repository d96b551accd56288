//! Breadcrumb repeats: every chunk of a section starts with the section's
//! breadcrumb, so a section of five chunks holds its heading five times
//! where the document holds it once.

use std::collections::HashMap;

use crate::Analyzer;

/// Breadcrumb terms counted more than once across a source's chunks: each
/// run of chunks with the same breadcrumb repeats its terms once per chunk
/// after the first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Repeats {
    /// Each repeated term and how many extra times the chunks hold it.
    pub terms: HashMap<String, u32>,
    /// How many terms in all (the excess document length).
    pub len: u64,
}

/// The repeats of one source, from its chunks' breadcrumb prefixes in
/// chunk order (one analysis per run of equal prefixes).
pub fn breadcrumb_repeats<'a>(
    analyzer: &Analyzer,
    prefixes: impl IntoIterator<Item = &'a str>,
) -> Repeats {
    let mut r = Repeats::default();
    let mut last: Option<(&str, Vec<String>)> = None;
    for prefix in prefixes {
        match &last {
            Some((p, terms)) if *p == prefix => {
                for t in terms {
                    *r.terms.entry(t.clone()).or_default() += 1;
                }
                r.len += terms.len() as u64;
            }
            _ => last = Some((prefix, analyzer.terms(prefix))),
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_equal_breadcrumbs_counts_once() {
        let a = Analyzer::default();
        let r = breadcrumb_repeats(
            &a,
            [
                "Install > Linux",
                "Install > Linux",
                "Install > Linux",
                "Usage",
                "",
            ],
        );
        assert_eq!(r.terms.get("linux"), Some(&2));
        assert_eq!(r.terms.get("usag"), None);
        assert_eq!(r.len, 4);
    }
}
