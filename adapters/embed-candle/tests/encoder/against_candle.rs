//! Our encoder computes what candle-transformers' `BertModel` computes on the
//! same real weights: padded and masked there, packed without padding here.

use std::path::PathBuf;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use minirag_core::ports::Embedder;
use minirag_embed_candle::encoder::config::BertConfig;
use minirag_embed_candle::encoder::weights::WeightFile;
use minirag_embed_candle::encoder::Encoder;
use minirag_embed_candle::CandleEmbedder;

fn model_dir() -> PathBuf {
    std::env::var_os("MINIRAG_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models"))
        .join("all-MiniLM-L6-v2")
}

/// Token ids of real text at several lengths, one of them the 256 maximum.
fn sequences() -> Vec<Vec<u32>> {
    let model = CandleEmbedder::load("m", &model_dir()).unwrap();
    let text = "The index keeps a write-ahead log; every acknowledged write survives a crash. \
                Поиск находит абзац по смыслу и по точному идентификатору parse_config_v2. ";
    let long = text.repeat(12);
    let texts = [&text[..20], text, &long, &text[..60], "x"];
    model.embedded_ids(&texts).unwrap()
}

#[test]
fn hidden_states_match_candle_bert_on_a_padded_batch() {
    let dir = model_dir();
    let seqs = sequences();
    assert!(seqs.iter().any(|s| s.len() == 256) && seqs.iter().any(|s| s.len() <= 3));

    let raw = std::fs::read(dir.join("config.json")).unwrap();
    let ours = Encoder::load(
        serde_json::from_slice::<BertConfig>(&raw).unwrap(),
        &WeightFile::open(&dir, Some("bert")).unwrap(),
    )
    .unwrap();
    let refs: Vec<&[u32]> = seqs.iter().map(Vec::as_slice).collect();
    let packed = ours.forward(&refs).unwrap();

    let dev = Device::Cpu;
    let config: Config = serde_json::from_slice(&raw).unwrap();
    // SAFETY: the shared model file is read-only and never modified while
    // this test maps it.
    let vb = unsafe {
        VarBuilder::from_mmaped_safetensors(&[dir.join("model.safetensors")], DType::F32, &dev)
    }
    .unwrap();
    let bert = BertModel::load(vb, &config).unwrap();
    let len = seqs.iter().map(Vec::len).max().unwrap();
    let (mut ids, mut mask) = (vec![0u32; seqs.len() * len], vec![0u32; seqs.len() * len]);
    for (r, s) in seqs.iter().enumerate() {
        ids[r * len..r * len + s.len()].copy_from_slice(s);
        mask[r * len..r * len + s.len()].fill(1);
    }
    let ids = Tensor::from_vec(ids, (seqs.len(), len), &dev).unwrap();
    let mask = Tensor::from_vec(mask, (seqs.len(), len), &dev).unwrap();
    let theirs = bert
        .forward(&ids, &ids.zeros_like().unwrap(), Some(&mask))
        .unwrap()
        .to_vec3::<f32>()
        .unwrap();

    let h = ours.hidden_size();
    let mut rows = packed.chunks_exact(h);
    let mut worst = 0f32;
    for (s, padded) in seqs.iter().zip(&theirs) {
        for token in &padded[..s.len()] {
            let row = rows.next().unwrap();
            for (a, b) in row.iter().zip(token) {
                worst = worst.max((a - b).abs());
            }
        }
    }
    assert!(rows.next().is_none());
    eprintln!("largest difference to candle BertModel: {worst}");
    assert!(worst <= 5e-5, "largest difference {worst}");
}

#[test]
fn out_of_range_input_is_an_error_not_a_panic() {
    let dir = model_dir();
    let raw = std::fs::read(dir.join("config.json")).unwrap();
    let ours = Encoder::load(
        serde_json::from_slice::<BertConfig>(&raw).unwrap(),
        &WeightFile::open(&dir, None).unwrap(),
    )
    .unwrap();
    let err = ours.forward(&[&[101, 999_999, 102]]).unwrap_err();
    assert!(
        err.contains("999999") && err.contains("vocabulary"),
        "{err}"
    );
    let long = vec![100u32; 600];
    let err = ours.forward(&[&long]).unwrap_err();
    assert!(
        err.contains("600") && err.contains("512 positions"),
        "{err}"
    );
    assert!(ours.forward(&[]).unwrap().is_empty());
}

#[test]
fn small_token_budgets_split_batches_and_keep_the_order() {
    let dir = model_dir();
    let whole = CandleEmbedder::load("m", &dir).unwrap();
    let split = CandleEmbedder::load("m", &dir)
        .unwrap()
        .with_batch_tokens(40);
    let ids = sequences();
    let a = whole.embed_ids(&ids).unwrap();
    let b = split.embed_ids(&ids).unwrap();
    assert_eq!(a.len(), ids.len());
    for i in 0..ids.len() {
        let worst = a
            .row(i)
            .iter()
            .zip(b.row(i))
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max);
        assert!(worst <= 1e-5, "row {i} differs by {worst}");
    }
    // Distinct inputs give distinct rows, so a shuffled order would show.
    assert!(a
        .row(0)
        .iter()
        .zip(a.row(1))
        .any(|(x, y)| (x - y).abs() > 1e-3));
}

/// A checkpoint stored in f16 cannot be borrowed from the map: its tensors go
/// through candle's converting loader and must still embed like the f32 one.
#[test]
fn an_f16_checkpoint_loads_through_the_converting_path() {
    let dir = model_dir();
    let tmp = std::env::temp_dir().join(format!("minirag-f16-{}", std::process::id()));
    std::fs::create_dir_all(tmp.join("1_Pooling")).unwrap();
    for f in [
        "config.json",
        "tokenizer.json",
        "modules.json",
        "sentence_bert_config.json",
        "1_Pooling/config.json",
    ] {
        if dir.join(f).is_file() {
            std::fs::copy(dir.join(f), tmp.join(f)).unwrap();
        }
    }
    let tensors = candle_core::safetensors::load(dir.join("model.safetensors"), &Device::Cpu)
        .unwrap()
        .into_iter()
        .map(|(name, t)| (name, t.to_dtype(DType::F16).unwrap()))
        .collect::<std::collections::HashMap<_, _>>();
    candle_core::safetensors::save(&tensors, tmp.join("model.safetensors")).unwrap();

    let full = CandleEmbedder::load("m", &dir).unwrap();
    let half = CandleEmbedder::load("m", &tmp).unwrap();
    let texts = ["write-ahead log recovery after a crash", "Поиск по смыслу"];
    let a = full.embed_documents(&texts).unwrap();
    let b = half.embed_documents(&texts).unwrap();
    std::fs::remove_dir_all(&tmp).unwrap();
    for i in 0..texts.len() {
        let cos: f32 = a.row(i).iter().zip(b.row(i)).map(|(x, y)| x * y).sum();
        assert!(cos > 0.999, "row {i}: cosine {cos}");
    }
}

/// A config the encoder cannot compute is refused at load, naming the file
/// and the field, before any weight is read.
#[test]
fn an_unsupported_config_is_refused_by_name() {
    let dir = model_dir();
    let tmp = std::env::temp_dir().join(format!("minirag-roberta-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for f in ["tokenizer.json", "model.safetensors"] {
        std::os::unix::fs::symlink(dir.join(f), tmp.join(f)).unwrap();
    }
    let raw = std::fs::read_to_string(dir.join("config.json")).unwrap();
    let mut config: serde_json::Value = serde_json::from_str(&raw).unwrap();
    config["model_type"] = "xlm-roberta".into();
    std::fs::write(tmp.join("config.json"), config.to_string()).unwrap();
    let err = CandleEmbedder::load("m", &tmp)
        .err()
        .expect("refused")
        .to_string();
    std::fs::remove_dir_all(&tmp).unwrap();
    assert!(
        err.contains("config.json") && err.contains("model_type 'xlm-roberta'"),
        "{err}"
    );
}
