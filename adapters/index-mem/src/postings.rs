//! One term's postings, compressed. A million-chunk file has millions of
//! terms held by a single chunk (ids, amounts, dates): such a term is one
//! 16-byte value here, where a `Vec<(u32, u32)>` cost a 24-byte header and
//! a 32-byte heap block. Longer lists are (document gap, term frequency)
//! pairs as LEB128 varints, about 2 bytes a posting instead of 8.

use std::sync::Arc;

pub(crate) use iter::Iter;
use iter::ManyIter;
use tail::{Tail, INLINE};

/// Documents in increasing order, each with its term frequency. Postings of
/// retired documents stay until [`Postings::purge`] (or compaction): a
/// reader skips them, and counts the document frequency as it reads.
#[derive(Debug, Clone, Default)]
pub(crate) enum Postings {
    #[default]
    Empty,
    /// A single document.
    One { doc: u32, tf: u32 },
    /// Two or more postings, whose bytes the index's generations share and
    /// only ever append to: this copy of the list holds the first `tail`
    /// bytes of `list`'s tail, so a newer generation appends to a list an
    /// older one reads without copying it, and the older reads on as it was.
    Many {
        list: Arc<Many>,
        /// The last (largest) document held.
        last: u32,
        /// Bytes of `list`'s tail this copy holds.
        tail: u16,
        /// Postings in those bytes (at most [`FREEZE_AT`] / 2 + 1).
        tail_len: u8,
    },
}

/// The bytes of a list of two or more postings: one stream cut at posting
/// boundaries into frozen levels, never written again, and a tail that is
/// only ever appended to. Each copy of the list ([`Postings::Many`]) says
/// how much of the tail it holds.
pub(crate) struct Many {
    /// The oldest frozen bytes: a list read from a snapshot or built whole
    /// is these alone (one block, as a plain vector would be).
    base: Option<Arc<[u8]>>,
    /// The newer frozen levels, oldest first; with `base`, each level at
    /// least twice the size of the next: a few levels for any length.
    upper: Option<Arc<[Arc<[u8]>]>>,
    /// Postings in the levels.
    frozen_len: u32,
    /// The newest bytes.
    tail: Tail,
}

impl std::fmt::Debug for Many {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let levels = self.levels().count();
        write!(f, "Many({levels} levels, tail of {})", self.tail.cap())
    }
}

/// A tail this long is frozen into a level of its own.
const FREEZE_AT: usize = 256;

/// The longest posting: two five-byte varints.
const MAX_POSTING: usize = 10;

/// Writes `v` as a varint at `at` (which it moves past).
fn put(out: &mut [u8; MAX_POSTING], at: &mut usize, mut v: u32) {
    while v >= 0x80 {
        out[*at] = (v as u8) | 0x80;
        *at += 1;
        v >>= 7;
    }
    out[*at] = v as u8;
    *at += 1;
}

/// A posting's bytes: the gap from the last document and the frequency.
pub(crate) fn encode(gap: u32, tf: u32) -> ([u8; MAX_POSTING], usize) {
    let (mut out, mut n) = ([0; MAX_POSTING], 0);
    put(&mut out, &mut n, gap);
    put(&mut out, &mut n, tf);
    (out, n)
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
    /// A list of `levels` (oldest first, `frozen_len` postings) and then
    /// `tail`, with room for `cap` tail bytes.
    fn new(levels: Vec<Arc<[u8]>>, frozen_len: u32, tail: &[u8], cap: usize) -> Self {
        let mut levels = levels.into_iter();
        let base = levels.next();
        let upper: Vec<Arc<[u8]>> = levels.collect();
        Self {
            base,
            upper: (!upper.is_empty()).then(|| upper.into()),
            frozen_len,
            tail: Tail::with(tail, cap.max(tail.len())),
        }
    }

    /// This list's levels and the first `tail` bytes of its tail, with
    /// room for `room` bytes more: the copy a write makes of a list when
    /// its tail is full, or another copy has appended past this one's end.
    fn regrown(&self, tail: u16, room: usize) -> Self {
        let need = tail as usize + room;
        let cap = match self.tail.cap() {
            cap if cap >= need => cap,
            cap => (2 * cap).max(need),
        };
        Self {
            base: self.base.clone(),
            upper: self.upper.clone(),
            frozen_len: self.frozen_len,
            tail: Tail::with(self.tail.bytes(tail), cap.min(FREEZE_AT + MAX_POSTING)),
        }
    }

    /// A new list of the first `tail` bytes (`tail_len` postings) of this
    /// one's tail in a level of its own, first merged with the newest
    /// levels while they are less than twice its size (so a byte is copied
    /// once per doubling of the list, as a growing vector's is).
    fn frozen(&self, tail: u16, tail_len: u8) -> Self {
        let mut levels: Vec<Arc<[u8]>> = self.levels().cloned().collect();
        let mut newest: Vec<u8> = self.tail.bytes(tail).to_vec();
        while let Some(level) = levels.pop_if(|l| l.len() < 2 * newest.len()) {
            let mut merged = Vec::with_capacity(level.len() + newest.len());
            merged.extend_from_slice(&level);
            merged.extend_from_slice(&newest);
            newest = merged;
        }
        levels.push(newest.into());
        Self::new(levels, self.frozen_len + u32::from(tail_len), &[], 0)
    }

    /// The frozen levels, oldest first.
    fn levels(&self) -> impl Iterator<Item = &Arc<[u8]>> {
        self.base
            .iter()
            .chain(self.upper.iter().flat_map(|u| u.iter()))
    }

    /// The bytes in order of a copy holding `tail` tail bytes, level by
    /// level then the tail.
    pub(crate) fn segments(&self, tail: u16) -> impl Iterator<Item = &[u8]> {
        self.levels()
            .map(|l| &l[..])
            .chain(std::iter::once(self.tail.bytes(tail)))
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
        Ok(Self::whole(bytes, len, last))
    }

    /// A list of exactly `bytes` (`len` postings, two or more, the last
    /// `last`): inline when short (at most 8 postings), else one level.
    fn whole(bytes: &[u8], len: u32, last: u32) -> Self {
        let (list, tail, tail_len) = if bytes.len() <= INLINE {
            let list = Many::new(Vec::new(), 0, bytes, INLINE);
            (list, bytes.len() as u16, len as u8)
        } else {
            (Many::new(vec![bytes.into()], len, &[], 0), 0, 0)
        };
        Postings::Many {
            list: Arc::new(list),
            last,
            tail,
            tail_len,
        }
    }

    /// Builds a list from pairs sorted by document (duplicates: last wins).
    pub(crate) fn from_sorted(pairs: impl IntoIterator<Item = (u32, u32)>) -> Self {
        let mut p = Self::default();
        for (doc, tf) in pairs {
            p.add(doc, tf);
        }
        if let Postings::Many { last, .. } = p {
            let bytes: Vec<u8> = p.segments().flatten().copied().collect();
            p = Self::whole(&bytes, p.len(), last);
        }
        p
    }

    /// Postings held, retired ones included.
    pub(crate) fn len(&self) -> u32 {
        match self {
            Postings::Empty => 0,
            Postings::One { .. } => 1,
            Postings::Many { list, tail_len, .. } => list.frozen_len + u32::from(*tail_len),
        }
    }

    /// Whether the list holds no posting.
    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, Postings::Empty)
    }

    /// The last (largest) document held, retired or not.
    pub(crate) fn last_doc(&self) -> Option<u32> {
        match self {
            Postings::Empty => None,
            Postings::One { doc, .. } => Some(*doc),
            Postings::Many { last, .. } => Some(*last),
        }
    }

    /// The bytes in order, for the snapshot (none unless two or more).
    pub(crate) fn segments(&self) -> impl Iterator<Item = &[u8]> {
        let many = match self {
            Postings::Many { list, tail, .. } => Some(list.segments(*tail)),
            _ => None,
        };
        many.into_iter().flatten()
    }

    /// Bytes held.
    pub(crate) fn byte_len(&self) -> usize {
        self.segments().map(<[u8]>::len).sum()
    }

    /// Adds `doc` with `tf`: an append when `doc` is past the last one (the
    /// index only ever adds new slots), otherwise a rebuild.
    pub(crate) fn add(&mut self, doc: u32, tf: u32) {
        match self {
            Postings::Empty => *self = Postings::One { doc, tf },
            Postings::One { doc: d, tf: t } if doc > *d => {
                let (first, n) = encode(*d, *t);
                let (second, m) = encode(doc - *d, tf);
                let bytes = [&first[..n], &second[..m]].concat();
                *self = Postings::Many {
                    list: Arc::new(Many::new(Vec::new(), 0, &bytes, INLINE)),
                    last: doc,
                    tail: bytes.len() as u16,
                    tail_len: 2,
                };
            }
            Postings::Many { last, .. } if doc > *last => self.append(doc, tf),
            _ => {
                let mut pairs: Vec<(u32, u32)> = self.iter().collect();
                match pairs.binary_search_by_key(&doc, |p| p.0) {
                    Ok(i) => pairs[i].1 = tf,
                    Err(i) => pairs.insert(i, (doc, tf)),
                }
                *self = Self::from_sorted(pairs);
            }
        }
    }

    /// Appends a posting past the last to a list of two or more: in the
    /// shared tail when it has room and no other copy has appended past
    /// this one's end, else in a copy of the tail with room to grow.
    fn append(&mut self, doc: u32, tf: u32) {
        let Postings::Many {
            list,
            last,
            tail,
            tail_len,
        } = self
        else {
            return;
        };
        let (bytes, n) = encode(doc - *last, tf);
        if let Some(only) = Arc::get_mut(list) {
            // No other copy: what was written past this one's end is no
            // one's.
            only.tail.forget_past(*tail);
        }
        if !list.tail.append(*tail, &bytes[..n]) {
            let grown = list.regrown(*tail, n);
            let appended = grown.tail.append(*tail, &bytes[..n]);
            debug_assert!(appended, "a regrown tail has room");
            *list = Arc::new(grown);
        }
        *tail += n as u16;
        *tail_len += 1;
        *last = doc;
        if *tail as usize >= FREEZE_AT {
            *list = Arc::new(list.frozen(*tail, *tail_len));
            (*tail, *tail_len) = (0, 0);
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
            return;
        }
        let kept: Vec<(u32, u32)> = self.iter().filter(|&(d, _)| keep(d)).collect();
        *self = Self::from_sorted(kept);
    }

    /// Drops `doc`'s posting at once (a field whose document ids are
    /// reused: the title field's source ids).
    pub(crate) fn remove(&mut self, doc: u32) {
        if self.iter().any(|(d, _)| d == doc) {
            let kept: Vec<(u32, u32)> = self.iter().filter(|&(d, _)| d != doc).collect();
            *self = Self::from_sorted(kept);
        }
    }

    pub(crate) fn iter(&self) -> Iter<'_> {
        match self {
            Postings::Empty => Iter::One(None),
            Postings::One { doc, tf } => Iter::One(Some((*doc, *tf))),
            Postings::Many { list, tail, .. } => {
                // Without a base there are no levels: the first frozen
                // level is the base.
                let levels = list.upper.as_deref().unwrap_or(&[]).iter();
                let tail = list.tail.bytes(*tail);
                let (bytes, tail) = match list.base.as_deref() {
                    Some(base) => (base, Some(tail)),
                    None => (tail, None),
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
            $crate::postings::Postings::Many { list, tail, .. } => {
                let mut last = 0u32;
                for bytes in list.segments(*tail) {
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

mod iter;
mod prefetch;
mod tail;
#[cfg(test)]
mod tests;

pub(crate) use prefetch::prefetch;
