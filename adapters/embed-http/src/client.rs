//! One `POST /embeddings` with its time limits, retries and checks on what
//! comes back.

use std::io::Read;
use std::thread::sleep;
use std::time::{Duration, Instant};

use minirag_core::cause::Cause;
use minirag_core::ports::EmbedError;
use serde::{Deserialize, Serialize};

use crate::options::{masked, HttpOptions};

/// Which side of retrieval a text is, for servers that read `input_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputType {
    /// The text is a query.
    Query,
    /// The text is a passage to index.
    Passage,
}

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    input: &'a [String],
    input_type: InputType,
    encoding_format: &'static str,
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Datum>,
}

#[derive(Deserialize)]
struct Datum {
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ErrorDetail {
    Object { message: String },
    Text(String),
}

/// The largest answer read: 1,024 texts of 4,096 floats as JSON fit.
const MAX_ANSWER: u64 = 128 << 20;
/// The longest `Retry-After` waited for; a server asking more is down for
/// longer than anyone waits on a query or a file, and is not retried.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);

pub(crate) struct Client {
    agent: ureq::Agent,
    options: HttpOptions,
}

/// What one attempt ended with.
enum Attempt {
    Done(Vec<Vec<f32>>),
    /// Worth another try after the pause (the server's Retry-After, if any).
    Retry(EmbedError, Option<Duration>),
    Fatal(EmbedError),
}

impl Client {
    pub(crate) fn new(options: HttpOptions) -> Self {
        // No pool: ureq 2 drops a pooled connection's time limits, so a
        // reused one could wait on a silent server for ever. No redirects:
        // the vectors come from the server the user named, or not at all.
        // Each request has one deadline (see `deadline`).
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(options.connect_timeout)
            .max_idle_connections(0)
            .redirects(0)
            .user_agent(concat!("minirag-mcp/", env!("CARGO_PKG_VERSION")))
            .build();
        Self { agent, options }
    }

    pub(crate) fn options(&self) -> &HttpOptions {
        &self.options
    }

    /// Embeds `texts` (already prefixed as the model wants), one vector per
    /// text in order, each checked: finite, non-zero, of one length.
    pub(crate) fn embed(
        &self,
        texts: &[String],
        kind: InputType,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut attempt = 0;
        loop {
            match self.attempt(texts, kind) {
                Attempt::Done(v) => return Ok(v),
                Attempt::Fatal(e) => return Err(e),
                Attempt::Retry(e, _) if attempt >= self.options.retries => return Err(e),
                Attempt::Retry(e, Some(after)) if after > MAX_RETRY_AFTER => return Err(e),
                Attempt::Retry(_, after) => {
                    let backoff = Duration::from_millis(250 << attempt.min(6));
                    sleep(after.unwrap_or(backoff));
                    attempt += 1;
                }
            }
        }
    }

    /// One request's whole time, headers trickled a byte at a time and the
    /// body included: the read limit or the overall one, whichever is
    /// shorter. ureq 2 keeps one deadline a request (its overall limit
    /// replaces the per-read one), and an embeddings server answers all at
    /// once when its batch is done, so waiting for the answer is the read.
    fn deadline(&self) -> Duration {
        self.options.read_timeout.min(self.options.total_timeout)
    }

    fn endpoint(&self) -> String {
        masked(&self.options.url)
    }

    fn attempt(&self, texts: &[String], kind: InputType) -> Attempt {
        let body = Request {
            model: &self.options.model,
            input: texts,
            input_type: kind,
            encoding_format: "float",
        };
        let body = match serde_json::to_string(&body) {
            Ok(b) => b,
            Err(e) => return Attempt::Fatal(failed("the request could not be written", e)),
        };
        let mut request = self
            .agent
            .post(&self.options.embeddings_url())
            .timeout(self.deadline())
            .set("Content-Type", "application/json");
        if let Some(key) = &self.options.api_key {
            request = request.set("Authorization", &format!("Bearer {}", key.expose()));
        }
        let started = Instant::now();
        match request.send_string(&body) {
            Ok(response) if (300..400).contains(&response.status()) => {
                let code = response.status();
                let location = response.header("Location").unwrap_or("nowhere").to_string();
                Attempt::Fatal(EmbedError::Failed {
                    reason: format!(
                        "the embedding server at {} answered HTTP {code}, a redirect to {:?}, \
                         which is not followed; set EMBED_URL to the address that answers",
                        self.endpoint(),
                        location.chars().take(200).collect::<String>()
                    ),
                    cause: None,
                })
            }
            Ok(response) => self.answer(response, texts.len()),
            Err(ureq::Error::Status(code, response)) => {
                let retry_after = response
                    .header("Retry-After")
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                let message = server_message(response);
                let reason = format!(
                    "the embedding server at {} answered HTTP {code}: {message}",
                    self.endpoint()
                );
                if code == 429 || code >= 500 {
                    Attempt::Retry(unavailable(reason, None), retry_after)
                } else {
                    Attempt::Fatal(EmbedError::Failed {
                        reason: format!("{reason} (check EMBED_MODEL and EMBED_API_KEY)"),
                        cause: None,
                    })
                }
            }
            Err(e) => {
                let reason = format!(
                    "the embedding server at {} did not answer ({}) after {} ms; \
                     connect limit {} s, read limit {} s, whole request {} s \
                     (EMBED_CONNECT_TIMEOUT, EMBED_READ_TIMEOUT, EMBED_TIMEOUT)",
                    self.endpoint(),
                    e.kind(),
                    started.elapsed().as_millis(),
                    self.options.connect_timeout.as_secs(),
                    self.options.read_timeout.as_secs(),
                    self.options.total_timeout.as_secs()
                );
                let error = unavailable(reason, Some(Cause::new(e)));
                // A server that went silent stays silent: another try would
                // only wait out the limit again. Refused or reset: try again.
                if timed_out(&error) {
                    Attempt::Fatal(error)
                } else {
                    Attempt::Retry(error, None)
                }
            }
        }
    }

    fn answer(&self, response: ureq::Response, expected: usize) -> Attempt {
        let bad = |what: String| {
            Attempt::Fatal(EmbedError::Failed {
                reason: format!("the embedding server at {} sent {what}", self.endpoint()),
                cause: None,
            })
        };
        let body = response.into_reader().take(MAX_ANSWER);
        let parsed: Response = match serde_json::from_reader(body) {
            Ok(r) => r,
            Err(e) if e.is_io() => {
                let error = unavailable(
                    format!(
                        "the answer of the embedding server at {} broke off ({e})",
                        self.endpoint()
                    ),
                    Some(Cause::new(e)),
                );
                // A body that stopped coming is a timeout: not retried.
                return if timed_out(&error) {
                    Attempt::Fatal(error)
                } else {
                    Attempt::Retry(error, None)
                };
            }
            Err(e) => return bad(format!("an answer that is not an embeddings list ({e})")),
        };
        let mut data = parsed.data;
        if data.len() != expected {
            return bad(format!("{} vectors for {expected} texts", data.len()));
        }
        if data.iter().all(|d| d.index.is_some()) {
            data.sort_by_key(|d| d.index);
        }
        let dim = data[0].embedding.len();
        let mut out = Vec::with_capacity(data.len());
        for (i, d) in data.into_iter().enumerate() {
            let mut v = d.embedding;
            if v.len() != dim || dim == 0 {
                return bad(format!(
                    "vectors of different lengths ({dim} and {}) in one answer",
                    v.len()
                ));
            }
            if v.iter().any(|x| !x.is_finite()) {
                return bad(format!("a vector with NaN or infinite values (text {i})"));
            }
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm < 1e-12 {
                return bad(format!("an all-zero vector (text {i})"));
            }
            v.iter_mut().for_each(|x| *x /= norm);
            out.push(v);
        }
        Attempt::Done(out)
    }
}

/// Whether the transport error underneath is a timeout.
fn timed_out(e: &EmbedError) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
            );
        }
        source = s.source();
    }
    false
}

/// The server's own words: OpenAI's `{"error": {"message": …}}`, TEI's and
/// Ollama's `{"error": "…"}`, else the body's start.
fn server_message(response: ureq::Response) -> String {
    let mut body = String::new();
    let _ = response.into_reader().take(4096).read_to_string(&mut body);
    match serde_json::from_str::<ErrorBody>(&body) {
        Ok(ErrorBody {
            error: ErrorDetail::Object { message } | ErrorDetail::Text(message),
        }) => message,
        Err(_) => body
            .chars()
            .take(300)
            .collect::<String>()
            .trim()
            .to_string(),
    }
}

pub(crate) fn unavailable(reason: String, cause: Option<Cause>) -> EmbedError {
    EmbedError::Unavailable { reason, cause }
}

fn failed(reason: &str, e: impl std::error::Error + Send + Sync + 'static) -> EmbedError {
    EmbedError::Failed {
        reason: format!("{reason}: {e}"),
        cause: Some(Cause::new(e)),
    }
}
