//! Postings added beside views, in segments that are never written again.
//!
//! A write to a field whose lists a view's generation shares would write
//! them through copies of the pages it changes, and at a real vocabulary a
//! write reaches most pages. Instead such a write builds a segment of its
//! own postings, sorted by term, its lists' bytes in one buffer: one
//! allocation, shared by every later generation as it is. Segments merge
//! eight at a time as they come to one size (so a posting is copied a few
//! times, and a field holds a few dozen at most). Once a field holds
//! segments its new postings go on to segments; they go into the field's
//! lists once they hold a quarter of the field, or first thing when a
//! write is not all new slots ([`crate::bm25::Field`]).

use std::sync::Arc;

use crate::postings::{encode, take};

/// A write's postings, or several writes' merged: term ids, rising, each
/// with its list, every list's bytes in one buffer (one allocation a
/// segment, not one a list). Every document is past every document of the
/// field's lists and of the segments before.
#[derive(Default)]
pub(crate) struct Segment {
    ids: Box<[u32]>,
    /// Where each list's bytes end in `bytes` (they start where the one
    /// before ends): (document gap, frequency) varint pairs, the first gap
    /// from 0, as a [`Postings`](crate::postings::Postings) list's.
    ends: Box<[usize]>,
    /// Each list's postings and last document.
    lens: Box<[u32]>,
    lasts: Box<[u32]>,
    bytes: Box<[u8]>,
    postings: usize,
    /// Merges it came through: a segment of tier t holds [`FAN_IN`]^t
    /// writes.
    tier: u8,
}

/// Segments of one tier merged at once: a posting is copied once a tier
/// (three times for 512 writes), and a field holds `FAN_IN - 1` segments a
/// tier at most.
const FAN_IN: usize = 8;

/// One term's postings in a segment.
#[derive(Clone, Copy)]
pub(crate) struct Run<'a> {
    bytes: &'a [u8],
    len: u32,
    last: u32,
}

impl<'a> Run<'a> {
    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    pub(crate) fn last_doc(&self) -> u32 {
        self.last
    }

    /// The postings, (document, frequency) in rising document order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, u32)> + 'a {
        let (bytes, mut at, mut doc) = (self.bytes, 0, 0u32);
        std::iter::from_fn(move || {
            if at >= bytes.len() {
                return None;
            }
            doc += take(bytes, &mut at);
            Some((doc, take(bytes, &mut at)))
        })
    }
}

/// Builds a segment list by list.
#[derive(Default)]
struct Builder {
    ids: Vec<u32>,
    ends: Vec<usize>,
    lens: Vec<u32>,
    lasts: Vec<u32>,
    bytes: Vec<u8>,
}

impl Builder {
    fn with_capacity(lists: usize, bytes: usize) -> Self {
        Self {
            ids: Vec::with_capacity(lists),
            ends: Vec::with_capacity(lists),
            lens: Vec::with_capacity(lists),
            lasts: Vec::with_capacity(lists),
            bytes: Vec::with_capacity(bytes),
        }
    }

    /// Writes `doc`'s posting after the list's last document `prev` (0 to
    /// start a list).
    fn posting(&mut self, prev: u32, doc: u32, tf: u32) {
        let (b, n) = encode(doc - prev, tf);
        self.bytes.extend_from_slice(&b[..n]);
    }

    /// Writes `run` after the list's last document `prev`: its first gap
    /// anew, the rest of its bytes as they are.
    fn run(&mut self, prev: u32, run: Run<'_>) {
        let mut at = 0;
        let doc = take(run.bytes, &mut at);
        let tf = take(run.bytes, &mut at);
        self.posting(prev, doc, tf);
        self.bytes.extend_from_slice(&run.bytes[at..]);
    }

    /// Ends list `id` of `len` postings, the last `last`.
    fn end(&mut self, id: u32, len: u32, last: u32) {
        self.ids.push(id);
        self.ends.push(self.bytes.len());
        self.lens.push(len);
        self.lasts.push(last);
    }

    fn build(self, postings: usize, tier: u8) -> Segment {
        Segment {
            ids: self.ids.into(),
            ends: self.ends.into(),
            lens: self.lens.into(),
            lasts: self.lasts.into(),
            bytes: self.bytes.into(),
            postings,
            tier,
        }
    }
}

impl Segment {
    /// The segment of `adds`, (term id, document, frequency) sorted by term
    /// and then document.
    fn from_sorted(adds: &[(u32, u32, u32)]) -> Self {
        let mut out = Builder::with_capacity(adds.len(), 3 * adds.len());
        for run in adds.chunk_by(|a, b| a.0 == b.0) {
            let mut prev = 0;
            for &(_, doc, tf) in run {
                out.posting(prev, doc, tf);
                prev = doc;
            }
            out.end(run[0].0, run.len() as u32, prev);
        }
        out.build(adds.len(), 0)
    }

    fn run(&self, i: usize) -> Run<'_> {
        let start = i.checked_sub(1).map_or(0, |j| self.ends[j]);
        Run {
            bytes: &self.bytes[start..self.ends[i]],
            len: self.lens[i],
            last: self.lasts[i],
        }
    }

    pub(crate) fn get(&self, id: u32) -> Option<Run<'_>> {
        let i = self.ids.binary_search(&id).ok()?;
        Some(self.run(i))
    }

    /// Every (term id, list), ids rising.
    pub(crate) fn runs(&self) -> impl Iterator<Item = (u32, Run<'_>)> + '_ {
        (0..self.ids.len()).map(|i| (self.ids[i], self.run(i)))
    }

    /// `parts` (oldest first) as one: a term's lists joined end to end.
    fn merged(parts: &[Arc<Segment>]) -> Self {
        let lists = parts.iter().map(|s| s.ids.len()).max().unwrap_or(0);
        let bytes = parts.iter().map(|s| s.bytes.len()).sum();
        let mut out = Builder::with_capacity(lists, bytes);
        let mut at = vec![0; parts.len()];
        let head = |s: &Segment, i: usize| s.ids.get(i).copied();
        while let Some(id) = parts.iter().zip(&at).filter_map(|(s, &i)| head(s, i)).min() {
            let (mut prev, mut len) = (0, 0);
            for (s, i) in parts.iter().zip(at.iter_mut()) {
                if head(s, *i) == Some(id) {
                    let run = s.run(*i);
                    out.run(prev, run);
                    (prev, len) = (run.last, len + run.len);
                    *i += 1;
                }
            }
            out.end(id, len, prev);
        }
        let postings = parts.iter().map(|s| s.postings).sum();
        let tier = parts.iter().map(|s| s.tier).max().unwrap_or(0) + 1;
        out.build(postings, tier)
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
    pub(crate) fn runs(&self, id: u32) -> impl Iterator<Item = Run<'_>> + '_ {
        self.segments.iter().filter_map(move |s| s.get(id))
    }

    /// The segments, oldest first, leaving none.
    pub(crate) fn take(&mut self) -> Vec<Arc<Segment>> {
        self.postings = 0;
        std::mem::take(&mut self.segments)
    }

    /// Every list of every segment, oldest segment first.
    pub(crate) fn all_runs(&self) -> impl Iterator<Item = Run<'_>> + '_ {
        self.segments.iter().flat_map(|s| s.runs().map(|(_, r)| r))
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
            let got: Vec<(u32, u32)> = delta.runs(t as u32).flat_map(|r| r.iter()).collect();
            let lens: u32 = delta.runs(t as u32).map(|r| r.len()).sum();
            assert_eq!(lens as usize, want.len());
            let last = delta.runs(t as u32).last().map(|r| r.last_doc());
            assert_eq!(last, want.last().map(|p| p.0));
            assert_eq!(&got, want, "term {t}");
        }
        assert_eq!(delta.runs(9).count(), 0);
        let taken = delta.take();
        assert!(!taken.is_empty());
        assert_eq!((delta.is_empty(), delta.postings()), (true, 0));
    }
}
