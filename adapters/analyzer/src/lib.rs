//! What every Index adapter must agree on to rank alike: how text becomes
//! terms ([`Analyzer`]), the BM25 parameters, and which breadcrumb terms a
//! source's chunks repeat ([`breadcrumb_repeats`]), so whole-document BM25
//! counts a section's headings once, as the document has them.

#![forbid(unsafe_code)]

mod analyzer;
mod repeats;

pub use analyzer::Analyzer;
pub use repeats::{breadcrumb_repeats, Repeats};

/// BM25 term-frequency saturation.
pub const K1: f32 = 1.2;
/// BM25 length normalisation.
pub const B: f32 = 0.75;
/// Title field weight relative to the text field. A title match says the
/// whole document is about the term, so it must lift a document whose body
/// only mentions the term in passing; but titles are short, so their BM25
/// is already high (short field, saturated tf), and a full weight would let
/// any chunk of a matching document outrank the chunk that answers. 0.5
/// keeps title-only matches findable and body matches first.
pub const TITLE_WEIGHT: f32 = 0.5;

/// BM25's inverse document frequency: `n` documents, `df` of them hold the
/// term (Lucene's form, never negative).
pub fn idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// BM25's saturated term frequency: `tf` occurrences in a document of `dl`
/// terms against an average of `avg`. A term's score is `idf × tf_part`.
pub fn tf_part(tf: f32, dl: f32, avg: f32) -> f32 {
    tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / avg))
}
