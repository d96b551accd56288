//! One term's postings, compressed. A million-chunk file has millions of
//! terms held by a single chunk (ids, amounts, dates): such a term is one
//! 16-byte value here, where a `Vec<(u32, u32)>` cost a 24-byte header and
//! a 32-byte heap block. Longer lists are (document gap, term frequency)
//! pairs as LEB128 varints, about 2 bytes a posting instead of 8.

use std::sync::Arc;

use smallvec::SmallVec;

/// Documents in increasing order, each with its term frequency. Postings of
/// retired documents stay until [`Postings::purge`]; they are counted so
/// the document frequency stays exact.
#[derive(Debug, Clone, Default)]
pub(crate) enum Postings {
    #[default]
    Empty,
    /// A single document (never retired: retiring it empties the list).
    One { doc: u32, tf: u32 },
    /// Shared between the index's generations: written through
    /// [`Arc::make_mut`], so a list is copied only when a newer generation
    /// changes it.
    Many {
        list: Arc<Many>,
        /// Postings of retired documents still in `list`: counted here, so
        /// retiring one never copies a list another generation shares.
        dead: u32,
    },
}

/// Two or more postings: the varint pairs of [`Postings`], one stream cut
/// at posting boundaries into frozen levels and a tail. A copy of a list
/// (a write to a list another generation shares) shares the levels and
/// copies only the tail, so it costs at most [`FREEZE_AT`] bytes and a
/// few pointers however long the list.
#[derive(Debug, Default)]
pub(crate) struct Many {
    len: u32,
    last: u32,
    /// The older bytes, oldest first, each level at least twice the size
    /// of the next: a few levels for any length.
    /// (None for a short list: no allocation; one `Arc`, so a copy of the
    /// list takes a count, not a new block.)
    frozen: Option<Arc<[Arc<[u8]>]>>,
    /// The newest bytes.
    tail: SmallVec<[u8; 16]>,
}

/// A tail this long is frozen into a level of its own.
const FREEZE_AT: usize = 256;

/// The copy a write makes of a list another generation shares: the
/// levels' pointers and one memcpy of the tail, with room for the postings
/// the write is about to append.
impl Clone for Many {
    fn clone(&self) -> Self {
        // A short tail stays inline, as it was.
        let n = self.tail.len();
        let mut tail = SmallVec::with_capacity(if n <= 12 { 16 } else { n + 16 });
        tail.extend_from_slice(&self.tail);
        Self {
            len: self.len,
            last: self.last,
            frozen: self.frozen.clone(),
            tail,
        }
    }
}

fn put(bytes: &mut SmallVec<[u8; 16]>, mut v: u32) {
    while v >= 0x80 {
        bytes.push((v as u8) | 0x80);
        v >>= 7;
    }
    bytes.push(v as u8);
}

fn take(bytes: &[u8], at: &mut usize) -> u32 {
    let mut v = 0u32;
    let mut shift = 0;
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= u32::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

impl Many {
    fn push(&mut self, doc: u32, tf: u32) {
        let gap = if self.len == 0 { doc } else { doc - self.last };
        put(&mut self.tail, gap);
        put(&mut self.tail, tf);
        self.len += 1;
        self.last = doc;
        if self.tail.len() >= FREEZE_AT {
            self.freeze();
        }
    }

    /// Moves the tail into a level of its own, first merging it with the
    /// newest levels while they are less than twice its size (so a byte is
    /// copied once per doubling of the list, as a growing vector's is).
    fn freeze(&mut self) {
        let mut levels = self.levels().to_vec();
        let mut newest: Vec<u8> = self.tail.to_vec();
        self.tail.clear();
        while let Some(level) = levels.pop_if(|l| l.len() < 2 * newest.len()) {
            let mut merged = Vec::with_capacity(level.len() + newest.len());
            merged.extend_from_slice(&level);
            merged.extend_from_slice(&newest);
            newest = merged;
        }
        levels.push(newest.into());
        self.frozen = Some(levels.into());
    }

    /// All the bytes in one level (or inline when short): a list built
    /// whole takes exactly its size.
    fn settle(&mut self) {
        if self.levels().is_empty() {
            self.tail.shrink_to_fit();
            return;
        }
        if self.levels().len() == 1 && self.tail.is_empty() {
            return;
        }
        let bytes: Vec<u8> = self.segments().flatten().copied().collect();
        self.frozen = Some(Arc::new([bytes.into()]));
        self.tail = SmallVec::new();
    }

    fn levels(&self) -> &[Arc<[u8]>] {
        self.frozen.as_deref().unwrap_or(&[])
    }

    /// The bytes in order, level by level then the tail.
    fn segments(&self) -> impl Iterator<Item = &[u8]> {
        self.levels()
            .iter()
            .map(|l| &l[..])
            .chain(std::iter::once(&self.tail[..]))
    }

    /// (postings, last document, the bytes in order), for the snapshot.
    pub(crate) fn parts(&self) -> (u32, u32, impl Iterator<Item = &[u8]>) {
        (self.len, self.last, self.segments())
    }

    /// Bytes held.
    pub(crate) fn byte_len(&self) -> usize {
        self.segments().map(<[u8]>::len).sum()
    }
}

/// A varint of at most five bytes that fits a u32, read with bounds checks.
fn take_checked(bytes: &[u8], at: &mut usize) -> Option<u32> {
    let mut v = 0u64;
    for shift in (0..35).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return u32::try_from(v).ok();
        }
    }
    None
}

impl Postings {
    /// A list of two or more postings from the snapshot's bytes, walked
    /// once: `len` varint pairs, documents rising and below `docs`, the
    /// last one `last`, `dead` at most `len`. Anything else is an error.
    pub(crate) fn from_parts(
        len: u32,
        dead: u32,
        last: u32,
        bytes: &[u8],
        docs: usize,
    ) -> Result<Self, String> {
        let bad = |why: &str| Err(format!("a postings list {why}"));
        let (mut at, mut seen, mut doc) = (0, 0u32, 0u32);
        while at < bytes.len() {
            let (Some(gap), Some(_tf)) =
                (take_checked(bytes, &mut at), take_checked(bytes, &mut at))
            else {
                return bad("whose varints are cut or too long");
            };
            doc = match seen {
                0 => gap,
                _ if gap == 0 => return bad("whose documents do not rise"),
                _ => match doc.checked_add(gap) {
                    Some(d) => d,
                    None => return bad("whose documents overflow"),
                },
            };
            if doc as usize >= docs {
                return bad("of a document past the lengths");
            }
            seen += 1;
        }
        if seen != len || len < 2 || doc != last || dead > len {
            return bad("whose counts do not match its bytes");
        }
        let (frozen, tail) = if bytes.len() <= 16 {
            (None, SmallVec::from_slice(bytes))
        } else {
            (Some(Arc::new([bytes.into()]) as Arc<[_]>), SmallVec::new())
        };
        Ok(Postings::Many {
            list: Arc::new(Many {
                len,
                last,
                frozen,
                tail,
            }),
            dead,
        })
    }

    /// Builds a list from pairs sorted by document (duplicates: last wins).
    pub(crate) fn from_sorted(pairs: impl IntoIterator<Item = (u32, u32)>) -> Self {
        let mut p = Self::default();
        for (doc, tf) in pairs {
            p.add(doc, tf);
        }
        if let Postings::Many { list, .. } = &mut p {
            Arc::make_mut(list).settle();
        }
        p
    }

    /// Postings held, retired ones included.
    #[cfg(test)]
    pub(crate) fn len(&self) -> u32 {
        match self {
            Postings::Empty => 0,
            Postings::One { .. } => 1,
            Postings::Many { list, .. } => list.len,
        }
    }

    /// Documents that hold the term: the document frequency.
    pub(crate) fn live(&self) -> u32 {
        match self {
            Postings::Empty => 0,
            Postings::One { .. } => 1,
            Postings::Many { list, dead } => list.len - dead,
        }
    }

    /// Adds `doc` with `tf`: an append when `doc` is past the last one (the
    /// index only ever adds new slots), otherwise a rebuild.
    pub(crate) fn add(&mut self, doc: u32, tf: u32) {
        match self {
            Postings::Empty => *self = Postings::One { doc, tf },
            Postings::One { doc: d, tf: t } if doc > *d => {
                let mut m = Many::default();
                m.push(*d, *t);
                m.push(doc, tf);
                *self = Postings::Many {
                    list: Arc::new(m),
                    dead: 0,
                };
            }
            Postings::Many { list, .. } if doc > list.last => Arc::make_mut(list).push(doc, tf),
            _ => {
                let mut pairs: Vec<(u32, u32)> = self.iter().collect();
                match pairs.binary_search_by_key(&doc, |p| p.0) {
                    Ok(i) => pairs[i].1 = tf,
                    Err(i) => pairs.insert(i, (doc, tf)),
                }
                self.rebuild(pairs);
            }
        }
    }

    /// Replaces the postings by `pairs` (sorted), still counting as retired
    /// those that were: the retired documents are among the pairs.
    fn rebuild(&mut self, pairs: Vec<(u32, u32)>) {
        let retired = match self {
            Postings::Many { dead, .. } => *dead,
            _ => 0,
        };
        *self = Self::from_sorted(pairs);
        if let Postings::Many { dead, .. } = self {
            *dead = retired;
        }
    }

    /// Counts one posting as retired (its document is gone); when retired
    /// postings are the majority, drops them (`alive` says which documents
    /// remain), so removal costs amortized O(1) per posting.
    pub(crate) fn retire(&mut self, alive: impl Fn(u32) -> bool) {
        match self {
            Postings::Empty => {}
            Postings::One { .. } => *self = Postings::Empty,
            Postings::Many { list, dead } => {
                *dead += 1;
                if *dead * 2 > list.len {
                    self.purge(alive);
                }
            }
        }
    }

    /// Keeps the postings whose document `keep` accepts.
    pub(crate) fn purge(&mut self, keep: impl Fn(u32) -> bool) {
        match self {
            Postings::Empty => return,
            Postings::One { doc, .. } => {
                if !keep(*doc) {
                    *self = Postings::Empty;
                }
                return;
            }
            Postings::Many { .. } => {}
        }
        if self.iter().all(|(d, _)| keep(d)) {
            if let Postings::Many { dead, .. } = self {
                *dead = 0;
            }
            return;
        }
        let kept: Vec<(u32, u32)> = self.iter().filter(|&(d, _)| keep(d)).collect();
        *self = Self::from_sorted(kept);
    }

    /// Drops `doc`'s posting at once (a field whose document ids are
    /// reused: the title field's source ids).
    pub(crate) fn remove(&mut self, doc: u32) {
        if self.iter().any(|(d, _)| d == doc) {
            let kept = self.iter().filter(|&(d, _)| d != doc).collect();
            self.rebuild(kept);
        }
    }

    pub(crate) fn iter(&self) -> Iter<'_> {
        match self {
            Postings::Empty => Iter::One(None),
            Postings::One { doc, tf } => Iter::One(Some((*doc, *tf))),
            Postings::Many { list, .. } => Iter::Many {
                levels: list.levels().iter(),
                tail: Some(&list.tail),
                bytes: &[],
                at: 0,
                doc: 0,
                first: true,
            },
        }
    }
}

/// (document, term frequency) in document order.
pub(crate) enum Iter<'a> {
    One(Option<(u32, u32)>),
    Many {
        /// The levels not yet read, then the tail.
        levels: std::slice::Iter<'a, Arc<[u8]>>,
        tail: Option<&'a [u8]>,
        /// The segment being read.
        bytes: &'a [u8],
        at: usize,
        doc: u32,
        first: bool,
    },
}

impl Iterator for Iter<'_> {
    type Item = (u32, u32);

    fn next(&mut self) -> Option<(u32, u32)> {
        match self {
            Iter::One(p) => p.take(),
            Iter::Many {
                levels,
                tail,
                bytes,
                at,
                doc,
                first,
            } => {
                while *at >= bytes.len() {
                    *bytes = match levels.next() {
                        Some(level) => level,
                        None => tail.take()?,
                    };
                    *at = 0;
                }
                let gap = take(bytes, at);
                *doc = if *first { gap } else { *doc + gap };
                *first = false;
                Some((*doc, take(bytes, at)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_in_order_and_out_of_order() {
        let mut p = Postings::default();
        for (d, tf) in [(0, 1), (5, 300), (200_000, 2), (u32::MAX - 1, 1)] {
            p.add(d, tf);
        }
        p.add(7, 9); // out of order: a rebuild
        p.add(5, 4); // an existing document: its frequency replaced
        let got: Vec<_> = p.iter().collect();
        assert_eq!(
            got,
            [(0, 1), (5, 4), (7, 9), (200_000, 2), (u32::MAX - 1, 1)]
        );
        assert_eq!((p.len(), p.live()), (5, 5));
    }

    #[test]
    fn a_short_list_stays_inline_and_a_long_one_is_compact() {
        assert_eq!(std::mem::size_of::<Postings>(), 16);
        let mut p = Postings::default();
        p.add(123_456, 1);
        assert!(
            matches!(p, Postings::One { .. }),
            "a rare term needs no heap block"
        );
        p.add(123_460, 2);
        let Postings::Many { list: m, .. } = &p else {
            panic!("two postings")
        };
        assert!(
            m.frozen.is_none() && !m.tail.spilled(),
            "a short list stays inline"
        );
        let mut long = Postings::default();
        for d in 0..100_000 {
            long.add(d * 3, 1);
        }
        let Postings::Many { list: m, .. } = &long else {
            panic!("a long list")
        };
        assert!(m.byte_len() <= 2 * 100_000, "{} bytes", m.byte_len());
    }

    #[test]
    fn a_copy_shares_the_frozen_levels_and_copies_only_a_short_tail() {
        let mut p = Postings::default();
        let pairs: Vec<(u32, u32)> = (0..50_000).map(|d| (d * 7, d % 5 + 1)).collect();
        for &(d, tf) in &pairs {
            p.add(d, tf);
        }
        let Postings::Many { list, .. } = &p else {
            panic!("a long list")
        };
        let levels = list.levels().len();
        assert!((2..=12).contains(&levels), "{levels} levels");
        assert!(list
            .levels()
            .windows(2)
            .all(|w| w[0].len() >= 2 * w[1].len()));
        assert!(list.tail.len() < FREEZE_AT);
        let copy = Many::clone(list);
        assert!(Arc::ptr_eq(
            copy.frozen.as_ref().unwrap(),
            list.frozen.as_ref().unwrap()
        ));
        // The copy appends on its own; the original reads as it was.
        let mut shared = p.clone();
        shared.add(1_000_000, 3);
        assert_eq!(p.iter().collect::<Vec<_>>(), pairs);
        let mut longer = pairs.clone();
        longer.push((1_000_000, 3));
        assert_eq!(shared.iter().collect::<Vec<_>>(), longer);
        // Built whole, a list is one level of exactly its bytes.
        let whole = Postings::from_sorted(pairs.iter().copied());
        let Postings::Many { list, .. } = &whole else {
            panic!("a long list")
        };
        assert_eq!((list.levels().len(), list.tail.len()), (1, 0));
        assert_eq!(whole.iter().collect::<Vec<_>>(), pairs);
    }

    #[test]
    fn retired_postings_are_counted_then_purged() {
        let mut p = Postings::from_sorted((0..10).map(|d| (d, 1)));
        let gone = |d: u32| d < 6;
        for _ in 0..5 {
            p.retire(|d| !gone(d));
        }
        assert_eq!((p.len(), p.live()), (10, 5), "not yet the majority");
        p.retire(|d| !gone(d));
        assert_eq!((p.len(), p.live()), (4, 4), "purged once dead > half");
        assert_eq!(p.iter().map(|x| x.0).collect::<Vec<_>>(), [6, 7, 8, 9]);
        p.remove(8);
        assert_eq!(p.iter().map(|x| x.0).collect::<Vec<_>>(), [6, 7, 9]);
    }
}
