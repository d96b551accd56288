//! The real tokenizer's counts add up across whitespace, so the chunker may
//! sum them: on real documents (this repo's and the shared spec, in English
//! and Russian, with tables and code) the units are exactly those of
//! counting every candidate unit.

use std::path::{Path, PathBuf};

use minirag_core::chunk::{chunk_markdown, ChunkOptions};
use minirag_core::ports::TokenCounter;
use minirag_embed_candle::CandleEmbedder;

fn model_dir() -> PathBuf {
    std::env::var_os("MINIRAG_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models"))
        .join("all-MiniLM-L6-v2")
}

/// The same counts, without the claim that they add up.
struct EachUnit<'a>(&'a CandleEmbedder);

impl TokenCounter for EachUnit<'_> {
    fn count(&self, text: &str) -> usize {
        self.0.count(text)
    }
}

#[test]
fn summed_counts_give_the_units_of_counting_each_one() {
    let model = CandleEmbedder::load("m", &model_dir()).unwrap();
    assert!(model.additive(), "a BERT WordPiece tokenizer adds up");
    for (a, b) in [
        ("Hello, world", "über naïve café"),
        ("| a | b |", "Сроки хранения: 5 лет."),
        ("X-Forwarded-For", "os.path.join(\"a\")"),
        ("中文字符", "mixed中文text"),
    ] {
        for ws in [" ", "\n", "\n\n"] {
            assert_eq!(
                model.count(&format!("{a}{ws}{b}")),
                model.count(a) + model.count(b) - model.count(""),
                "{a:?} + {ws:?} + {b:?}"
            );
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let docs = [
        root.join("README.md"),
        root.join("ARCHITECTURE.md"),
        root.join("../shared/spec/python-minirag-behaviour.md"),
        root.join("adapters/convert/tests/fixtures/src/cp1251.txt"),
    ];
    for path in docs {
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for budget in [16, 64, 110, 128] {
            let options = |counter: &dyn TokenCounter| {
                chunk_markdown(
                    &text,
                    ChunkOptions {
                        budget,
                        title: Some("Doc"),
                        counter,
                    },
                )
            };
            let summed = options(&model);
            let each = options(&EachUnit(&model));
            assert_eq!(summed, each, "{} at budget {budget}", path.display());
        }
    }
}
