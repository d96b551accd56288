//! Embedding models used the way they were trained.
//!
//! Some families were trained with text in front of every input: the e5
//! family reads `query: …` and `passage: …`, the bge and arctic families
//! want an instruction before a query and nothing before a passage. Fed
//! bare text, their vectors are measurably worse, and nothing fails loudly.
//! [`KNOWN_MODELS`] is the one table of what we know about such models;
//! [`Prompts::resolve`] picks the prefixes in use: the user's override
//! first, then what the model folder itself declares, then the table.

/// How a model's token states become one vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The mean of the token vectors.
    Mean,
    /// The `[CLS]` token's vector.
    Cls,
}

/// What we know of one model family, matched by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    /// The family, for `doctor` and messages.
    pub family: &'static str,
    /// Lower-case pieces of a hub id or folder name that identify the family
    /// (any one matches).
    pub names: &'static [&'static str],
    /// How token vectors become one vector.
    pub pooling: Pooling,
    /// Vectors are L2-normalised after pooling.
    pub normalize: bool,
    /// The longest input in tokens the model was trained on.
    pub max_tokens: usize,
    /// Put before every query.
    pub query_prefix: &'static str,
    /// Put before every passage (chunk) that is embedded.
    pub passage_prefix: &'static str,
}

const BGE_QUERY: &str = "Represent this sentence for searching relevant passages: ";

/// Known families, most specific names first (the first match wins).
pub(crate) const KNOWN_MODELS: &[KnownModel] = &[
    KnownModel {
        family: "multilingual-e5",
        names: &["multilingual-e5"],
        pooling: Pooling::Mean,
        normalize: true,
        max_tokens: 512,
        query_prefix: "query: ",
        passage_prefix: "passage: ",
    },
    KnownModel {
        family: "e5",
        names: &[
            "/e5-",
            "e5-small",
            "e5-base",
            "e5-large",
            "user-base",
            "user-bge-m3",
        ],
        pooling: Pooling::Mean,
        normalize: true,
        max_tokens: 512,
        query_prefix: "query: ",
        passage_prefix: "passage: ",
    },
    KnownModel {
        family: "bge-m3",
        names: &["bge-m3"],
        pooling: Pooling::Cls,
        normalize: true,
        max_tokens: 8192,
        query_prefix: "",
        passage_prefix: "",
    },
    KnownModel {
        family: "bge",
        names: &["bge-small", "bge-base", "bge-large"],
        pooling: Pooling::Cls,
        normalize: true,
        max_tokens: 512,
        query_prefix: BGE_QUERY,
        passage_prefix: "",
    },
    KnownModel {
        family: "snowflake-arctic-embed",
        names: &["arctic-embed"],
        pooling: Pooling::Cls,
        normalize: true,
        max_tokens: 512,
        query_prefix: BGE_QUERY,
        passage_prefix: "",
    },
    KnownModel {
        family: "nomic-embed",
        names: &["nomic-embed"],
        pooling: Pooling::Mean,
        normalize: true,
        max_tokens: 8192,
        query_prefix: "search_query: ",
        passage_prefix: "search_document: ",
    },
    KnownModel {
        family: "gte",
        names: &["/gte-", "gte-small", "gte-base", "gte-large"],
        pooling: Pooling::Mean,
        normalize: true,
        max_tokens: 512,
        query_prefix: "",
        passage_prefix: "",
    },
    KnownModel {
        family: "rubert-tiny",
        names: &["rubert-tiny"],
        pooling: Pooling::Cls,
        normalize: true,
        max_tokens: 2048,
        query_prefix: "",
        passage_prefix: "",
    },
    KnownModel {
        family: "paraphrase-multilingual-minilm",
        names: &["paraphrase-multilingual-minilm"],
        pooling: Pooling::Mean,
        normalize: false,
        max_tokens: 128,
        query_prefix: "",
        passage_prefix: "",
    },
    KnownModel {
        family: "all-minilm",
        names: &["all-minilm"],
        pooling: Pooling::Mean,
        normalize: true,
        max_tokens: 256,
        query_prefix: "",
        passage_prefix: "",
    },
];

/// The family a model name belongs to, if we know it. `name` is a hub id
/// (`intfloat/multilingual-e5-small`) or a folder path, compared
/// case-insensitively.
pub(crate) fn known_model(name: &str) -> Option<&'static KnownModel> {
    let name = name.to_lowercase();
    KNOWN_MODELS
        .iter()
        .find(|m| m.names.iter().any(|n| name.contains(n)))
}

/// Where the prefixes in use came from, for `doctor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptSource {
    /// `MODEL_QUERY_PREFIX` / `MODEL_PASSAGE_PREFIX`.
    Configured,
    /// The model folder's own `config_sentence_transformers.json` prompts.
    ModelFiles,
    /// [`KNOWN_MODELS`].
    Table(&'static str),
    /// Nothing known: the text goes in bare.
    None,
}

/// The text put before queries and passages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompts {
    /// Put before a query.
    pub query: String,
    /// Put before a passage.
    pub passage: String,
    /// Where the two came from.
    pub source: PromptSource,
}

/// The arithmetic of an in-process encoder's dense layers (MODEL_PRECISION).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Precision {
    /// f32 throughout.
    #[default]
    Fp32,
    /// int8 weights and activations in the dense layers, f32 elsewhere.
    Int8,
}

impl Precision {
    /// `fp32` or `int8`, without case; `None` for anything else.
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "fp32" | "f32" => Some(Precision::Fp32),
            "int8" | "i8" => Some(Precision::Int8),
            _ => None,
        }
    }

    /// `fp32` or `int8`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Int8 => "int8",
        }
    }

    /// What the model id carries, so vectors of the two never mix: a
    /// change of precision re-embeds, as a change of model does. `a8`:
    /// eight-bit layer inputs (an index of the twelve-bit scheme, `+int8`,
    /// re-embeds).
    pub fn identity_suffix(self) -> &'static str {
        match self {
            Precision::Fp32 => "",
            Precision::Int8 => "+int8a8",
        }
    }
}

/// Prefixes from configuration (`None`: not set, so not an override).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptOverride {
    /// MODEL_QUERY_PREFIX, as written.
    pub query: Option<String>,
    /// MODEL_PASSAGE_PREFIX, as written.
    pub passage: Option<String>,
}

impl Prompts {
    /// No prefixes.
    pub fn bare() -> Self {
        Self {
            query: String::new(),
            passage: String::new(),
            source: PromptSource::None,
        }
    }

    /// The prefixes for model `name`: each side set by configuration wins;
    /// otherwise the model folder's declared prompts (`declared`: query,
    /// passage), otherwise the table, otherwise none.
    pub fn resolve(
        name: &str,
        declared: Option<(String, String)>,
        configured: &PromptOverride,
    ) -> Self {
        let (mut query, mut passage, mut source) = match (declared, known_model(name)) {
            (Some((q, p)), _) => (q, p, PromptSource::ModelFiles),
            (None, Some(m)) => (
                m.query_prefix.to_string(),
                m.passage_prefix.to_string(),
                PromptSource::Table(m.family),
            ),
            (None, None) => (String::new(), String::new(), PromptSource::None),
        };
        if let Some(q) = &configured.query {
            query.clone_from(q);
            source = PromptSource::Configured;
        }
        if let Some(p) = &configured.passage {
            passage.clone_from(p);
            source = PromptSource::Configured;
        }
        Self {
            query,
            passage,
            source,
        }
    }

    /// Whether any text is put in front of inputs.
    pub(crate) fn is_bare(&self) -> bool {
        self.query.is_empty() && self.passage.is_empty()
    }

    /// The part of a model's identity the prefixes make: vectors embedded
    /// with other prefixes are other vectors, so a changed prefix re-embeds
    /// exactly as a changed model does. Empty for bare text, so the ids of
    /// models without prefixes stay what they were.
    pub fn identity_suffix(&self) -> String {
        if self.is_bare() {
            return String::new();
        }
        format!(
            "+prompts:{:016x}",
            fnv1a(format!("{}\u{0}{}", self.query, self.passage).as_bytes())
        )
    }

    /// `text` as the model expects a query.
    pub fn query_text(&self, text: &str) -> String {
        format!("{}{text}", self.query)
    }

    /// `text` as the model expects a passage.
    pub fn passage_text(&self, text: &str) -> String {
        format!("{}{text}", self.passage)
    }

    /// For `doctor`: where the prefixes came from and what they are.
    pub fn describe(&self) -> String {
        let origin = match self.source {
            PromptSource::Configured => "MODEL_QUERY_PREFIX / MODEL_PASSAGE_PREFIX".to_string(),
            PromptSource::ModelFiles => "the model's config_sentence_transformers.json".to_string(),
            PromptSource::Table(family) => format!("the known-model table ({family})"),
            PromptSource::None => "none known for this model".to_string(),
        };
        format!(
            "query prefix {:?}, passage prefix {:?} (from {origin})",
            self.query, self.passage
        )
    }
}

/// A stable 64-bit hash (FNV-1a), so ids do not depend on std's hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(name: &str) -> Prompts {
        Prompts::resolve(name, None, &PromptOverride::default())
    }

    #[test]
    fn every_family_gets_its_own_prefixes() {
        let e5 = resolve("intfloat/multilingual-e5-small");
        assert_eq!(
            (e5.query.as_str(), e5.passage.as_str()),
            ("query: ", "passage: ")
        );
        assert_eq!(e5.source, PromptSource::Table("multilingual-e5"));
        let e5 = resolve("/models/intfloat/e5-base-v2");
        assert_eq!(
            (e5.query.as_str(), e5.passage.as_str()),
            ("query: ", "passage: ")
        );
        let bge = resolve("BAAI/bge-small-en-v1.5");
        assert_eq!(bge.query, BGE_QUERY);
        assert_eq!(bge.passage, "");
        let arctic = resolve("Snowflake/snowflake-arctic-embed-s");
        assert_eq!(arctic.query, BGE_QUERY);
        let nomic = resolve("nomic-ai/nomic-embed-text-v1.5");
        assert_eq!(nomic.passage, "search_document: ");
        for bare in [
            "BAAI/bge-m3",
            "thenlper/gte-small",
            "cointegrated/rubert-tiny2",
            "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
            "sentence-transformers/all-MiniLM-L6-v2",
            "/work/shared/models/all-MiniLM-L6-v2",
        ] {
            let p = resolve(bare);
            assert!(p.is_bare(), "{bare}: {p:?}");
            assert!(known_model(bare).is_some(), "{bare} is in the table");
        }
        assert_eq!(resolve("someone/unknown-model").source, PromptSource::None);
    }

    #[test]
    fn prefixes_go_in_front_of_queries_and_passages() {
        let e5 = resolve("intfloat/multilingual-e5-base");
        assert_eq!(e5.query_text("как настроить"), "query: как настроить");
        assert_eq!(e5.passage_text("Текст."), "passage: Текст.");
        let bge = resolve("BAAI/bge-base-en-v1.5");
        assert_eq!(bge.query_text("q"), format!("{BGE_QUERY}q"));
        assert_eq!(bge.passage_text("p"), "p");
    }

    #[test]
    fn configuration_wins_side_by_side_and_declared_prompts_beat_the_table() {
        let declared = Some(("Q: ".to_string(), "P: ".to_string()));
        let p = Prompts::resolve("intfloat/e5-small-v2", declared, &PromptOverride::default());
        assert_eq!(
            (p.query.as_str(), p.passage.as_str(), p.source),
            ("Q: ", "P: ", PromptSource::ModelFiles)
        );
        let only_query = PromptOverride {
            query: Some("find: ".into()),
            passage: None,
        };
        let p = Prompts::resolve("intfloat/e5-small-v2", None, &only_query);
        assert_eq!(
            (p.query.as_str(), p.passage.as_str()),
            ("find: ", "passage: ")
        );
        assert_eq!(p.source, PromptSource::Configured);
        let cleared = PromptOverride {
            query: Some(String::new()),
            passage: Some(String::new()),
        };
        assert!(Prompts::resolve("intfloat/e5-small-v2", None, &cleared).is_bare());
    }

    #[test]
    fn a_prefix_is_part_of_the_identity() {
        assert_eq!(
            resolve("sentence-transformers/all-MiniLM-L6-v2").identity_suffix(),
            ""
        );
        let a = resolve("intfloat/e5-small-v2").identity_suffix();
        let b = Prompts::resolve(
            "intfloat/e5-small-v2",
            None,
            &PromptOverride {
                query: Some("query:  ".into()),
                passage: None,
            },
        )
        .identity_suffix();
        assert!(a.starts_with("+prompts:") && b.starts_with("+prompts:"));
        assert_ne!(a, b, "a changed prefix is another model");
        assert_eq!(
            a,
            resolve("intfloat/e5-small-v2").identity_suffix(),
            "stable"
        );
    }
}
