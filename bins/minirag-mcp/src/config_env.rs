//! Configuration as a pure function: environment map + CLI flags →
//! core's [`Config`] or a [`ConfigError`] naming the variable, the bad
//! value and what is accepted. Paths are made absolute and normalised
//! lexically here; resolving symlinks is I/O and happens after.

use std::collections::BTreeMap;

use minirag_core::config::*;
use minirag_core::models::{Precision, PromptOverride};
use minirag_core::search::Grouping;

/// What the environment cannot tell: supplied by the binary.
#[derive(Debug, Clone)]
pub(crate) struct ConfigContext {
    /// Absolute working directory: the default root and the base of relative paths.
    pub cwd: String,
    /// Home directory for `~` expansion.
    pub home: Option<String>,
    /// The platform's user cache directory for minirag-mcp.
    pub default_cache_dir: String,
}

/// CLI flags; each one that is set wins over its variable.
#[derive(Debug, Clone, Default)]
pub(crate) struct CliOverrides {
    /// `--base-dir`, repeatable; non-empty replaces BASE_DIRS / BASE_DIR.
    pub base_dirs: Vec<String>,
    pub db_path: Option<String>,
    pub cache_dir: Option<String>,
    pub model_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfigError {
    pub variable: String,
    pub value: String,
    /// What is accepted, phrased to complete "expected …".
    pub expected: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}='{}' is invalid: expected {}",
            self.variable, self.value, self.expected
        )
    }
}

impl std::error::Error for ConfigError {}

fn err(variable: &str, value: &str, expected: &str) -> ConfigError {
    ConfigError {
        variable: variable.into(),
        value: value.into(),
        expected: expected.into(),
    }
}

/// Reads the settings from the environment `env` and the flags.
pub(crate) fn load(
    env: &BTreeMap<String, String>,
    flags: &CliOverrides,
    ctx: &ConfigContext,
) -> Result<Config, ConfigError> {
    let get = |k: &str| env.get(k).map(String::as_str);
    let path = |p: &str| absolute(p, ctx);

    let roots: Vec<String> = if !flags.base_dirs.is_empty() {
        if let Some(bad) = flags.base_dirs.iter().find(|d| d.trim().is_empty()) {
            return Err(err("--base-dir", bad, "a non-empty folder path"));
        }
        flags.base_dirs.iter().map(|d| path(d.trim())).collect()
    } else if let Some(raw) = get("BASE_DIRS") {
        const EXPECTED: &str = "a JSON array of one or more non-empty folder paths, e.g. [\"/home/me/docs\", \"/srv/wiki\"]";
        let dirs: Vec<String> =
            serde_json::from_str(raw).map_err(|_| err("BASE_DIRS", raw, EXPECTED))?;
        if dirs.is_empty() || dirs.iter().any(|d| d.trim().is_empty()) {
            return Err(err("BASE_DIRS", raw, EXPECTED));
        }
        dirs.iter().map(|d| path(d.trim())).collect()
    } else if let Some(dir) = get("BASE_DIR").map(str::trim).filter(|d| !d.is_empty()) {
        vec![path(dir)]
    } else {
        vec![normalize(&ctx.cwd)]
    };

    let db_path = match flags.db_path.as_deref().or(get("DB_PATH")) {
        Some(p) if p.trim().is_empty() => {
            return Err(err("DB_PATH", p, "a folder path for the index"))
        }
        Some(p) => path(p.trim()),
        None => format!("{}/.minirag/index", roots[0].trim_end_matches('/')),
    };
    let cache_dir = match flags.cache_dir.as_deref().or(get("CACHE_DIR")) {
        Some(p) if p.trim().is_empty() => {
            return Err(err("CACHE_DIR", p, "a folder path for downloaded models"))
        }
        Some(p) => path(p.trim()),
        None => normalize(&ctx.default_cache_dir),
    };
    let model_name_set = flags.model_name.is_some() || get("MODEL_NAME").is_some();
    let model_name = match flags.model_name.as_deref().or(get("MODEL_NAME")) {
            Some(m) if m.trim().is_empty() => {
                return Err(err("MODEL_NAME", m, "a Hugging Face model id such as sentence-transformers/all-MiniLM-L6-v2, or a local model folder"))
            }
            Some(m) => m.trim().to_string(),
            None => DEFAULT_MODEL.to_string(),
        };
    let model_path = match get("MODEL_PATH") {
        Some(p) if p.trim().is_empty() => None,
        Some(p) => Some(path(p.trim())),
        None => None,
    };
    // Taken as written (a trailing space is usually part of a prefix).
    let prompts = PromptOverride {
        query: get("MODEL_QUERY_PREFIX").map(str::to_string),
        passage: get("MODEL_PASSAGE_PREFIX").map(str::to_string),
    };
    let precision = match get("MODEL_PRECISION") {
        Some(raw) => Precision::parse(raw).ok_or_else(|| {
            err(
                "MODEL_PRECISION",
                raw,
                "fp32 (the default) or int8 (faster embedding, vectors at cosine ≥ 0.993 to fp32, docs/benchmarks.md)",
            )
        })?,
        None => Precision::default(),
    };

    let max_file_size = match get("MAX_FILE_SIZE") {
        Some(raw) => match raw.trim().parse::<u64>() {
            Ok(n) if n >= 1 => n,
            _ => {
                return Err(err(
                    "MAX_FILE_SIZE",
                    raw,
                    "a whole number of bytes, at least 1 (default 104857600)",
                ))
            }
        },
        None => DEFAULT_MAX_FILE_SIZE,
    };
    let url_max_bytes = match get("URL_MAX_BYTES") {
        Some(raw) => match raw.trim().parse::<u64>() {
            Ok(n) if n >= 1 => n,
            _ => {
                return Err(err(
                    "URL_MAX_BYTES",
                    raw,
                    "a whole number of bytes, at least 1 (default 20971520)",
                ))
            }
        },
        None => DEFAULT_URL_MAX_BYTES,
    };
    let chunk_token_budget = match get("CHUNK_TOKEN_BUDGET") {
            Some(raw) => match raw.trim().parse::<usize>() {
                Ok(n) if (MIN_BUDGET..=MAX_BUDGET).contains(&n) => n,
                _ => {
                    return Err(err(
                        "CHUNK_TOKEN_BUDGET",
                        raw,
                        &format!("a whole number of tokens from {MIN_BUDGET} to {MAX_BUDGET} (default {DEFAULT_BUDGET})"),
                    ))
                }
            },
            None => DEFAULT_BUDGET,
        };
    let hybrid_weight = match get("RAG_HYBRID_WEIGHT") {
        Some(raw) => match raw.trim().parse::<f64>() {
            Ok(w) if (0.0..=1.0).contains(&w) => w,
            _ => {
                return Err(err(
                    "RAG_HYBRID_WEIGHT",
                    raw,
                    "a number from 0 (vector only) to 1 (keyword only); default 0.6",
                ))
            }
        },
        None => DEFAULT_HYBRID_WEIGHT,
    };
    let grouping = match get("RAG_GROUPING") {
        Some("similar") => Some(Grouping::Similar),
        Some("related") => Some(Grouping::Related),
        Some(raw) => {
            return Err(err(
                "RAG_GROUPING",
                raw,
                "'similar' or 'related', or leave it unset",
            ))
        }
        None => None,
    };
    let max_distance = match get("RAG_MAX_DISTANCE") {
        Some(raw) => match raw.trim().parse::<f64>() {
            Ok(d) if d >= 0.0 && d.is_finite() => Some(d),
            _ => {
                return Err(err(
                    "RAG_MAX_DISTANCE",
                    raw,
                    "a number ≥ 0 (squared L2 distance on unit vectors, 0–4)",
                ))
            }
        },
        None => None,
    };
    let max_files = match get("RAG_MAX_FILES") {
        Some(raw) => match raw.trim().parse::<usize>() {
            Ok(n) if n >= 1 => Some(n),
            _ => {
                return Err(err(
                    "RAG_MAX_FILES",
                    raw,
                    "a whole number of files, at least 1",
                ))
            }
        },
        None => None,
    };
    let allow_private_urls = switch(get("ALLOW_PRIVATE_URLS"), "ALLOW_PRIVATE_URLS")?;
    let watch = switch(get("RAG_WATCH"), "RAG_WATCH")?;
    let ocr_min_chars_per_page = match get("RAG_OCR_MIN_CHARS_PER_PAGE") {
        Some(raw) => raw.trim().parse::<u32>().map_err(|_| {
            err(
                "RAG_OCR_MIN_CHARS_PER_PAGE",
                raw,
                "a whole number of characters ≥ 0 (0 turns PDF OCR routing off)",
            )
        })?,
        None => DEFAULT_OCR_MIN_CHARS_PER_PAGE,
    };
    let ocr_lang = match get("RAG_OCR_LANG").map(str::trim) {
        None | Some("") => DEFAULT_OCR_LANG.to_string(),
        Some(l)
            if l.split('+').all(|p| {
                !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            }) =>
        {
            l.to_string()
        }
        Some(l) => {
            return Err(err(
                "RAG_OCR_LANG",
                l,
                "Tesseract language codes joined by '+', e.g. rus+eng",
            ))
        }
    };
    let instructions_append = get("RAG_INSTRUCTIONS_APPEND")
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string);

    let database = database::database(get("DB_URL"), get("DB_SCHEMA"))?;
    let hub_offline = switch(get("HF_HUB_OFFLINE"), "HF_HUB_OFFLINE")?;
    let download_timeout_secs = match get("HF_HUB_DOWNLOAD_TIMEOUT") {
        Some(raw) => match raw.trim().parse::<u64>() {
            Ok(n) if DOWNLOAD_TIMEOUT_SECS.contains(&n) => n,
            _ => {
                return Err(err(
                    "HF_HUB_DOWNLOAD_TIMEOUT",
                    raw,
                    "a whole number of seconds from 1 to 3600 (default 10)",
                ))
            }
        },
        None => DEFAULT_DOWNLOAD_TIMEOUT_SECS,
    };

    Ok(Config {
        roots,
        db_path,
        cache_dir,
        model_name,
        model_name_set,
        model_path,
        prompts,
        precision,
        max_file_size,
        url_max_bytes,
        chunk_token_budget,
        hybrid_weight,
        grouping,
        max_distance,
        max_files,
        allow_private_urls,
        watch,
        ocr_min_chars_per_page,
        ocr_lang,
        instructions_append,
        database,
        hub_offline,
        download_timeout_secs,
    })
}

/// An on/off variable; unset is off. Shared with the binary's own
/// variables (`EMBED_*`), so every switch reads the same words.
pub(crate) fn switch(raw: Option<&str>, name: &str) -> Result<bool, ConfigError> {
    match raw {
        None => Ok(false),
        Some(raw) => match raw.trim().to_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" | "" => Ok(false),
            _ => Err(err(name, raw, "one of 1, true, yes, on, 0, false, no, off")),
        },
    }
}

/// `~` expansion, then relative → absolute against the working directory,
/// then lexical normalisation.
fn absolute(p: &str, ctx: &ConfigContext) -> String {
    let expanded = match (p.strip_prefix('~'), &ctx.home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{home}{rest}")
        }
        _ => p.to_string(),
    };
    if expanded.starts_with('/') {
        normalize(&expanded)
    } else {
        normalize(&format!("{}/{expanded}", ctx.cwd))
    }
}

/// Removes `.` and empty segments and applies `..` lexically.
fn normalize(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

mod database;

#[cfg(test)]
mod tests;
