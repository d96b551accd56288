//! The blind rule judges by the model's own tokenizer: an English WordPiece
//! vocabulary shreds Cyrillic into letters, so a Russian query leans on
//! keywords; a multilingual vocabulary reads Russian at several letters a
//! piece, and the same query keeps the configured weight. No multilingual
//! weights can be downloaded here, so the multilingual tokenizers are built
//! in the test, in the two shapes such models ship: a WordPiece vocabulary
//! (multilingual BERT) and a SentencePiece Unigram (XLM-R, behind the
//! default paraphrase-multilingual model).

use std::path::PathBuf;

use minirag_core::search::blind::{
    keyword_weight_for, letters_per_piece, BLIND_KEYWORD_WEIGHT, UNREADABLE_KEYWORD_WEIGHT,
};
use minirag_embed_candle::TokenizerCounter;
use tokenizers::models::unigram::Unigram;
use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
use tokenizers::processors::template::TemplateProcessing;
use tokenizers::Tokenizer;

/// A counter over a tokenizer built here, read back as the model loader
/// reads a `tokenizer.json`.
fn counter(t: &Tokenizer) -> TokenizerCounter {
    TokenizerCounter::new(minirag_tokenizer_hf::from_json(&t.to_string(false).unwrap()).unwrap())
}

const RUSSIAN: &str = "проверка накладной на складе";
const ENGLISH: &str = "how do we rotate the API keys";

fn english_model() -> TokenizerCounter {
    let dir = std::env::var_os("MINIRAG_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models"))
        .join("all-MiniLM-L6-v2");
    TokenizerCounter::new(minirag_tokenizer_hf::from_file(&dir.join("tokenizer.json")).unwrap())
}

/// A multilingual-BERT-shaped tokenizer: whole frequent words, stems with
/// `##` endings, and single letters of both scripts as the fallback.
fn multilingual_wordpiece() -> TokenizerCounter {
    let mut pieces: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for word in [
        "проверка",
        "на",
        "склад",
        "##е",
        "на",
        "##клад",
        "##ной",
        "how",
        "do",
        "we",
        "rotate",
        "the",
        "api",
        "keys",
        "ключ",
        "##и",
    ] {
        pieces.push(word.to_string());
    }
    for c in ('а'..='я').chain('a'..='z') {
        pieces.push(c.to_string());
        pieces.push(format!("##{c}"));
    }
    pieces.dedup();
    // The vocabulary goes in through the tokenizer.json form models ship.
    let vocab: serde_json::Map<String, serde_json::Value> = pieces
        .iter()
        .enumerate()
        .map(|(i, p)| (p.clone(), i.into()))
        .collect();
    let json = serde_json::json!({
        "version": "1.0",
        "normalizer": null,
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}}
            ],
            "pair": [],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}
            }
        },
        "decoder": null,
        "added_tokens": [],
        "truncation": null,
        "padding": null,
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": vocab
        }
    });
    let t: Tokenizer = json.to_string().parse().unwrap();
    counter(&t)
}

/// An XLM-R-shaped tokenizer: a SentencePiece Unigram over `▁`-marked
/// words, with `<s>` and `</s>` around every input.
fn multilingual_unigram() -> TokenizerCounter {
    let mut vocab: Vec<(String, f64)> = vec![
        ("<unk>".into(), 0.0),
        ("<s>".into(), 0.0),
        ("</s>".into(), 0.0),
    ];
    for (piece, score) in [
        ("▁проверка", -8.0),
        ("▁на", -5.0),
        ("клад", -9.0),
        ("ной", -8.0),
        ("▁скла", -9.0),
        ("де", -7.0),
        ("▁how", -6.0),
        ("▁do", -6.0),
        ("▁we", -6.0),
        ("▁rotat", -9.0),
        ("e", -5.0),
        ("▁the", -4.0),
        ("▁API", -9.0),
        ("▁keys", -8.0),
        ("▁", -3.0),
    ] {
        vocab.push((piece.into(), score));
    }
    for c in ('а'..='я').chain('a'..='z').chain('A'..='Z') {
        vocab.push((c.to_string(), -12.0));
    }
    let model = Unigram::from(vocab, Some(0), false).unwrap();
    let mut t = Tokenizer::new(model);
    t.with_pre_tokenizer(Some(Metaspace::new('▁', PrependScheme::Always, true)));
    t.with_post_processor(Some(
        TemplateProcessing::builder()
            .try_single("<s> $0 </s>")
            .unwrap()
            .special_tokens(vec![("<s>", 1), ("</s>", 2)])
            .build()
            .unwrap(),
    ));
    counter(&t)
}

#[test]
fn an_english_vocabulary_is_blind_to_russian() {
    let english = english_model();
    let ratio = letters_per_piece(RUSSIAN, &english).unwrap();
    assert!(
        ratio < 1.6,
        "English WordPiece reads Russian at {ratio:.2} letters a piece"
    );
    assert_eq!(
        keyword_weight_for(RUSSIAN, 0.6, &english),
        UNREADABLE_KEYWORD_WEIGHT
    );
    assert_eq!(
        keyword_weight_for("как настроить разрешения на складе для api", 0.6, &english),
        BLIND_KEYWORD_WEIGHT,
        "a Russian question around an English word keeps some vector evidence"
    );
    assert_eq!(keyword_weight_for(ENGLISH, 0.6, &english), 0.6);
}

#[test]
fn a_multilingual_vocabulary_reads_russian_and_keeps_the_weight() {
    for (shape, counter) in [
        ("WordPiece", multilingual_wordpiece()),
        ("Unigram", multilingual_unigram()),
    ] {
        let ratio = letters_per_piece(RUSSIAN, &counter).unwrap();
        assert!(ratio >= 2.5, "{shape}: {ratio:.2} letters a piece");
        assert_eq!(
            keyword_weight_for(RUSSIAN, 0.6, &counter),
            0.6,
            "{shape}: a model that reads Russian is not silenced"
        );
        assert_eq!(keyword_weight_for(ENGLISH, 0.6, &counter), 0.6, "{shape}");
        // A word it has no pieces for still falls back to letters, and
        // then the rule does lean on keywords: it judges the words, not
        // the script.
        assert_eq!(
            keyword_weight_for("щюъэ жъщюэ", 0.6, &counter),
            UNREADABLE_KEYWORD_WEIGHT,
            "{shape}"
        );
    }
}
