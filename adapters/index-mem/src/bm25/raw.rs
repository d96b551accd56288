//! A [`Field`] in the snapshot's postings section (format 9) as it is in
//! memory: the term arena and its ends, the lengths, and each list's
//! delta-varint bytes, so opening copies them instead of decoding every
//! posting into pairs and encoding it again. Little-endian:
//!
//! `live u64, total_len u64, n u64, n × length u32, arena_len u64, arena,
//! terms u64, terms × end u64`, then per term a kind byte: 0 (no postings);
//! 1 and `doc u32, tf u32`; 2 and `len u32, dead u32, last u32, bytes u32`
//! and the bytes. Every list is walked once at open: its varints, its order
//! and its documents are checked, so no later read can run off its bytes.

use std::io::Write;

use super::Field;
use std::sync::Arc;

use crate::pages::Column;
use crate::pages::Pages;
use crate::postings::Postings;
use crate::terms::Terms;

impl Field {
    /// Writes the field in the raw layout.
    pub(crate) fn write_raw(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let mut out = Vec::with_capacity(1 << 16);
        out.extend_from_slice(&self.live.to_le_bytes());
        out.extend_from_slice(&self.total_len.to_le_bytes());
        out.extend_from_slice(&(self.lengths.len() as u64).to_le_bytes());
        self.lengths
            .iter()
            .for_each(|l| out.extend_from_slice(&l.to_le_bytes()));
        let (arena, ends) = self.terms.parts();
        out.extend_from_slice(&(arena.len() as u64).to_le_bytes());
        out.extend_from_slice(&arena);
        out.extend_from_slice(&(ends.len() as u64).to_le_bytes());
        ends.iter()
            .for_each(|e| out.extend_from_slice(&e.to_le_bytes()));
        w.write_all(&out)?;
        for id in 0..ends.len() {
            out.clear();
            match &*self.whole_list(id as u32) {
                Postings::Empty => out.push(0),
                Postings::One { doc, tf } => {
                    out.push(1);
                    out.extend_from_slice(&doc.to_le_bytes());
                    out.extend_from_slice(&tf.to_le_bytes());
                }
                list @ Postings::Many { last, .. } => {
                    out.push(2);
                    // Retired postings are not counted apart (the format's
                    // second number, read and checked, not used): a reader
                    // skips them by their document's length.
                    let dead = 0;
                    for v in [list.len(), dead, *last, list.byte_len() as u32] {
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                    list.segments()
                        .for_each(|bytes| out.extend_from_slice(bytes));
                }
            }
            w.write_all(&out)?;
        }
        Ok(())
    }

    /// Reads a field written by [`Field::write_raw`] from the start of
    /// `bytes`; returns it and the bytes it took. Anything out of shape is
    /// an error naming what.
    pub(crate) fn read_raw(bytes: &[u8]) -> Result<(Field, usize), String> {
        let mut r = Reader { bytes, at: 0 };
        let live = r.u64()?;
        let total_len = r.u64()?;
        let n = r.count(4)?;
        let lengths: Vec<u32> = r
            .take(n * 4)?
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let arena_len = r.count(1)?;
        let arena = r.take(arena_len)?.to_vec();
        let n_terms = r.count(8)?;
        let ends: Vec<u64> = r
            .take(n_terms * 8)?
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
            .collect();
        let terms = Terms::from_parts(arena, ends).ok_or("term ends out of order")?;
        // The first bad list stops the reading and is the error.
        let mut failed = None;
        let postings: Pages<Postings> = (0..n_terms)
            .map_while(|_| read_list(&mut r, n).map_err(|e| failed = Some(e)).ok())
            .collect();
        if let Some(e) = failed {
            return Err(e);
        }
        let field = Field {
            terms: Arc::new(terms),
            postings: postings.into(),
            delta: Default::default(),
            lengths: Column::from_slice(&lengths),
            live,
            total_len,
        };
        Ok((field, r.at))
    }
}

/// One term's postings as [`Field::write_raw`] lays them, for a field of
/// `n` documents.
fn read_list(r: &mut Reader<'_>, n: usize) -> Result<Postings, String> {
    match r.take(1)?[0] {
        0 => Ok(Postings::Empty),
        1 => {
            let (doc, tf) = (r.u32()?, r.u32()?);
            if doc as usize >= n {
                return Err("a posting of a document past the lengths".into());
            }
            Ok(Postings::One { doc, tf })
        }
        2 => {
            let (len, dead, last, size) = (r.u32()?, r.u32()?, r.u32()?, r.u32()?);
            let list = r.take(size as usize)?;
            Postings::from_parts(len, dead, last, list, n)
        }
        _ => Err("a postings list of an unknown kind".into()),
    }
}

/// Checked little-endian reads from a byte slice.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or("postings cut short")?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or_default(),
        ))
    }

    /// A count of items of `size` bytes that the bytes left can hold.
    fn count(&mut self, size: usize) -> Result<usize, String> {
        let n = usize::try_from(self.u64()?).map_err(|_| "a count too large")?;
        if n.checked_mul(size)
            .is_none_or(|b| b > self.bytes.len() - self.at)
        {
            return Err("a count larger than its postings".into());
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field() -> Field {
        let mut f = Field::default();
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        f.add(0, &words("alpha beta beta"));
        f.add(1, &words("beta gamma"));
        f.add(2, &words("gamma delta alpha alpha"));
        for d in 3..40 {
            f.add(d, &words("beta common words"));
        }
        f.retire(1);
        f
    }

    fn raw(f: &Field) -> Vec<u8> {
        let mut out = Vec::new();
        f.write_raw(&mut out).unwrap();
        out
    }

    #[test]
    fn a_field_reads_back_as_it_was_written() {
        let f = field();
        let bytes = raw(&f);
        let (back, used) = Field::read_raw(&bytes).unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(raw(&back), bytes);
        let scores = |f: &Field| {
            let mut out = Vec::new();
            f.score(&["alpha", "beta", "gamma"], |d, s| out.push((d, s)));
            out
        };
        assert_eq!(scores(&back), scores(&f));
        assert!(!scores(&f).is_empty());
    }

    #[test]
    fn cut_or_flipped_bytes_are_an_error_or_a_field_never_a_panic() {
        let bytes = raw(&field());
        for cut in 0..bytes.len() {
            assert!(Field::read_raw(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        for at in 0..bytes.len() {
            for bit in [0x01, 0x80] {
                let mut flipped = bytes.clone();
                flipped[at] ^= bit;
                if let Ok((f, _)) = Field::read_raw(&flipped) {
                    // Whatever was read is safe to search.
                    f.score(&["alpha", "beta", "gamma"], |_, _| {});
                }
            }
        }
    }
}
