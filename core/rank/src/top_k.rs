//! The top k of scored ids: best first, ties broken by the lower id, so
//! every adapter orders equal scores alike.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Keeps the `k` highest scores of `ranked`, best first, ties by the lower
/// id: a partial selection, then a sort of what is left.
pub fn best_first<I: Ord, S: Score>(ranked: &mut Vec<(I, S)>, k: usize) {
    let order = |a: &(I, S), b: &(I, S)| b.1.order(&a.1).then(a.0.cmp(&b.0));
    if ranked.len() > k && k > 0 {
        ranked.select_nth_unstable_by(k - 1, order);
    }
    ranked.truncate(k);
    ranked.sort_by(order);
}

/// A score the top k can order: a float compared by `total_cmp`.
pub trait Score: Copy {
    /// Orders two scores, NaN and all.
    fn order(&self, other: &Self) -> Ordering;
}

impl Score for f32 {
    fn order(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
}

impl Score for f64 {
    fn order(&self, other: &Self) -> Ordering {
        self.total_cmp(other)
    }
}

/// A scored id, greater when better: a higher score, then a lower id.
#[derive(Debug, Clone, Copy)]
struct Ranked<I, S>(S, I);

impl<I: Ord, S: Score> PartialEq for Ranked<I, S> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl<I: Ord, S: Score> Eq for Ranked<I, S> {}

impl<I: Ord, S: Score> Ord for Ranked<I, S> {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.order(&o.0).then(o.1.cmp(&self.1))
    }
}

impl<I: Ord, S: Score> PartialOrd for Ranked<I, S> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// The best `k` of a stream of scored ids, kept in a heap of `k`: for
/// scores offered one by one, where [`best_first`] would hold them all.
pub struct TopK<I, S> {
    k: usize,
    heap: BinaryHeap<Reverse<Ranked<I, S>>>,
}

impl<I: Ord, S: Score> TopK<I, S> {
    /// An empty top `k`.
    pub fn new(k: usize) -> Self {
        Self {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    /// Offers `id` with `score`; kept if among the best `k` so far.
    pub fn offer(&mut self, id: I, score: S) {
        let r = Ranked(score, id);
        if self.heap.len() < self.k {
            self.heap.push(Reverse(r));
        } else if self.heap.peek().is_some_and(|w| r > w.0) {
            self.heap.pop();
            self.heap.push(Reverse(r));
        }
    }

    /// The worst score kept once `k` are kept: what a new id must reach.
    pub fn floor(&self) -> Option<S> {
        match self.heap.peek() {
            Some(w) if self.heap.len() == self.k => Some(w.0 .0),
            _ => None,
        }
    }

    /// The kept ids, best first.
    pub fn into_sorted(self) -> Vec<(I, S)> {
        let mut v: Vec<Ranked<I, S>> = self.heap.into_iter().map(|r| r.0).collect();
        v.sort_by(|a, b| b.cmp(a));
        v.into_iter().map(|r| (r.1, r.0)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_keep_the_same_best_ties_by_the_lower_id() {
        let scores = [
            (4u32, 1.0f32),
            (2, 3.0),
            (9, 3.0),
            (1, 0.5),
            (7, 2.0),
            (3, 3.0),
        ];
        let mut all = scores.to_vec();
        best_first(&mut all, 4);
        assert_eq!(all, vec![(2, 3.0), (3, 3.0), (9, 3.0), (7, 2.0)]);
        let mut top = TopK::new(4);
        for (id, s) in scores {
            top.offer(id, s);
        }
        assert_eq!(top.floor(), Some(2.0));
        assert_eq!(top.into_sorted(), all);
        let none: TopK<u32, f32> = TopK::new(3);
        assert_eq!(none.floor(), None);
    }
}
