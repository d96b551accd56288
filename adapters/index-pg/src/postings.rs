//! The analysed postings of one source for the three BM25 fields, computed
//! in Rust with the shared analyzer so both Index adapters rank alike.

use std::collections::HashMap;

use minirag_core::chunk::Chunk;
use minirag_rank::{breadcrumb_repeats, Analyzer};

/// `(term, tf)` pairs of a text, sorted by term, and its length in terms.
pub(crate) struct Field {
    pub terms: Vec<(String, i32)>,
    pub len: i64,
}

fn field(terms: Vec<String>) -> Field {
    let len = terms.len() as i64;
    let mut tf: HashMap<String, i32> = HashMap::new();
    for t in terms {
        *tf.entry(t).or_default() += 1;
    }
    let mut terms: Vec<(String, i32)> = tf.into_iter().collect();
    terms.sort_unstable();
    Field { terms, len }
}

pub(crate) struct SourcePostings {
    pub chunks: Vec<Field>,
    /// The whole document: chunk term frequencies summed, less the
    /// breadcrumb terms its chunks repeat (at least 1 where present).
    pub document: Field,
    pub title: Field,
}

pub(crate) fn source_postings(
    analyzer: &Analyzer,
    title: &str,
    chunks: &[Chunk],
) -> SourcePostings {
    let chunk_fields: Vec<Field> = chunks
        .iter()
        .map(|c| field(analyzer.terms(&c.text)))
        .collect();
    let repeats = breadcrumb_repeats(
        analyzer,
        chunks
            .iter()
            .map(|c| c.text.get(..c.layout.prefix_len as usize).unwrap_or("")),
    );
    let mut doc: HashMap<&str, i64> = HashMap::new();
    let mut len = 0i64;
    for f in &chunk_fields {
        len += f.len;
        for (t, tf) in &f.terms {
            *doc.entry(t.as_str()).or_default() += i64::from(*tf);
        }
    }
    let mut terms: Vec<(String, i32)> = doc
        .into_iter()
        .map(|(t, tf)| {
            let excess = i64::from(repeats.terms.get(t).copied().unwrap_or(0));
            (t.to_string(), (tf - excess).max(1) as i32)
        })
        .collect();
    terms.sort_unstable();
    SourcePostings {
        chunks: chunk_fields,
        document: Field {
            terms,
            len: len - repeats.len as i64,
        },
        title: field(analyzer.terms(title)),
    }
}
