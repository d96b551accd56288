//! `Nested`: [`Pages`] of small pages. Copying a page copies its elements,
//! and an element that is itself shared (a postings list behind an `Arc`)
//! costs a reference count to copy and another to free: a write to a
//! dictionary of half a million terms touches thousands of them, which
//! with pages of 256 meant copying most of the vector. Here a page is 16
//! elements, grouped 64 to a group page: a write copies the small pages it
//! touches and their groups' pointers, and a copy of the whole vector
//! costs a pointer a group.

use std::sync::Arc;

use super::Pages;

/// Elements a small page.
const LEAF: usize = 16;
/// Small pages a group.
const GROUP: usize = 64;

#[derive(Clone, Default)]
pub(crate) struct Nested<T> {
    leaves: Pages<Arc<Vec<T>>, GROUP>,
    len: usize,
}

impl<T> std::fmt::Debug for Nested<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Nested({} elements)", self.len)
    }
}

impl<T: Clone> Nested<T> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        self.leaves.get(i / LEAF)?.get(i % LEAF)
    }

    /// Element `i`, its small page (and that page's group) copied first
    /// when another copy shares them.
    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        Arc::make_mut(self.leaves.get_mut(i / LEAF)?).get_mut(i % LEAF)
    }

    pub(crate) fn push(&mut self, value: T) {
        if self.len.is_multiple_of(LEAF) {
            self.leaves.push(Arc::new(Vec::with_capacity(LEAF)));
        }
        let last = self.leaves.len() - 1;
        if let Some(leaf) = self.leaves.get_mut(last) {
            Arc::make_mut(leaf).push(value);
            self.len += 1;
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.leaves.iter().flat_map(|leaf| leaf.iter())
    }

    /// Every element, mutably: every shared page is copied.
    pub(crate) fn for_each_mut(&mut self, mut f: impl FnMut(&mut T)) {
        self.leaves
            .for_each_mut(|leaf| Arc::make_mut(leaf).iter_mut().for_each(&mut f));
    }

    /// Small pages this vector shares with `other` (tests).
    #[cfg(test)]
    pub(crate) fn leaves_shared_with(&self, other: &Self) -> usize {
        self.leaves
            .iter()
            .zip(other.leaves.iter())
            .filter(|(a, b)| Arc::ptr_eq(a, b))
            .count()
    }
}

impl<T: Clone> FromIterator<T> for Nested<T> {
    /// Built a small page at a time, each page written once.
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut items = items.into_iter().peekable();
        let mut len = 0;
        let leaves = std::iter::from_fn(|| {
            items.peek()?;
            let leaf: Vec<T> = items.by_ref().take(LEAF).collect();
            len += leaf.len();
            Some(Arc::new(leaf))
        })
        .collect();
        Self { leaves, len }
    }
}

impl<T: Clone> std::ops::Index<usize> for Nested<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        self.get(i).expect("an element within the pages")
    }
}

impl<T: Clone> std::ops::IndexMut<usize> for Nested<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        self.get_mut(i).expect("an element within the pages")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_to_a_copy_copies_one_small_page_and_shares_the_rest() {
        let mut a: Nested<u32> = (0..5000).collect();
        assert!(a.iter().copied().eq(0..5000));
        let b = a.clone();
        a[1234] = 7;
        a.push(5000);
        assert_eq!((a[1234], b[1234], a.len(), b.len()), (7, 1234, 5001, 5000));
        // 313 small pages: copied, the one holding 1234 and the last (of 8,
        // which 5000 joins); the other 311 shared.
        assert_eq!(a.leaves_shared_with(&b), 311);
        assert_eq!((a.get(5001), b.get(5000)), (None, None));
        let mut pushed = Nested::default();
        (0..40).for_each(|i| pushed.push(i));
        pushed.for_each_mut(|v| *v *= 2);
        assert!(pushed.iter().copied().eq((0..40).map(|v| v * 2)));
    }
}
