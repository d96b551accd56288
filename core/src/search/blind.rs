//! Whether the embedding model can read a query at all. An English-only
//! model shreds words of a script it does not know into single-letter word
//! pieces (`проверка` → `п ##р ##ов ##е ##р ##ка`); its vector for such a
//! query is noise, and fusing it at full weight pulls the keyword side's
//! good answers down (measured in docs/quality.md). So fusion leans on the
//! keyword side when the model reads the query's words as fragments, and
//! uses it alone when the model reads none of them.

use crate::tokens::TokenCounter;

/// Letters per word piece below which the model is taken to be reading
/// fragments: whole English words give 4–6, identifiers split into pieces
/// 2–3, an unknown script about 1.3.
pub(crate) const FRAGMENT_LETTERS_PER_PIECE: f64 = 1.6;
/// The keyword weight fusion uses for a query the model reads mostly as
/// fragments, with some words it can read (`как настроить max_wal_size`).
pub const BLIND_KEYWORD_WEIGHT: f64 = 0.9;
/// The keyword weight for a query of which the model reads no word at all:
/// its vector then says nothing about the query, so none of it is mixed in.
pub const UNREADABLE_KEYWORD_WEIGHT: f64 = 1.0;

/// The query's words of two or more letters, with their letters and the
/// word pieces the model reads them as.
fn words<'a>(
    query: &'a str,
    counter: &'a dyn TokenCounter,
) -> impl Iterator<Item = (usize, usize)> + 'a {
    query
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 2)
        // The count includes the model's two special tokens.
        .map(|w| (w.chars().count(), counter.count(w).saturating_sub(2).max(1)))
}

/// Letters per word piece over the query's words of two or more letters;
/// `None` when it has none (digits, symbols, one-letter words).
pub fn letters_per_piece(query: &str, counter: &dyn TokenCounter) -> Option<f64> {
    let (letters, pieces) = words(query, counter).fold((0, 0), |(l, p), (wl, wp)| (l + wl, p + wp));
    (letters > 0).then(|| letters as f64 / pieces as f64)
}

/// Whether the model reads any of the query's words (of two or more
/// letters) as more than fragments; `None` when it has no such words.
pub(crate) fn reads_any_word(query: &str, counter: &dyn TokenCounter) -> Option<bool> {
    let mut any_word = false;
    for (letters, pieces) in words(query, counter) {
        any_word = true;
        if letters as f64 / pieces as f64 >= FRAGMENT_LETTERS_PER_PIECE {
            return Some(true);
        }
    }
    any_word.then_some(false)
}

/// The keyword weight for this query: the configured one;
/// [`BLIND_KEYWORD_WEIGHT`] when the model reads the query as fragments;
/// [`UNREADABLE_KEYWORD_WEIGHT`] when it reads none of its words. A
/// configured weight of 0 (vector only) or 1 (keyword only) stands.
pub fn keyword_weight_for(query: &str, configured: f64, counter: &dyn TokenCounter) -> f64 {
    // Only a weight the rule would change is worth tokenizing the query for.
    if configured <= 0.0 || configured >= UNREADABLE_KEYWORD_WEIGHT {
        return configured;
    }
    match letters_per_piece(query, counter) {
        Some(r) if r < FRAGMENT_LETTERS_PER_PIECE => {
            if reads_any_word(query, counter) == Some(false) {
                UNREADABLE_KEYWORD_WEIGHT
            } else {
                BLIND_KEYWORD_WEIGHT.max(configured)
            }
        }
        _ => configured,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// English words are one piece each; Cyrillic splits into letters,
    /// two per piece at best, as an English WordPiece vocabulary does.
    struct EnglishVocabulary;

    impl TokenCounter for EnglishVocabulary {
        fn count(&self, text: &str) -> usize {
            let pieces = if text.is_ascii() {
                1
            } else {
                text.chars().count().div_ceil(4) * 3
            };
            pieces + 2
        }
    }

    #[test]
    fn a_query_in_an_unknown_script_leans_on_keywords() {
        let v = EnglishVocabulary;
        assert_eq!(
            keyword_weight_for("проверка накладной на складе", 0.6, &v),
            1.0,
            "no word the model can read: keywords alone"
        );
        assert_eq!(
            keyword_weight_for("как настроить разрешения на складе для api", 0.6, &v),
            0.9,
            "mostly fragments, one word it reads"
        );
        assert_eq!(
            keyword_weight_for("проверка накладной", 0.95, &v),
            1.0,
            "a configured weight above the blind one still gives way to an unreadable query"
        );
        assert_eq!(
            keyword_weight_for("how do we rotate the API keys", 0.6, &v),
            0.6
        );
        assert_eq!(
            keyword_weight_for("E0382", 0.6, &v),
            0.6,
            "no words to judge by"
        );
        assert_eq!(
            keyword_weight_for("проверка", 0.0, &v),
            0.0,
            "vector-only stays"
        );
        assert_eq!(
            keyword_weight_for("проверка", 1.0, &v),
            1.0,
            "keyword-only stays"
        );
    }
}
