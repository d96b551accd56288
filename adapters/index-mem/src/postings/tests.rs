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
    assert_eq!(p.len(), 5);
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
    assert!(long.byte_len() <= 2 * 100_000, "{} bytes", long.byte_len());
}

#[test]
fn copies_share_the_bytes_and_append_without_copying_them() {
    let mut p = Postings::default();
    let pairs: Vec<(u32, u32)> = (0..50_000).map(|d| (d * 7, d % 5 + 1)).collect();
    for &(d, tf) in &pairs {
        p.add(d, tf);
    }
    let Postings::Many { list, tail, .. } = &p else {
        panic!("a long list")
    };
    let levels = list.levels().count();
    assert!((2..=12).contains(&levels), "{levels} levels");
    let sizes: Vec<usize> = list.levels().map(|l| l.len()).collect();
    assert!(sizes.windows(2).all(|w| w[0] >= 2 * w[1]), "{sizes:?}");
    assert!((*tail as usize) < FREEZE_AT);
    let original = Arc::clone(list);

    // A copy (a newer generation's) appends into the same bytes; the
    // original reads as it was.
    let mut newer = p.clone();
    newer.add(1_000_000, 3);
    let Postings::Many { list: shared, .. } = &newer else {
        panic!("a long list")
    };
    assert!(Arc::ptr_eq(shared, &original), "appended in place, no copy");
    assert_eq!(p.iter().collect::<Vec<_>>(), pairs);
    let mut walked = Vec::new();
    each_posting!(&p, |d, tf| {
        walked.push((d, tf));
    });
    assert_eq!(walked, pairs, "each_posting walks what iter yields");
    let mut longer = pairs.clone();
    longer.push((1_000_000, 3));
    assert_eq!(newer.iter().collect::<Vec<_>>(), longer);
    assert_eq!((p.len(), newer.len()), (50_000, 50_001));

    // The original appending past its end, where the copy wrote, copies
    // its tail first (sharing the levels): neither sees the other's.
    p.add(2_000_000, 4);
    let Postings::Many { list: own, .. } = &p else {
        panic!("a long list")
    };
    assert!(!Arc::ptr_eq(own, &original), "copied");
    assert!(Arc::ptr_eq(
        own.base.as_ref().unwrap(),
        original.base.as_ref().unwrap()
    ));
    let mut other = pairs.clone();
    other.push((2_000_000, 4));
    assert_eq!(p.iter().collect::<Vec<_>>(), other);
    assert_eq!(newer.iter().collect::<Vec<_>>(), longer);

    // Appending until the tail freezes leaves every copy whole.
    let before = newer.clone();
    for d in 0..200 {
        newer.add(3_000_000 + d, 1);
    }
    assert_eq!(before.iter().collect::<Vec<_>>(), longer);
    assert_eq!(newer.iter().count(), longer.len() + 200);

    // Built whole, a list is one level of exactly its bytes.
    let whole = Postings::from_sorted(pairs.iter().copied());
    let Postings::Many { list, tail, .. } = &whole else {
        panic!("a long list")
    };
    assert_eq!((list.levels().count(), *tail), (1, 0));
    assert_eq!(whole.iter().collect::<Vec<_>>(), pairs);
}

#[test]
fn copies_appending_on_other_threads_read_their_own_postings() {
    let mut p = Postings::from_sorted((0..10).map(|d| (d, 1)));
    p.add(10, 1);
    let readers: Vec<Postings> = (0..4).map(|_| p.clone()).collect();
    std::thread::scope(|s| {
        for (i, mut r) in readers.into_iter().enumerate() {
            s.spawn(move || {
                for d in 0..300 {
                    r.add(100 + d * (i as u32 + 1), i as u32 + 1);
                }
                let got: Vec<(u32, u32)> = r.iter().collect();
                assert_eq!(got.len(), 311);
                assert!(got[11..]
                    .iter()
                    .enumerate()
                    .all(|(d, &p)| p == (100 + d as u32 * (i as u32 + 1), i as u32 + 1)));
            });
        }
        s.spawn(|| assert_eq!(p.iter().count(), 11, "the original reads on"));
    });
}

#[test]
fn purging_keeps_what_it_is_told_and_remove_drops_one() {
    let mut p = Postings::from_sorted((0..10).map(|d| (d, 1)));
    p.purge(|d| d >= 6);
    assert_eq!(p.iter().map(|x| x.0).collect::<Vec<_>>(), [6, 7, 8, 9]);
    assert_eq!(p.len(), 4);
    p.remove(8);
    assert_eq!(p.iter().map(|x| x.0).collect::<Vec<_>>(), [6, 7, 9]);
    p.purge(|_| false);
    assert!(p.is_empty());
}
