//! `EMBED_*`: an OpenAI-compatible embedding server instead of the
//! in-process encoder. Set `EMBED_URL` and chunk text and queries go to that
//! server; unset, nothing leaves the machine.

use std::collections::BTreeMap;
use std::time::Duration;

use minirag_core::config::Config;

use crate::config_env::ConfigError;
use minirag_embed_http::{options as o, parse_endpoint, ApiKey, HttpOptions};

/// Every variable this module reads, for the man page and `setup`.
pub(crate) const VARIABLES: &[&str] = &[
    "EMBED_URL",
    "EMBED_MODEL",
    "EMBED_API_KEY",
    "EMBED_API_KEY_FILE",
    "EMBED_BATCH_SIZE",
    "EMBED_CONCURRENCY",
    "EMBED_CONNECT_TIMEOUT",
    "EMBED_READ_TIMEOUT",
    "EMBED_TIMEOUT",
    "EMBED_RETRIES",
    "EMBED_SERVER_PREFIXES",
    "EMBED_ALLOW_INSECURE",
    "EMBED_TOKENIZER",
];

fn err(variable: &str, value: &str, expected: &str) -> ConfigError {
    ConfigError {
        variable: variable.into(),
        value: value.into(),
        expected: expected.into(),
    }
}

fn number(
    env: &BTreeMap<String, String>,
    name: &str,
    range: std::ops::RangeInclusive<u64>,
    default: u64,
    unit: &str,
) -> Result<u64, ConfigError> {
    match env.get(name) {
        None => Ok(default),
        Some(raw) => match raw.trim().parse::<u64>() {
            Ok(n) if range.contains(&n) => Ok(n),
            _ => Err(err(
                name,
                raw,
                &format!(
                    "a whole number of {unit} from {} to {} (default {default})",
                    range.start(),
                    range.end()
                ),
            )),
        },
    }
}

fn switch(env: &BTreeMap<String, String>, name: &str) -> Result<bool, ConfigError> {
    crate::config_env::switch(env.get(name).map(String::as_str), name)
}

/// The remote embedder's options when `EMBED_URL` is set; `None` otherwise.
/// The key file is read here: a key that cannot be read is a configuration
/// error, not a silent unauthenticated request.
pub(crate) fn options(
    env: &BTreeMap<String, String>,
    config: &Config,
) -> Result<Option<HttpOptions>, ConfigError> {
    let Some(raw_url) = env.get("EMBED_URL").filter(|u| !u.trim().is_empty()) else {
        return Ok(None);
    };
    let insecure = switch(env, "EMBED_ALLOW_INSECURE")?;
    let url = parse_endpoint(raw_url, insecure).map_err(|e| ConfigError {
        variable: "EMBED_URL".into(),
        value: minirag_embed_http::options::shown(raw_url),
        expected: e.expected().into(),
    })?;
    let model = match env.get("EMBED_MODEL").map(|m| m.trim()) {
        Some(m) if !m.is_empty() => m.to_string(),
        other => {
            return Err(err(
                "EMBED_MODEL",
                other.unwrap_or(""),
                "the model name the server serves, e.g. nomic-embed-text for Ollama \
                 (EMBED_URL is set)",
            ))
        }
    };
    let api_key = match (env.get("EMBED_API_KEY"), env.get("EMBED_API_KEY_FILE")) {
        (Some(k), _) if !k.trim().is_empty() => Some(ApiKey::new(k.trim())),
        (_, Some(path)) if !path.trim().is_empty() => {
            let key = std::fs::read_to_string(path.trim()).map_err(|e| {
                err(
                    "EMBED_API_KEY_FILE",
                    path,
                    &format!("a readable file holding the key ({e})"),
                )
            })?;
            Some(ApiKey::new(key.trim()))
        }
        _ => None,
    };
    let secs = |name, default: Duration| {
        number(env, name, 1..=3600, default.as_secs(), "seconds").map(Duration::from_secs)
    };
    let mut options = HttpOptions::new(url, model);
    options.api_key = api_key;
    options.batch = number(
        env,
        "EMBED_BATCH_SIZE",
        1..=2048,
        o::DEFAULT_BATCH as u64,
        "texts",
    )? as usize;
    options.concurrency = number(
        env,
        "EMBED_CONCURRENCY",
        1..=64,
        o::DEFAULT_CONCURRENCY as u64,
        "requests",
    )? as usize;
    options.connect_timeout = secs("EMBED_CONNECT_TIMEOUT", o::DEFAULT_CONNECT)?;
    options.read_timeout = secs("EMBED_READ_TIMEOUT", o::DEFAULT_READ)?;
    options.total_timeout = secs("EMBED_TIMEOUT", o::DEFAULT_TOTAL)?;
    options.retries = number(
        env,
        "EMBED_RETRIES",
        0..=10,
        o::DEFAULT_RETRIES.into(),
        "retries",
    )? as u32;
    options.server_prefixes = switch(env, "EMBED_SERVER_PREFIXES")?;
    options.prompts = config.prompts.clone();
    options.tokenizer = env
        .get("EMBED_TOKENIZER")
        .filter(|t| !t.trim().is_empty())
        .map(|t| t.trim().into());
    Ok(Some(options))
}
