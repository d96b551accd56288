//! Weighted reciprocal rank fusion and the post-fusion filters.

use crate::search::{Candidate, ChunkKey, DocumentHit};

/// RRF damping constant.
pub(crate) const RRF_K: f64 = 60.0;

/// A fused hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    /// Which chunk.
    pub key: ChunkKey,
    /// Its fused score, higher is better.
    pub score: f64,
    /// Vector distance when the hit was in the vector window; `None` for
    /// keyword-only hits.
    pub distance: Option<f32>,
}

/// Statistical gap grouping of hits by distance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// Keep the group before the first large gap.
    Similar,
    /// Keep the groups before the second large gap.
    Related,
}

/// Fuses the vector list (nearest first) and the keyword list (best first).
///
/// `weight` is the keyword share: 0 gives pure vector order with score
/// 1/(1+distance); otherwise each list contributes `w/(60 + rank + 1)` with
/// w = 1 − weight for vectors and `weight` for keywords. Ties keep vector
/// order, then keyword-only hits in keyword order.
pub fn fuse(vector: &[Candidate], keyword: &[Candidate], weight: f64) -> Vec<Fused> {
    if weight <= 0.0 {
        return vector
            .iter()
            .map(|c| Fused {
                key: c.key.clone(),
                score: 1.0 / (1.0 + c.value as f64),
                distance: Some(c.value),
            })
            .collect();
    }
    let mut hits: Vec<Fused> = Vec::with_capacity(vector.len() + keyword.len());
    let mut position = std::collections::HashMap::with_capacity(vector.len() + keyword.len());
    for (rank, c) in vector.iter().enumerate() {
        if position.contains_key(&c.key) {
            continue;
        }
        position.insert(c.key.clone(), hits.len());
        hits.push(Fused {
            key: c.key.clone(),
            score: (1.0 - weight) / (RRF_K + rank as f64 + 1.0),
            distance: Some(c.value),
        });
    }
    for (rank, c) in keyword.iter().enumerate() {
        let add = weight / (RRF_K + rank as f64 + 1.0);
        match position.get(&c.key) {
            Some(&i) => hits[i].score += add,
            None => {
                position.insert(c.key.clone(), hits.len());
                hits.push(Fused {
                    key: c.key.clone(),
                    score: add,
                    distance: None,
                });
            }
        }
    }
    // Stable: equal scores keep insertion order.
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    hits
}

/// Documents ranked by the evidence of their keyword chunks alone, for an
/// index without whole-document statistics: each document's candidate chunk
/// scores, best first, summed with halving weights (max + ½·second + ¼·third
/// …). Best first; ties by source. A document's best chunk is its first in
/// the (best-first) keyword list.
pub(crate) fn document_ranking(keyword: &[Candidate]) -> Vec<DocumentHit> {
    let mut per_doc: Vec<(&str, u32, f64, f64)> = Vec::new();
    let mut at: std::collections::HashMap<&str, usize> = Default::default();
    for c in keyword {
        let i = *at.entry(&c.key.source).or_insert_with(|| {
            per_doc.push((&c.key.source, c.key.index, 0.0, 1.0));
            per_doc.len() - 1
        });
        let (_, _, sum, weight) = &mut per_doc[i];
        *sum += *weight * c.value as f64;
        *weight *= 0.5;
    }
    let mut docs: Vec<DocumentHit> = per_doc
        .into_iter()
        .map(|(source, best_chunk, sum, _)| DocumentHit {
            source: source.to_string(),
            score: sum as f32,
            best_chunk,
        })
        .collect();
    docs.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.source.cmp(&b.source))
    });
    docs
}

/// How many of the ascending `distances` form the first group (`Similar`)
/// or the first two groups (`Related`). A boundary is a gap larger than
/// twice the mean gap; fewer than three distances are one group.
pub(crate) fn relevance_cutoff(distances: &[f64], mode: Grouping) -> usize {
    let n = distances.len();
    if n < 3 {
        return n;
    }
    let gaps: Vec<f64> = distances.windows(2).map(|w| w[1] - w[0]).collect();
    let threshold = 2.0 * gaps.iter().sum::<f64>() / gaps.len() as f64;
    if threshold <= 0.0 {
        return n;
    }
    let boundaries: Vec<usize> = gaps
        .iter()
        .enumerate()
        .filter(|(_, g)| **g > threshold)
        .map(|(i, _)| i + 1)
        .collect();
    match mode {
        Grouping::Similar => boundaries.first().copied().unwrap_or(n),
        Grouping::Related => boundaries.get(1).copied().unwrap_or(n),
    }
}

/// Drops hits with no distance or a distance above `max`.
pub(crate) fn filter_max_distance(hits: Vec<Fused>, max: f64) -> Vec<Fused> {
    hits.into_iter()
        .filter(|h| h.distance.is_some_and(|d| d as f64 <= max))
        .collect()
}

/// Keeps keyword-only hits and hits whose distance lies in the kept group;
/// hits tied with the group's last distance survive together. Order is kept.
pub fn apply_grouping(hits: Vec<Fused>, mode: Grouping) -> Vec<Fused> {
    let mut distances: Vec<f64> = hits
        .iter()
        .filter_map(|h| h.distance.map(f64::from))
        .collect();
    distances.sort_by(f64::total_cmp);
    let cut = relevance_cutoff(&distances, mode);
    let Some(limit) = cut.checked_sub(1).map(|i| distances[i]) else {
        return hits.into_iter().filter(|h| h.distance.is_none()).collect();
    };
    hits.into_iter()
        .filter(|h| h.distance.is_none_or(|d| f64::from(d) <= limit))
        .collect()
}

/// Keeps hits from the first `max` distinct sources in rank order.
pub(crate) fn apply_max_files(hits: Vec<Fused>, max: usize) -> Vec<Fused> {
    let mut kept: Vec<String> = Vec::new();
    hits.into_iter()
        .filter(|h| {
            if kept.contains(&h.key.source) {
                return true;
            }
            if kept.len() < max {
                kept.push(h.key.source.clone());
                return true;
            }
            false
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str, i: u32) -> ChunkKey {
        ChunkKey {
            source: s.into(),
            index: i,
        }
    }

    fn cand(s: &str, v: f32) -> Candidate {
        Candidate {
            key: key(s, 0),
            value: v,
        }
    }

    #[test]
    fn cutoff_table() {
        use Grouping::*;
        assert_eq!(relevance_cutoff(&[], Similar), 0);
        assert_eq!(relevance_cutoff(&[0.1, 0.11], Similar), 2);
        let a = [0.10, 0.11, 0.12, 0.55, 0.56];
        assert_eq!(
            (relevance_cutoff(&a, Similar), relevance_cutoff(&a, Related)),
            (3, 5)
        );
        let b = [0.10, 0.11, 0.40, 0.41, 0.80, 0.81];
        assert_eq!(
            (relevance_cutoff(&b, Similar), relevance_cutoff(&b, Related)),
            (2, 4)
        );
        assert_eq!(
            relevance_cutoff(&[0.10, 0.11, 0.20, 0.21, 0.30], Similar),
            5
        );
        assert_eq!(relevance_cutoff(&[0.5; 4], Related), 4);
    }

    #[test]
    fn weighted_rrf_scores() {
        let v = [cand("a", 0.1), cand("b", 0.2)];
        let k = [cand("b", 9.0), cand("c", 5.0)];
        let hits = fuse(&v, &k, 0.6);
        let b = 0.4 / 62.0 + 0.6 / 61.0;
        assert_eq!(hits[0].key.source, "b");
        assert!((hits[0].score - b).abs() < 1e-12);
        let names: Vec<&str> = hits.iter().map(|h| h.key.source.as_str()).collect();
        assert_eq!(names, ["b", "c", "a"]);
        assert_eq!(hits[1].distance, None);
        assert_eq!(hits[2].distance, Some(0.1));
    }

    #[test]
    fn weight_zero_is_vector_order_with_inverse_distance_score() {
        let v = [cand("a", 0.5), cand("b", 1.0)];
        let hits = fuse(&v, &[cand("z", 1.0)], 0.0);
        assert_eq!(hits.len(), 2);
        assert!((hits[0].score - 1.0 / 1.5).abs() < 1e-9);
        assert_eq!(hits[1].key.source, "b");
    }

    #[test]
    fn weight_one_keeps_vector_hits_with_score_zero() {
        let hits = fuse(&[cand("a", 0.1)], &[cand("k", 3.0)], 1.0);
        assert_eq!(hits[0].key.source, "k");
        assert_eq!(hits[1].key.source, "a");
        assert_eq!(hits[1].score, 0.0);
    }

    #[test]
    fn max_distance_drops_keyword_only_and_far_hits() {
        let hits = fuse(&[cand("a", 0.1), cand("b", 0.9)], &[cand("k", 1.0)], 0.6);
        let kept = filter_max_distance(hits, 0.5);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].key.source, "a");
    }

    #[test]
    fn grouping_keeps_null_distance_and_ties() {
        let v: Vec<Candidate> = [0.10, 0.11, 0.11, 0.55, 0.56]
            .iter()
            .enumerate()
            .map(|(i, d)| cand(&format!("s{i}"), *d))
            .collect();
        let hits = fuse(&v, &[cand("k", 1.0)], 0.6);
        let kept = apply_grouping(hits.clone(), Grouping::Similar);
        let names: Vec<&str> = kept.iter().map(|h| h.key.source.as_str()).collect();
        // The keyword-only hit ranks first and survives; the far group is cut;
        // the tie at 0.11 survives together; fused order is kept.
        assert_eq!(names, ["k", "s0", "s1", "s2"]);
    }

    #[test]
    fn document_ranking_sums_halving_chunk_scores_and_keeps_the_best_chunk() {
        let k = [
            Candidate {
                key: key("a", 4),
                value: 4.0,
            },
            Candidate {
                key: key("b", 1),
                value: 3.0,
            },
            Candidate {
                key: key("b", 7),
                value: 3.0,
            },
            Candidate {
                key: key("a", 2),
                value: 2.0,
            },
        ];
        let docs = document_ranking(&k);
        let got: Vec<(&str, f32, u32)> = docs
            .iter()
            .map(|d| (d.source.as_str(), d.score, d.best_chunk))
            .collect();
        // a: 4 + ½·2; b: 3 + ½·3; each keeps its first (best) chunk.
        assert_eq!(got, [("a", 5.0, 4), ("b", 4.5, 1)]);
    }

    #[test]
    fn max_files_keeps_first_sources() {
        let hits = vec![
            Fused {
                key: key("a", 0),
                score: 3.0,
                distance: None,
            },
            Fused {
                key: key("b", 0),
                score: 2.0,
                distance: None,
            },
            Fused {
                key: key("a", 1),
                score: 1.0,
                distance: None,
            },
        ];
        let kept = apply_max_files(hits, 1);
        assert_eq!(kept.len(), 2);
        assert!(kept.iter().all(|h| h.key.source == "a"));
    }
}
