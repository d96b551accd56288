//! Fusion and scope properties.

use minirag_core::ports::{Candidate, ChunkKey};
use minirag_core::search::fusion::apply_grouping;
use minirag_core::search::{fuse, is_under, Grouping};
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
