use super::*;
use std::collections::HashMap;

fn t(s: &str) -> Vec<String> {
    s.split(' ').map(str::to_string).collect()
}

#[test]
fn rarer_terms_and_shorter_docs_score_higher() {
    let mut f = Field::default();
    f.add(0, &t("apple banana"));
    f.add(1, &t("apple cherry cherry date elderberry fig grape"));
    f.add(2, &t("apple"));
    let mut scores = HashMap::new();
    f.score(&["cherry", "apple"], |d, s| {
        *scores.entry(d).or_insert(0.0) += s
    });
    assert!(scores[&1] > scores[&0], "cherry is rare");
    let mut only_apple = HashMap::new();
    f.score(&["apple"], |d, s| *only_apple.entry(d).or_insert(0.0) += s);
    assert!(
        only_apple[&2] > only_apple[&1],
        "shorter doc wins on a common term"
    );
}

#[test]
fn a_write_to_a_copy_copies_the_length_pages_it_touches() {
    let mut f = Field::default();
    for d in 0..20_000 {
        f.add(d, &t("a b"));
    }
    let held = f.clone();
    f.retire(5);
    f.add(20_000, &t("b c"));
    // Five pages of 4,096 lengths: the first (a retired document) and the
    // last (a new one) are copied, the three between stay shared.
    assert_eq!(f.lengths.pages_shared_with(&held.lengths), 3);
    assert_eq!((held.length(5), f.length(5), f.length(20_000)), (2, 0, 2));
}

#[test]
fn adding_documents_together_equals_adding_them_one_by_one_and_leaves_a_copy_alone() {
    let docs: Vec<Vec<String>> = (0..300u32)
        .map(|d| t(&format!("w{} w{} w{} common w{}", d % 7, d % 13, d % 7, d)))
        .collect();
    let (mut one_by_one, mut together) = (Field::default(), Field::default());
    for (d, terms) in docs.iter().enumerate().take(100) {
        one_by_one.add(d as u32, terms);
        together.add(d as u32, terms);
    }
    let held = together.clone();
    for (d, terms) in docs.iter().enumerate().skip(100) {
        one_by_one.add(d as u32, terms);
    }
    together.add_all(
        docs.iter()
            .enumerate()
            .skip(100)
            .map(|(d, terms)| (d as u32, terms.as_slice())),
    );
    assert_same_scores(
        &together,
        &one_by_one,
        &["w0", "w3", "w12", "common", "w150", "w299"],
    );
    assert_eq!(
        scores_of(&held, "common").len(),
        100,
        "the copy keeps its 100"
    );
    assert_eq!(scores_of(&held, "w150"), []);
}

#[test]
fn remove_then_renumber() {
    let mut f = Field::default();
    f.add(0, &t("a b"));
    f.add(1, &t("b c"));
    f.remove(0, &t("a b"));
    let mut hits = Vec::new();
    f.score(&["a"], |d, _| hits.push(d));
    assert!(hits.is_empty());
    f.renumber(&[None, Some(0)], 1);
    let mut hits = Vec::new();
    f.score(&["c"], |d, _| hits.push(d));
    assert_eq!(hits, [0]);
}

/// Both fields score each of `terms` alike, document by document.
fn assert_same_scores(a: &Field, b: &Field, terms: &[&str]) {
    for term in terms {
        assert_eq!(scores_of(a, term), scores_of(b, term), "{term}");
    }
}

#[test]
fn retired_documents_score_as_if_never_added_and_a_copy_keeps_them() {
    // "c" is in every document, "w{d}" in one: retiring most of them
    // leaves lists of mostly retired postings, and some of none live.
    let docs: Vec<Vec<String>> = (0..40)
        .map(|d| t(&format!("c w{d} w{} c", d % 3)))
        .collect();
    let gone = |d: u32| !d.is_multiple_of(5);
    let mut retired = Field::default();
    let mut never = Field::default();
    for (d, terms) in docs.iter().enumerate() {
        retired.add(d as u32, terms);
        if !gone(d as u32) {
            never.add(d as u32, terms);
        }
    }
    let held = retired.clone();
    (0..40).filter(|&d| gone(d)).for_each(|d| retired.retire(d));
    let terms = ["c", "w0", "w1", "w2", "w5", "w7"];
    assert_same_scores(&retired, &never, &terms);
    // The same eight documents with no slot retired (their document
    // frequency counted from the lists' sizes) score alike, slot d/5.
    let mut dense = Field::default();
    for d in (0..40).filter(|&d| !gone(d)) {
        dense.add(d / 5, &docs[d as usize]);
    }
    assert_eq!(dense.retired(), 0);
    for term in terms {
        let x: Vec<(u32, f32)> = scores_of(&retired, term)
            .into_iter()
            .map(|(d, s)| (d / 5, s))
            .collect();
        assert_eq!(x, scores_of(&dense, term), "{term}");
    }
    assert!(retired.holds("w7"), "doc 7's postings stay");
    let mut hits = Vec::new();
    retired.score(&["w7"], |d, _| hits.push(d));
    assert!(hits.is_empty(), "doc 7 alone held w7");
    let mut all = Vec::new();
    held.score(&["c"], |d, _| all.push(d));
    assert_eq!(all.len(), 40, "the copy taken before still reads them");

    retired.purge_retired();
    assert_same_scores(&retired, &never, &terms);
    assert!(!retired.holds("w7"), "purged");
}

#[test]
fn writes_beside_a_copy_go_to_segments_and_read_as_writes_in_place() {
    let docs: Vec<Vec<String>> = (0..300u32)
        .map(|d| t(&format!("w{} w{} common w{} w{}", d % 7, d % 13, d % 7, d)))
        .collect();
    let write = |f: &mut Field, from: usize, to: usize| {
        f.add_all((from..to).map(|d| (d as u32, docs[d].as_slice())));
    };
    let (mut in_place, mut beside) = (Field::default(), Field::default());
    write(&mut in_place, 0, 100);
    write(&mut beside, 0, 100);
    let held = beside.clone();
    for from in (100..300).step_by(10) {
        write(&mut in_place, from, from + 10);
        write(&mut beside, from, from + 10);
    }
    assert!(in_place.delta.is_empty());
    let added: usize = docs[100..].iter().map(|d| frequencies(d).len()).sum();
    assert_eq!(
        beside.delta.postings(),
        added,
        "every write beside the copy"
    );
    // Retired documents in the lists and in the segments.
    for d in [3, 50, 150, 299] {
        in_place.retire(d);
        beside.retire(d);
    }
    let terms = ["w0", "w3", "w12", "common", "w150", "w299", "w42"];
    assert_same_scores(&beside, &in_place, &terms);
    let grouped = |f: &Field| {
        let mut out = Vec::new();
        let group_of = |d: u32| Some(d / 10);
        f.score_groups(
            &terms,
            30,
            30,
            group_of,
            |_| 50,
            |_, _| 0,
            0,
            |g, s| out.push((g, s)),
        );
        out
    };
    assert_eq!(grouped(&beside), grouped(&in_place));
    let raw = |f: &Field| {
        let mut out = Vec::new();
        f.write_raw(&mut out).unwrap();
        out
    };
    assert_eq!(raw(&beside), raw(&in_place), "the snapshot holds the same");
    assert!(beside.fits(300) && !beside.fits(299));
    assert_eq!(beside.dangling(|d| d < 300), (0, true));
    assert_eq!(
        beside.dangling(|d| d < 200).0,
        in_place.dangling(|d| d < 200).0
    );

    // With the copy gone, writes still go to the segments (folding them
    // could make a write in place long); a write that is not all new slots
    // folds them in first.
    assert_eq!(
        scores_of(&held, "common").len(),
        100,
        "the copy keeps its 100"
    );
    drop(held);
    let more = t("common w301");
    in_place.add(300, &more);
    beside.add(300, &more);
    assert!(!beside.delta.is_empty());
    assert_same_scores(&beside, &in_place, &terms);
    in_place.remove(300, &more);
    beside.remove(300, &more);
    assert!(beside.delta.is_empty(), "folded");
    assert_same_scores(&beside, &in_place, &terms);
    assert_eq!(raw(&beside), raw(&in_place));
}

#[test]
fn segments_fold_into_the_lists_once_they_hold_a_quarter_of_the_field() {
    let words = t("a b c d");
    let (mut f, mut in_place) = (Field::default(), Field::default());
    let _held = f.clone();
    let per_write = 1_000;
    let writes = FOLD_DELTA as usize / (4 * per_write);
    for w in 0..=writes {
        let docs = (w * per_write..(w + 1) * per_write).map(|d| (d as u32, words.as_slice()));
        f.add_all(docs.clone());
        in_place.add_all(docs);
        let held = f.delta.postings();
        assert_eq!(
            held == 0,
            w == writes,
            "write {w}: {held} postings in segments"
        );
    }
    assert_same_scores(&f, &in_place, &["a", "d", "e"]);
}

fn scores_of(f: &Field, term: &str) -> Vec<(u32, f32)> {
    let mut x = Vec::new();
    f.score(&[term], |d, s| x.push((d, s)));
    x
}
