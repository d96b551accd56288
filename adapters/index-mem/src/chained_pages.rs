//! `ChainedPages`: [`Pages`](crate::pages::Pages) for elements whose clone
//! touches memory elsewhere (a postings list's `Arc` count). A copy of a
//! shared page, made when a writer changes it beside a view that pins the
//! older generation, is a bit-for-bit copy that keeps the page it came from
//! (its parent) alive, not a clone that takes a count on every element: one
//! memcpy, where counting waited on a cache miss an element. The elements
//! the copy then writes are its own; the rest it borrows from its parent,
//! which is never written again.
//!
//! A page takes back its parent's elements (absorbs it) when it is written
//! and nothing else holds the parent (the writer alone, or the first write
//! after the views of older generations are gone), and is copied with
//! counts once its chain of parents would pass its limit (4 to 11 parents,
//! [`depth_limit`]): a writer beside views publishes every write, so the
//! page it copies is always held by the published generation and chains
//! grow until that copy.

use std::mem::ManuallyDrop;
use std::sync::Arc;

use crate::pages::{copy_ahead, drop_ahead};

/// Elements a page, as [`Pages`](crate::pages::Pages)' default.
const PAGE: usize = 256;

/// Words of a page's ownership bits.
const WORDS: usize = PAGE / 64;

/// Parents page `p` may keep alive, each with the lists its child
/// replaced: `MIN_DEPTH + p % SPREAD`. Every fold writes most pages, so
/// with one limit all of a field's chains would end at the same fold and be
/// freed at once, a burst that stalled queries; spread, an eighth of them
/// end at each (beside a held view at 500,000 terms, a limit of 8 copied
/// faster than 4, and 16 or 32 kept so much garbage that they were slower).
const MIN_DEPTH: u8 = 4;
const SPREAD: usize = 8;
/// The longest chain any page keeps.
#[cfg(test)]
const MAX_DEPTH: u8 = MIN_DEPTH + SPREAD as u8 - 1;

fn depth_limit(p: usize) -> u8 {
    MIN_DEPTH + (p % SPREAD) as u8
}

/// Ownership bits with the first `n` set.
fn owning_first(n: usize) -> [u64; WORDS] {
    std::array::from_fn(|w| match n.saturating_sub(w * 64) {
        0 => 0,
        k if k >= 64 => u64::MAX,
        k => (1 << k) - 1,
    })
}

/// Whether a copy of a shared page borrows its elements from it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Borrow {
    Yes,
    No,
}

/// What the pages hold: elements whose clone and drop touch memory
/// elsewhere.
pub(crate) trait Element: Clone + Send + Sync + 'static {
    /// Asks for the memory a clone or drop of `self` touches (a count).
    fn fetch_ahead(&self);

    /// Whether the parents a page takes back are freed on the freeing
    /// thread ([`crate::reclaim`]) rather than where they are taken back:
    /// a write in place holds the lock readers wait on, and a chain's
    /// superseded lists can be many. Tests that count drops on their own
    /// thread free here.
    const FREED_ELSEWHERE: bool = true;
}

pub(crate) struct ChainedPages<T> {
    pages: Vec<Arc<Page<T>>>,
    len: usize,
}

/// Up to [`PAGE`] elements. Element `i` is the page's own when its bit in
/// `own` is set (dropped with the page); otherwise it is a bit-for-bit copy
/// of `parent`'s element `i` (owned there or further up), only ever read by
/// reference and never dropped here. A page that is some page's parent is
/// never written, except by [`Page::absorb_parents`] on the one page that
/// holds it alone.
struct Page<T> {
    items: Vec<ManuallyDrop<T>>,
    own: [u64; WORDS],
    parent: Option<Arc<Page<T>>>,
    /// Parents up the chain.
    depth: u8,
}

impl<T> Page<T> {
    fn new() -> Self {
        Self {
            items: Vec::with_capacity(PAGE),
            own: [0; WORDS],
            parent: None,
            depth: 0,
        }
    }

    fn owns(&self, i: usize) -> bool {
        self.own[i / 64] & (1 << (i % 64)) != 0
    }

    fn set_own(&mut self, i: usize) {
        self.own[i / 64] |= 1 << (i % 64);
    }

    fn push(&mut self, value: T) {
        let i = self.items.len();
        self.items.push(ManuallyDrop::new(value));
        self.set_own(i);
    }
}

impl<T: Element> Page<T> {
    /// Takes over the elements of every parent up the chain that no other
    /// page or generation holds: what this page borrows from it becomes its
    /// own, and the rest (elements this page replaced) goes with the parent
    /// (see [`Element::FREED_ELSEWHERE`]).
    fn absorb_parents(&mut self) {
        while let Some(parent) = self.parent.as_mut().and_then(Arc::get_mut) {
            for w in 0..WORDS {
                let taken = !self.own[w] & parent.own[w];
                self.own[w] |= taken;
                parent.own[w] &= !taken;
            }
            let grandparent = parent.parent.take();
            if let Some(taken) = std::mem::replace(&mut self.parent, grandparent) {
                if T::FREED_ELSEWHERE {
                    crate::reclaim::release(taken);
                }
            }
            self.depth = self.parent.as_ref().map_or(0, |p| p.depth + 1);
        }
    }

    /// The copy a writer makes of a page another copy shares: borrowing
    /// from it when asked and the chain is short, else a clone of every
    /// element.
    fn copy_of(parent: &Arc<Page<T>>, borrow: Borrow, limit: u8) -> Self {
        if borrow == Borrow::No || parent.depth >= limit {
            let mut items = copy_ahead(&parent.items, &|item: &ManuallyDrop<T>| item.fetch_ahead());
            items.reserve(PAGE - items.len());
            return Self {
                own: owning_first(items.len()),
                items,
                parent: None,
                depth: 0,
            };
        }
        let n = parent.items.len();
        let mut items: Vec<ManuallyDrop<T>> = Vec::with_capacity(PAGE);
        // SAFETY: `items` has room for `n` elements, and the source is `n`
        // initialised elements of another allocation. The copies are
        // `ManuallyDrop` with their bits in `own` clear, so this page never
        // drops them: they are read by reference only, while the parent,
        // which owns them (or borrows them from a page it keeps alive),
        // is kept alive by `parent` below and is never written again.
        unsafe {
            std::ptr::copy_nonoverlapping(parent.items.as_ptr(), items.as_mut_ptr(), n);
            items.set_len(n);
        }
        Self {
            items,
            own: [0; WORDS],
            parent: Some(Arc::clone(parent)),
            depth: parent.depth + 1,
        }
    }

    /// Element `i` for writing: a borrowed one is cloned first (taking its
    /// own count), so nothing this page writes is a parent's.
    fn get_mut(&mut self, i: usize) -> &mut T {
        if !self.owns(i) {
            // Overwriting a `ManuallyDrop` drops nothing: the parent still
            // owns the element this one copied.
            self.items[i] = ManuallyDrop::new(T::clone(&self.items[i]));
            self.set_own(i);
        }
        &mut self.items[i]
    }

    /// Clones every element it borrows and lets its parents go.
    fn own_all(&mut self) {
        for i in 0..self.items.len() {
            self.get_mut(i);
        }
        self.parent = None;
        self.depth = 0;
    }

    /// Drops the elements this page owns, fetching ahead what each drop
    /// touches ([`drop_ahead`]); the parents go with the page.
    fn drop_own_ahead(&mut self) {
        let mut owned = Vec::with_capacity(self.items.len());
        for i in 0..self.items.len() {
            if self.owns(i) {
                self.own[i / 64] &= !(1 << (i % 64));
                // SAFETY: the page owned element `i` (its bit was set), so no
                // other page drops it; with its bit now clear it is moved out
                // once, and this page never reads or drops it again.
                owned.push(unsafe { ManuallyDrop::take(&mut self.items[i]) });
            }
        }
        drop_ahead(&mut owned, &T::fetch_ahead);
    }
}

impl<T> Drop for Page<T> {
    fn drop(&mut self) {
        for i in 0..self.items.len() {
            if self.owns(i) {
                // SAFETY: the page owns element `i` (its bit is set), so no
                // other page drops it, and the page is going away.
                unsafe { ManuallyDrop::drop(&mut self.items[i]) };
            }
        }
    }
}

impl<T> Default for ChainedPages<T> {
    fn default() -> Self {
        Self {
            pages: Vec::new(),
            len: 0,
        }
    }
}

/// A copy shares every page: a pointer a page.
impl<T> Clone for ChainedPages<T> {
    fn clone(&self) -> Self {
        Self {
            pages: self.pages.clone(),
            len: self.len,
        }
    }
}

impl<T: Element> ChainedPages<T> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        Some(&self.pages[i / PAGE].items[i % PAGE])
    }

    /// Page `p` for writing: copied first when another copy shares it, its
    /// parents absorbed when no other holds them.
    fn page_mut(&mut self, p: usize, borrow: Borrow) -> &mut Page<T> {
        let slot = &mut self.pages[p];
        if Arc::get_mut(slot).is_none() {
            *slot = Arc::new(Page::copy_of(slot, borrow, depth_limit(p)));
        }
        let page = Arc::get_mut(slot).expect("a page copied for this writer alone");
        page.absorb_parents();
        page
    }

    /// Element `i`, its page copied first (with counts) when another copy
    /// shares it: a caller that writes elements one at a time through the
    /// pages (a small field) writes most of a page, so borrowing would save
    /// nothing.
    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        Some(self.page_mut(i / PAGE, Borrow::No).get_mut(i % PAGE))
    }

    /// Puts `value` at `i`, dropping the element there if the page owned
    /// it (a borrowed one stays its parent's). A shared page is copied
    /// borrowing its elements: a fold of segments replaces a few of each
    /// page's.
    pub(crate) fn set(&mut self, i: usize, value: T) {
        if i >= self.len {
            return;
        }
        let page = self.page_mut(i / PAGE, Borrow::Yes);
        let k = i % PAGE;
        let old = std::mem::replace(&mut page.items[k], ManuallyDrop::new(value));
        if page.owns(k) {
            drop(ManuallyDrop::into_inner(old));
        }
        page.set_own(k);
    }

    pub(crate) fn push(&mut self, value: T) {
        if self.len.is_multiple_of(PAGE) {
            self.pages.push(Arc::new(Page::new()));
        }
        let last = self.pages.len() - 1;
        self.page_mut(last, Borrow::Yes).push(value);
        self.len += 1;
    }

    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.pages
            .iter()
            .flat_map(|p| p.items.iter().map(|item| &**item))
    }

    /// Every element, mutably: every shared page is copied, and every
    /// borrowed element cloned.
    pub(crate) fn for_each_mut(&mut self, mut f: impl FnMut(&mut T)) {
        for p in 0..self.pages.len() {
            let page = self.page_mut(p, Borrow::No);
            for i in 0..page.items.len() {
                f(page.get_mut(i));
            }
        }
    }

    /// Lets every parent go: those nothing else holds are absorbed, the
    /// elements borrowed from the rest are cloned. For a field that may not
    /// be written again for a while (compaction's), so it keeps no
    /// superseded pages alive.
    pub(crate) fn straighten(&mut self) {
        for p in 0..self.pages.len() {
            if self.pages[p].parent.is_some() {
                self.page_mut(p, Borrow::No).own_all();
            }
        }
    }

    /// Empties the pages, dropping the elements of those no other copy
    /// shares with what each drop touches fetched ahead; shared pages are
    /// only let go.
    pub(crate) fn drop_ahead(&mut self) {
        for page in &mut self.pages {
            if let Some(page) = Arc::get_mut(page) {
                page.drop_own_ahead();
            }
        }
        self.pages.clear();
        self.len = 0;
    }

    /// Pages this vector shares with `other`, for tests of what a copy costs.
    #[cfg(test)]
    pub(crate) fn pages_shared_with(&self, other: &Self) -> usize {
        let pairs = self.pages.iter().zip(&other.pages);
        pairs.filter(|(a, b)| Arc::ptr_eq(a, b)).count()
    }

    /// The longest chain of parents, for tests of what a page keeps alive.
    #[cfg(test)]
    fn deepest(&self) -> u8 {
        self.pages.iter().map(|p| p.depth).max().unwrap_or(0)
    }
}

impl<T: Element> FromIterator<T> for ChainedPages<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut pages = Self::default();
        for item in items {
            pages.push(item);
        }
        pages
    }
}

impl<T: Element> std::ops::Index<usize> for ChainedPages<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        self.get(i).expect("an element within the pages")
    }
}

impl<T: Element> std::ops::IndexMut<usize> for ChainedPages<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        self.get_mut(i).expect("an element within the pages")
    }
}

#[cfg(test)]
mod tests;
