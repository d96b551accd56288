//! Whether the embedding model can read a query at all. An English-only
//! model shreds words of a script it does not know into single-letter word
//! pieces (`проверка` → `п ##р ##ов ##е ##р ##ка`); its vector for such a
//! query is noise, and fusing it at full weight pulls the keyword side's
//! good answers down (Russian eval queries: hybrid 0.795 nDCG@10 against
//! keyword-only 0.947 on `dev`). So fusion leans on the keyword side when
//! the model reads the query's words as fragments.

use crate::tokens::TokenCounter;

/// Letters per word piece below which the model is taken to be reading
/// fragments: whole English words give 4–6, identifiers split into pieces
/// 2–3, an unknown script about 1.3.
pub const FRAGMENT_LETTERS_PER_PIECE: f64 = 1.6;
/// The keyword weight fusion uses for a query the model cannot read.
pub const BLIND_KEYWORD_WEIGHT: f64 = 0.9;

/// Letters per word piece over the query's words of two or more letters;
/// `None` when it has none (digits, symbols, one-letter words).
pub fn letters_per_piece(query: &str, counter: &dyn TokenCounter) -> Option<f64> {
    let (mut letters, mut pieces) = (0usize, 0usize);
    for word in query
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 2)
    {
        letters += word.chars().count();
        // The count includes the model's two special tokens.
        pieces += counter.count(word).saturating_sub(2).max(1);
    }
    (letters > 0).then(|| letters as f64 / pieces as f64)
}

/// The keyword weight for this query: the configured one, or
/// [`BLIND_KEYWORD_WEIGHT`] when the model reads the query as fragments.
/// A configured weight of 0 (vector only) or above the blind weight stands.
pub fn keyword_weight_for(query: &str, configured: f64, counter: &dyn TokenCounter) -> f64 {
    // Only a weight the rule would change is worth tokenizing the query for.
    if configured <= 0.0 || configured >= BLIND_KEYWORD_WEIGHT {
        return configured;
    }
    match letters_per_piece(query, counter) {
        Some(r) if r < FRAGMENT_LETTERS_PER_PIECE => BLIND_KEYWORD_WEIGHT,
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
            0.9
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
