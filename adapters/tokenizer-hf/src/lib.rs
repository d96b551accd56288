//! A Hugging Face `tokenizer.json`, read the way the `tokenizers` crate
//! reads it, but with a Unigram model of our own.
//!
//! The crate's Unigram model keeps a byte trie of hash-map nodes beside its
//! vocabulary: for the 250k pieces of the XLM-R vocabulary (multilingual-e5,
//! paraphrase-multilingual-MiniLM) that is most of a quarter of a gigabyte,
//! more than the 12-layer encoder's own weights. [`CompactUnigram`] keeps
//! one hash map and finds the same best segmentation, so the token ids are
//! the crate's, at a fifth of the memory. Every other part (normalizer,
//! pre-tokenizer, post-processor, WordPiece and BPE) is the crate's own.
//!
//! - [`HfTokenizer`]: the tokenizer, loaded by [`from_file`] or [`from_json`].
//! - [`TokenizerCounter`]: the `TokenCounter` port over it.

#![forbid(unsafe_code)]

mod any_model;
mod counter;
mod error;
mod unigram;

pub use any_model::AnyModel;
pub use counter::TokenizerCounter;
pub use error::TokenizerFileError;
pub use unigram::CompactUnigram;

use std::path::Path;
use tokenizers::{
    DecoderWrapper, NormalizerWrapper, PostProcessorWrapper, PreTokenizerWrapper, TokenizerImpl,
};

/// A tokenizer whose Unigram model is [`CompactUnigram`].
pub type HfTokenizer = TokenizerImpl<
    AnyModel,
    NormalizerWrapper,
    PreTokenizerWrapper,
    PostProcessorWrapper,
    DecoderWrapper,
>;

/// Reads a `tokenizer.json`.
pub fn from_file(path: &Path) -> Result<HfTokenizer, TokenizerFileError> {
    let text = std::fs::read_to_string(path).map_err(TokenizerFileError::Read)?;
    from_json(&text)
}

/// Reads a tokenizer from the text of a `tokenizer.json`.
pub fn from_json(text: &str) -> Result<HfTokenizer, TokenizerFileError> {
    serde_json::from_str(text).map_err(TokenizerFileError::Parse)
}
