//! The sentence-transformers files around the transformer weights.

use std::path::Path;

use serde::Deserialize;

use crate::error::LoadError;

/// How token states become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The mean of the token states.
    Mean,
    /// The `[CLS]` token's state.
    Cls,
    /// The maximum of each dimension over the tokens.
    Max,
}

/// How the token states become one sentence vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentenceSettings {
    /// How token states are combined.
    pub pooling: Pooling,
    /// sentence-transformers truncates inputs to this many tokens.
    pub max_seq_length: usize,
    /// The model's modules end with Normalize (stored vectors are always unit length anyway).
    pub normalize: bool,
    /// The query and passage prompts the model folder declares
    /// (`config_sentence_transformers.json`), when it declares any.
    pub declared_prompts: Option<(String, String)>,
}

#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
}

#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

/// sentence-transformers 2.4+ stores a model's prompts by name; the query's
/// is `query`, the passage's `passage` or `document`.
#[derive(Deserialize)]
struct SentenceTransformersConfig {
    #[serde(default)]
    prompts: std::collections::HashMap<String, String>,
}

impl SentenceTransformersConfig {
    fn declared(mut self) -> Option<(String, String)> {
        let query = self.prompts.remove("query");
        let passage = self
            .prompts
            .remove("passage")
            .or_else(|| self.prompts.remove("document"));
        (query.is_some() || passage.is_some())
            .then(|| (query.unwrap_or_default(), passage.unwrap_or_default()))
    }
}

#[derive(Deserialize)]
struct Module {
    #[serde(rename = "type")]
    kind: String,
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, LoadError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| LoadError::bad_file(path, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(LoadError::bad_file(path, e)),
    }
}

impl SentenceSettings {
    /// Reads the side files; `position_limit` (max_position_embeddings)
    /// caps the sequence length when the model does not state one.
    pub fn load(dir: &Path, position_limit: usize) -> Result<Self, LoadError> {
        let pooling = match read_json::<PoolingConfig>(&dir.join("1_Pooling/config.json"))? {
            Some(p) if p.pooling_mode_cls_token => Pooling::Cls,
            Some(p) if p.pooling_mode_max_tokens && !p.pooling_mode_mean_tokens => Pooling::Max,
            _ => Pooling::Mean,
        };
        let max_seq_length =
            read_json::<SentenceBertConfig>(&dir.join("sentence_bert_config.json"))?
                .and_then(|c| c.max_seq_length)
                .unwrap_or(position_limit)
                .min(position_limit);
        let normalize = read_json::<Vec<Module>>(&dir.join("modules.json"))?
            .is_some_and(|m| m.iter().any(|m| m.kind.ends_with("Normalize")));
        let declared_prompts = read_json::<SentenceTransformersConfig>(
            &dir.join("config_sentence_transformers.json"),
        )?
        .and_then(SentenceTransformersConfig::declared);
        Ok(Self {
            pooling,
            max_seq_length,
            normalize,
            declared_prompts,
        })
    }
}
