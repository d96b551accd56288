//! The ranking rules every Index adapter must share to rank alike:
//!
//! - how text becomes terms ([`Analyzer`]) and which terms a query has
//!   ([`Analyzer::query_terms`]);
//! - the one BM25 ([`bm25`], or [`idf`] × [`tf_part`] where the idf is
//!   computed once per term) and the title's weight ([`title_score`]);
//! - which breadcrumb terms a source's chunks repeat
//!   ([`breadcrumb_repeats`]), so whole-document BM25 counts a section's
//!   headings once, as the document has them;
//! - a document's best chunk ([`BestChunk`]) and the top k ([`TopK`],
//!   [`best_first`]), ties broken by the lower id.

#![forbid(unsafe_code)]

mod analyzer;
mod best_chunk;
mod repeats;
mod top_k;
mod word_memo;

pub use analyzer::Analyzer;
pub use best_chunk::BestChunk;
pub use repeats::{breadcrumb_repeats, Repeats};
pub use top_k::{best_first, TopK};

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

/// BM25 of one term in one document: [`idf`] × [`tf_part`], the formula
/// every adapter scores with.
pub fn bm25(n: f32, df: f32, tf: f32, dl: f32, avg: f32) -> f32 {
    idf(n, df) * tf_part(tf, dl, avg)
}

/// A title's contribution to a chunk or document score: its BM25 over the
/// title field at [`TITLE_WEIGHT`]. Every chunk of the source gets it,
/// matched or not.
pub fn title_score<S: From<f32> + std::ops::Mul<Output = S>>(title_bm25: S) -> S {
    S::from(TITLE_WEIGHT) * title_bm25
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed: N = 10, df = 2, tf = 3, dl = avg (so the length part
    /// is 1): idf = ln(1 + 8.5 / 2.5) = ln 4.4; tf part = 3 × 2.2 / 4.2.
    #[test]
    fn bm25_matches_the_hand_computed_value() {
        let want = 4.4f32.ln() * (3.0 * 2.2 / 4.2);
        assert!((bm25(10.0, 2.0, 3.0, 7.0, 7.0) - want).abs() < 1e-6);
        // A longer document scores a term lower; idf never goes negative.
        assert!(bm25(10.0, 2.0, 3.0, 20.0, 7.0) < want);
        assert!(idf(10.0, 10.0) > 0.0);
        assert_eq!(title_score(2.0f32), 2.0 * TITLE_WEIGHT);
    }
}
