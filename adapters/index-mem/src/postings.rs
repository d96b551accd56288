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
    /// The oldest frozen bytes: a list read from a snapshot or built whole
    /// is these alone (one block, as a plain vector would be).
    base: Option<Arc<[u8]>>,
    /// The newer frozen levels, oldest first; with `base`, each level at
    /// least twice the size of the next: a few levels for any length. One
    /// `Arc`, so a copy of the list takes a count, not a new block.
    upper: Option<Arc<[Arc<[u8]>]>>,
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
            base: self.base.clone(),
            upper: self.upper.clone(),
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

/// The varint at `at` (which it moves past).
#[inline(always)]
pub(crate) fn take(bytes: &[u8], at: &mut usize) -> u32 {
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
        let mut levels: Vec<Arc<[u8]>> = self.levels().cloned().collect();
        let mut newest: Vec<u8> = self.tail.to_vec();
        self.tail.clear();
        while let Some(level) = levels.pop_if(|l| l.len() < 2 * newest.len()) {
            let mut merged = Vec::with_capacity(level.len() + newest.len());
            merged.extend_from_slice(&level);
            merged.extend_from_slice(&newest);
            newest = merged;
        }
        levels.push(newest.into());
        let mut levels = levels.into_iter();
        self.base = levels.next();
        let upper: Vec<Arc<[u8]>> = levels.collect();
        self.upper = (!upper.is_empty()).then(|| upper.into());
    }

    /// All the bytes in one level (or inline when short): a list built
    /// whole takes exactly its size.
    fn settle(&mut self) {
        if self.base.is_none() {
            self.tail.shrink_to_fit();
            return;
        }
        if self.upper.is_none() && self.tail.is_empty() {
            return;
        }
        let bytes: Vec<u8> = self.segments().flatten().copied().collect();
        self.base = Some(bytes.into());
        self.upper = None;
        self.tail = SmallVec::new();
    }

    /// The frozen levels, oldest first.
    fn levels(&self) -> impl Iterator<Item = &Arc<[u8]>> {
        self.base
            .iter()
            .chain(self.upper.iter().flat_map(|u| u.iter()))
    }

    /// The bytes in order, level by level then the tail.
    pub(crate) fn segments(&self) -> impl Iterator<Item = &[u8]> {
        self.levels()
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
        let (base, tail) = if bytes.len() <= 16 {
            (None, SmallVec::from_slice(bytes))
        } else {
            (Some(bytes.into()), SmallVec::new())
        };
        Ok(Postings::Many {
            list: Arc::new(Many {
                len,
                last,
                base,
                upper: None,
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

    /// The last (largest) document held, retired or not.
    pub(crate) fn last_doc(&self) -> Option<u32> {
        match self {
            Postings::Empty => None,
            Postings::One { doc, .. } => Some(*doc),
            Postings::Many { list, .. } => Some(list.last),
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
            Postings::Many { list, .. } => {
                // Without a base there are no levels: the first frozen
                // level is the base.
                let levels = list.upper.as_deref().unwrap_or(&[]).iter();
                let (bytes, tail) = match list.base.as_deref() {
                    Some(base) => (base, Some(&list.tail[..])),
                    None => (&list.tail[..], None),
                };
                Iter::Many(ManyIter {
                    bytes,
                    at: 0,
                    doc: 0,
                    levels,
                    tail,
                })
            }
        }
    }
}

/// Runs `$body` with `$doc` and `$tf` bound to each posting of `$list` (a
/// `&Postings`) in order, what [`Postings::iter`] yields: the scoring
/// loops' hot path, expanded in place and a tight loop per segment, so no
/// call stands between a posting and its score.
macro_rules! each_posting {
    ($list:expr, |$doc:ident, $tf:ident| $body:block) => {
        match $list {
            $crate::postings::Postings::Empty => {}
            $crate::postings::Postings::One { doc, tf } => {
                let ($doc, $tf) = (*doc, *tf);
                $body
            }
            $crate::postings::Postings::Many { list, .. } => {
                let mut last = 0u32;
                for bytes in list.segments() {
                    let mut at = 0;
                    while at < bytes.len() {
                        last += $crate::postings::take(bytes, &mut at);
                        let ($doc, $tf) = (last, $crate::postings::take(bytes, &mut at));
                        $body
                    }
                }
            }
        }
    };
}
pub(crate) use each_posting;

/// (document, term frequency) in document order.
pub(crate) enum Iter<'a> {
    One(Option<(u32, u32)>),
    Many(ManyIter<'a>),
}

/// A list's postings, segment by segment: the base, the levels, the tail.
pub(crate) struct ManyIter<'a> {
    /// The segment being read.
    bytes: &'a [u8],
    at: usize,
    /// The last document read (0 before the first, whose gap is from 0).
    doc: u32,
    levels: std::slice::Iter<'a, Arc<[u8]>>,
    tail: Option<&'a [u8]>,
}

impl ManyIter<'_> {
    /// Moves to the next segment with bytes; false at the end.
    #[cold]
    fn advance(&mut self) -> bool {
        loop {
            self.bytes = match self.levels.next() {
                Some(level) => level,
                None => match self.tail.take() {
                    Some(tail) => tail,
                    None => return false,
                },
            };
            self.at = 0;
            if !self.bytes.is_empty() {
                return true;
            }
        }
    }
}

impl Iterator for Iter<'_> {
    type Item = (u32, u32);

    #[inline]
    fn next(&mut self) -> Option<(u32, u32)> {
        match self {
            Iter::One(p) => p.take(),
            Iter::Many(m) => {
                if m.at >= m.bytes.len() && !m.advance() {
                    return None;
                }
                m.doc += take(m.bytes, &mut m.at);
                Some((m.doc, take(m.bytes, &mut m.at)))
            }
        }
    }
}

mod prefetch;
#[cfg(test)]
mod tests;

pub(crate) use prefetch::prefetch;
