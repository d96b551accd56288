use std::path::PathBuf;

/// Why a model could not be loaded. Every message names the model or file
/// and says how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(
        "could not download the model '{model}' into the cache dir {cache_dir} ({reason}); \
         check the network, or point MODEL_PATH at a local copy of the model folder \
         (config.json, tokenizer.json, model.safetensors)"
    )]
    Download {
        model: String,
        cache_dir: PathBuf,
        reason: String,
    },
    #[error("the model folder {dir} has no {file}; a sentence-transformers model folder needs config.json, tokenizer.json and model.safetensors")]
    MissingFile { dir: PathBuf, file: String },
    #[error("could not read {path}: {reason}")]
    BadFile { path: PathBuf, reason: String },
    #[error("the model in {dir} could not be built: {reason}")]
    Model { dir: PathBuf, reason: String },
}
