//! A BERT encoder forward pass written for the CPU: sequences are packed
//! without padding, dense layers run on candle's gemm kernels and their bias
//! (and residual) is added by the element-wise pass that follows, attention
//! is per sequence, and the element-wise work (activation, LayerNorm) is
//! parallel and compiled for AVX2+FMA when the CPU has it. It computes what
//! `candle_transformers::models::bert::BertModel` computes (a test holds the
//! two within 5e-5 on real weights).
//!
//! - [`config`]: the `config.json` fields used, and what is refused.
//! - [`weights`]: weights borrowed from the safetensors memory map.
//! - [`linear`]: the gemm calls.
//! - [`int8`]: dense layers with int8 weights and activations.
//! - [`attention`]: ragged self-attention.
//! - [`kernels`]: GELU, LayerNorm, softmax, and their run-time SIMD dispatch.

pub mod attention;
pub mod config;
pub mod few_rows;
pub mod int8;
pub mod kernels;
pub mod linear;
pub mod panels;
pub mod weights;

use rayon::prelude::*;

/// Operands and the reference product the dense kernels are checked against.
#[cfg(test)]
mod product_check {
    /// Deterministic `rows × k` inputs and `[n, k]` weights.
    pub(super) fn operands(rows: usize, k: usize, n: usize) -> (Vec<f32>, Vec<f32>) {
        let x = (0..rows * k)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0)
            .collect();
        let w = (0..n * k)
            .map(|i| ((i * 53 % 97) as f32 - 48.0) / 48.0)
            .collect();
        (x, w)
    }

    /// Asserts `got` is `x · Wᵀ` within 1e-4.
    pub(super) fn assert_product(x: &[f32], w: &[f32], k: usize, got: &[f32]) {
        let (rows, n) = (x.len() / k, w.len() / k);
        for r in 0..rows {
            for j in 0..n {
                let want: f32 = (0..k).map(|i| x[r * k + i] * w[j * k + i]).sum();
                let have = got[r * n + j];
                assert!((have - want).abs() < 1e-4, "{r},{j}: {have} vs {want}");
            }
        }
    }
}

use config::{Activation, BertConfig};
use kernels::NormParams;
use linear::Linear;
use weights::{Param, WeightFile};

struct Norm {
    gamma: Param,
    beta: Param,
}

struct Layer {
    qkv: Linear,
    out: Linear,
    attn_norm: Norm,
    up: Linear,
    down: Linear,
    ffn_norm: Norm,
}

/// The four dense layers of a BERT layer, to choose which run in int8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dense {
    /// Query, key and value, as one layer.
    Qkv,
    /// The attention output projection.
    Out,
    /// The feed-forward up-projection.
    Up,
    /// The feed-forward down-projection.
    Down,
}

/// Activation buffers of one forward pass, reusable across batches.
#[derive(Default)]
pub struct Scratch {
    x: Vec<f32>,
    qkv: Vec<f32>,
    ctx: Vec<f32>,
    mid: Vec<f32>,
    up: Vec<f32>,
}

pub struct Encoder {
    config: BertConfig,
    act: Activation,
    eps: f32,
    words: Param,
    positions: Param,
    types: Param,
    embed_norm: Norm,
    layers: Vec<Layer>,
}

/// Rows per parallel task in the element-wise passes: enough work per task
/// to amortise scheduling, small enough to balance over the cores.
const ROWS_PER_TASK: usize = 16;

impl Encoder {
    pub fn load(config: BertConfig, file: &WeightFile) -> Result<Self, String> {
        let act = config.validate().map_err(|e| format!("config.json: {e}"))?;
        let h = config.hidden_size;
        let i = config.intermediate_size;
        let norm = |p: &str| -> Result<Norm, String> {
            Ok(Norm {
                gamma: file.get(&format!("{p}.LayerNorm.weight"), &[h])?,
                beta: file.get(&format!("{p}.LayerNorm.bias"), &[h])?,
            })
        };
        let linear = |p: &str, inputs: usize, outputs: usize| -> Result<Linear, String> {
            Ok(Linear::new(
                file.get(&format!("{p}.weight"), &[outputs, inputs])?,
                file.get(&format!("{p}.bias"), &[outputs])?,
                inputs,
                outputs,
            ))
        };
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for n in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{n}");
            // Query, key and value as one [3h, h] layer: one gemm instead of three.
            let mut w = Vec::with_capacity(3 * h * h);
            let mut b = Vec::with_capacity(3 * h);
            for part in ["query", "key", "value"] {
                w.extend_from_slice(
                    file.get(&format!("{p}.attention.self.{part}.weight"), &[h, h])?
                        .data(),
                );
                b.extend_from_slice(
                    file.get(&format!("{p}.attention.self.{part}.bias"), &[h])?
                        .data(),
                );
            }
            layers.push(Layer {
                qkv: Linear::new(Param::owned(w), Param::owned(b), h, 3 * h),
                out: linear(&format!("{p}.attention.output.dense"), h, h)?,
                attn_norm: norm(&format!("{p}.attention.output"))?,
                up: linear(&format!("{p}.intermediate.dense"), h, i)?,
                down: linear(&format!("{p}.output.dense"), i, h)?,
                ffn_norm: norm(&format!("{p}.output"))?,
            });
        }
        Ok(Self {
            words: file.get("embeddings.word_embeddings.weight", &[config.vocab_size, h])?,
            positions: file.get(
                "embeddings.position_embeddings.weight",
                &[config.max_position_embeddings, h],
            )?,
            types: file.get(
                "embeddings.token_type_embeddings.weight",
                &[config.type_vocab_size, h],
            )?,
            embed_norm: norm("embeddings")?,
            eps: config.layer_norm_eps as f32,
            act,
            layers,
            config,
        })
    }

    /// Runs the dense layers `choose(layer index, which)` picks in int8,
    /// their inputs quantized to the bits it answers (a shape that does not
    /// quantize stays f32). Layers quantize in parallel: it is part of a
    /// first query's wait.
    pub fn quantize(
        &mut self,
        choose: impl Fn(usize, Dense) -> Option<int8::ActivationBits> + Sync,
    ) {
        self.layers
            .par_iter_mut()
            .enumerate()
            .for_each(|(n, layer)| {
                for (which, linear) in [
                    (Dense::Qkv, &mut layer.qkv),
                    (Dense::Out, &mut layer.out),
                    (Dense::Up, &mut layer.up),
                    (Dense::Down, &mut layer.down),
                ] {
                    if let Some(bits) = choose(n, which).filter(|_| !linear.is_int8()) {
                        linear.quantize(bits);
                    }
                }
            });
    }

    pub fn hidden_size(&self) -> usize {
        self.config.hidden_size
    }

    /// Last hidden states of every token of every sequence, packed in order
    /// (`Σ len × hidden`). Ids must be below the vocabulary size and each
    /// sequence no longer than the position table.
    pub fn forward(&self, seqs: &[&[u32]]) -> Result<Vec<f32>, String> {
        let mut scratch = Scratch::default();
        self.forward_in(seqs, &mut scratch)?;
        Ok(scratch.x)
    }

    /// [`forward`](Self::forward) into reused buffers: a run of batches
    /// (longest first) allocates once instead of page-faulting ~60 MB of
    /// fresh activations per batch.
    pub fn forward_in<'s>(
        &self,
        seqs: &[&[u32]],
        scratch: &'s mut Scratch,
    ) -> Result<&'s [f32], String> {
        let c = &self.config;
        let h = c.hidden_size;
        for s in seqs {
            if s.len() > c.max_position_embeddings {
                return Err(format!(
                    "a sequence of {} tokens exceeds the model's {} positions",
                    s.len(),
                    c.max_position_embeddings
                ));
            }
            if let Some(id) = s.iter().find(|&&id| id as usize >= c.vocab_size) {
                return Err(format!(
                    "token id {id} is outside the vocabulary of {}",
                    c.vocab_size
                ));
            }
        }
        let lens: Vec<usize> = seqs.iter().map(|s| s.len()).collect();
        let tokens: usize = lens.iter().sum();
        // Every buffer is fully overwritten before it is read, so stale
        // contents from an earlier batch never leak through.
        let Scratch {
            x,
            qkv,
            ctx,
            mid,
            up,
        } = scratch;
        for (buf, width) in [
            (&mut *x, h),
            (&mut *qkv, 3 * h),
            (&mut *ctx, h),
            (&mut *mid, h),
            (&mut *up, c.intermediate_size),
        ] {
            buf.resize(tokens * width, 0.0);
        }
        self.embed(seqs, x);
        let act = self.act;
        for layer in &self.layers {
            layer.qkv.apply(x, qkv);
            rows_par(qkv, layer.qkv.outputs, |part| {
                kernels::add_bias(part, layer.qkv.bias())
            });
            attention::attend(qkv, &lens, c.num_attention_heads, c.head_dim(), ctx);

            layer.out.apply(ctx, mid);
            self.add_norm(mid, x, layer.out.bias(), &layer.attn_norm);

            layer.up.apply(mid, up);
            rows_par(up, layer.up.outputs, |part| {
                kernels::bias_activate(act, part, layer.up.bias())
            });

            layer.down.apply(up, x);
            self.add_norm(x, mid, layer.down.bias(), &layer.ffn_norm);
        }
        Ok(x)
    }

    /// Lets go of the word-embedding rows read so far (see
    /// [`Param::release_pages`]); a sync calls it after each large batch.
    pub fn release_word_rows(&self) {
        self.words.release_pages();
    }

    fn embed(&self, seqs: &[&[u32]], x: &mut [f32]) {
        let h = self.config.hidden_size;
        let (words, positions, types) = (
            self.words.data(),
            self.positions.data(),
            &self.types.data()[..h],
        );
        let mut rows = x.chunks_exact_mut(h);
        for seq in seqs {
            for (pos, (&id, row)) in seq.iter().zip(&mut rows).enumerate() {
                let w = &words[id as usize * h..][..h];
                let p = &positions[pos * h..][..h];
                for (((o, w), p), t) in row.iter_mut().zip(w).zip(p).zip(types) {
                    *o = w + p + t;
                }
            }
        }
        let params = self.norm_params(&self.embed_norm);
        rows_par(x, h, |part| {
            for row in part.chunks_exact_mut(h) {
                kernels::layer_norm_row(row, &params)
            }
        });
    }

    fn norm_params<'a>(&self, norm: &'a Norm) -> NormParams<'a> {
        NormParams {
            gamma: norm.gamma.data(),
            beta: norm.beta.data(),
            eps: self.eps,
        }
    }

    /// `x = LayerNorm(x + residual + bias)`, rows in parallel.
    fn add_norm(&self, x: &mut [f32], residual: &[f32], bias: &[f32], norm: &Norm) {
        let width = bias.len();
        let params = self.norm_params(norm);
        x.par_chunks_mut(ROWS_PER_TASK * width)
            .zip(residual.par_chunks(ROWS_PER_TASK * width))
            .for_each(|(part, res)| kernels::add_norm(part, res, bias, &params));
    }
}

/// Runs `f` over `width`-wide rows of `xs`, groups of rows in parallel.
fn rows_par(xs: &mut [f32], width: usize, f: impl Fn(&mut [f32]) + Sync) {
    xs.par_chunks_mut(ROWS_PER_TASK * width).for_each(&f);
}
