//! Hand-written BM25 inverted index over two fields: chunk text, and the
//! document title (one title per source, applied to all of its chunks).

use minirag_rank::{idf, tf_part};

use std::sync::Arc;

use crate::lists::Lists;
use crate::pages::Column;
use crate::postings::{self, each_posting, Postings};
use crate::terms::Terms;

mod raw;
mod wire;

/// One field's postings: term → (doc, term frequency), sorted by doc, kept
/// compact ([`Terms`], [`Postings`]). A copy shares the dictionary and the
/// lists, so the next generation of the index costs what its write
/// changes (see [`Lists`] and [`Pages`](crate::pages::Pages)).
#[derive(Debug, Clone, Default)]
pub struct Field {
    /// Copied whole only when a write to a shared copy adds a term.
    terms: Arc<Terms>,
    /// By term id.
    postings: Lists,
    /// By document; 0 for a removed one. In pages, so a write copies the
    /// pages of the documents it adds or removes, not the column.
    lengths: Column<u32>,
    live: u64,
    total_len: u64,
}

/// Each distinct term with its count, sorted: the terms sorted, then runs
/// counted (a chunk's hundred-odd terms sort faster than they hash).
fn frequencies(terms: &[String]) -> Vec<(&str, u32)> {
    let mut sorted: Vec<&str> = terms.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    let mut out: Vec<(&str, u32)> = Vec::with_capacity(sorted.len());
    for term in sorted {
        match out.last_mut() {
            Some((last, tf)) if *last == term => *tf += 1,
            _ => out.push((term, 1)),
        }
    }
    out
}

impl Field {
    pub fn add(&mut self, doc: u32, terms: &[String]) {
        self.add_all([(doc, terms)]);
    }

    /// Adds documents (each past every document held) with their terms, the
    /// lists a few postings on fetched ahead: a list and the bytes its
    /// append writes are seldom in cache, and each would otherwise wait for
    /// memory list after list.
    pub fn add_all<'a>(&mut self, docs: impl IntoIterator<Item = (u32, &'a [String])>) {
        let mut adds: Vec<(u32, u32, u32)> = Vec::new();
        for (doc, terms) in docs {
            self.lengths.grow(doc as usize + 1, 0);
            self.lengths[doc as usize] = terms.len() as u32;
            self.live += 1;
            self.total_len += terms.len() as u64;
            for (term, tf) in frequencies(terms) {
                let id = match self.terms.get(term) {
                    Some(id) => id,
                    None => Arc::make_mut(&mut self.terms).add_new(term),
                };
                if id as usize == self.postings.len() {
                    self.postings.push(Postings::default());
                }
                adds.push((id, doc, tf));
            }
        }
        let ahead = |i: usize| adds.get(i).map(|a| a.0);
        for (i, &(id, doc, tf)) in adds.iter().enumerate() {
            self.fetch_ahead(i, ahead);
            self.postings[id as usize].add(doc, tf);
        }
        self.postings.settle();
    }

    /// Fetches ahead for step `i` of a pass over lists, where `at(j)` is
    /// the list step `j` writes: three steps, each needing the line the
    /// one before fetched (the list's slot in its page, the list, and the
    /// bytes an append to it writes).
    fn fetch_ahead(&self, i: usize, at: impl Fn(usize) -> Option<u32>) {
        if let Some(id) = at(i + 16) {
            postings::prefetch((&self.postings[id as usize] as *const Postings).cast());
        }
        if let Some(id) = at(i + 8) {
            self.postings[id as usize].prefetch_list();
        }
        if let Some(id) = at(i + 4) {
            self.postings[id as usize].prefetch_tail();
        }
    }

    /// Counts a document out: its length and the field's totals.
    fn count_out(&mut self, doc: u32) {
        if let Some(len) = self.lengths.get_mut(doc as usize) {
            self.total_len -= *len as u64;
            *len = 0;
            self.live -= 1;
        }
    }

    /// Removes a document given the terms it was added with, its postings
    /// at once: for a field whose ids come back (the title field's sources).
    pub fn remove(&mut self, doc: u32, terms: &[String]) {
        self.count_out(doc);
        for (term, _) in frequencies(terms) {
            if let Some(id) = self.terms.get(term) {
                self.postings[id as usize].remove(doc);
            }
        }
        self.postings.settle();
    }

    /// Counts a document out: its postings stay, skipped by every reader
    /// (its length is 0) and counted by none, until [`Field::purge_retired`]
    /// or compaction drops them. So retiring reads no list and no text, and
    /// writes nothing another generation shares but a page of lengths. The
    /// id must not be added again before [`Field::renumber`] (the text
    /// field's slots never are).
    pub fn retire(&mut self, doc: u32) {
        self.count_out(doc);
    }

    /// Drops the postings of every retired document: one pass over all
    /// lists, for when a large part of the field was removed at once (the
    /// memory back now, not at the next compaction).
    pub fn purge_retired(&mut self) {
        let lengths = &self.lengths;
        self.postings
            .all_mut()
            .for_each_mut(|list| list.purge(|d| alive(lengths, d)));
    }

    /// A term's postings, `None` when the term holds none.
    fn list(&self, term: &str) -> Option<&Postings> {
        let list = &self.postings[self.terms.get(term)? as usize];
        (!list.is_empty()).then_some(list)
    }

    /// Live postings of a list (a retired document's length is 0, and a
    /// document of no terms has no postings).
    fn live_postings<'a>(&'a self, list: &'a Postings) -> impl Iterator<Item = (u32, u32)> + 'a {
        list.iter().filter(|&(doc, _)| alive(&self.lengths, doc))
    }

    /// BM25 of every document matching any of `terms` (distinct terms).
    /// A term's document frequency is its live postings: with no document
    /// retired, every posting it holds (counted from its bytes); otherwise
    /// counted on the way, each one's part kept until the count gives the
    /// idf.
    pub fn score(&self, terms: &[&str], mut add: impl FnMut(u32, f32)) {
        if self.live == 0 {
            return;
        }
        let n = self.live as f32;
        let avg = (self.total_len as f32 / n).max(1.0);
        let none_retired = self.retired() == 0;
        let mut parts: Vec<(u32, f32)> = Vec::new();
        for term in terms {
            let Some(list) = self.list(term) else {
                continue;
            };
            if none_retired {
                let idf = idf(n, list.len() as f32);
                each_posting!(list, |doc, tf| {
                    let dl = self.length(doc);
                    if dl > 0 {
                        add(doc, idf * tf_part(tf as f32, dl as f32, avg));
                    }
                });
                continue;
            }
            parts.clear();
            each_posting!(list, |doc, tf| {
                let dl = self.length(doc);
                if dl > 0 {
                    parts.push((doc, tf_part(tf as f32, dl as f32, avg)));
                }
            });
            let idf = idf(n, parts.len() as f32);
            for &(doc, part) in &parts {
                add(doc, idf * part);
            }
        }
    }

    /// BM25 with documents grouped into larger ones (a source made of its
    /// chunks): a group's term frequency is the sum over its members, its
    /// length the sum of theirs, a term's document frequency counts groups,
    /// and `live` groups make the collection. Group ids are below
    /// `group_ids`; `group_of` maps a member to its group (`None`: a removed
    /// member). `excess(group, term)` is how many of the group's occurrences
    /// of `term` not to count (text its members repeat), `excess_len` the
    /// length they all repeat; `group_len` is net of it.
    #[allow(clippy::too_many_arguments)]
    pub fn score_groups(
        &self,
        terms: &[&str],
        group_ids: usize,
        live: usize,
        group_of: impl Fn(u32) -> Option<u32>,
        group_len: impl Fn(u32) -> u64,
        excess: impl Fn(u32, &str) -> u32,
        excess_len: u64,
        mut add: impl FnMut(u32, f32),
    ) {
        if live == 0 || self.live == 0 {
            return;
        }
        let n = live as f32;
        let avg = (self.total_len.saturating_sub(excess_len) as f32 / n).max(1.0);
        // Dense per-group counters and the groups touched, as the chunk
        // side does: a frequent term reaches most groups.
        let mut tf_of = vec![0u32; group_ids];
        let mut touched: Vec<u32> = Vec::new();
        // A group's length sums its members': once per group and query.
        let mut lengths = vec![f32::NAN; group_ids];
        for term in terms {
            let Some(list) = self.list(term) else {
                continue;
            };
            each_posting!(list, |doc, tf| {
                if alive(&self.lengths, doc) {
                    if let Some(g) = group_of(doc) {
                        let t = &mut tf_of[g as usize];
                        if *t == 0 {
                            touched.push(g);
                        }
                        *t += tf;
                    }
                }
            });
            let idf = idf(n, touched.len() as f32);
            for &g in &touched {
                let tf = std::mem::take(&mut tf_of[g as usize]);
                let tf = tf.saturating_sub(excess(g, term)).max(1) as f32;
                let dl = &mut lengths[g as usize];
                if dl.is_nan() {
                    *dl = group_len(g) as f32;
                }
                add(g, idf * tf_part(tf, *dl, avg));
            }
            touched.clear();
        }
    }

    /// Postings that name a document no longer in the field, or that
    /// `exists` does not know; and documents in the field whose length
    /// does not add up to the field's total. For `verify`.
    pub fn dangling(&self, exists: impl Fn(u32) -> bool) -> (u64, bool) {
        let mut bad = 0;
        for list in self.postings.iter() {
            for (doc, _) in self.live_postings(list) {
                if !exists(doc) {
                    bad += 1;
                }
            }
        }
        let total: u64 = self.lengths.iter().map(|&l| u64::from(l)).sum();
        (bad, total == self.total_len)
    }

    /// Whether every posting and length names a document below `n`: what
    /// a decoded snapshot must hold before it is used.
    pub fn fits(&self, n: usize) -> bool {
        // A list's documents rise, so its last one is its largest.
        self.lengths.len() <= n
            && self.postings.iter().all(|list| {
                list.last_doc()
                    .is_none_or(|doc| (doc as usize) < self.lengths.len())
            })
    }

    /// Documents retired since the field was last renumbered: their
    /// postings are still in the lists, read past by every query.
    pub fn retired(&self) -> u64 {
        (self.lengths.len() as u64).saturating_sub(self.live)
    }

    /// Documents in the field.
    pub fn live(&self) -> u64 {
        self.live
    }

    /// The length a document was added with (0 once removed).
    pub fn length(&self, doc: u32) -> u32 {
        self.lengths.get(doc as usize).copied().unwrap_or(0)
    }

    /// Lets go of the superseded pages of lists that copies made beside
    /// views keep alive ([`ChainedPages`](crate::chained_pages)), for a
    /// field compaction hands on.
    pub fn straighten(&mut self) {
        self.postings.all_mut().straighten();
    }

    /// Re-numbers documents after compaction (`map[old] = Some(new)`),
    /// dropping retired postings. List by list, in place, so compacting a
    /// big index never holds two copies of its postings; a term no document
    /// holds any more stays in the dictionary, with no postings, until the
    /// snapshot is next opened.
    pub fn renumber(&mut self, map: &[Option<u32>], new_len: usize) {
        let lists = self.postings.all_mut();
        for i in 0..lists.len() {
            let list = &lists[i];
            let mut kept: Vec<(u32, u32)> = list
                .iter()
                .filter(|&(d, _)| alive(&self.lengths, d))
                .filter_map(|(d, tf)| map.get(d as usize).copied().flatten().map(|n| (n, tf)))
                .collect();
            kept.sort_unstable();
            lists[i] = Postings::from_sorted(kept);
        }
        let mut lengths = vec![0; new_len];
        for (old, new) in map.iter().enumerate() {
            if let Some(n) = new {
                lengths[*n as usize] = self.lengths.get(old).copied().unwrap_or(0);
            }
        }
        self.lengths = Column::from_slice(&lengths);
    }
}

/// Whether `doc` is still in the field: a retired one has length 0, and a
/// document of no terms has no postings to ask about.
fn alive(lengths: &Column<u32>, doc: u32) -> bool {
    lengths.get(doc as usize).is_some_and(|&l| l > 0)
}

#[cfg(test)]
mod tests {
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
        let scores = |f: &Field, term: &str| {
            let mut x = Vec::new();
            f.score(&[term], |d, s| x.push((d, s)));
            x
        };
        for term in ["w0", "w3", "w12", "common", "w150", "w299"] {
            assert_eq!(scores(&together, term), scores(&one_by_one, term), "{term}");
        }
        assert_eq!(scores(&held, "common").len(), 100, "the copy keeps its 100");
        assert_eq!(scores(&held, "w150"), []);
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
            let mut x = Vec::new();
            a.score(&[term], |d, s| x.push((d, s)));
            let mut y = Vec::new();
            b.score(&[term], |d, s| y.push((d, s)));
            assert_eq!(x, y, "{term}");
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
            let mut x = Vec::new();
            retired.score(&[term], |d, s| x.push((d / 5, s)));
            let mut y = Vec::new();
            dense.score(&[term], |d, s| y.push((d, s)));
            assert_eq!(x, y, "{term}");
        }
        assert!(retired.list("w7").is_some(), "doc 7's postings stay");
        let mut hits = Vec::new();
        retired.score(&["w7"], |d, _| hits.push(d));
        assert!(hits.is_empty(), "doc 7 alone held w7");
        let mut all = Vec::new();
        held.score(&["c"], |d, _| all.push(d));
        assert_eq!(all.len(), 40, "the copy taken before still reads them");

        retired.purge_retired();
        assert_same_scores(&retired, &never, &terms);
        assert!(retired.list("w7").is_none(), "purged");
    }
}
