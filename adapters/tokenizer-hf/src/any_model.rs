//! The model of a `tokenizer.json`: ours for Unigram, the crate's otherwise.

use crate::unigram::{CompactUnigram, UnigramFile};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tokenizers::models::TrainerWrapper;
use tokenizers::{Model, ModelWrapper, Token};

/// A tokenizer model: Unigram in a compact form of our own, the others as the crate has them.
#[derive(Clone)]
pub enum AnyModel {
    /// Unigram (SentencePiece models), compact.
    Unigram(CompactUnigram),
    /// WordPiece, BPE and WordLevel, as the crate has them.
    Crate(Box<ModelWrapper>),
}

impl<'de> Deserialize<'de> for AnyModel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        if value.get("type").and_then(|t| t.as_str()) == Some("Unigram") {
            let file = UnigramFile::deserialize(value).map_err(D::Error::custom)?;
            let model = CompactUnigram::from_file(file).map_err(D::Error::custom)?;
            Ok(Self::Unigram(model))
        } else {
            ModelWrapper::deserialize(value)
                .map(|m| Self::Crate(Box::new(m)))
                .map_err(D::Error::custom)
        }
    }
}

impl Model for AnyModel {
    type Trainer = TrainerWrapper;

    fn tokenize(&self, sequence: &str) -> tokenizers::Result<Vec<Token>> {
        match self {
            Self::Unigram(m) => m.tokenize(sequence),
            Self::Crate(m) => m.tokenize(sequence),
        }
    }
    fn token_to_id(&self, token: &str) -> Option<u32> {
        match self {
            Self::Unigram(m) => m.token_to_id(token),
            Self::Crate(m) => m.token_to_id(token),
        }
    }
    fn id_to_token(&self, id: u32) -> Option<String> {
        match self {
            Self::Unigram(m) => m.id_to_token(id),
            Self::Crate(m) => m.id_to_token(id),
        }
    }
    fn get_vocab(&self) -> HashMap<String, u32> {
        match self {
            Self::Unigram(m) => m.get_vocab(),
            Self::Crate(m) => m.get_vocab(),
        }
    }
    fn get_vocab_size(&self) -> usize {
        match self {
            Self::Unigram(m) => m.get_vocab_size(),
            Self::Crate(m) => m.get_vocab_size(),
        }
    }
    fn save(&self, folder: &Path, prefix: Option<&str>) -> tokenizers::Result<Vec<PathBuf>> {
        match self {
            Self::Unigram(m) => m.save(folder, prefix),
            Self::Crate(m) => m.save(folder, prefix),
        }
    }
    fn get_trainer(&self) -> TrainerWrapper {
        match self {
            Self::Unigram(m) => TrainerWrapper::UnigramTrainer(m.get_trainer()),
            Self::Crate(m) => m.get_trainer(),
        }
    }
}
