//! Document-first fusion. Answers are chunks, but a question is usually
//! about a document, and the evidence that a document is the answer is
//! spread over its sections: on the eval's `dev` queries whole-document
//! BM25 alone beat chunk-level hybrid fusion (docs/quality.md).
//!
//! So documents are ranked first, by a convex combination of two normalised
//! scores (Bruch et al., "An Analysis of Fusion Functions for Hybrid
//! Retrieval", 2023: it beat RRF in and out of domain): the document's
//! vector similarity (its best chunk's cosine, min-max scaled over the
//! vector window) at 1 − weight, and its whole-document BM25 (divided by
//! the best) at the keyword weight. Chunks follow their document: the j-th
//! chunk of a document (in chunk-level RRF order) scores its document's
//! score × ½^j, so the best chunk of every strong document comes before a
//! second chunk of any, and a document found only as a whole shows its best
//! chunk. On `dev` this beat RRF over the three lists collapsed to
//! documents (docs/quality.md).

use std::collections::HashMap;

use super::fusion::{fuse, Fused};
use super::validate::MIN_CANDIDATES;
use super::{Candidate, ChunkKey, DocumentHit};

/// Each further chunk of one document scores this fraction of the one
/// before it (`dev`: 0.3, 0.5 and 0.7 gave the same ranking).
pub(crate) const NEXT_CHUNK_DECAY: f64 = 0.5;

/// Each document's fused score (module doc): normalised best-chunk cosine
/// at `1 − weight` plus normalised whole-document BM25 at `weight`. A
/// document missing from a list gets 0 from it.
pub(crate) fn document_scores<'a>(
    vector: &'a [Candidate],
    documents: &'a [DocumentHit],
    weight: f64,
) -> HashMap<&'a str, f64> {
    let mut scores: HashMap<&str, f64> = HashMap::new();
    // Squared L2 on unit vectors is 2 − 2·cos.
    let best_cosines = |candidates: &'a [Candidate]| {
        let mut cosine: HashMap<&'a str, f64> = HashMap::new();
        for c in candidates {
            let cos = 1.0 - f64::from(c.value) / 2.0;
            let best = cosine.entry(&c.key.source).or_insert(f64::MIN);
            *best = best.max(cos);
        }
        cosine
    };
    // Scaled over the documents of the nearest candidates every query has
    // (`MIN_CANDIDATES`), so a hit's score does not change with the number
    // of results asked for (which widens the window past `topK` 30); a
    // document further down scales to 0.
    let (low, high) = best_cosines(&vector[..vector.len().min(MIN_CANDIDATES)])
        .values()
        .fold((f64::MAX, f64::MIN), |(l, h), &c| (l.min(c), h.max(c)));
    let cosine = best_cosines(vector);
    for (doc, cos) in cosine {
        let scaled = if high > low {
            ((cos - low) / (high - low)).max(0.0)
        } else {
            1.0
        };
        *scores.entry(doc).or_default() += (1.0 - weight) * scaled;
    }
    let top = documents
        .iter()
        .map(|d| f64::from(d.score))
        .fold(0.0, f64::max);
    for d in documents {
        let scaled = if top > 0.0 {
            f64::from(d.score) / top
        } else {
            0.0
        };
        *scores.entry(&d.source).or_default() += weight * scaled;
    }
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
    let scores = document_scores(vector, documents, weight);
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

    fn doc_scored(s: &str, best: u32, score: f32) -> DocumentHit {
        DocumentHit {
            source: s.into(),
            score,
            best_chunk: best,
        }
    }

    #[test]
    fn a_hits_score_does_not_change_with_the_window() {
        let names: Vec<String> = (0..200).map(|i| format!("d{i}")).collect();
        let v: Vec<Candidate> = names
            .iter()
            .enumerate()
            .map(|(i, n)| cand(n, 0, 0.1 + 0.005 * i as f32))
            .collect();
        let d = [doc_scored("d3", 0, 5.0), doc_scored("d0", 0, 4.0)];
        let narrow = fuse_documents(&v[..MIN_CANDIDATES], &[], &d, 0.5);
        let wide = fuse_documents(&v, &[], &d, 0.5);
        for hit in &narrow[..10] {
            let same = wide.iter().find(|w| w.key == hit.key).unwrap();
            assert_eq!(hit.score, same.score, "{:?}", hit.key);
        }
    }

    #[test]
    fn a_document_strong_as_a_whole_outranks_one_strong_chunk() {
        // a's chunk is nearest and leads the keyword list, but b matches
        // far better as a whole document: b's best chunk leads, a's
        // follows, and b's second chunk comes after a's first.
        let v = [cand("a", 0, 0.2), cand("b", 3, 0.4), cand("b", 4, 0.6)];
        let k = [cand("a", 0, 9.0), cand("b", 3, 8.0), cand("b", 4, 7.0)];
        let d = [doc_scored("b", 3, 10.0), doc_scored("a", 0, 2.0)];
        let hits = fuse_documents(&v, &k, &d, 0.6);
        assert_eq!(order(&hits), [("b", 3), ("a", 0), ("b", 4)]);
        // b: cosine 0.8 of the window's 0.8..0.9 scales to 0, BM25 to 1.
        let b = 0.6;
        let a = 0.4 + 0.6 * 0.2;
        assert!((hits[0].score - b).abs() < 1e-9, "{}", hits[0].score);
        assert!((hits[1].score - a).abs() < 1e-9, "{}", hits[1].score);
        assert!((hits[2].score - b * NEXT_CHUNK_DECAY).abs() < 1e-9);
        assert_eq!(hits[0].distance, Some(0.4), "the chunk keeps its distance");
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
