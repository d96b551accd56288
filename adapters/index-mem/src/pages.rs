//! `Pages`: a vector in fixed-size pages behind `Arc`s, so a copy of it
//! shares every page and costs a pointer a page. Writing through a copy
//! copies only the page written ([`Arc::make_mut`]). This is what lets a
//! writer build the next generation of the index beside the views that
//! still read the current one.

use std::sync::Arc;

/// Elements a page: small enough that copying one for a single write is
/// cheap, large enough that the pointers stay few (a million elements are
/// 4,096 pages).
const PAGE: usize = 256;

#[derive(Clone)]
pub(crate) struct Pages<T> {
    pages: Vec<Arc<Vec<T>>>,
    len: usize,
}

impl<T> Default for Pages<T> {
    fn default() -> Self {
        Self {
            pages: Vec::new(),
            len: 0,
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Pages<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pages({} elements)", self.len)
    }
}

impl<T: Clone> Pages<T> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        Some(&self.pages[i / PAGE][i % PAGE])
    }

    /// Element `i`, its page copied first when another copy shares it.
    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        Some(&mut Arc::make_mut(&mut self.pages[i / PAGE])[i % PAGE])
    }

    pub(crate) fn push(&mut self, value: T) {
        if self.len.is_multiple_of(PAGE) {
            self.pages.push(Arc::new(Vec::with_capacity(PAGE)));
        }
        let last = self.pages.last_mut().expect("a page with room");
        Arc::make_mut(last).push(value);
        self.len += 1;
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.pages.iter().flat_map(|p| p.iter())
    }

    /// Every element, mutably: every shared page is copied.
    pub(crate) fn for_each_mut(&mut self, mut f: impl FnMut(&mut T)) {
        for page in &mut self.pages {
            Arc::make_mut(page).iter_mut().for_each(&mut f);
        }
    }
}

impl<T: Clone> FromIterator<T> for Pages<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut pages = Self::default();
        for item in items {
            pages.push(item);
        }
        pages
    }
}

impl<T: Clone> std::ops::Index<usize> for Pages<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        self.get(i).expect("an element within the pages")
    }
}

impl<T: Clone> std::ops::IndexMut<usize> for Pages<T> {
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
    fn writing_every_element_leaves_the_copy_alone() {
        let mut a: Pages<u32> = (0..600).collect();
        let b = a.clone();
        a.for_each_mut(|v| *v += 1);
        assert!(a.iter().zip(b.iter()).all(|(x, y)| *x == y + 1));
    }
}
