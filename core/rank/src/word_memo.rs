//! A per-thread memo of word → term. Snowball stemming is about half of
//! the analysis's time, and text repeats its words (a few thousand make
//! up most of any corpus), so each thread stems a common word once. The
//! memo holds only short words and is emptied when full, so it stays
//! under a megabyte or two per thread whatever the text.

use std::cell::RefCell;
use std::collections::HashMap;

/// Words a thread remembers before it starts over.
const CAPACITY: usize = 1 << 14;
/// Longer words are rare and not worth a slot (nor the memory).
const LONGEST: usize = 24;

thread_local! {
    static MEMO: RefCell<HashMap<Box<str>, Box<str>>> = RefCell::new(HashMap::new());
}

/// The term for `word`: remembered, or `compute`d and remembered.
/// `compute` must depend on `word` alone.
pub(crate) fn term_of(word: &str, compute: impl FnOnce(&str) -> String) -> String {
    if word.len() > LONGEST {
        return compute(word);
    }
    MEMO.with(|memo| {
        // A thread that is being torn down, or re-entered, computes.
        let Ok(mut memo) = memo.try_borrow_mut() else {
            return compute(word);
        };
        if let Some(term) = memo.get(word) {
            return term.to_string();
        }
        let term = compute(word);
        if memo.len() >= CAPACITY {
            memo.clear();
        }
        memo.insert(word.into(), term.as_str().into());
        term
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_word_gives_what_was_computed_and_long_words_are_not_kept() {
        let mut calls = 0;
        let mut stem = |w: &str| {
            calls += 1;
            w.trim_end_matches('s').to_string()
        };
        assert_eq!(term_of("memo-test-words", &mut stem), "memo-test-word");
        assert_eq!(term_of("memo-test-words", &mut stem), "memo-test-word");
        let long = "a".repeat(LONGEST + 1) + "s";
        assert_eq!(term_of(&long, &mut stem), "a".repeat(LONGEST + 1));
        assert_eq!(term_of(&long, &mut stem), "a".repeat(LONGEST + 1));
        assert_eq!(calls, 3);
    }

    #[test]
    fn a_full_memo_starts_over_and_still_answers() {
        for i in 0..CAPACITY + 10 {
            let word = format!("w{i}");
            assert_eq!(term_of(&word, |w| w.to_uppercase()), word.to_uppercase());
        }
        MEMO.with(|m| assert!(m.borrow().len() <= CAPACITY));
    }
}
