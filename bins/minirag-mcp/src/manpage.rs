//! `minirag-mcp man [COMMAND]`: the man page of the tool or of one command,
//! from the clap definitions, with the environment that configures them.

use anyhow::{anyhow, Result};

/// Every variable the product reads, with what it does; README's
/// Configuration table has the accepted values.
const ENVIRONMENT: &[(&str, &str)] = &[
    ("BASE_DIRS", "JSON array of document roots; wins over BASE_DIR."),
    ("BASE_DIR", "One document root (default: the working directory)."),
    ("DB_PATH", "The index folder (default: <first root>/.minirag/index)."),
    ("DB_URL, DB_SCHEMA", "Keep the index on PostgreSQL with pgvector instead, in this schema."),
    ("MODEL_NAME", "Hugging Face model id or local model folder of the in-process encoder."),
    ("MODEL_PATH", "A local model folder; no network is used."),
    ("MODEL_QUERY_PREFIX, MODEL_PASSAGE_PREFIX", "Text put before every query / passage; a change re-embeds."),
    ("MODEL_PRECISION", "fp32 (default) or int8: the encoder's dense layers; a change re-embeds."),
    ("CACHE_DIR", "Where downloaded models are kept."),
    ("HF_HUB_OFFLINE", "Never dial the model hub; a model not in the cache is a named error."),
    ("HF_HUB_DOWNLOAD_TIMEOUT", "Seconds a model download waits to connect or for its next bytes (default 10)."),
    ("HF_ENDPOINT, HF_TOKEN", "The hub (or a mirror) and its token."),
    ("EMBED_URL, EMBED_MODEL", "An OpenAI-compatible embedding server and its model; chunk text and queries are sent there."),
    ("EMBED_API_KEY, EMBED_API_KEY_FILE", "The server's key, sent as a bearer token, never printed."),
    ("EMBED_BATCH_SIZE, EMBED_CONCURRENCY", "Texts per request (32) and requests at a time (2)."),
    ("EMBED_CONNECT_TIMEOUT, EMBED_READ_TIMEOUT, EMBED_TIMEOUT, EMBED_RETRIES", "Seconds to connect (5), to wait for the next bytes (60), for a whole request (120); retries (3)."),
    ("EMBED_SERVER_PREFIXES", "The server applies the model's prefixes itself: send bare text."),
    ("EMBED_ALLOW_INSECURE", "Allow plain http to another machine."),
    ("EMBED_TOKENIZER", "The server model's tokenizer.json, for exact chunk sizes."),
    ("MAX_FILE_SIZE", "Larger files are skipped (default 104857600 bytes)."),
    ("CHUNK_TOKEN_BUDGET", "Tokens per chunk, 16-128 (default 110)."),
    ("RAG_HYBRID_WEIGHT", "0 (vector only) to 1 (keyword only); default 0.6."),
    ("RAG_GROUPING, RAG_MAX_DISTANCE, RAG_MAX_FILES", "Result grouping, a distance cut, a cap on files per sync."),
    ("ALLOW_PRIVATE_URLS, URL_MAX_BYTES", "ingest_url may fetch private addresses; its largest page."),
    ("RAG_OCR_MIN_CHARS_PER_PAGE, RAG_OCR_LANG", "Thinner PDF pages are OCRed; Tesseract's languages (rus+eng)."),
    ("RAG_WATCH", "The MCP server keeps the index current as files change."),
    ("RAG_INSTRUCTIONS_APPEND", "Text appended to the server instructions."),
    ("MINIRAG_TOKEN", "The bearer token of serve --http."),
    ("PGPASSFILE, PGSSLROOTCERT", "As libpq reads them."),
];

/// The page in roff of `root` (the CLI's clap command), or of one of its commands.
pub(crate) fn render(root: clap::Command, command: Option<&str>) -> Result<String> {
    let page = match command {
        None => root,
        Some(name) => {
            let names: Vec<String> = root
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            root.find_subcommand(name)
                .cloned()
                .ok_or_else(|| {
                    anyhow!(
                        "there is no command '{name}'; man takes one of: {}",
                        names.join(", ")
                    )
                })?
                // clap keeps command names as static strings; one page per process.
                .name(&*Box::leak(format!("minirag-mcp-{name}").into_boxed_str()))
                .bin_name(format!("minirag-mcp {name}"))
        }
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page).render(&mut out)?;
    let mut text = String::from_utf8_lossy(&out).into_owned();
    text.push_str(".SH ENVIRONMENT\n");
    for (name, what) in ENVIRONMENT {
        text.push_str(&format!(".TP\n\\fB{name}\\fR\n{what}\n"));
    }
    Ok(text)
}
