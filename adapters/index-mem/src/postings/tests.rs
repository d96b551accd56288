//! Postings: order, compactness, sharing between copies, retiring.

use super::*;

#[test]
fn round_trips_in_order_and_out_of_order() {
    let mut p = Postings::default();
    for (d, tf) in [(0, 1), (5, 300), (200_000, 2), (u32::MAX - 1, 1)] {
        p.add(d, tf);
    }
    p.add(7, 9); // out of order: a rebuild
    p.add(5, 4); // an existing document: its frequency replaced
    let got: Vec<_> = p.iter().collect();
    assert_eq!(
        got,
        [(0, 1), (5, 4), (7, 9), (200_000, 2), (u32::MAX - 1, 1)]
    );
    assert_eq!((p.len(), p.live()), (5, 5));
}

#[test]
fn a_short_list_stays_inline_and_a_long_one_is_compact() {
    assert_eq!(std::mem::size_of::<Postings>(), 16);
    let mut p = Postings::default();
    p.add(123_456, 1);
    assert!(
        matches!(p, Postings::One { .. }),
        "a rare term needs no heap block"
    );
    p.add(123_460, 2);
    let Postings::Many { list: m, .. } = &p else {
        panic!("two postings")
    };
    assert!(
        m.base.is_none() && m.upper.is_none() && !m.tail.spilled(),
        "a short list stays inline"
    );
    let mut long = Postings::default();
    for d in 0..100_000 {
        long.add(d * 3, 1);
    }
    let Postings::Many { list: m, .. } = &long else {
        panic!("a long list")
    };
    assert!(m.byte_len() <= 2 * 100_000, "{} bytes", m.byte_len());
}

#[test]
fn a_copy_shares_the_frozen_levels_and_copies_only_a_short_tail() {
    let mut p = Postings::default();
    let pairs: Vec<(u32, u32)> = (0..50_000).map(|d| (d * 7, d % 5 + 1)).collect();
    for &(d, tf) in &pairs {
        p.add(d, tf);
    }
    let Postings::Many { list, .. } = &p else {
        panic!("a long list")
    };
    let levels = list.levels().count();
    assert!((2..=12).contains(&levels), "{levels} levels");
    let sizes: Vec<usize> = list.levels().map(|l| l.len()).collect();
    assert!(sizes.windows(2).all(|w| w[0] >= 2 * w[1]), "{sizes:?}");
    assert!(list.tail.len() < FREEZE_AT);
    let copy = Many::clone(list);
    assert!(Arc::ptr_eq(
        copy.base.as_ref().unwrap(),
        list.base.as_ref().unwrap()
    ));
    assert!(Arc::ptr_eq(
        copy.upper.as_ref().unwrap(),
        list.upper.as_ref().unwrap()
    ));
    // The copy appends on its own; the original reads as it was.
    let mut shared = p.clone();
    shared.add(1_000_000, 3);
    assert_eq!(p.iter().collect::<Vec<_>>(), pairs);
    let mut walked = Vec::new();
    each_posting!(&p, |d, tf| {
        walked.push((d, tf));
    });
    assert_eq!(walked, pairs, "each_posting walks what iter yields");
    let mut longer = pairs.clone();
    longer.push((1_000_000, 3));
    assert_eq!(shared.iter().collect::<Vec<_>>(), longer);
    // Built whole, a list is one level of exactly its bytes.
    let whole = Postings::from_sorted(pairs.iter().copied());
    let Postings::Many { list, .. } = &whole else {
        panic!("a long list")
    };
    assert_eq!((list.levels().count(), list.tail.len()), (1, 0));
    assert_eq!(whole.iter().collect::<Vec<_>>(), pairs);
}

#[test]
fn retired_postings_are_counted_then_purged() {
    let mut p = Postings::from_sorted((0..10).map(|d| (d, 1)));
    let gone = |d: u32| d < 6;
    for _ in 0..5 {
        p.retire(|d| !gone(d));
    }
    assert_eq!((p.len(), p.live()), (10, 5), "not yet the majority");
    p.retire(|d| !gone(d));
    assert_eq!((p.len(), p.live()), (4, 4), "purged once dead > half");
    assert_eq!(p.iter().map(|x| x.0).collect::<Vec<_>>(), [6, 7, 8, 9]);
    p.remove(8);
    assert_eq!(p.iter().map(|x| x.0).collect::<Vec<_>>(), [6, 7, 9]);
}
