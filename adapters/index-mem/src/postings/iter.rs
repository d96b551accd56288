//! Reading a list's postings in order.

use std::sync::Arc;

use super::take;

/// (document, term frequency) in document order.
pub(crate) enum Iter<'a> {
    One(Option<(u32, u32)>),
    Many(ManyIter<'a>),
}

/// A list's postings, segment by segment: the base, the levels, the tail.
pub(crate) struct ManyIter<'a> {
    /// The segment being read.
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
    /// The last document read (0 before the first, whose gap is from 0).
    pub(super) doc: u32,
    pub(super) levels: std::slice::Iter<'a, Arc<[u8]>>,
    pub(super) tail: Option<&'a [u8]>,
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
