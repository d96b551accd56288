//! A field's postings lists by term id, in pages shared whole by every
//! copy of the field ([`Pages`] behind one `Arc`, so a copy costs a
//! count). A field no other copy shares (no view pins an older generation)
//! is written in place. Beside a view, a write's new postings go to
//! segments instead ([`crate::bm25::delta`]); what still writes the lists
//! of a shared field (the segments folded in, a title's source written
//! again, a pass over every list) copies the pages it writes: rare writes,
//! each reaching most pages.

use std::sync::Arc;

use crate::pages::Pages;
use crate::postings::Postings;

#[derive(Default, Clone)]
pub(crate) struct Lists {
    pages: Arc<Pages<Postings>>,
}

impl std::fmt::Debug for Lists {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lists({})", self.len())
    }
}

impl Lists {
    pub(crate) fn len(&self) -> usize {
        self.pages.len()
    }

    pub(crate) fn get(&self, id: usize) -> Option<&Postings> {
        self.pages.get(id)
    }

    /// List `id` for writing: its page copied first when another copy of
    /// the field shares it.
    pub(crate) fn get_mut(&mut self, id: usize) -> Option<&mut Postings> {
        self.all_mut().get_mut(id)
    }

    pub(crate) fn push(&mut self, list: Postings) {
        self.all_mut().push(list);
    }

    /// Whether a copy of the field (a view's generation) shares the lists:
    /// then a write copies the pages it writes.
    pub(crate) fn shared(&mut self) -> bool {
        Arc::get_mut(&mut self.pages).is_none()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Postings> + '_ {
        (0..self.len()).filter_map(|id| self.get(id))
    }

    /// Every list for writing (the pages' vector copied first when another
    /// copy of the field shares it; each page when written).
    pub(crate) fn all_mut(&mut self) -> &mut Pages<Postings> {
        Arc::make_mut(&mut self.pages)
    }

    /// Whether `other` shares this one's pages, for tests.
    #[cfg(test)]
    pub(crate) fn shares_pages_with(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.pages, &other.pages)
    }
}

/// The last copy of a field's lists drops them with their counts fetched
/// ahead (on the thread that frees generations, most often).
impl Drop for Lists {
    fn drop(&mut self) {
        if let Some(pages) = Arc::get_mut(&mut self.pages) {
            pages.drop_each_ahead(&Postings::prefetch_count);
        }
    }
}

impl From<Pages<Postings>> for Lists {
    fn from(pages: Pages<Postings>) -> Self {
        Self {
            pages: Arc::new(pages),
        }
    }
}

impl FromIterator<Postings> for Lists {
    fn from_iter<I: IntoIterator<Item = Postings>>(lists: I) -> Self {
        Pages::from_iter(lists).into()
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

    #[test]
    fn a_write_beside_a_copy_copies_the_pages_it_writes_and_leaves_the_copy_alone() {
        let n = 10_000u32;
        let mut a: Lists = (0..n).map(one).collect();
        let b = a.clone();
        assert!(a.shares_pages_with(&b) && a.shared());
        a[7].add(n, 2);
        a.push(one(n + 1));
        assert!(!a.shares_pages_with(&b) && !a.shared());
        assert_eq!(
            a.pages.pages_shared_with(&b.pages),
            40 - 2,
            "page 0 and the last of 40 copied"
        );
        assert_eq!(a[7].iter().collect::<Vec<_>>(), [(7, 1), (n, 2)]);
        assert_eq!(
            b[7].iter().collect::<Vec<_>>(),
            [(7, 1)],
            "the copy keeps its list"
        );
        assert_eq!((a.len(), b.len()), (n as usize + 1, n as usize));
        assert!(b.get(n as usize).is_none());
        a.all_mut().for_each_mut(|l| l.add(n + 2, 1));
        assert!(a.iter().all(|l| l.iter().last() == Some((n + 2, 1))));
        assert!(b.iter().all(|l| l.iter().count() == 1));
    }
}
