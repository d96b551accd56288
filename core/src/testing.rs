//! Deterministic stand-ins for tests (feature `testing`). Never used by the product.

use crate::markdown::is_word_char;
use crate::ports::TokenCounter;

/// The reference test suite's counter: matches of `\w+|[^\w\s]`, plus 2 for
/// the special tokens. Deterministic and cheap, so chunking tests do not
/// depend on a model.
#[derive(Debug, Default, Clone, Copy)]
pub struct WordPunctCounter;

/// Number of `\w+|[^\w\s]` matches in `text`.
pub fn word_punct_tokens(text: &str) -> usize {
    let mut n = 0;
    let mut in_word = false;
    for c in text.chars() {
        if is_word_char(c) {
            if !in_word {
                n += 1;
                in_word = true;
            }
        } else {
            in_word = false;
            if !c.is_whitespace() {
                n += 1;
            }
        }
    }
    n
}

impl TokenCounter for WordPunctCounter {
    fn count(&self, text: &str) -> usize {
        word_punct_tokens(text) + 2
    }
}
