//! A field's postings lists by term id: pages frozen at the last fold,
//! shared whole by every copy of the field, and the lists changed since in
//! a small map. A write beside a view that pins an older generation copies
//! the lists it changes, not the pages around them: with a real vocabulary
//! one write reaches most pages. The pages are copied at the fold, once per
//! many writes, each bit for bit, borrowing the lists it keeps from the
//! page it came from ([`ChainedPages`]). A field no other copy shares (no
//! view pins an older generation) is written in place, with nothing in the
//! map; so is a small one, whose few pages cost less to copy than the map.

use std::sync::Arc;

use hashbrown::HashMap;

use crate::chained_pages::ChainedPages;
use crate::pages;
use crate::postings::Postings;

/// Lists changed since the fold are folded in once there are this many
/// and a 16th of the frozen ones (for a writer beside views at 500,000
/// terms, a 32nd folded too often and an 8th was no faster).
const FOLD_AT: usize = 4096;

/// Fields of fewer frozen lists write through their pages, copying those
/// they touch: beside a writer thread at 5,000 terms that was 9–16 %
/// faster than the map, at 500,000 the map was 21–61 % faster.
const MAP_FROM: usize = 65_536;

#[derive(Default)]
pub(crate) struct Lists {
    /// Every list as of the last fold; never written while shared.
    frozen: Arc<ChainedPages<Postings>>,
    /// The lists written since, by id; ids past `frozen` are here alone.
    fresh: HashMap<u32, Postings>,
    len: usize,
}

impl std::fmt::Debug for Lists {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Lists({}, {} since the fold)",
            self.len,
            self.fresh.len()
        )
    }
}

impl Lists {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn get(&self, id: usize) -> Option<&Postings> {
        if id >= self.len {
            return None;
        }
        if !self.fresh.is_empty() {
            if let Some(list) = self.fresh.get(&(id as u32)) {
                return Some(list);
            }
        }
        self.frozen.get(id)
    }

    /// List `id` for writing: in place when no other copy shares the
    /// frozen pages, else moved into the fresh map (a copy of the frozen
    /// one).
    pub(crate) fn get_mut(&mut self, id: usize) -> Option<&mut Postings> {
        if id >= self.len {
            return None;
        }
        if self.through_pages() {
            return self.all_mut().get_mut(id);
        }
        let frozen = &self.frozen;
        let list = self
            .fresh
            .entry(id as u32)
            .or_insert_with(|| frozen.get(id).cloned().unwrap_or_default());
        Some(list)
    }

    pub(crate) fn push(&mut self, list: Postings) {
        if self.through_pages() {
            self.all_mut().push(list);
        } else {
            self.fresh.insert(self.len as u32, list);
        }
        self.len += 1;
    }

    /// Whether a copy of the field (a view's generation) shares the lists:
    /// then a write copies what it changes.
    pub(crate) fn shared(&mut self) -> bool {
        Arc::get_mut(&mut self.frozen).is_none()
    }

    /// Whether writes go through the frozen pages ([`Lists::all_mut`]):
    /// when no other copy of the field shares them (nothing is copied), or
    /// when they are few (the pages written are copied).
    fn through_pages(&mut self) -> bool {
        self.frozen.len() < MAP_FROM || Arc::get_mut(&mut self.frozen).is_some()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Postings> + '_ {
        (0..self.len).filter_map(|id| self.get(id))
    }

    /// Every list for writing in place: folds, then copies the frozen pages
    /// another copy shares (for a pass over all lists, as compaction's).
    pub(crate) fn all_mut(&mut self) -> &mut ChainedPages<Postings> {
        self.fold();
        Arc::make_mut(&mut self.frozen)
    }

    /// Folds once the fresh lists are many: a write calls it when done.
    pub(crate) fn settle(&mut self) {
        if self.fresh.len() >= FOLD_AT.max(self.frozen.len() / 16) {
            self.fold();
        }
    }

    /// Moves the fresh lists into the frozen pages, in page order. A page
    /// another copy shares is copied bit for bit, borrowing the lists it
    /// does not change from the page it came from ([`ChainedPages`]).
    fn fold(&mut self) {
        if self.fresh.is_empty() {
            return;
        }
        let mut fresh: Vec<(u32, Postings)> = self.fresh.drain().collect();
        fresh.sort_unstable_by_key(|(id, _)| *id);
        let pages = Arc::make_mut(&mut self.frozen);
        pages.grow(self.len, Postings::default());
        for (id, list) in fresh {
            pages.set(id as usize, list);
        }
    }

    /// Lists changed since the fold, for tests of what a copy costs.
    #[cfg(test)]
    pub(crate) fn fresh_len(&self) -> usize {
        self.fresh.len()
    }

    /// Whether `other` shares this one's frozen pages, for tests.
    #[cfg(test)]
    pub(crate) fn shares_frozen_with(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.frozen, &other.frozen)
    }
}

/// A copy shares the pages and copies the fresh map: every list's count
/// is fetched first, so the clones do not wait for memory one by one.
impl Clone for Lists {
    fn clone(&self) -> Self {
        self.fresh.values().for_each(Postings::prefetch_count);
        Self {
            frozen: Arc::clone(&self.frozen),
            fresh: self.fresh.clone(),
            len: self.len,
        }
    }
}

/// The last copy of a generation's lists drops them with their counts
/// fetched ahead (on the thread that frees generations, most often).
impl Drop for Lists {
    fn drop(&mut self) {
        if !self.fresh.is_empty() {
            let mut fresh: Vec<Postings> = self.fresh.drain().map(|(_, list)| list).collect();
            pages::drop_ahead(&mut fresh, &Postings::prefetch_count);
        }
        if let Some(frozen) = Arc::get_mut(&mut self.frozen) {
            frozen.drop_ahead();
        }
    }
}

impl From<ChainedPages<Postings>> for Lists {
    fn from(pages: ChainedPages<Postings>) -> Self {
        Self {
            len: pages.len(),
            frozen: Arc::new(pages),
            fresh: HashMap::new(),
        }
    }
}

impl FromIterator<Postings> for Lists {
    fn from_iter<I: IntoIterator<Item = Postings>>(lists: I) -> Self {
        ChainedPages::from_iter(lists).into()
    }
}

impl std::ops::Index<usize> for Lists {
    type Output = Postings;

    fn index(&self, id: usize) -> &Postings {
        self.get(id).expect("a list within the field")
    }
}

impl std::ops::IndexMut<usize> for Lists {
    fn index_mut(&mut self, id: usize) -> &mut Postings {
        self.get_mut(id).expect("a list within the field")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(doc: u32) -> Postings {
        let mut list = Postings::default();
        list.add(doc, 1);
        list
    }

    /// A field large enough to write beside a copy through the map.
    const N: usize = MAP_FROM + 1_000;

    #[test]
    fn a_write_to_a_copy_copies_the_lists_it_changes_and_folds_later() {
        let n = N as u32;
        let mut a: Lists = (0..n).map(one).collect();
        let b = a.clone();
        a[7].add(n, 2);
        a.push(one(n + 1));
        assert!(a.shares_frozen_with(&b), "no page copied");
        assert_eq!(a.fresh_len(), 2);
        assert_eq!((a.len(), b.len()), (N + 1, N));
        assert_eq!(a[7].iter().collect::<Vec<_>>(), [(7, 1), (n, 2)]);
        assert_eq!(
            b[7].iter().collect::<Vec<_>>(),
            [(7, 1)],
            "the copy keeps its list"
        );
        assert_eq!(a[N].iter().collect::<Vec<_>>(), [(n + 1, 1)]);
        assert!(b.get(N).is_none());

        for id in 0..FOLD_AT.max(N / 16) {
            a[id].add(n + 2, 1);
        }
        a.settle();
        assert_eq!(a.fresh_len(), 0, "folded");
        assert!(!a.shares_frozen_with(&b));
        assert_eq!(a[7].iter().count(), 3);
        assert_eq!(b[7].iter().count(), 1, "the copy still reads its own pages");
        assert_eq!(a.iter().count(), N + 1);
        assert_eq!(a[N].iter().collect::<Vec<_>>(), [(n + 1, 1)]);
    }

    #[test]
    fn a_field_no_copy_shares_or_a_small_one_is_written_through_its_pages() {
        let mut a: Lists = (0..N as u32).map(one).collect();
        let b = a.clone();
        a[5].add(N as u32, 1);
        assert_eq!(a.fresh_len(), 1);
        drop(b);
        a[6].add(N as u32, 1);
        a.push(one(N as u32 + 1));
        assert_eq!(
            a.fresh_len(),
            0,
            "the fresh list folded in, the rest in place"
        );
        assert_eq!(
            (a[5].iter().count(), a[6].iter().count(), a.len()),
            (2, 2, N + 1)
        );
        assert_eq!(a[N].iter().collect::<Vec<_>>(), [(N as u32 + 1, 1)]);

        let mut small: Lists = (0..1_000).map(one).collect();
        let copy = small.clone();
        small[5].add(2_000, 1);
        small.push(one(3_000));
        assert_eq!(small.fresh_len(), 0, "a small field copies its pages");
        assert_eq!((small[5].iter().count(), copy[5].iter().count()), (2, 1));
        assert_eq!((small.len(), copy.len()), (1_001, 1_000));
    }

    #[test]
    fn writing_every_list_folds_first_and_leaves_the_copy_alone() {
        let mut a: Lists = (0..N as u32).map(one).collect();
        let b = a.clone();
        a[3].add(N as u32, 1);
        let c = a.clone();
        a.all_mut().for_each_mut(|l| l.add(N as u32 + 1, 1));
        assert_eq!(a.fresh_len(), 0);
        assert!(a.iter().all(|l| l.iter().last() == Some((N as u32 + 1, 1))));
        assert_eq!((b[3].iter().count(), c[3].iter().count()), (1, 2));
        assert!(c.iter().all(|l| l.iter().last() != Some((N as u32 + 1, 1))));
    }
}
