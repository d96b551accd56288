//! Postings added beside views, in segments that are never written again.
//!
//! A write to a big field whose lists a view's generation shares would
//! write them through copies of what it changes (a map of lists and, every
//! few writes, the pages of them all), at a real vocabulary a large part of
//! the writer's work. Instead such a write builds a segment of its own
//! postings, sorted by term: one small allocation a list, shared by every
//! later generation as it is. Segments merge eight at
//! a time as they come to one size (so a posting is copied a few times, and
//! a field holds a few dozen at most), and go into the field's lists at
//! the next write that finds no view sharing them (in place, nothing
//! copied) or once they hold a large part of the field.

use std::sync::Arc;

use crate::postings::Postings;

/// A write's postings, or several writes' merged: term ids, rising, each
/// with its list. Every document is past every document of the field's
/// lists and of the segments before.
#[derive(Default)]
pub(crate) struct Segment {
    ids: Box<[u32]>,
    lists: Box<[Postings]>,
    postings: usize,
    /// Merges it came through: a segment of tier t holds [`FAN_IN`]^t
    /// writes.
    tier: u8,
}

/// Segments of one tier merged at once: a posting is copied once a tier
/// (three times for 512 writes), and a field holds `FAN_IN - 1` segments a
/// tier at most.
const FAN_IN: usize = 8;

impl Segment {
    /// The segment of `adds`, (term id, document, frequency) sorted by term
    /// and then document.
    fn from_sorted(adds: &[(u32, u32, u32)]) -> Self {
        let (mut ids, mut lists) = (Vec::new(), Vec::new());
        for run in adds.chunk_by(|a, b| a.0 == b.0) {
            ids.push(run[0].0);
            lists.push(Postings::encoded(run.iter().map(|&(_, d, tf)| (d, tf))));
        }
        Self {
            ids: ids.into(),
            lists: lists.into(),
            postings: adds.len(),
            tier: 0,
        }
    }

    pub(crate) fn get(&self, id: u32) -> Option<&Postings> {
        let i = self.ids.binary_search(&id).ok()?;
        Some(&self.lists[i])
    }

    /// Every (term id, list), ids rising.
    pub(crate) fn lists(&self) -> impl Iterator<Item = (u32, &Postings)> + '_ {
        self.ids.iter().copied().zip(self.lists.iter())
    }

    /// `parts` (oldest first) as one: a term in several has its lists
    /// joined, one in a single part shares its list.
    fn merged(parts: &[Arc<Segment>]) -> Self {
        let n = parts.iter().map(|s| s.ids.len()).max().unwrap_or(0);
        let (mut ids, mut lists) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut at = vec![0; parts.len()];
        let mut same: Vec<&Postings> = Vec::with_capacity(parts.len());
        let head = |s: &Segment, i: usize| s.ids.get(i).copied();
        while let Some(id) = parts.iter().zip(&at).filter_map(|(s, &i)| head(s, i)).min() {
            same.clear();
            for (s, i) in parts.iter().zip(at.iter_mut()) {
                if head(s, *i) == Some(id) {
                    same.push(&s.lists[*i]);
                    *i += 1;
                }
            }
            ids.push(id);
            lists.push(Postings::joined(&same));
        }
        Self {
            ids: ids.into(),
            lists: lists.into(),
            postings: parts.iter().map(|s| s.postings).sum(),
            tier: parts.iter().map(|s| s.tier).max().unwrap_or(0) + 1,
        }
    }
}

/// A field's segments, oldest first, in tiers that fall: fewer than
/// [`FAN_IN`] of each.
#[derive(Clone, Default)]
pub(crate) struct Delta {
    segments: Vec<Arc<Segment>>,
    postings: usize,
}

impl std::fmt::Debug for Delta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (n, p) = (self.segments.len(), self.postings);
        write!(f, "Delta({n} segments, {p} postings)")
    }
}

impl Delta {
    pub(crate) fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// Postings held.
    pub(crate) fn postings(&self) -> usize {
        self.postings
    }

    /// Each segment's tier, oldest first, for tests of the merging.
    #[cfg(test)]
    pub(crate) fn tiers(&self) -> Vec<u8> {
        self.segments.iter().map(|s| s.tier).collect()
    }

    /// Adds a write's postings, (term id, document, frequency) in any
    /// order, as a segment of tier 0; then, while the newest [`FAN_IN`]
    /// segments are of one tier, merges them into one of the next.
    pub(crate) fn push(&mut self, adds: &mut [(u32, u32, u32)]) {
        if adds.is_empty() {
            return;
        }
        adds.sort_unstable();
        self.postings += adds.len();
        self.segments.push(Arc::new(Segment::from_sorted(adds)));
        while let Some(from) = self.segments.len().checked_sub(FAN_IN) {
            let tier = self.segments[from].tier;
            if self.segments[from..].iter().any(|s| s.tier != tier) {
                break;
            }
            let merged = Segment::merged(&self.segments[from..]);
            self.segments.truncate(from);
            self.segments.push(Arc::new(merged));
        }
    }

    /// Term `id`'s lists, oldest first (those that hold it).
    pub(crate) fn lists(&self, id: u32) -> impl Iterator<Item = &Postings> + '_ {
        self.segments.iter().filter_map(move |s| s.get(id))
    }

    /// The segments, oldest first, leaving none.
    pub(crate) fn take(&mut self) -> Vec<Arc<Segment>> {
        self.postings = 0;
        std::mem::take(&mut self.segments)
    }

    /// Every segment, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Segment> + '_ {
        self.segments.iter().map(|s| &**s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_merge_a_tier_at_a_time_and_keep_every_posting_in_order() {
        let mut delta = Delta::default();
        let mut expected: Vec<Vec<(u32, u32)>> = vec![Vec::new(); 7];
        for write in 0..(FAN_IN * FAN_IN) as u32 {
            // Ten documents a write; term t in every t-th one.
            let mut adds = Vec::new();
            for doc in write * 10..write * 10 + 10 {
                for t in 1..7u32 {
                    if doc % t == 0 {
                        adds.push((t, doc, t + doc % 3));
                        expected[t as usize].push((doc, t + doc % 3));
                    }
                }
            }
            adds.reverse();
            delta.push(&mut adds);
            // Write n's tiers are n's digits in base FAN_IN.
            let (mut n, mut digits) = (write as usize + 1, Vec::new());
            for tier in 0.. {
                digits.extend(std::iter::repeat_n(tier, n % FAN_IN));
                n /= FAN_IN;
                if n == 0 {
                    break;
                }
            }
            digits.reverse();
            assert_eq!(delta.tiers(), digits, "after write {write}");
        }
        assert_eq!(delta.tiers(), [2], "FAN_IN² writes, one segment");
        let total: usize = expected.iter().map(Vec::len).sum();
        assert_eq!(delta.postings(), total);
        for (t, want) in expected.iter().enumerate() {
            let got: Vec<(u32, u32)> = delta.lists(t as u32).flat_map(|l| l.iter()).collect();
            assert_eq!(&got, want, "term {t}");
        }
        assert_eq!(delta.lists(9).count(), 0);
        let taken = delta.take();
        assert!(!taken.is_empty());
        assert_eq!((delta.is_empty(), delta.postings()), (true, 0));
    }
}
