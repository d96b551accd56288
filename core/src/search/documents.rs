//! Document-first fusion (issue 13). Answers are chunks, but a question is
//! usually about a document, and the evidence that a document is the answer
//! is spread over its sections: on the eval's `dev` queries whole-document
//! BM25 alone beat chunk-level hybrid fusion (nDCG@10 0.867 against 0.842).
//!
//! So documents are ranked first, by weighted RRF over three document lists
//! (the vector chunks collapsed to their documents, the keyword chunks
//! likewise, and whole-document BM25), with a small k so that the head of
//! each list decides. Chunks follow their document: the j-th chunk of a
//! document (in chunk-level fusion order) scores its document's score ×
//! ½^j, so the best chunk of every strong document comes before a second
//! chunk of any, and a document found only as a whole shows its best chunk.

use std::collections::HashMap;

use super::fusion::{fuse, Fused};
use super::{Candidate, ChunkKey, DocumentHit};

/// RRF constant of the document lists. 60 (the chunk lists') flattens the
/// head of a list that holds one entry per document; on `dev`, k 3–10 gave
/// nDCG@10 0.893–0.899 and k 60 0.882.
pub const DOC_RRF_K: f64 = 5.0;
/// Weight of the whole-document list relative to the keyword weight
/// (`dev`: 1.0 0.894, 1.33 0.894, 1.67 0.895, 2.0 0.895 at k 5).
pub const DOCUMENT_SHARE: f64 = 1.5;
/// Each further chunk of one document scores this fraction of the one
/// before it.
pub const NEXT_CHUNK_DECAY: f64 = 0.5;

/// The documents of a chunk list in order of first appearance.
fn documents_of(list: &[Candidate]) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for c in list {
        if !seen.contains(&c.key.source.as_str()) {
            seen.push(&c.key.source);
        }
    }
    seen
}

/// Each document's fused score over the three document lists.
pub fn document_scores<'a>(
    vector: &'a [Candidate],
    keyword: &'a [Candidate],
    documents: &'a [DocumentHit],
    weight: f64,
) -> HashMap<&'a str, f64> {
    let mut scores: HashMap<&str, f64> = HashMap::new();
    let mut add = |list: Vec<&'a str>, w: f64| {
        if w <= 0.0 {
            return;
        }
        for (rank, doc) in list.into_iter().enumerate() {
            *scores.entry(doc).or_default() += w / (DOC_RRF_K + rank as f64 + 1.0);
        }
    };
    add(documents_of(vector), 1.0 - weight);
    add(documents_of(keyword), weight);
    add(
        documents.iter().map(|d| d.source.as_str()).collect(),
        weight * DOCUMENT_SHARE,
    );
    scores
}

/// Fuses the vector and keyword chunk lists and the whole-document list
/// into chunks ranked document first (module doc). `weight` is the keyword
/// share, as in [`fuse`]; at 0 the answer is [`fuse`]'s pure vector order.
pub fn fuse_documents(
    vector: &[Candidate],
    keyword: &[Candidate],
    documents: &[DocumentHit],
    weight: f64,
) -> Vec<Fused> {
    let chunks = fuse(vector, keyword, weight);
    if weight <= 0.0 {
        return chunks;
    }
    let scores = document_scores(vector, keyword, documents, weight);
    let mut shown: HashMap<String, i32> = HashMap::new();
    let mut out: Vec<Fused> = Vec::with_capacity(chunks.len() + documents.len());
    for mut hit in chunks {
        let doc = scores.get(hit.key.source.as_str()).copied().unwrap_or(0.0);
        let j = shown.entry(hit.key.source.clone()).or_default();
        hit.score = doc * NEXT_CHUNK_DECAY.powi(*j);
        *j += 1;
        out.push(hit);
    }
    for d in documents {
        if !shown.contains_key(&d.source) {
            shown.insert(d.source.clone(), 1);
            out.push(Fused {
                key: ChunkKey {
                    source: d.source.clone(),
                    index: d.best_chunk,
                },
                score: scores.get(d.source.as_str()).copied().unwrap_or(0.0),
                distance: None,
            });
        }
    }
    // Stable: equal scores keep chunk-fusion order.
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(s: &str, i: u32, v: f32) -> Candidate {
        Candidate {
            key: ChunkKey {
                source: s.into(),
                index: i,
            },
            value: v,
        }
    }

    fn doc(s: &str, best: u32) -> DocumentHit {
        DocumentHit {
            source: s.into(),
            score: 1.0,
            best_chunk: best,
        }
    }

    fn order(hits: &[Fused]) -> Vec<(&str, u32)> {
        hits.iter()
            .map(|h| (h.key.source.as_str(), h.key.index))
            .collect()
    }

    #[test]
    fn a_document_strong_as_a_whole_outranks_one_strong_chunk() {
        // a's chunk leads the vector list, b's the keyword list, and b is
        // the best document as a whole: b's best chunk leads, a's follows,
        // and b's second chunk comes after a's first.
        let v = [cand("a", 0, 0.1), cand("b", 3, 0.2), cand("b", 4, 0.3)];
        let k = [cand("b", 4, 9.0), cand("a", 0, 8.0), cand("b", 3, 7.0)];
        let d = [doc("b", 4), doc("a", 0)];
        let hits = fuse_documents(&v, &k, &d, 0.6);
        assert_eq!(order(&hits), [("b", 4), ("a", 0), ("b", 3)]);
        let b = 0.4 / 7.0 + 0.6 / 6.0 + 0.6 * DOCUMENT_SHARE / 6.0;
        assert!((hits[0].score - b).abs() < 1e-12);
        assert!((hits[2].score - b * NEXT_CHUNK_DECAY).abs() < 1e-12);
        assert_eq!(hits[0].distance, Some(0.3), "the chunk keeps its distance");
    }

    #[test]
    fn a_document_found_only_as_a_whole_shows_its_best_chunk() {
        let v = [cand("a", 0, 0.1)];
        let k = [cand("a", 0, 5.0)];
        let d = [doc("c", 7), doc("a", 0)];
        let hits = fuse_documents(&v, &k, &d, 0.6);
        assert_eq!(order(&hits), [("a", 0), ("c", 7)]);
        assert_eq!(hits[1].distance, None);
        assert!(hits[1].score > 0.0);
    }

    #[test]
    fn weight_zero_is_the_vector_order_and_weight_one_ignores_vectors() {
        let v = [cand("a", 0, 0.5), cand("b", 0, 1.0)];
        let k = [cand("b", 0, 3.0)];
        let d = [doc("b", 0)];
        let pure = fuse_documents(&v, &k, &d, 0.0);
        assert_eq!(order(&pure), [("a", 0), ("b", 0)]);
        assert!((pure[0].score - 1.0 / 1.5).abs() < 1e-9);
        let keyword = fuse_documents(&v, &k, &d, 1.0);
        assert_eq!(order(&keyword), [("b", 0), ("a", 0)]);
        assert_eq!(keyword[1].score, 0.0, "a vector-only hit has no say");
    }
}
