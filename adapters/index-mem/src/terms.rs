//! The term dictionary: every distinct term's bytes in one arena, and a hash
//! table of term ids. A `HashMap<String, _>` spends a heap block and a
//! 24-byte header per term; at millions of terms (a big CSV's ids and
//! amounts) that was most of the index's memory.

use hashbrown::{DefaultHashBuilder, HashTable};
use std::hash::BuildHasher;

#[derive(Clone, Default)]
pub(crate) struct Terms {
    arena: Vec<u8>,
    /// End of term `id` in `arena`; it starts where the one before ends.
    ends: Vec<u64>,
    table: HashTable<u32>,
    hasher: DefaultHashBuilder,
}

impl std::fmt::Debug for Terms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Terms({} terms)", self.ends.len())
    }
}

impl Terms {
    pub(crate) fn term(&self, id: u32) -> &str {
        term_in(&self.arena, &self.ends, id)
    }

    pub(crate) fn get(&self, term: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(term);
        self.table.find(hash, |&id| self.term(id) == term).copied()
    }

    /// The arena and the terms' ends in it, for the snapshot.
    pub(crate) fn parts(&self) -> (&[u8], &[u64]) {
        (&self.arena, &self.ends)
    }

    /// The dictionary of an arena and its terms' ends (from [`Terms::parts`]);
    /// `None` when the ends fall back or pass the arena.
    pub(crate) fn from_parts(arena: Vec<u8>, ends: Vec<u64>) -> Option<Self> {
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

    /// The id of `term`, added when new.
    pub(crate) fn intern(&mut self, term: &str) -> u32 {
        if let Some(id) = self.get(term) {
            return id;
        }
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
    let end = ends[id as usize] as usize;
    let start = match id {
        0 => 0,
        _ => ends[id as usize - 1] as usize,
    };
    // Only whole `&str`s are appended, so every range is UTF-8.
    std::str::from_utf8(&arena[start..end]).unwrap_or_default()
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
        assert_eq!(t.ends.len(), words.len());
        for (w, id) in words.iter().zip(&ids) {
            assert_eq!(t.get(w), Some(*id));
            assert_eq!(t.term(*id), w);
        }
        assert_eq!(t.get("w50000"), None);
        assert_eq!(t.intern("привет"), 50_000);
        assert_eq!(t.term(50_000), "привет");
    }
}
