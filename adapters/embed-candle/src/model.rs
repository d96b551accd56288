//! A loaded sentence-transformers model.

use std::path::Path;

use candle_core::{DType, Device, IndexOp, Tensor, D};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use minirag_core::ports::{EmbedError, Embedder, Embeddings, TokenCounter};
use minirag_core::tokens::estimate;
use tokenizers::{Tokenizer, TruncationParams};

use crate::error::LoadError;
use crate::settings::{Pooling, SentenceSettings};

/// Sequences per forward pass. Inputs are sorted by length first, so a
/// batch pads only to its own longest member. Measured on 300 README chunks,
/// 2 cores: batch 8 → 14.6 chunks/s, 16 → 13.8, 32 → 12.3, 64 → 9.6 (larger
/// attention tensors fall out of cache).
pub const DEFAULT_BATCH: usize = 8;

pub struct CandleEmbedder {
    id: String,
    model: BertModel,
    /// Truncation and padding off: counts what the chunker must fit.
    counter: Tokenizer,
    /// Truncation at max_seq_length, exactly as sentence-transformers does.
    truncating: Tokenizer,
    settings: SentenceSettings,
    dim: usize,
    batch: usize,
    device: Device,
}

fn bad(path: &Path, e: impl ToString) -> LoadError {
    LoadError::BadFile {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

impl CandleEmbedder {
    /// Loads a model folder; weights are memory-mapped, not read.
    pub fn load(id: impl Into<String>, dir: &Path) -> Result<Self, LoadError> {
        let config_path = dir.join("config.json");
        let raw = std::fs::read(&config_path).map_err(|e| bad(&config_path, e))?;
        let config: Config = serde_json::from_slice(&raw).map_err(|e| bad(&config_path, e))?;
        let position_limit: usize = serde_json::from_slice::<serde_json::Value>(&raw)
            .ok()
            .and_then(|v| v.get("max_position_embeddings")?.as_u64())
            .unwrap_or(512) as usize;
        let settings = SentenceSettings::load(dir, position_limit)?;

        let tok_path = dir.join("tokenizer.json");
        let mut counter = Tokenizer::from_file(&tok_path).map_err(|e| bad(&tok_path, e))?;
        counter.with_padding(None);
        counter
            .with_truncation(None)
            .map_err(|e| bad(&tok_path, e))?;
        let mut truncating = counter.clone();
        truncating
            .with_truncation(Some(TruncationParams {
                max_length: settings.max_seq_length,
                ..Default::default()
            }))
            .map_err(|e| bad(&tok_path, e))?;

        let device = Device::Cpu;
        let safetensors = dir.join("model.safetensors");
        let vb = if safetensors.is_file() {
            // SAFETY: the file is mapped read-only; a concurrent writer of the
            // model file is outside what we support (the hub cache writes atomically).
            unsafe { VarBuilder::from_mmaped_safetensors(&[&safetensors], DType::F32, &device) }
                .map_err(|e| bad(&safetensors, e))?
        } else {
            let pth = dir.join("pytorch_model.bin");
            VarBuilder::from_pth(&pth, DType::F32, &device).map_err(|e| bad(&pth, e))?
        };
        let model = BertModel::load(vb, &config).map_err(|e| LoadError::Model {
            dir: dir.to_path_buf(),
            reason: e.to_string(),
        })?;
        Ok(Self {
            id: id.into(),
            model,
            counter,
            truncating,
            dim: config.hidden_size,
            settings,
            batch: DEFAULT_BATCH,
            device,
        })
    }

    pub fn with_batch_size(mut self, batch: usize) -> Self {
        self.batch = batch.max(1);
        self
    }

    pub fn settings(&self) -> &SentenceSettings {
        &self.settings
    }

    /// Token ids as embedded: special tokens added, truncated at max_seq_length.
    pub fn embedded_ids(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, EmbedError> {
        let encodings = self
            .truncating
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Failed {
                reason: format!("tokenizer: {e}"),
            })?;
        Ok(encodings
            .into_iter()
            .map(|e| e.get_ids().to_vec())
            .collect())
    }

    /// Embeds pre-tokenised inputs, longest-first batches, original order kept.
    pub fn embed_ids(&self, ids: &[Vec<u32>]) -> Result<Embeddings, EmbedError> {
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(ids[i].len()));
        let mut out = vec![0f32; ids.len() * self.dim];
        for batch in order.chunks(self.batch) {
            let rows = self
                .forward(batch.iter().map(|&i| ids[i].as_slice()))
                .map_err(|e| EmbedError::Failed {
                    reason: e.to_string(),
                })?;
            for (row, &i) in rows.iter().zip(batch) {
                out[i * self.dim..(i + 1) * self.dim].copy_from_slice(row);
            }
        }
        Ok(Embeddings {
            dim: self.dim,
            data: out,
        })
    }

    /// One padded batch through the model: pooled, L2-normalised rows.
    fn forward<'a>(
        &self,
        batch: impl ExactSizeIterator<Item = &'a [u32]> + Clone,
    ) -> candle_core::Result<Vec<Vec<f32>>> {
        let rows = batch.len();
        let len = batch.clone().map(<[u32]>::len).max().unwrap_or(0).max(1);
        let mut input = vec![0u32; rows * len];
        let mut mask = vec![0u32; rows * len];
        for (r, seq) in batch.enumerate() {
            input[r * len..r * len + seq.len()].copy_from_slice(seq);
            mask[r * len..r * len + seq.len()].fill(1);
        }
        let input = Tensor::from_vec(input, (rows, len), &self.device)?;
        let mask = Tensor::from_vec(mask, (rows, len), &self.device)?;
        let types = input.zeros_like()?;
        let hidden = self.model.forward(&input, &types, Some(&mask))?;
        let maskf = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let pooled = match self.settings.pooling {
            Pooling::Mean => hidden
                .broadcast_mul(&maskf)?
                .sum(1)?
                .broadcast_div(&maskf.sum(1)?.clamp(1e-9, f32::MAX)?)?,
            Pooling::Cls => hidden.i((.., 0))?,
            Pooling::Max => {
                let penalty = ((maskf.ones_like()? - &maskf)? * -1e9)?;
                hidden.broadcast_add(&penalty)?.max(1)?
            }
        };
        let norm = pooled
            .sqr()?
            .sum_keepdim(D::Minus1)?
            .sqrt()?
            .clamp(1e-12, f32::MAX)?;
        pooled.broadcast_div(&norm)?.to_vec2::<f32>()
    }
}

impl Embedder for CandleEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dimension(&self) -> usize {
        self.dim
    }

    fn embed_documents(&self, texts: &[&str]) -> Result<Embeddings, EmbedError> {
        // Tokenise in slices so memory stays bounded for any number of inputs.
        let mut out = Embeddings::new(self.dim);
        for part in texts.chunks(1024) {
            let ids = self.embedded_ids(part)?;
            out.data.extend(self.embed_ids(&ids)?.data);
        }
        Ok(out)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(self.embed_documents(&[text])?.data)
    }
}

impl TokenCounter for CandleEmbedder {
    fn count(&self, text: &str) -> usize {
        match self.counter.encode(text, true) {
            Ok(e) => e.len(),
            Err(_) => estimate(text),
        }
    }
}
