use std::path::PathBuf;

use minirag_core::cause::Cause;

/// Why a model could not be loaded. Every message names the model or file
/// and says how to fix it; the error underneath (the OS, the JSON parser,
/// the download) is kept as the source.
#[derive(Debug)]
pub enum LoadError {
    /// The model could not be downloaded.
    Download {
        /// The model id.
        model: String,
        /// Where it was to be kept.
        cache_dir: PathBuf,
        /// What went wrong.
        reason: String,
        /// The HTTP or I/O error underneath, when there is one.
        source: Option<Cause>,
    },
    /// HF_HUB_OFFLINE is set and the cache lacks the model.
    Offline {
        /// The model id.
        model: String,
        /// The cache searched.
        cache_dir: PathBuf,
    },
    /// A file the model needs is not in its folder.
    MissingFile {
        /// The folder.
        dir: PathBuf,
        /// The file's name.
        file: String,
    },
    /// A model file that cannot be read or parsed.
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
        /// The I/O or parser error underneath, when there is one.
        source: Option<Cause>,
    },
    /// The files read but do not make a model this encoder runs.
    Model {
        /// The model's folder.
        dir: PathBuf,
        /// What is wrong.
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
