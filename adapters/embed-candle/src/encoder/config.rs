//! The parts of a Hugging Face BERT `config.json` the encoder needs.

use serde::Deserialize;

/// The feed-forward activation named by `hidden_act`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// `gelu`: the exact erf form BERT and sentence-transformers use.
    GeluErf,
    /// `gelu_new` / `gelu_pytorch_tanh`: the tanh approximation.
    GeluTanh,
    Relu,
}

#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    #[serde(default = "default_act")]
    pub hidden_act: String,
    #[serde(default = "default_positions")]
    pub max_position_embeddings: usize,
    #[serde(default = "default_types")]
    pub type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    #[serde(default)]
    pub position_embedding_type: Option<String>,
    #[serde(default)]
    pub model_type: Option<String>,
}

fn default_act() -> String {
    "gelu".into()
}
fn default_positions() -> usize {
    512
}
fn default_types() -> usize {
    2
}
fn default_eps() -> f64 {
    1e-12
}

impl BertConfig {
    /// Refuses what this encoder does not compute, naming the field.
    pub fn validate(&self) -> Result<Activation, String> {
        let act = match self.hidden_act.as_str() {
            "gelu" => Activation::GeluErf,
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Activation::GeluTanh,
            "relu" => Activation::Relu,
            other => {
                return Err(format!(
                    "hidden_act '{other}' is not supported (expected gelu, gelu_new or relu)"
                ))
            }
        };
        // RoBERTa-family checkpoints load under the same tensor names but
        // number positions from padding_idx + 1: refused, not silently wrong.
        if let Some(kind) = &self.model_type {
            if kind != "bert" {
                return Err(format!(
                    "model_type '{kind}' is not supported (expected bert: a BERT-architecture \
                     sentence-transformers model such as all-MiniLM-L6-v2)"
                ));
            }
        }
        if let Some(kind) = &self.position_embedding_type {
            if kind != "absolute" {
                return Err(format!(
                    "position_embedding_type '{kind}' is not supported (expected absolute)"
                ));
            }
        }
        if self.num_attention_heads == 0
            || self.hidden_size == 0
            || !self.hidden_size.is_multiple_of(self.num_attention_heads)
        {
            return Err(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                self.hidden_size, self.num_attention_heads
            ));
        }
        Ok(act)
    }

    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_attention_heads
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(extra: &str) -> BertConfig {
        serde_json::from_str(&format!(
            r#"{{"vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1,
                "num_attention_heads": 2, "intermediate_size": 16{extra}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn what_the_encoder_does_not_compute_is_refused_by_name() {
        assert_eq!(config("").validate(), Ok(Activation::GeluErf));
        assert_eq!(
            config(r#", "model_type": "bert", "hidden_act": "relu""#).validate(),
            Ok(Activation::Relu)
        );
        let err = config(r#", "model_type": "xlm-roberta""#)
            .validate()
            .unwrap_err();
        assert!(err.contains("model_type 'xlm-roberta'"), "{err}");
        let err = config(r#", "hidden_act": "silu""#).validate().unwrap_err();
        assert!(err.contains("hidden_act 'silu'"), "{err}");
        let err = config(r#", "position_embedding_type": "relative_key""#)
            .validate()
            .unwrap_err();
        assert!(err.contains("relative_key"), "{err}");
        let mut odd = config("");
        odd.num_attention_heads = 3;
        assert!(odd.validate().unwrap_err().contains("multiple"));
    }
}
