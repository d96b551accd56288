//! Fusion and scope properties.

use minirag_core::ports::{Candidate, ChunkKey};
use minirag_core::search::fusion::apply_grouping;
use minirag_core::search::{fuse, fuse_documents, is_under, DocumentHit, Grouping};
use proptest::prelude::*;

fn key(i: u32) -> ChunkKey {
    ChunkKey {
        source: format!("/d/{}.md", i % 7),
        index: i,
    }
}

/// A ranked list of distinct ids with ascending values.
fn ranked(ids: Vec<u32>, values: Vec<f32>) -> Vec<Candidate> {
    let mut seen = std::collections::HashSet::new();
    let mut vals = values;
    vals.sort_by(f32::total_cmp);
    ids.into_iter()
        .filter(|i| seen.insert(*i))
        .zip(vals)
        .map(|(i, v)| Candidate {
            key: key(i),
            value: v,
        })
        .collect()
}

fn lists() -> impl Strategy<Value = (Vec<Candidate>, Vec<Candidate>)> {
    (
        prop::collection::vec(0u32..200, 0..60),
        prop::collection::vec(0f32..4.0, 60),
        prop::collection::vec(0u32..200, 0..60),
        prop::collection::vec(0f32..30.0, 60),
    )
        .prop_map(|(a, av, b, bv)| (ranked(a, av), ranked(b, bv)))
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 1000,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn first_on_both_sides_ranks_first((mut v, mut k) in lists(), weight in 0.0f64..=1.0, top in 1000u32..2000) {
        let top_key = key(top);
        v.insert(0, Candidate { key: top_key.clone(), value: 0.0 });
        k.insert(0, Candidate { key: top_key.clone(), value: 99.0 });
        let fused = fuse(&v, &k, weight);
        prop_assert_eq!(&fused[0].key, &top_key);
    }

    #[test]
    fn weight_zero_is_vector_order((v, k) in lists()) {
        let fused = fuse(&v, &k, 0.0);
        let got: Vec<&ChunkKey> = fused.iter().map(|f| &f.key).collect();
        let want: Vec<&ChunkKey> = v.iter().map(|c| &c.key).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn every_candidate_appears_once((v, k) in lists(), weight in 0.01f64..=1.0) {
        let fused = fuse(&v, &k, weight);
        let mut keys: Vec<&ChunkKey> = fused.iter().map(|f| &f.key).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        prop_assert_eq!(keys.len(), n);
        let mut all: Vec<&ChunkKey> = v.iter().chain(&k).map(|c| &c.key).collect();
        all.sort();
        all.dedup();
        prop_assert_eq!(all.len(), n);
        prop_assert!(fused.windows(2).all(|w| w[0].score >= w[1].score));
    }

    #[test]
    fn grouping_never_reorders((v, k) in lists(), weight in 0.0f64..=1.0, related in any::<bool>()) {
        let fused = fuse(&v, &k, weight);
        let mode = if related { Grouping::Related } else { Grouping::Similar };
        let kept = apply_grouping(fused.clone(), mode);
        let mut it = fused.iter();
        for h in &kept {
            prop_assert!(it.any(|f| f.key == h.key), "order changed or hit invented");
        }
        prop_assert!(fused.iter().filter(|h| h.distance.is_none()).all(|h| kept.iter().any(|k| k.key == h.key)));
    }

    #[test]
    fn scope_never_matches_a_sibling_prefix(
        base in "(/[a-zA-Z0-9 ._%-]{1,8}){0,3}",
        name in "[a-zA-Z0-9._%-]{1,8}",
        suffix in "[a-zA-Z0-9 ._%-]{1,6}",
        tail in "(/[a-z0-9.]{1,8}){0,3}",
        slash in any::<bool>(),
    ) {
        let scope = format!("{base}/{name}{}", if slash { "/" } else { "" });
        let sibling = format!("{base}/{name}{suffix}{tail}");
        prop_assert!(!is_under(&sibling, &scope), "{scope} matched {sibling}");
        let child = format!("{base}/{name}{tail}");
        prop_assert!(is_under(&child, &scope), "{scope} missed {child}");
    }
}

/// Whole-document hits over the sources `key` spreads ids over, best first.
fn documents() -> impl Strategy<Value = Vec<DocumentHit>> {
    prop::collection::vec((0u32..7, 0.1f32..50.0, 0u32..200), 0..7).prop_map(|mut docs| {
        docs.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut seen = std::collections::HashSet::new();
        docs.into_iter()
            .filter(|(s, _, _)| seen.insert(*s))
            .map(|(s, score, best)| DocumentHit {
                source: format!("/d/{s}.md"),
                score,
                best_chunk: best,
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(config())]

    /// What queries use: every chunk of either list appears once, every
    /// document is shown by at least one chunk, scores fall, and within a
    /// document each further chunk scores exactly half the one before.
    #[test]
    fn document_fusion_shows_everything_once_best_first((v, k) in lists(), docs in documents(), weight in 0.01f64..=1.0) {
        let fused = fuse_documents(&v, &k, &docs, weight);
        let mut keys: Vec<&ChunkKey> = fused.iter().map(|f| &f.key).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        prop_assert_eq!(keys.len(), n, "a chunk twice");
        for c in v.iter().chain(&k) {
            prop_assert!(fused.iter().any(|f| f.key == c.key), "{:?} lost", c.key);
        }
        for d in &docs {
            prop_assert!(fused.iter().any(|f| f.key.source == d.source), "{} not shown", d.source);
        }
        prop_assert!(fused.windows(2).all(|w| w[0].score >= w[1].score));
        let mut last: std::collections::HashMap<&str, f64> = Default::default();
        for f in fused.iter().filter(|f| f.distance.is_some() || k.iter().any(|c| c.key == f.key)) {
            if let Some(prev) = last.insert(f.key.source.as_str(), f.score) {
                prop_assert!((f.score - prev * 0.5).abs() <= 1e-9 * prev.abs().max(1.0),
                    "{} after {} in {}", f.score, prev, f.key.source);
            }
        }
    }

    /// A document first in the document list and nearest on the vector
    /// side leads, whatever the weight.
    #[test]
    fn the_best_document_on_both_sides_leads((mut v, k) in lists(), mut docs in documents(), weight in 0.01f64..0.99) {
        let top = DocumentHit { source: "/top.md".into(), score: 1000.0, best_chunk: 0 };
        docs.insert(0, top);
        v.insert(0, Candidate { key: ChunkKey { source: "/top.md".into(), index: 0 }, value: 0.0 });
        let fused = fuse_documents(&v, &k, &docs, weight);
        prop_assert_eq!(fused[0].key.source.as_str(), "/top.md");
    }
}
