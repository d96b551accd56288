//! Token counts by the model's own tokenizer: what the chunker must fit,
//! and how the blind rule judges whether the model can read a query.

use crate::{AnyModel, HfTokenizer};
use minirag_core::ports::TokenCounter;
use minirag_core::tokens::estimate;

/// A tokenizer with padding and truncation off, counting special tokens.
#[derive(Clone)]
pub struct TokenizerCounter {
    tokenizer: HfTokenizer,
    additive: bool,
}

impl TokenizerCounter {
    /// Counts with `tokenizer`, truncation and padding turned off.
    pub fn new(mut tokenizer: HfTokenizer) -> Self {
        tokenizer.with_padding(None);
        // Taking truncation off cannot fail: only setting it is checked.
        let _ = tokenizer.with_truncation(None);
        Self {
            additive: additive(&tokenizer),
            tokenizer,
        }
    }

    /// The tokenizer it counts with.
    pub fn tokenizer(&self) -> &HfTokenizer {
        &self.tokenizer
    }
}

impl TokenCounter for TokenizerCounter {
    fn count(&self, text: &str) -> usize {
        match self.tokenizer.encode_fast(text, true) {
            Ok(e) => e.len(),
            Err(_) => estimate(text),
        }
    }
    fn additive(&self) -> bool {
        self.additive
    }
}

/// Whether a tokenizer's counts add up across whitespace: a WordPiece model
/// behind BERT's pre-tokenizer (which splits at every whitespace), a
/// per-character BERT normalizer or none, and no added token that holds
/// whitespace (which could match across a join).
fn additive(t: &HfTokenizer) -> bool {
    use tokenizers::{ModelWrapper, NormalizerWrapper, PreTokenizerWrapper};
    let model =
        matches!(t.get_model(), AnyModel::Crate(m) if matches!(**m, ModelWrapper::WordPiece(_)));
    let pre = matches!(
        t.get_pre_tokenizer(),
        Some(PreTokenizerWrapper::BertPreTokenizer(_))
    );
    let norm = matches!(
        t.get_normalizer(),
        None | Some(NormalizerWrapper::BertNormalizer(_))
    );
    let added = t
        .get_added_tokens_decoder()
        .values()
        .all(|a| !a.content.chars().any(char::is_whitespace));
    model && pre && norm && added
}
