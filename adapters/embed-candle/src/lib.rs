//! The `Embedder` and `TokenCounter` ports on candle: any BERT-family
//! sentence-transformers model in Hugging Face layout, on the CPU.
//!
//! - [`source`]: where the model files come from (a local folder, or the hub
//!   into the cache dir).
//! - [`download`]: the hub download, with a time limit on every wait.
//! - [`settings`]: the sentence-transformers side files (pooling, sequence
//!   length, normalisation).
//! - [`encoder`]: the BERT forward pass on candle's gemm kernels, over
//!   sequences packed without padding.
//! - [`model`]: [`CandleEmbedder`], the loaded model: length-sorted batches
//!   under a token budget, pooling, unit vectors.
//! - [`lazy`]: [`LazyEmbedder`], which loads on first use and reports an
//!   unavailable model instead of failing the process.

pub mod download;
#[doc(hidden)]
pub mod encoder;
/// Why a model could not be loaded.
pub mod error;
pub mod lazy;
pub mod model;
pub mod settings;
pub mod source;

pub use download::{DownloadProgress, HubOptions};
pub use error::LoadError;
pub use lazy::LazyEmbedder;
pub use minirag_core::models::Precision;
pub use minirag_tokenizer_hf::TokenizerCounter;
pub use model::CandleEmbedder;
pub use source::ModelSource;
