//! One term's postings in one source, packed: for each chunk holding the
//! term, in index order, the gap from the previous chunk index, the term's
//! frequency and the chunk's length, each a LEB128 varint (usually 3–4
//! bytes a posting). A query reads one row per (term, source) instead of
//! one per (term, chunk), and decodes it here.

/// A chunk's posting: its index in the source, the term's frequency in it
/// and its length in terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Posting {
    pub idx: u32,
    pub tf: u32,
    pub len: u32,
}

fn put(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn take(bytes: &[u8], at: &mut usize) -> Option<u32> {
    let mut v: u32 = 0;
    for shift in (0..35).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u32::from(b & 0x7f).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Most bytes in one row: rows live in the primary key's leaf pages
/// (`INCLUDE (n, data)`, read by an index-only scan), whose tuples must stay
/// well under a third of a page.
pub(crate) const MAX_ROW_BYTES: usize = 1200;

/// Packs postings given in increasing `idx` order into rows of at most
/// [`MAX_ROW_BYTES`]: `(count, bytes)` each, in order (a row's first gap is
/// from 0, so each row decodes on its own).
pub(crate) fn pack_rows(postings: &[Posting]) -> Vec<(i32, Vec<u8>)> {
    let mut rows = Vec::new();
    let mut out = Vec::new();
    let (mut prev, mut count) = (0, 0);
    for p in postings {
        if out.len() + 15 > MAX_ROW_BYTES {
            rows.push((count, std::mem::take(&mut out)));
            (prev, count) = (0, 0);
        }
        put(&mut out, p.idx - prev);
        put(&mut out, p.tf);
        put(&mut out, p.len);
        prev = p.idx;
        count += 1;
    }
    if count > 0 {
        rows.push((count, out));
    }
    rows
}

/// Unpacks a row's postings; `None` when the bytes are damaged.
pub(crate) fn unpack(bytes: &[u8], mut each: impl FnMut(Posting)) -> Option<()> {
    let mut at = 0;
    let mut idx = 0u32;
    while at < bytes.len() {
        idx = idx.checked_add(take(bytes, &mut at)?)?;
        let tf = take(bytes, &mut at)?;
        let len = take(bytes, &mut at)?;
        each(Posting { idx, tf, len });
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postings_round_trip_and_damage_is_seen() {
        let ps = vec![
            Posting {
                idx: 0,
                tf: 1,
                len: 12,
            },
            Posting {
                idx: 5,
                tf: 300,
                len: 70_000,
            },
            Posting {
                idx: 1_000_000,
                tf: 2,
                len: 1,
            },
        ];
        let rows = pack_rows(&ps);
        assert_eq!(rows.len(), 1);
        let (n, bytes) = &rows[0];
        assert_eq!(*n, 3);
        let mut back = Vec::new();
        unpack(bytes, |p| back.push(p)).unwrap();
        assert_eq!(back, ps);
        assert!(unpack(&bytes[..bytes.len() - 1], |_| {}).is_none());
        assert!(unpack(&[0xff; 6], |_| {}).is_none());
    }

    #[test]
    fn long_lists_are_cut_into_rows_that_decode_on_their_own() {
        let ps: Vec<Posting> = (0..2000)
            .map(|i| Posting {
                idx: i * 3,
                tf: 1 + i % 7,
                len: 100 + i,
            })
            .collect();
        let rows = pack_rows(&ps);
        assert!(rows.len() > 1);
        assert!(rows.iter().all(|(_, b)| b.len() <= MAX_ROW_BYTES));
        let mut back = Vec::new();
        for (n, bytes) in &rows {
            let before = back.len();
            unpack(bytes, |p| back.push(p)).unwrap();
            assert_eq!(back.len() - before, *n as usize);
        }
        assert_eq!(back, ps);
        assert!(pack_rows(&[]).is_empty());
    }
}
