//! Where model files come from.

use std::path::{Path, PathBuf};

use crate::error::LoadError;

/// Files a sentence-transformers model folder provides. Only the first three
/// are required; the others default to BERT mean pooling.
pub const REQUIRED: [&str; 2] = ["config.json", "tokenizer.json"];
pub const WEIGHTS: [&str; 2] = ["model.safetensors", "pytorch_model.bin"];
pub const OPTIONAL: [&str; 3] = [
    "modules.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    /// A folder in Hugging Face layout; no network at all.
    Local(PathBuf),
    /// A hub model id, downloaded once into `cache_dir`.
    Hub { name: String, cache_dir: PathBuf },
}

impl ModelSource {
    /// MODEL_PATH wins; a MODEL_NAME that is an existing folder is local;
    /// anything else is a hub id.
    pub fn choose(model_name: &str, model_path: Option<&Path>, cache_dir: &Path) -> Self {
        match model_path {
            Some(p) => Self::Local(p.to_path_buf()),
            None if Path::new(model_name).is_dir() => Self::Local(PathBuf::from(model_name)),
            None => Self::Hub {
                name: model_name.to_string(),
                cache_dir: cache_dir.to_path_buf(),
            },
        }
    }

    /// Stable id of the model, so vectors of different models never mix.
    pub fn id(&self) -> String {
        match self {
            Self::Local(p) => p
                .canonicalize()
                .unwrap_or_else(|_| p.clone())
                .display()
                .to_string(),
            Self::Hub { name, .. } => name.clone(),
        }
    }

    /// A local folder holding the model files, downloading them if needed.
    pub fn materialize(&self) -> Result<PathBuf, LoadError> {
        match self {
            Self::Local(dir) => {
                check_folder(dir)?;
                Ok(dir.clone())
            }
            Self::Hub { name, cache_dir } => download(name, cache_dir),
        }
    }
}

fn check_folder(dir: &Path) -> Result<(), LoadError> {
    for file in REQUIRED {
        if !dir.join(file).is_file() {
            return Err(LoadError::MissingFile {
                dir: dir.to_path_buf(),
                file: file.into(),
            });
        }
    }
    if !WEIGHTS.iter().any(|w| dir.join(w).is_file()) {
        return Err(LoadError::MissingFile {
            dir: dir.to_path_buf(),
            file: "model.safetensors".into(),
        });
    }
    Ok(())
}

fn download(name: &str, cache_dir: &Path) -> Result<PathBuf, LoadError> {
    let fail = |reason: String| LoadError::Download {
        model: name.into(),
        cache_dir: cache_dir.to_path_buf(),
        reason,
    };
    let api = hf_hub::api::sync::ApiBuilder::from_env()
        .with_cache_dir(cache_dir.to_path_buf())
        .with_progress(false)
        .build()
        .map_err(|e| fail(e.to_string()))?;
    let repo = api.model(name.to_string());
    let mut dir = None;
    for file in REQUIRED {
        let path = repo.get(file).map_err(|e| fail(e.to_string()))?;
        dir.get_or_insert_with(|| path.parent().map(Path::to_path_buf).unwrap_or_default());
    }
    let weights = WEIGHTS.iter().find_map(|w| repo.get(w).ok());
    if weights.is_none() {
        return Err(fail(
            "the repository has neither model.safetensors nor pytorch_model.bin".into(),
        ));
    }
    for file in OPTIONAL {
        // Optional: their absence means BERT defaults.
        let _ = repo.get(file);
    }
    Ok(dir.unwrap_or_default())
}
