//! Where model files come from.

use std::path::{Path, PathBuf};

use crate::download::{fetch_model, DownloadProgress, HubOptions};
pub use crate::download::{OPTIONAL, REQUIRED, WEIGHTS};
use crate::error::LoadError;

/// Where a model comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    /// A folder in Hugging Face layout; no network at all.
    Local(PathBuf),
    /// A hub model id, downloaded once into `cache_dir`.
    Hub {
        /// The model id.
        name: String,
        /// Where downloads are kept.
        cache_dir: PathBuf,
        /// How to reach the hub.
        hub: HubOptions,
    },
}

impl ModelSource {
    /// MODEL_PATH wins; a MODEL_NAME that is an existing folder is local;
    /// anything else is a hub id.
    pub fn choose(
        model_name: &str,
        model_path: Option<&Path>,
        cache_dir: &Path,
        hub: HubOptions,
    ) -> Self {
        match model_path {
            Some(p) => Self::Local(p.to_path_buf()),
            None if Path::new(model_name).is_dir() => Self::Local(PathBuf::from(model_name)),
            None => Self::Hub {
                name: model_name.to_string(),
                cache_dir: cache_dir.to_path_buf(),
                hub,
            },
        }
    }

    /// The model as people name it (a hub id or a folder), for messages;
    /// not its identity, see [`content_id`].
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

    /// Whether loading it means a download (a hub model not complete in the
    /// cache, and the hub not switched off).
    pub fn needs_download(&self) -> bool {
        match self {
            Self::Local(_) => false,
            Self::Hub {
                name,
                cache_dir,
                hub,
            } => !hub.offline && !crate::download::is_cached(name, cache_dir),
        }
    }

    /// A local folder holding the model files, downloading them if needed
    /// (counting the bytes into `progress`).
    pub fn materialize(&self, progress: &DownloadProgress) -> Result<PathBuf, LoadError> {
        match self {
            Self::Local(dir) => {
                check_folder(dir)?;
                Ok(dir.clone())
            }
            Self::Hub {
                name,
                cache_dir,
                hub,
            } => fetch_model(name, cache_dir, hub, progress),
        }
    }
}

/// The content id of hub model `name` where it is complete in the cache,
/// without loading it or touching the network: an index embedded with it
/// holds this id.
pub fn cached_content_id(name: &str, cache_dir: &Path) -> Option<String> {
    content_id(&crate::download::cached_dir(name, cache_dir)?).ok()
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

/// Bytes of a weights file that identify it besides its length: the
/// safetensors header (names, shapes, dtypes, offsets), or the start of a
/// pickle. Reading every weight would cost a second per load.
const WEIGHTS_PREFIX: u64 = 1 << 20;

/// The model's identity by content: a digest of `config.json`, the
/// tokenizer, the sentence-transformers side files that change pooling or
/// length, and the weights file's length and header. An identical copy in
/// another folder is the same model; any change of these is another model.
pub fn content_id(dir: &Path) -> Result<String, LoadError> {
    use sha2::Digest;
    use std::io::Read;
    let mut h = sha2::Sha256::new();
    let read = |path: PathBuf| std::fs::read(&path).map_err(|e| LoadError::bad_file(path, e));
    for file in REQUIRED {
        h.update(file.as_bytes());
        h.update(read(dir.join(file))?);
    }
    for file in OPTIONAL {
        let path = dir.join(file);
        if path.is_file() {
            h.update(file.as_bytes());
            h.update(read(path)?);
        }
    }
    let weights = WEIGHTS
        .iter()
        .map(|w| dir.join(w))
        .find(|p| p.is_file())
        .ok_or_else(|| LoadError::MissingFile {
            dir: dir.to_path_buf(),
            file: "model.safetensors".into(),
        })?;
    let bad = |e: std::io::Error| LoadError::bad_file(weights.clone(), e);
    let file = std::fs::File::open(&weights).map_err(bad)?;
    let len = file.metadata().map_err(bad)?.len();
    let mut head = Vec::new();
    file.take(WEIGHTS_PREFIX)
        .read_to_end(&mut head)
        .map_err(bad)?;
    h.update(len.to_le_bytes());
    h.update(&head);
    let digest = h.finalize();
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}
