//! The typed settings every use case reads, and the rules on their values:
//! defaults and bounds. Reading them from the environment and flags is the
//! binary's job; an adapter that needs a rule of its own (a database
//! schema's name) keeps it.

pub use crate::chunk::{DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET};
pub use crate::default_model::DEFAULT_MODEL;
/// Files larger than this many bytes are skipped (`MAX_FILE_SIZE`).
pub const DEFAULT_MAX_FILE_SIZE: u64 = 104_857_600;
/// PDF pages with fewer text characters are OCRed (`RAG_OCR_MIN_CHARS_PER_PAGE`).
pub const DEFAULT_OCR_MIN_CHARS_PER_PAGE: u32 = 25;
/// Tesseract languages when `RAG_OCR_LANG` is unset.
pub const DEFAULT_OCR_LANG: &str = "rus+eng";
/// The keyword share of hybrid fusion when `RAG_HYBRID_WEIGHT` is unset.
pub const DEFAULT_HYBRID_WEIGHT: f64 = 0.6;
/// The largest body `ingest_url` accepts when `URL_MAX_BYTES` is unset.
pub const DEFAULT_URL_MAX_BYTES: u64 = 20 << 20;
/// huggingface_hub's own default for HF_HUB_DOWNLOAD_TIMEOUT.
pub const DEFAULT_DOWNLOAD_TIMEOUT_SECS: u64 = 10;

/// `HF_HUB_DOWNLOAD_TIMEOUT`'s bounds in seconds.
pub const DOWNLOAD_TIMEOUT_SECS: std::ops::RangeInclusive<u64> = 1..=3600;

/// The settings, every value already checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Document roots, absolute, in configured order.
    pub roots: Vec<String>,
    /// The embedded index's folder (DB_PATH), absolute.
    pub db_path: String,
    /// Where downloaded models are kept (CACHE_DIR), absolute.
    pub cache_dir: String,
    /// The embedding model: a Hugging Face id or a local folder (MODEL_NAME).
    pub model_name: String,
    /// Whether MODEL_NAME or `--model-name` named the model; when neither
    /// did, an index of the previous default keeps it (see
    /// [`crate::default_model`]).
    pub model_name_set: bool,
    /// A local model directory (MODEL_PATH); no network is used when set.
    pub model_path: Option<String>,
    /// MODEL_QUERY_PREFIX / MODEL_PASSAGE_PREFIX: override the prefixes the
    /// model declares or the known-model table gives (set but empty: none).
    pub prompts: crate::models::PromptOverride,
    /// MODEL_PRECISION: the in-process encoder's dense layers in fp32 or int8.
    pub precision: crate::models::Precision,
    /// Larger files are skipped (MAX_FILE_SIZE, bytes).
    pub max_file_size: u64,
    /// Largest body `ingest_url` accepts (URL_MAX_BYTES).
    pub url_max_bytes: u64,
    /// Tokens a chunk may hold (CHUNK_TOKEN_BUDGET).
    pub chunk_token_budget: usize,
    /// The keyword share of hybrid fusion (RAG_HYBRID_WEIGHT), 0 to 1.
    pub hybrid_weight: f64,
    /// How results group by default (RAG_GROUPING); `None`: ranked chunks.
    pub grouping: Option<crate::search::Grouping>,
    /// Vector hits farther than this are dropped (RAG_MAX_DISTANCE).
    pub max_distance: Option<f64>,
    /// Sync refuses roots with more files than this (RAG_MAX_FILES).
    pub max_files: Option<usize>,
    /// `ingest_url` may fetch private and loopback hosts (ALLOW_PRIVATE_URLS).
    pub allow_private_urls: bool,
    /// RAG_WATCH: the MCP server keeps the index current as files change.
    pub watch: bool,
    /// RAG_OCR_MIN_CHARS_PER_PAGE: thinner PDF pages are OCRed; 0 never.
    pub ocr_min_chars_per_page: u32,
    /// RAG_OCR_LANG: Tesseract languages, `+`-joined. Whether they are
    /// installed is the OCR adapter's to check.
    pub ocr_lang: String,
    /// RAG_INSTRUCTIONS_APPEND, trimmed; `None` when unset or blank.
    pub instructions_append: Option<String>,
    /// DB_URL / DB_SCHEMA: a shared index on PostgreSQL instead of the
    /// embedded one under `db_path`.
    pub database: Option<Database>,
    /// HF_HUB_OFFLINE: never dial the model hub; a model not in the cache is
    /// a named error.
    pub hub_offline: bool,
    /// HF_HUB_DOWNLOAD_TIMEOUT: seconds a model download may wait to connect
    /// or for its next bytes before it gives up.
    pub download_timeout_secs: u64,
}

impl Config {
    /// Every setting at its default, for the given folders: what a run with
    /// no variables and no flags gets.
    pub fn defaults(roots: Vec<String>, db_path: String, cache_dir: String) -> Self {
        Self {
            roots,
            db_path,
            cache_dir,
            model_name: DEFAULT_MODEL.to_string(),
            model_name_set: false,
            model_path: None,
            prompts: crate::models::PromptOverride::default(),
            precision: crate::models::Precision::default(),
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            url_max_bytes: DEFAULT_URL_MAX_BYTES,
            chunk_token_budget: DEFAULT_BUDGET,
            hybrid_weight: DEFAULT_HYBRID_WEIGHT,
            grouping: None,
            max_distance: None,
            max_files: None,
            allow_private_urls: false,
            watch: false,
            ocr_min_chars_per_page: DEFAULT_OCR_MIN_CHARS_PER_PAGE,
            ocr_lang: DEFAULT_OCR_LANG.to_string(),
            instructions_append: None,
            database: None,
            hub_offline: false,
            download_timeout_secs: DEFAULT_DOWNLOAD_TIMEOUT_SECS,
        }
    }
}

/// A shared index on a database server (`DB_URL`, `DB_SCHEMA`).
#[derive(Debug, Clone, PartialEq)]
pub struct Database {
    /// The URL as given: it may hold a password, which the index adapter
    /// masks wherever it shows the URL.
    pub url: String,
    /// The schema of this index (several indexes share one database); the
    /// adapter checks that it is safe to splice into SQL.
    pub schema: String,
}
