//! Token counting helpers that need no tokenizer.

/// The model tokenizer's count with truncation and padding off, special
/// tokens included. Adapters fall back to [`estimate`] when
/// their tokenizer fails, so counting never fails.
pub trait TokenCounter: Send + Sync {
    /// Tokens in `text`, as the model counts them.
    fn count(&self, text: &str) -> usize;
    /// Whether counts add up across whitespace: `count(a + ws + b) ==
    /// count(a) + count(b) - count("")` for any whitespace `ws` (true of a
    /// WordPiece model behind BERT's pre-tokenizer, which splits there). The
    /// chunker then tokenizes each sentence once instead of every candidate
    /// unit again.
    fn additive(&self) -> bool {
        false
    }
}

/// Character-based token estimate, for when the model tokenizer fails:
/// `ceil((len − dense) / 2.5) + dense + 2`, where `dense` counts digits and
/// characters that are neither alphanumeric nor whitespace. It over-counts on
/// purpose, so units sized by it still fit the model.
pub fn estimate(text: &str) -> usize {
    let mut len = 0usize;
    let mut dense = 0usize;
    for c in text.chars() {
        len += 1;
        if c.is_ascii_digit() || c.is_numeric() || !(c.is_alphanumeric() || c.is_whitespace()) {
            dense += 1;
        }
    }
    // ceil(x / 2.5) == ceil(2x / 5) in integers.
    (2 * (len - dense)).div_ceil(5) + dense + 2
}

/// [`estimate`] as a [`TokenCounter`].
#[derive(Debug, Default, Clone, Copy)]
pub struct EstimateCounter;

impl TokenCounter for EstimateCounter {
    fn count(&self, text: &str) -> usize {
        estimate(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_matches_the_reference_examples() {
        assert_eq!(estimate(""), 2);
        assert_eq!(estimate("hello world"), 7);
        assert_eq!(estimate("| --- | --- |"), 13);
    }
}
