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
