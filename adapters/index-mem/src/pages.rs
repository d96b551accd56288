//! `Pages`: a vector in fixed-size pages behind `Arc`s, so a copy of it
//! shares every page and costs a pointer a page. Writing through a copy
//! copies only the page written ([`Arc::make_mut`]). This is what lets a
//! writer build the next generation of the index beside the views that
//! still read the current one: a write costs the pages it touches, not
//! the length of the vector.

use std::sync::Arc;

/// Elements a page by default: small enough that copying one for a single
/// write is cheap, large enough that the pointers stay few (a million
/// elements are 4,096 pages).
const PAGE: usize = 256;

/// Elements a page of a per-slot column (a flag or a length a chunk): a
/// write changes a few neighbouring slots, and a million slots are 256
/// pointers.
const COLUMN: usize = 4096;

#[derive(Clone)]
pub(crate) struct Pages<T, const P: usize = PAGE> {
    pages: Vec<Arc<Vec<T>>>,
    len: usize,
}

/// A per-slot column: [`Pages`] of [`COLUMN`] elements.
pub(crate) type Column<T> = Pages<T, COLUMN>;

impl<T, const P: usize> Default for Pages<T, P> {
    fn default() -> Self {
        Self {
            pages: Vec::new(),
            len: 0,
        }
    }
}

impl<T: std::fmt::Debug, const P: usize> std::fmt::Debug for Pages<T, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pages({} elements)", self.len)
    }
}

impl<T: Clone, const P: usize> Pages<T, P> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        Some(&self.pages[i / P][i % P])
    }

    /// Element `i`, its page copied first when another copy shares it.
    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        Some(&mut Arc::make_mut(&mut self.pages[i / P])[i % P])
    }

    pub(crate) fn push(&mut self, value: T) {
        if self.len.is_multiple_of(P) {
            self.pages.push(Arc::new(Vec::with_capacity(P)));
        }
        let last = self.pages.last_mut().expect("a page with room");
        Arc::make_mut(last).push(value);
        self.len += 1;
    }

    /// Grows to `len` elements, the new ones `value`.
    pub(crate) fn grow(&mut self, len: usize, value: T) {
        while self.len < len {
            self.push(value.clone());
        }
    }

    /// `len` copies of `value`.
    pub(crate) fn filled(len: usize, value: T) -> Self {
        let page = |n: usize| Arc::new(vec![value.clone(); n]);
        let mut pages: Vec<_> = (0..len / P).map(|_| page(P)).collect();
        if !len.is_multiple_of(P) {
            pages.push(page(len % P));
        }
        Self { pages, len }
    }

    /// The elements of `items`, a page at a time.
    pub(crate) fn from_slice(items: &[T]) -> Self {
        Self {
            pages: items.chunks(P).map(|c| Arc::new(c.to_vec())).collect(),
            len: items.len(),
        }
    }

    /// Every element, mutably: each page another copy shares copied first.
    pub(crate) fn for_each_mut(&mut self, mut f: impl FnMut(&mut T)) {
        for page in &mut self.pages {
            Arc::make_mut(page).iter_mut().for_each(&mut f);
        }
    }

    /// Empties the pages, dropping the elements of those no other copy
    /// shares with what each drop touches (`ahead`) fetched first; shared
    /// pages are only let go.
    pub(crate) fn drop_each_ahead(&mut self, ahead: &impl Fn(&T)) {
        for page in &mut self.pages {
            if let Some(items) = Arc::get_mut(page) {
                drop_ahead(items, ahead);
            }
        }
        self.pages.clear();
        self.len = 0;
    }

    /// Pages this vector shares with `other`, for tests of what a copy costs.
    #[cfg(test)]
    pub(crate) fn pages_shared_with(&self, other: &Self) -> usize {
        let same = |(a, b): (&Arc<Vec<T>>, &Arc<Vec<T>>)| Arc::ptr_eq(a, b);
        self.pages
            .iter()
            .zip(&other.pages)
            .filter(|p| same(*p))
            .count()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.pages.iter().flat_map(|p| p.iter())
    }
}

/// How far ahead of a drop [`drop_ahead`] fetches: about as many misses
/// as a core keeps in flight.
pub(crate) const AHEAD: usize = 16;

/// Drops `items` from the last, fetching ahead what the drops touch.
pub(crate) fn drop_ahead<T>(items: &mut Vec<T>, ahead: &impl Fn(&T)) {
    while !items.is_empty() {
        let keep = items.len().saturating_sub(AHEAD);
        items[keep.saturating_sub(AHEAD)..keep]
            .iter()
            .for_each(ahead);
        items.truncate(keep);
    }
}

impl<T: Clone, const P: usize> FromIterator<T> for Pages<T, P> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut pages = Self::default();
        for item in items {
            pages.push(item);
        }
        pages
    }
}

impl<T: Clone, const P: usize> std::ops::Index<usize> for Pages<T, P> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        self.get(i).expect("an element within the pages")
    }
}

impl<T: Clone, const P: usize> std::ops::IndexMut<usize> for Pages<T, P> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        self.get_mut(i).expect("an element within the pages")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_shares_pages_until_one_is_written() {
        let mut a: Pages<u32> = (0..1000).collect();
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.pages[1], &b.pages[1]));
        a[300] = 7;
        a.push(1000);
        assert_eq!((a[300], b[300]), (7, 300), "the copy keeps its value");
        assert!(!Arc::ptr_eq(&a.pages[1], &b.pages[1]), "page 1 copied");
        assert!(Arc::ptr_eq(&a.pages[0], &b.pages[0]), "page 0 still shared");
        assert_eq!((a.len(), b.len()), (1001, 1000));
        assert_eq!(a.iter().copied().sum::<u32>(), 499_500 - 300 + 7 + 1000);
        assert_eq!((a.get(1001), b.get(1000)), (None, None));
    }

    #[test]
    fn dropping_ahead_drops_every_element_once() {
        let counted = Arc::new(());
        let make = || (0..40).map(|_| Arc::clone(&counted)).collect::<Vec<_>>();
        let mut items = make();
        let mut pages: Pages<Arc<()>> = make().into_iter().collect();
        let held = pages.clone();
        assert_eq!(Arc::strong_count(&counted), 81);
        drop_ahead(&mut items, &|_| {});
        assert_eq!((Arc::strong_count(&counted), items.len()), (41, 0));
        pages.drop_each_ahead(&|_| {});
        assert_eq!(
            Arc::strong_count(&counted),
            41,
            "a shared page is only let go"
        );
        drop(held);
        assert_eq!((Arc::strong_count(&counted), pages.len()), (1, 0));
    }

    #[test]
    fn a_column_is_built_a_page_at_a_time_and_grows() {
        let items: Vec<u32> = (0..10_000).collect();
        let mut c: Column<u32> = Pages::from_slice(&items);
        assert_eq!(c.pages.len(), 3);
        assert!(c.iter().copied().eq(0..10_000));
        let copy = c.clone();
        c.grow(12_300, 7);
        c[5] = 1;
        assert_eq!((c.len(), c[12_299], c[5], copy[5]), (12_300, 7, 1, 5));
        assert!(
            Arc::ptr_eq(&c.pages[1], &copy.pages[1]),
            "page 1 still shared"
        );
        assert_eq!(copy.len(), 10_000);
        let mut f: Column<bool> = Pages::filled(4097, true);
        f.push(false);
        assert_eq!((f.len(), f.iter().filter(|b| **b).count()), (4098, 4097));
    }
}
