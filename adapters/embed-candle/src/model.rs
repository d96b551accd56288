//! A loaded sentence-transformers model.

use std::path::Path;

use minirag_core::models::{Precision, Prompts};
use minirag_core::ports::{EmbedError, Embedder, Embeddings, TokenCounter};
use tokenizers::{PostProcessor, TruncationDirection};

use crate::encoder::config::BertConfig;
use crate::encoder::int8::ActivationBits;
use crate::encoder::weights::WeightFile;
use crate::encoder::{Dense, Encoder, Scratch};
use crate::error::LoadError;
use crate::settings::{Pooling, SentenceSettings};
use minirag_tokenizer_hf::TokenizerCounter;

/// Tokens per forward pass. Sequences are packed without padding, so the
/// budget only bounds activation memory (~15 KB per token for MiniLM: 60 MB
/// at 4096) and sets how much work each gemm call gets.
pub const DEFAULT_BATCH_TOKENS: usize = 4096;

/// A BERT-family sentence encoder run in process: the [`Embedder`] with a model loaded.
pub struct CandleEmbedder {
    id: String,
    encoder: Encoder,
    /// Truncation and padding off: counts what the chunker must fit, and
    /// tokenizes what is embedded (truncated by [`Self::embedded_ids`]).
    counter: TokenizerCounter,
    settings: SentenceSettings,
    dim: usize,
    batch_tokens: usize,
    /// What goes in front of queries and passages (bare by default).
    prompts: Prompts,
}

impl CandleEmbedder {
    /// Loads a model folder; weights are memory-mapped, not read.
    pub fn load(id: impl Into<String>, dir: &Path) -> Result<Self, LoadError> {
        let config_path = dir.join("config.json");
        let raw = std::fs::read(&config_path).map_err(|e| LoadError::bad_file(&config_path, e))?;
        let config: BertConfig =
            serde_json::from_slice(&raw).map_err(|e| LoadError::bad_file(&config_path, e))?;
        let settings = SentenceSettings::load(dir, config.max_position_embeddings)?;

        let tok_path = dir.join("tokenizer.json");
        let tokenizer = minirag_tokenizer_hf::from_file(&tok_path)
            .map_err(|e| LoadError::bad_file(&tok_path, e))?;
        let counter = TokenizerCounter::new(tokenizer);

        let weights =
            WeightFile::open(dir, config.model_type.as_deref()).map_err(|(path, reason)| {
                LoadError::BadFile {
                    path,
                    reason,
                    source: None,
                }
            })?;
        let dim = config.hidden_size;
        let encoder = Encoder::load(config, &weights).map_err(|reason| LoadError::Model {
            dir: dir.to_path_buf(),
            reason,
        })?;
        Ok(Self {
            id: id.into(),
            encoder,
            counter,
            dim,
            settings,
            batch_tokens: DEFAULT_BATCH_TOKENS,
            prompts: Prompts::bare(),
        })
    }

    /// Puts `prompts` in front of every query and passage. They become part
    /// of the model's id: vectors made with other prefixes never mix.
    pub fn with_prompts(mut self, prompts: Prompts) -> Self {
        self.id.push_str(&prompts.identity_suffix());
        self.prompts = prompts;
        self
    }

    /// The query and passage prefixes it puts before texts.
    pub fn prompts(&self) -> &Prompts {
        &self.prompts
    }

    /// Runs the dense layers in `precision`; int8 becomes part of the id.
    /// Every dense layer goes int8 with eight-bit inputs: on both test
    /// models every text stays within 0.99 cosine of fp32, and VNNI's
    /// byte kernel runs them at twice the multiply-adds per instruction of
    /// twelve-bit ones (docs/benchmarks.md, "int8 with eight-bit layer inputs").
    /// Keeping the first, the last or the feed-forward down-projections in
    /// f32 bought no measurable closeness (the 2026-12-03 entry).
    pub fn with_precision(self, precision: Precision) -> Self {
        match precision {
            Precision::Fp32 => self,
            Precision::Int8 => self.with_int8_layers(precision.identity_suffix(), |_, _| {
                Some(ActivationBits::Eight)
            }),
        }
    }

    /// Quantizes the layers `choose` picks and appends `suffix` to the id:
    /// for measuring one choice of layers against another.
    pub fn with_int8_layers(
        mut self,
        suffix: &str,
        choose: impl Fn(usize, Dense) -> Option<ActivationBits> + Sync,
    ) -> Self {
        self.encoder.quantize(choose);
        self.id.push_str(suffix);
        self
    }

    /// Sets the token budget of one forward pass (at least one sequence runs).
    pub fn with_batch_tokens(mut self, tokens: usize) -> Self {
        self.batch_tokens = tokens.max(1);
        self
    }

    /// How token states become one vector, and how long inputs may be.
    pub fn settings(&self) -> &SentenceSettings {
        &self.settings
    }

    /// Token ids as embedded: special tokens added, truncated at max_seq_length.
    /// The counter's tokenizer does it (truncating the text's own tokens,
    /// then adding the special ones, as a truncating tokenizer would): a
    /// second copy would cost as much memory again, 280 MB for a
    /// 250k-piece vocabulary.
    pub fn embedded_ids(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, EmbedError> {
        let failed = |e: tokenizers::Error| EmbedError::Failed {
            cause: None,
            reason: format!("tokenizer: {e}"),
        };
        let tokenizer = self.counter.tokenizer();
        let added = tokenizer
            .get_post_processor()
            .map_or(0, |p| p.added_tokens(false));
        let room = self.settings.max_seq_length.saturating_sub(added).max(1);
        tokenizer
            .encode_batch(texts.to_vec(), false)
            .map_err(failed)?
            .into_iter()
            .map(|mut e| {
                e.truncate(room, 0, TruncationDirection::Right);
                tokenizer
                    .post_process(e, None, true)
                    .map(|e| e.get_ids().to_vec())
                    .map_err(failed)
            })
            .collect()
    }

    /// Embeds pre-tokenised inputs: longest first, packed into batches of at
    /// most `batch_tokens`, rows written back in the original order.
    pub fn embed_ids(&self, ids: &[Vec<u32>]) -> Result<Embeddings, EmbedError> {
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(ids[i].len()));
        let mut out = vec![0f32; ids.len() * self.dim];
        let mut rest = &order[..];
        let mut scratch = Scratch::default();
        while !rest.is_empty() {
            let mut take = 1;
            let mut tokens = ids[rest[0]].len();
            while take < rest.len() && tokens + ids[rest[take]].len() <= self.batch_tokens {
                tokens += ids[rest[take]].len();
                take += 1;
            }
            let (batch, tail) = rest.split_at(take);
            rest = tail;
            let seqs: Vec<&[u32]> = batch.iter().map(|&i| ids[i].as_slice()).collect();
            // The pass runs on a pool thread: its parallel steps then fork
            // and join inside the pool instead of each waking this thread
            // (a query's 30-odd hand-offs become one).
            let encoder = &self.encoder;
            let scratch = &mut scratch;
            let hidden =
                rayon::scope(|_| encoder.forward_in(&seqs, scratch)).map_err(|reason| {
                    EmbedError::Failed {
                        cause: None,
                        reason,
                    }
                })?;
            let mut rows = hidden.chunks_exact(self.dim);
            for (seq, &i) in seqs.iter().zip(batch) {
                let tokens: Vec<&[f32]> = rows.by_ref().take(seq.len()).collect();
                let dst = &mut out[i * self.dim..(i + 1) * self.dim];
                pool(self.settings.pooling, &tokens, dst);
                normalise(dst);
            }
        }
        // A sync's batch: let go of the embedding rows it read, so the
        // resident set does not grow with every token a sync has seen. A
        // query's few rows stay (releasing them would cost it page faults).
        if ids.iter().map(Vec::len).sum::<usize>() >= RELEASE_AFTER_TOKENS {
            self.encoder.release_word_rows();
        }
        Ok(Embeddings {
            dim: self.dim,
            data: out,
        })
    }
}

/// Inputs of at least this many tokens release the embedding rows they read.
const RELEASE_AFTER_TOKENS: usize = 2048;

/// One sequence's token rows pooled as sentence-transformers configures.
fn pool(pooling: Pooling, tokens: &[&[f32]], dst: &mut [f32]) {
    dst.fill(0.0);
    let Some(first) = tokens.first() else {
        return;
    };
    match pooling {
        Pooling::Mean => {
            for row in tokens {
                for (d, v) in dst.iter_mut().zip(*row) {
                    *d += v;
                }
            }
            let n = tokens.len() as f32;
            dst.iter_mut().for_each(|d| *d /= n);
        }
        Pooling::Cls => dst.copy_from_slice(first),
        Pooling::Max => {
            dst.copy_from_slice(first);
            for row in &tokens[1..] {
                for (d, v) in dst.iter_mut().zip(*row) {
                    *d = d.max(*v);
                }
            }
        }
    }
}

/// Unit length (search compares unit vectors); a zero vector stays zero.
fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= norm);
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
            let ids = if self.prompts.passage.is_empty() {
                self.embedded_ids(part)?
            } else {
                let prefixed: Vec<String> =
                    part.iter().map(|t| self.prompts.passage_text(t)).collect();
                let prefixed: Vec<&str> = prefixed.iter().map(String::as_str).collect();
                self.embedded_ids(&prefixed)?
            };
            out.data.extend(self.embed_ids(&ids)?.data);
        }
        Ok(out)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let ids = self.embedded_ids(&[&self.prompts.query_text(text)])?;
        Ok(self.embed_ids(&ids)?.data)
    }
}

impl TokenCounter for CandleEmbedder {
    fn count(&self, text: &str) -> usize {
        self.counter.count(text)
    }
    fn additive(&self) -> bool {
        self.counter.additive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooling_follows_the_configured_mode_over_exactly_the_sequence() {
        let rows: [&[f32]; 3] = [&[1.0, -2.0], &[3.0, 0.0], &[2.0, 5.0]];
        let mut out = [9.0; 2];
        pool(Pooling::Mean, &rows, &mut out);
        assert_eq!(out, [2.0, 1.0]);
        pool(Pooling::Cls, &rows, &mut out);
        assert_eq!(out, [1.0, -2.0]);
        pool(Pooling::Max, &rows, &mut out);
        assert_eq!(out, [3.0, 5.0]);
        pool(Pooling::Mean, &[], &mut out);
        assert_eq!(out, [0.0, 0.0]);
        let mut v = [3.0, 4.0];
        normalise(&mut v);
        assert_eq!(v, [0.6, 0.8]);
        let mut zero = [0.0, 0.0];
        normalise(&mut zero);
        assert_eq!(zero, [0.0, 0.0]);
    }
}
