use std::path::PathBuf;

use minirag_core::cause::Cause;

/// Why a model could not be loaded. Every message names the model or file
/// and says how to fix it; the error underneath (the OS, the JSON parser,
/// the download) is kept as the source.
#[derive(Debug)]
pub enum LoadError {
    Download {
        model: String,
        cache_dir: PathBuf,
        reason: String,
        source: Option<Cause>,
    },
    /// HF_HUB_OFFLINE is set and the cache lacks the model.
    Offline {
        model: String,
        cache_dir: PathBuf,
    },
    MissingFile {
        dir: PathBuf,
        file: String,
    },
    BadFile {
        path: PathBuf,
        reason: String,
        source: Option<Cause>,
    },
    Model {
        dir: PathBuf,
        reason: String,
    },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Download {
                model,
                cache_dir,
                reason,
                ..
            } => write!(
                f,
                "could not download the model '{model}' into the cache dir {} ({reason}); \
                 check the network, or point MODEL_PATH at a local copy of the model folder \
                 (config.json, tokenizer.json, model.safetensors)",
                cache_dir.display()
            ),
            Self::Offline { model, cache_dir } => write!(
                f,
                "HF_HUB_OFFLINE is set and the model '{model}' is not in the cache dir {}; \
                 unset HF_HUB_OFFLINE for one download, or point MODEL_PATH at a local copy of \
                 the model folder (config.json, tokenizer.json, model.safetensors)",
                cache_dir.display()
            ),
            Self::MissingFile { dir, file } => write!(
                f,
                "the model folder {} has no {file}; a sentence-transformers model folder needs \
                 config.json, tokenizer.json and model.safetensors",
                dir.display()
            ),
            Self::BadFile { path, reason, .. } => {
                write!(f, "could not read {}: {reason}", path.display())
            }
            Self::Model { dir, reason } => {
                write!(
                    f,
                    "the model in {} could not be built: {reason}",
                    dir.display()
                )
            }
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Download { source, .. } | Self::BadFile { source, .. } => {
                source.as_ref().map(Cause::get)
            }
            _ => None,
        }
    }
}

impl LoadError {
    /// A file that cannot be read or parsed, keeping the error that says why.
    pub fn bad_file(
        path: impl Into<PathBuf>,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::BadFile {
            path: path.into(),
            reason: e.to_string(),
            source: Some(Cause::new(e)),
        }
    }
}
