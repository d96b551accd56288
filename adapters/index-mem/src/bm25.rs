//! Hand-written BM25 inverted index over two fields: chunk text, and the
//! document title (one title per source, applied to all of its chunks).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

pub use minirag_analyzer::TITLE_WEIGHT;
use minirag_analyzer::{idf, tf_part};

/// One field's postings: term → (doc, term frequency), sorted by doc.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Field {
    postings: HashMap<String, Vec<(u32, u32)>>,
    lengths: Vec<u32>,
    live: u64,
    total_len: u64,
}

fn frequencies(terms: &[String]) -> Vec<(&str, u32)> {
    let mut tf: HashMap<&str, u32> = HashMap::new();
    for t in terms {
        *tf.entry(t.as_str()).or_default() += 1;
    }
    let mut v: Vec<(&str, u32)> = tf.into_iter().collect();
    v.sort_unstable();
    v
}

impl Field {
    pub fn add(&mut self, doc: u32, terms: &[String]) {
        if self.lengths.len() <= doc as usize {
            self.lengths.resize(doc as usize + 1, 0);
        }
        self.lengths[doc as usize] = terms.len() as u32;
        self.live += 1;
        self.total_len += terms.len() as u64;
        for (term, tf) in frequencies(terms) {
            // Most terms are known: look up by &str, allocate only a new one.
            let list = match self.postings.get_mut(term) {
                Some(list) => list,
                None => self.postings.entry(term.to_string()).or_default(),
            };
            match list.binary_search_by_key(&doc, |p| p.0) {
                Ok(i) => list[i].1 = tf,
                Err(i) => list.insert(i, (doc, tf)),
            }
        }
    }

    /// Removes a document given the terms it was added with.
    pub fn remove(&mut self, doc: u32, terms: &[String]) {
        for (term, _) in frequencies(terms) {
            if let Some(list) = self.postings.get_mut(term) {
                if let Ok(i) = list.binary_search_by_key(&doc, |p| p.0) {
                    list.remove(i);
                }
                if list.is_empty() {
                    self.postings.remove(term);
                }
            }
        }
        if let Some(len) = self.lengths.get_mut(doc as usize) {
            self.total_len -= *len as u64;
            *len = 0;
            self.live -= 1;
        }
    }

    /// BM25 of every document matching any of `terms` (distinct terms).
    pub fn score(&self, terms: &[&str], mut add: impl FnMut(u32, f32)) {
        if self.live == 0 {
            return;
        }
        let n = self.live as f32;
        let avg = (self.total_len as f32 / n).max(1.0);
        for term in terms {
            let Some(list) = self.postings.get(*term) else {
                continue;
            };
            let idf = idf(n, list.len() as f32);
            for &(doc, tf) in list {
                let dl = self.lengths[doc as usize] as f32;
                add(doc, idf * tf_part(tf as f32, dl, avg));
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
            let Some(list) = self.postings.get(*term) else {
                continue;
            };
            for &(doc, tf) in list {
                if let Some(g) = group_of(doc) {
                    let t = &mut tf_of[g as usize];
                    if *t == 0 {
                        touched.push(g);
                    }
                    *t += tf;
                }
            }
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

    /// Every document that holds one of `terms`, once per term it holds.
    pub fn holders<'a>(&'a self, terms: &'a [&str]) -> impl Iterator<Item = u32> + 'a {
        terms
            .iter()
            .filter_map(|t| self.postings.get(*t))
            .flat_map(|list| list.iter().map(|&(doc, _)| doc))
    }

    /// BM25 of one document for `terms` (distinct), its term frequencies
    /// found by binary search: for a few documents, far cheaper than
    /// walking every posting as [`Field::score`] does.
    pub fn score_one(&self, doc: u32, terms: &[&str]) -> f32 {
        if self.live == 0 {
            return 0.0;
        }
        let n = self.live as f32;
        let avg = (self.total_len as f32 / n).max(1.0);
        let dl = self.length(doc) as f32;
        let mut score = 0.0;
        for term in terms {
            let Some(list) = self.postings.get(*term) else {
                continue;
            };
            let Ok(i) = list.binary_search_by_key(&doc, |p| p.0) else {
                continue;
            };
            let tf = list[i].1 as f32;
            score += idf(n, list.len() as f32) * tf_part(tf, dl, avg);
        }
        score
    }

    /// The length a document was added with (0 once removed).
    pub fn length(&self, doc: u32) -> u32 {
        self.lengths.get(doc as usize).copied().unwrap_or(0)
    }

    /// Re-numbers documents after compaction (`map[old] = Some(new)`).
    pub fn renumber(&mut self, map: &[Option<u32>], new_len: usize) {
        for list in self.postings.values_mut() {
            let mut kept: Vec<(u32, u32)> = list
                .iter()
                .filter_map(|&(d, tf)| map.get(d as usize).copied().flatten().map(|n| (n, tf)))
                .collect();
            kept.sort_unstable();
            *list = kept;
        }
        self.postings.retain(|_, l| !l.is_empty());
        let mut lengths = vec![0; new_len];
        for (old, new) in map.iter().enumerate() {
            if let Some(n) = new {
                lengths[*n as usize] = self.lengths.get(old).copied().unwrap_or(0);
            }
        }
        self.lengths = lengths;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
