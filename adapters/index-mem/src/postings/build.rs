//! Whole lists built at once from their postings, and lists joined end to
//! end: what a segment of recent postings is made of and merged by
//! ([`crate::bm25::delta`]), a few byte copies a list instead of one
//! append a posting.

use super::{encode, take, Postings, MAX_POSTING};

impl Postings {
    /// The list of `pairs`, (document, frequency) in rising document order.
    pub(crate) fn encoded(pairs: impl ExactSizeIterator<Item = (u32, u32)>) -> Self {
        let len = pairs.len() as u32;
        let (mut bytes, mut prev) = (Vec::with_capacity(2 * len as usize), 0);
        let mut first = None;
        for (doc, tf) in pairs {
            first.get_or_insert((doc, tf));
            let (b, n) = encode(doc - prev, tf);
            bytes.extend_from_slice(&b[..n]);
            prev = doc;
        }
        match (len, first) {
            (0, _) | (_, None) => Postings::Empty,
            (1, Some((doc, tf))) => Postings::One { doc, tf },
            _ => Self::whole(&bytes, len, prev),
        }
    }

    /// The postings of `lists` end to end, each one's first document past
    /// the last of those before: the bytes copied, only each list's first
    /// gap written anew.
    pub(crate) fn joined(lists: &[&Postings]) -> Postings {
        let mut held = lists.iter().filter(|l| !l.is_empty());
        match (held.next(), held.next()) {
            (Some(only), None) => (*only).clone(),
            _ => Self::join_bytes(lists),
        }
    }

    /// [`Postings::joined`] for two or more lists (or none).
    fn join_bytes(lists: &[&Postings]) -> Postings {
        let size = lists.iter().map(|l| l.byte_len() + MAX_POSTING).sum();
        let (mut bytes, mut prev, mut len) = (Vec::with_capacity(size), 0, 0);
        for list in lists {
            if let Some(last) = list.last_doc() {
                debug_assert!(list
                    .iter()
                    .next()
                    .is_some_and(|(d, _)| len == 0 || d > prev));
                list.write_from(prev, &mut bytes);
                (prev, len) = (last, len + list.len());
            }
        }
        match len {
            0 => Postings::Empty,
            _ => Self::whole(&bytes, len, prev),
        }
    }

    /// This list's bytes as they follow a list ending at `prev`: its first
    /// document as a gap from `prev`, the rest as they are.
    fn write_from(&self, prev: u32, out: &mut Vec<u8>) {
        match self {
            Postings::Empty => {}
            Postings::One { doc, tf } => {
                let (b, n) = encode(doc - prev, *tf);
                out.extend_from_slice(&b[..n]);
            }
            Postings::Many { .. } => {
                let mut first = true;
                for bytes in self.segments().filter(|b| !b.is_empty()) {
                    if !first {
                        out.extend_from_slice(bytes);
                        continue;
                    }
                    first = false;
                    let mut at = 0;
                    let doc = take(bytes, &mut at);
                    let tf = take(bytes, &mut at);
                    let (b, n) = encode(doc - prev, tf);
                    out.extend_from_slice(&b[..n]);
                    out.extend_from_slice(&bytes[at..]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(docs: std::ops::Range<u32>) -> Vec<(u32, u32)> {
        docs.map(|d| (d * 3 + 1, d % 5 + 1)).collect()
    }

    #[test]
    fn built_whole_or_joined_a_list_reads_as_one_added_posting_by_posting() {
        for (a, b) in [
            (0..0, 0..1),
            (0..1, 1..2),
            (0..2, 2..3),
            (0..40, 40..41),
            (0..3, 3..900),
        ] {
            let (older, newer) = (pairs(a.clone()), pairs(b.clone()));
            let all: Vec<(u32, u32)> = older.iter().chain(&newer).copied().collect();
            let mut added = Postings::default();
            all.iter().for_each(|&(d, tf)| added.add(d, tf));
            let joined = Postings::joined(&[
                &Postings::encoded(older.into_iter()),
                &Postings::default(),
                &Postings::encoded(newer.into_iter()),
            ]);
            assert_eq!(joined.iter().collect::<Vec<_>>(), all, "{a:?} {b:?}");
            assert_eq!(
                (joined.len(), joined.last_doc()),
                (added.len(), added.last_doc())
            );
            let whole = Postings::encoded(all.iter().copied());
            assert_eq!(whole.iter().collect::<Vec<_>>(), all);
        }
        // A list grown posting by posting (frozen levels and a tail) joins
        // the same as one built whole.
        let mut grown = Postings::default();
        pairs(0..500)
            .into_iter()
            .for_each(|(d, tf)| grown.add(d, tf));
        let (tail, one) = (
            Postings::encoded(pairs(500..510).into_iter()),
            Postings::encoded(pairs(510..511).into_iter()),
        );
        let joined = Postings::joined(&[&grown, &tail, &one]);
        assert_eq!(joined.iter().collect::<Vec<_>>(), pairs(0..511));
        assert!(Postings::encoded(std::iter::empty()).is_empty());
    }
}
