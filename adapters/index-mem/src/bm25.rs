//! Hand-written BM25 inverted index over two fields: chunk text, and the
//! document title (one title per source, applied to all of its chunks).

use minirag_rank::{idf, tf_part};

use std::sync::Arc;

use crate::lists::Lists;
use crate::pages::{Column, Pages};
use crate::postings::{self, each_posting, Postings};
use crate::terms::Terms;
use delta::Delta;

/// The delta goes into the lists, even beside views, once it holds this
/// many postings and a quarter of the field's length: a query then reads a
/// few segments more at most, and the fold's copies are paid rarely.
const FOLD_DELTA: u64 = 1 << 16;

pub(crate) mod delta;
mod raw;
mod wire;

/// One field's postings: term → (doc, term frequency), sorted by doc, kept
/// compact ([`Terms`], [`Postings`]). A copy shares the dictionary and the
/// lists, so the next generation of the index costs what its write
/// changes (see [`Lists`], [`Delta`] and [`Pages`](crate::pages::Pages)).
#[derive(Debug, Clone, Default)]
pub struct Field {
    /// Copied whole only when a write to a shared copy adds a term.
    terms: Arc<Terms>,
    /// By term id, up to the newest documents of `delta`.
    postings: Lists,
    /// Postings added beside views since, each document past every one in
    /// `postings`: a term's list is its list there and then its lists here.
    delta: Delta,
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
        // New slots (past every document held) go to a segment beside a
        // view that shares the lists, and while segments are held (folding
        // them could make a write in place, which a query may wait for,
        // long); anything else into the lists themselves.
        let first_new = self.lengths.len() as u32;
        let mut all_new = true;
        for (doc, terms) in docs {
            all_new &= doc >= first_new;
            self.lengths.grow(doc as usize + 1, 0);
            self.lengths[doc as usize] = terms.len() as u32;
            self.live += 1;
            self.total_len += terms.len() as u64;
            for (term, tf) in frequencies(terms) {
                let id = match self.terms.get(term) {
                    Some(id) => id,
                    None => Arc::make_mut(&mut self.terms).add_new(term),
                };
                adds.push((id, doc, tf));
            }
        }
        if all_new && (!self.delta.is_empty() || self.postings.shared()) {
            self.delta.push(&mut adds);
            if self.delta.postings() as u64 >= FOLD_DELTA.max(self.total_len / 4) {
                self.fold_delta();
            }
            return;
        }
        self.fold_delta();
        self.grow_lists();
        let ahead = |i: usize| adds.get(i).map(|a| a.0);
        let lists = self.postings.all_mut();
        for (i, &(id, doc, tf)) in adds.iter().enumerate() {
            fetch_ahead(lists, i, ahead);
            lists[id as usize].add(doc, tf);
        }
    }

    /// A list for every term, empty for those only the delta held.
    fn grow_lists(&mut self) {
        while self.postings.len() < self.terms.len() as usize {
            self.postings.push(Postings::default());
        }
    }

    /// Moves the delta's postings into the lists (in place when no view
    /// shares them, else through copies of what they change).
    fn fold_delta(&mut self) {
        if self.delta.is_empty() {
            return;
        }
        self.grow_lists();
        let lists = self.postings.all_mut();
        for segment in self.delta.take() {
            for (id, run) in segment.runs() {
                let into = &mut lists[id as usize];
                run.iter().for_each(|(doc, tf)| into.add(doc, tf));
            }
        }
    }

    /// Term `id`'s list in the lists (`None` when it holds no posting).
    fn list(&self, id: u32) -> Option<&Postings> {
        self.postings.get(id as usize).filter(|l| !l.is_empty())
    }

    /// Runs `one` on each posting of term `id`, retired or not, in
    /// document order: its list's, then its segments'. The scoring loops'
    /// hot path, the list's loop expanded in place.
    #[inline(always)]
    fn each_posting(&self, id: u32, mut one: impl FnMut(u32, u32)) {
        if let Some(list) = self.list(id) {
            each_posting!(list, |doc, tf| { one(doc, tf) });
        }
        for run in self.delta.runs(id) {
            run.iter().for_each(|(doc, tf)| one(doc, tf));
        }
    }

    /// Term `id`'s postings held: in its list and its segments.
    fn held(&self, id: u32) -> u32 {
        let runs: u32 = self.delta.runs(id).map(|r| r.len()).sum();
        self.list(id).map_or(0, Postings::len) + runs
    }

    /// Term `id`'s postings as one list (borrowed when no segment holds
    /// any), for the passes over every list: checks and snapshots.
    pub(crate) fn whole_list(&self, id: u32) -> std::borrow::Cow<'_, Postings> {
        let list = self.list(id);
        if self.delta.runs(id).next().is_none() {
            return match list {
                Some(list) => std::borrow::Cow::Borrowed(list),
                None => std::borrow::Cow::Owned(Postings::Empty),
            };
        }
        let own = list.into_iter().flat_map(Postings::iter);
        let runs = self.delta.runs(id).flat_map(|r| r.iter());
        std::borrow::Cow::Owned(Postings::from_sorted(own.chain(runs)))
    }

    /// Whether `term` holds a posting, retired or not, for tests.
    #[cfg(test)]
    fn holds(&self, term: &str) -> bool {
        self.terms.get(term).is_some_and(|id| self.held(id) > 0)
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
        self.fold_delta();
        self.count_out(doc);
        for (term, _) in frequencies(terms) {
            if let Some(id) = self.terms.get(term) {
                self.postings[id as usize].remove(doc);
            }
        }
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
        self.fold_delta();
        let lengths = &self.lengths;
        self.postings
            .all_mut()
            .for_each_mut(|list| list.purge(|d| alive(lengths, d)));
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
            let Some(id) = self.terms.get(term) else {
                continue;
            };
            if none_retired {
                let held = self.held(id);
                if held == 0 {
                    continue;
                }
                let idf = idf(n, held as f32);
                let one = |doc: u32, tf: u32| {
                    let dl = self.length(doc);
                    if dl > 0 {
                        add(doc, idf * tf_part(tf as f32, dl as f32, avg));
                    }
                };
                self.each_posting(id, one);
                continue;
            }
            parts.clear();
            let one = |doc: u32, tf: u32| {
                let dl = self.length(doc);
                if dl > 0 {
                    parts.push((doc, tf_part(tf as f32, dl as f32, avg)));
                }
            };
            self.each_posting(id, one);
            if parts.is_empty() {
                continue;
            }
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
            let Some(id) = self.terms.get(term) else {
                continue;
            };
            let one = |doc: u32, tf: u32| {
                if alive(&self.lengths, doc) {
                    if let Some(g) = group_of(doc) {
                        let t = &mut tf_of[g as usize];
                        if *t == 0 {
                            touched.push(g);
                        }
                        *t += tf;
                    }
                }
            };
            self.each_posting(id, one);
            if touched.is_empty() {
                continue;
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

    /// Postings that name a document no longer in the field, or that
    /// `exists` does not know; and documents in the field whose length
    /// does not add up to the field's total. For `verify`.
    pub fn dangling(&self, exists: impl Fn(u32) -> bool) -> (u64, bool) {
        let lists = self.postings.iter().flat_map(Postings::iter);
        let runs = self.delta.all_runs().flat_map(|r| r.iter());
        let live = lists
            .chain(runs)
            .filter(|&(doc, _)| alive(&self.lengths, doc));
        let bad = live.filter(|&(doc, _)| !exists(doc)).count() as u64;
        let total: u64 = self.lengths.iter().map(|&l| u64::from(l)).sum();
        (bad, total == self.total_len)
    }

    /// Whether every posting and length names a document below `n`: what
    /// a decoded snapshot must hold before it is used.
    pub fn fits(&self, n: usize) -> bool {
        // A list's documents rise, so its last one is its largest.
        let lasts = self.postings.iter().filter_map(Postings::last_doc);
        let mut lasts = lasts.chain(self.delta.all_runs().map(|r| r.last_doc()));
        self.lengths.len() <= n && lasts.all(|doc| (doc as usize) < self.lengths.len())
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

    /// Folds the segments into the lists, for a field compaction hands on
    /// (the generation it starts holds no segment; [`Field::renumber`]
    /// folds them too).
    pub fn fold_segments(&mut self) {
        self.fold_delta();
    }

    /// Re-numbers documents after compaction (`map[old] = Some(new)`),
    /// dropping retired postings. List by list, in place, so compacting a
    /// big index never holds two copies of its postings; a term no document
    /// holds any more stays in the dictionary, with no postings, until the
    /// snapshot is next opened.
    pub fn renumber(&mut self, map: &[Option<u32>], new_len: usize) {
        self.fold_delta();
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

/// Fetches ahead for step `i` of a pass over `lists`, where `at(j)` is
/// the list step `j` writes: three steps, each needing the line the one
/// before fetched (the list's slot in its page, the list, and the bytes an
/// append to it writes).
fn fetch_ahead(lists: &Pages<Postings>, i: usize, at: impl Fn(usize) -> Option<u32>) {
    if let Some(id) = at(i + 16) {
        postings::prefetch((&lists[id as usize] as *const Postings).cast());
    }
    if let Some(id) = at(i + 8) {
        lists[id as usize].prefetch_list();
    }
    if let Some(id) = at(i + 4) {
        lists[id as usize].prefetch_tail();
    }
}

/// Whether `doc` is still in the field: a retired one has length 0, and a
/// document of no terms has no postings to ask about.
fn alive(lengths: &Column<u32>, doc: u32) -> bool {
    lengths.get(doc as usize).is_some_and(|&l| l > 0)
}

#[cfg(test)]
mod tests;
