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

/// Prefixes are part of the identity, and the model reads exactly the
/// prefixed text: a folder named like an e5 model gets `query: ` and
/// `passage: ` from the known-model table, a configured prefix wins, and a
/// changed prefix is another model (so a sync re-embeds).
#[test]
fn prefixes_are_applied_as_the_table_says_and_are_part_of_the_identity() {
    use minirag_core::models::PromptOverride;

    let tmp = tempfile::tempdir().unwrap();
    let e5 = tmp.path().join("multilingual-e5-small");
    copy_model(&e5);
    let bare = LazyEmbedder::new(ModelSource::Local(model_dir()));
    let prefixed = LazyEmbedder::new(ModelSource::Local(e5.clone()));
    prefixed.ready().unwrap();
    bare.ready().unwrap();
    assert_eq!(
        prefixed.model_id(),
        format!(
            "{}{}",
            bare.model_id(),
            prefixed.get().unwrap().prompts().identity_suffix()
        )
    );
    assert_ne!(prefixed.model_id(), bare.model_id());

    let q = prefixed.embed_query("как настроить max_wal_size").unwrap();
    let expected = bare
        .embed_documents(&["query: как настроить max_wal_size"])
        .unwrap();
    assert_eq!(q, expected.row(0), "the query is read with `query: `");
    let p = prefixed.embed_documents(&["Текст раздела."]).unwrap();
    let expected = bare.embed_documents(&["passage: Текст раздела."]).unwrap();
    assert_eq!(
        p.row(0),
        expected.row(0),
        "a passage is read with `passage: `"
    );

    let configured =
        LazyEmbedder::new(ModelSource::Local(e5)).with_prompt_override(PromptOverride {
            query: Some("search_query: ".into()),
            passage: None,
        });
    configured.ready().unwrap();
    assert_ne!(
        configured.model_id(),
        prefixed.model_id(),
        "a changed prefix re-embeds"
    );
    let q = configured.embed_query("x").unwrap();
    assert_eq!(
        q,
        bare.embed_documents(&["search_query: x"]).unwrap().row(0)
    );
}

/// A model folder that declares its prompts (sentence-transformers 2.4+
/// writes them into config_sentence_transformers.json) is read with them,
/// whatever its name.
#[test]
fn prompts_the_model_folder_declares_win_over_the_table() {
    use minirag_core::models::PromptSource;

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bge-small-custom");
    copy_model(&dir);
    std::fs::write(
        dir.join("config_sentence_transformers.json"),
        r#"{"prompts": {"query": "Q: ", "document": "D: "}, "default_prompt_name": null}"#,
    )
    .unwrap();
    let e = LazyEmbedder::new(ModelSource::Local(dir));
    let model = e.get().unwrap();
    let prompts = model.prompts();
    assert_eq!(
        (prompts.query.as_str(), prompts.passage.as_str()),
        ("Q: ", "D: ")
    );
    assert_eq!(prompts.source, PromptSource::ModelFiles);
}

/// A model that cannot be loaded keeps why: the walk from the engine's
/// error goes through `EmbedError` and `LoadError` to the JSON parser's.
#[test]
fn an_unloadable_models_cause_is_kept_to_the_parser() {
    use minirag_core::error::EngineError;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("broken");
    copy_model(&dir);
    std::fs::write(dir.join("config.json"), b"{ not json").unwrap();
    let e = LazyEmbedder::new(ModelSource::Local(dir));
    let err = e.embed_query("x").unwrap_err();
    let engine = EngineError::Embed(err);
    use minirag_core::cause::in_chain;
    let load = in_chain::<minirag_embed_candle::LoadError>(&engine).is_some();
    let json = in_chain::<serde_json::Error>(&engine).is_some();
    assert!(
        load && json,
        "the walk from {engine} reaches LoadError and serde_json's error"
    );
}
