//! The term dictionary: every distinct term's bytes in an arena, and a hash
//! table of term ids (two of each: the frozen terms and those added since).
//! A `HashMap<String, _>` spends a heap block and a 24-byte header per
//! term; at millions of terms (a big CSV's ids and amounts) that was most
//! of the index's memory.

use hashbrown::{DefaultHashBuilder, HashTable};
use std::borrow::Cow;
use std::hash::BuildHasher;
use std::sync::Arc;

/// Terms folded into the frozen part once the fresh part holds this many
/// (and a 32nd of the frozen part's).
const FOLD_AT: u32 = 4096;

/// The dictionary a field reads: the terms up to the last fold, shared by
/// every copy of the field and never written, and those added since, ids
/// after the frozen ones. A write to a copy that adds a term copies only
/// the fresh part, not a dictionary as large as the index's vocabulary.
#[derive(Clone, Default)]
pub(crate) struct Terms {
    frozen: Arc<Dictionary>,
    fresh: Dictionary,
}

impl std::fmt::Debug for Terms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Terms({} terms)", self.frozen.len() + self.fresh.len())
    }
}

impl Terms {
    pub(crate) fn term(&self, id: u32) -> &str {
        match id.checked_sub(self.frozen.len()) {
            None => self.frozen.term(id),
            Some(fresh) => self.fresh.term(fresh),
        }
    }

    /// Terms held.
    pub(crate) fn len(&self) -> u32 {
        self.frozen.len() + self.fresh.len()
    }

    pub(crate) fn get(&self, term: &str) -> Option<u32> {
        self.frozen
            .get(term)
            .or_else(|| Some(self.frozen.len() + self.fresh.get(term)?))
    }

    /// The arena and the terms' ends in it, for the snapshot: one arena,
    /// the fresh terms after the frozen ones.
    pub(crate) fn parts(&self) -> (Cow<'_, [u8]>, Cow<'_, [u64]>) {
        let (frozen, fresh) = (&self.frozen, &self.fresh);
        if fresh.ends.is_empty() {
            return (Cow::Borrowed(&frozen.arena), Cow::Borrowed(&frozen.ends));
        }
        let shift = frozen.arena.len() as u64;
        let arena = [&frozen.arena[..], &fresh.arena[..]].concat();
        let ends = frozen.ends.iter().copied();
        let ends = ends.chain(fresh.ends.iter().map(|e| e + shift)).collect();
        (Cow::Owned(arena), Cow::Owned(ends))
    }

    /// The dictionary of an arena and its terms' ends (from [`Terms::parts`]);
    /// `None` when the ends fall back or pass the arena.
    pub(crate) fn from_parts(arena: Vec<u8>, ends: Vec<u64>) -> Option<Self> {
        Some(Self {
            frozen: Arc::new(Dictionary::from_parts(arena, ends)?),
            fresh: Dictionary::default(),
        })
    }

    /// The id of `term`, added when new. When the fresh terms are many they
    /// are folded into the frozen part: in place when no other copy shares
    /// it, otherwise copied once for every 32nd of the vocabulary added.
    pub(crate) fn intern(&mut self, term: &str) -> u32 {
        match self.get(term) {
            Some(id) => id,
            None => self.add_new(term),
        }
    }

    /// Adds a term [`Terms::get`] just did not find (so it is not looked
    /// up twice); its id.
    pub(crate) fn add_new(&mut self, term: &str) -> u32 {
        let id = self.frozen.len() + self.fresh.add(term);
        if self.fresh.len() >= FOLD_AT.max(self.frozen.len() / 32) {
            let fresh = std::mem::take(&mut self.fresh);
            let frozen = Arc::make_mut(&mut self.frozen);
            for fresh_id in 0..fresh.len() {
                frozen.add(fresh.term(fresh_id));
            }
        }
        id
    }
}

/// One arena and its table: the frozen part of [`Terms`], or its fresh one.
#[derive(Clone, Default)]
struct Dictionary {
    arena: Vec<u8>,
    /// End of term `id` in `arena`; it starts where the one before ends.
    ends: Vec<u64>,
    table: HashTable<u32>,
    hasher: DefaultHashBuilder,
}

impl Dictionary {
    fn len(&self) -> u32 {
        self.ends.len() as u32
    }

    fn term(&self, id: u32) -> &str {
        term_in(&self.arena, &self.ends, id)
    }

    fn get(&self, term: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(term);
        // Bytes against bytes: a look-up need not check the arena's UTF-8.
        let bytes = term.as_bytes();
        self.table
            .find(hash, |&id| bytes_in(&self.arena, &self.ends, id) == bytes)
            .copied()
    }

    /// The dictionary of an arena and its terms' ends (from [`Terms::parts`]);
    /// `None` when the ends fall back or pass the arena.
    fn from_parts(arena: Vec<u8>, ends: Vec<u64>) -> Option<Self> {
        let mut last = 0;
        for &end in &ends {
            if end < last {
                return None;
            }
            last = end;
        }
        if last > arena.len() as u64 {
            return None;
        }
        let mut terms = Self {
            arena,
            ends,
            ..Self::default()
        };
        let (arena, ends, hasher) = (&terms.arena, &terms.ends, &terms.hasher);
        for id in 0..ends.len() as u32 {
            let hash = hasher.hash_one(term_in(arena, ends, id));
            terms.table.insert_unique(hash, id, |&other| {
                hasher.hash_one(term_in(arena, ends, other))
            });
        }
        Some(terms)
    }

    /// Adds `term`, which it does not hold; returns its id.
    fn add(&mut self, term: &str) -> u32 {
        let id = self.ends.len() as u32;
        self.arena.extend_from_slice(term.as_bytes());
        self.ends.push(self.arena.len() as u64);
        let hash = self.hasher.hash_one(term);
        let (arena, ends, hasher) = (&self.arena, &self.ends, &self.hasher);
        self.table.insert_unique(hash, id, |&other| {
            hasher.hash_one(term_in(arena, ends, other))
        });
        id
    }
}

/// Term `id` of an arena and its end offsets.
fn term_in<'a>(arena: &'a [u8], ends: &[u64], id: u32) -> &'a str {
    // Only whole `&str`s are appended, so every range is UTF-8.
    std::str::from_utf8(bytes_in(arena, ends, id)).unwrap_or_default()
}

/// Term `id`'s bytes in `arena`.
fn bytes_in<'a>(arena: &'a [u8], ends: &[u64], id: u32) -> &'a [u8] {
    let end = ends[id as usize] as usize;
    let start = match id {
        0 => 0,
        _ => ends[id as usize - 1] as usize,
    };
    &arena[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable_and_lookups_find_every_term() {
        let mut t = Terms::default();
        let words: Vec<String> = (0..50_000).map(|i| format!("w{i}")).collect();
        let ids: Vec<u32> = words.iter().map(|w| t.intern(w)).collect();
        assert_eq!(t.intern("w17"), ids[17]);
        assert_eq!(t.frozen.len() + t.fresh.len(), words.len() as u32);
        for (w, id) in words.iter().zip(&ids) {
            assert_eq!(t.get(w), Some(*id));
            assert_eq!(t.term(*id), w);
        }
        assert_eq!(t.get("w50000"), None);
        assert_eq!(t.intern("привет"), 50_000);
        assert_eq!(t.term(50_000), "привет");
    }

    #[test]
    fn a_copy_shares_the_frozen_terms_and_ids_survive_folds_and_the_snapshot() {
        let mut t = Terms::default();
        let words: Vec<String> = (0..10_000).map(|i| format!("w{i}")).collect();
        let ids: Vec<u32> = words.iter().map(|w| t.intern(w)).collect();
        assert!(ids.iter().copied().eq(0..10_000), "ids in the order added");
        assert_eq!(t.frozen.len(), 8192, "folded twice");
        let copy = t.clone();
        t.intern("new");
        assert!(
            Arc::ptr_eq(&t.frozen, &copy.frozen),
            "only the fresh part copied"
        );
        // Enough new terms to fold while the copy shares the frozen part.
        (0..5000).for_each(|i| {
            t.intern(&format!("x{i}"));
        });
        assert!(!Arc::ptr_eq(&t.frozen, &copy.frozen));
        assert_eq!(
            (copy.get("new"), copy.get("x7"), copy.term(5)),
            (None, None, "w5")
        );
        for (w, id) in words.iter().zip(&ids) {
            assert_eq!((t.get(w), copy.get(w)), (Some(*id), Some(*id)));
        }
        let (arena, ends) = t.parts();
        let back = Terms::from_parts(arena.into_owned(), ends.into_owned()).unwrap();
        for term in ["w0", "w9999", "new", "x0", "x4999"] {
            assert_eq!(back.get(term), t.get(term), "{term}");
        }
        assert_eq!(back.term(10_000), "new");
    }
}
