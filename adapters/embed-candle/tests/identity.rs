//! A model is known by its content, not its path: an identical copy is the
//! same model, a changed file is another one.

use std::path::{Path, PathBuf};

use minirag_core::ports::Embedder;
use minirag_embed_candle::source::{OPTIONAL, REQUIRED};
use minirag_embed_candle::{LazyEmbedder, ModelSource};

fn model_dir() -> PathBuf {
    std::env::var_os("MINIRAG_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models"))
        .join("all-MiniLM-L6-v2")
}

fn copy_model(to: &Path) {
    std::fs::create_dir_all(to.join("1_Pooling")).unwrap();
    // Every file the model's identity reads.
    let files = REQUIRED
        .iter()
        .chain(&["model.safetensors"])
        .chain(&OPTIONAL);
    for f in files {
        std::fs::copy(model_dir().join(f), to.join(f)).unwrap();
        let mut perms = std::fs::metadata(to.join(f)).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(to.join(f), perms).unwrap();
    }
}

fn id_of(dir: &Path) -> String {
    let e = LazyEmbedder::new(ModelSource::Local(dir.to_path_buf()));
    e.ready().expect("model loads");
    e.model_id().to_string()
}

#[test]
fn an_identical_copy_is_the_same_model_and_a_changed_one_is_not() {
    let original = id_of(&model_dir());
    assert!(original.starts_with("sha256:"), "{original}");
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("elsewhere");
    copy_model(&copy);
    assert_eq!(id_of(&copy), original, "same files, another folder");

    let config = std::fs::read_to_string(copy.join("config.json")).unwrap();
    std::fs::write(
        copy.join("config.json"),
        config.replace("\"layer_norm_eps\": 1e-12", "\"layer_norm_eps\": 1e-11"),
    )
    .unwrap();
    assert_ne!(id_of(&copy), original, "a changed config is another model");
}

#[test]
fn an_unloadable_model_is_named_not_hashed() {
    let e = LazyEmbedder::new(ModelSource::Local(PathBuf::from("/nowhere/model")));
    assert!(e.ready().is_err());
    assert_eq!(e.model_id(), "/nowhere/model");
}
