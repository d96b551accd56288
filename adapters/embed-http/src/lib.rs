//! The `Embedder` and `TokenCounter` ports over an OpenAI-compatible
//! `POST /embeddings` server: Ollama, Hugging Face TEI, vLLM, LM Studio,
//! llama.cpp's server, LocalAI, Infinity, or a team's GPU box.
//!
//! - [`options`]: the endpoint, model, key and limits, and the rule on where
//!   text may be sent.
//! - [`client`]: one request with its time limits, retries and checks.
//! - [`HttpEmbedder`]: batches in parallel, the model's prefixes, and the
//!   model's identity from a probe.
//!
//! The identity is the served model's name, its dimension and a fingerprint
//! of the vector of a fixed probe text: another model behind the same name
//! is another identity (its vectors are re-embedded), a restarted server
//! with the same model is the same.

#![forbid(unsafe_code)]

pub mod client;
pub mod options;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use minirag_core::models::Prompts;
use minirag_core::ports::{EmbedError, Embedder, EmbedderState, Embeddings, TokenCounter};
use minirag_core::tokens::estimate;
use minirag_tokenizer_hf::TokenizerCounter;

use client::{Client, InputType};
pub use options::{masked, parse_endpoint, ApiKey, EndpointError, HttpOptions};

/// Embedded once per process to learn the dimension and tell models apart.
pub const PROBE: &str = "minirag identity probe: the quick brown fox jumps over the lazy dog";

/// After the server could not be reached, calls fail at once for this long
/// instead of each waiting out its own time limits.
const RETRY_AFTER: Duration = Duration::from_secs(30);

/// The model behind the endpoint, learnt from the probe.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    id: String,
    dim: usize,
}

enum State {
    NotProbed,
    Probing,
    Ready,
    Failed { reason: String, at: Instant },
}

/// An [`Embedder`] that asks an OpenAI-compatible embeddings server (Ollama, TEI, vLLM, a cloud API).
pub struct HttpEmbedder {
    client: Client,
    prompts: Prompts,
    identity: OnceLock<Identity>,
    state: Mutex<State>,
    /// One probe at a time; the others wait for its outcome.
    probing: Mutex<()>,
    tokenizer: Option<TokenizerCounter>,
    /// Why EMBED_TOKENIZER could not be read, for `doctor`.
    tokenizer_error: Option<String>,
    /// Milliseconds the probe took, for `doctor`.
    probe_ms: AtomicUsize,
}

impl HttpEmbedder {
    /// An embedder for `options`; nothing is sent until first use.
    pub fn new(options: HttpOptions) -> Self {
        let prompts = if options.server_prefixes {
            Prompts::bare()
        } else {
            Prompts::resolve(&options.model, None, &options.prompts)
        };
        let (tokenizer, tokenizer_error) = match &options.tokenizer {
            None => (None, None),
            // Counts of whole texts: the counter cuts and pads nothing.
            Some(path) => match minirag_tokenizer_hf::from_file(path) {
                Ok(t) => (Some(TokenizerCounter::new(t)), None),
                Err(e) => (
                    None,
                    Some(format!(
                        "EMBED_TOKENIZER {} could not be read ({e}); chunk sizes use the estimate",
                        path.display()
                    )),
                ),
            },
        };
        Self {
            client: Client::new(options),
            prompts,
            identity: OnceLock::new(),
            state: Mutex::new(State::NotProbed),
            probing: Mutex::new(()),
            tokenizer,
            tokenizer_error,
            probe_ms: AtomicUsize::new(0),
        }
    }

    /// What it was configured with.
    pub fn options(&self) -> &HttpOptions {
        self.client.options()
    }

    /// The endpoint as people may see it (no path, no credentials).
    pub fn endpoint(&self) -> String {
        masked(&self.options().url)
    }

    /// The prefixes this side puts in front, and where they came from.
    pub fn prompts(&self) -> &Prompts {
        &self.prompts
    }

    /// For `doctor`: who puts the prefixes in front, and what they are.
    pub fn prefix_policy(&self) -> String {
        if self.options().server_prefixes {
            "the server applies the model's prefixes itself (EMBED_SERVER_PREFIXES); \
             texts are sent bare with input_type"
                .into()
        } else {
            format!("sent with input_type and {}", self.prompts.describe())
        }
    }

    /// For `doctor`: how chunk sizes are counted.
    pub fn token_counting(&self) -> String {
        match (
            &self.tokenizer,
            &self.tokenizer_error,
            &self.options().tokenizer,
        ) {
            (Some(_), _, Some(path)) => format!("EMBED_TOKENIZER {}", path.display()),
            (_, Some(e), _) => e.clone(),
            _ => "a character estimate (set EMBED_TOKENIZER to the model's tokenizer.json \
                  for exact chunk sizes)"
                .into(),
        }
    }

    /// How long the identity probe took, once it ran.
    pub fn probe_latency(&self) -> Option<Duration> {
        let ms = self.probe_ms.load(Ordering::Relaxed);
        (self.identity.get().is_some()).then(|| Duration::from_millis(ms as u64))
    }

    fn lock_state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The identity, probing the server if nothing is known yet or the last
    /// failure is old enough to try again.
    fn identity(&self) -> Result<&Identity, EmbedError> {
        if let Some(id) = self.identity.get() {
            return Ok(id);
        }
        let recent_failure = |state: &State| match state {
            State::Failed { reason, at } if at.elapsed() < RETRY_AFTER => {
                Some(client::unavailable(reason.clone(), None))
            }
            _ => None,
        };
        if let Some(e) = recent_failure(&self.lock_state()) {
            return Err(e);
        }
        let _one = self.probing.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(id) = self.identity.get() {
            return Ok(id);
        }
        if let Some(e) = recent_failure(&self.lock_state()) {
            return Err(e);
        }
        *self.lock_state() = State::Probing;
        let started = Instant::now();
        let probe = self
            .client
            .embed(&[self.prompts.passage_text(PROBE)], InputType::Passage);
        match probe {
            Ok(v) => {
                self.probe_ms
                    .store(started.elapsed().as_millis() as usize, Ordering::Relaxed);
                let identity = Identity {
                    id: format!(
                        "http:{}:{}:{}{}",
                        self.options().model,
                        v[0].len(),
                        fingerprint(&v[0]),
                        self.prompts.identity_suffix()
                    ),
                    dim: v[0].len(),
                };
                *self.lock_state() = State::Ready;
                Ok(self.identity.get_or_init(|| identity))
            }
            Err(e) => {
                let e = as_unavailable(e);
                self.note_failure(&e);
                Err(e)
            }
        }
    }

    fn note_failure(&self, e: &EmbedError) {
        if let EmbedError::Unavailable { reason, .. } = e {
            *self.lock_state() = State::Failed {
                reason: reason.clone(),
                at: Instant::now(),
            };
        }
    }

    /// Embeds in batches, `concurrency` requests at a time, in order.
    fn embed_all(&self, texts: Vec<String>, kind: InputType) -> Result<Embeddings, EmbedError> {
        let dim = self.identity()?.dim;
        // A server that just failed is not asked again, with retries, for
        // every file of a sync: calls fail at once until the pause is over.
        if let State::Failed { reason, at } = &*self.lock_state() {
            if at.elapsed() < RETRY_AFTER {
                return Err(client::unavailable(reason.clone(), None));
            }
        }
        let batches: Vec<&[String]> = texts.chunks(self.options().batch.max(1)).collect();
        let next = AtomicUsize::new(0);
        let results: Vec<Mutex<Option<BatchResult>>> =
            batches.iter().map(|_| Mutex::new(None)).collect();
        let workers = self.options().concurrency.clamp(1, batches.len().max(1));
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(batch) = batches.get(i) else { break };
                    let r = self.client.embed(batch, kind);
                    let failed = r.is_err();
                    *results[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
                    if failed {
                        // The others stop taking batches: the answer is an error.
                        next.store(batches.len(), Ordering::Relaxed);
                        break;
                    }
                });
            }
        });
        let mut out = Embeddings::new(dim);
        for slot in results {
            let r = slot
                .into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .unwrap_or_else(|| Err(client::unavailable("a batch was not sent".into(), None)));
            let vectors = r.inspect_err(|e| self.note_failure(e))?;
            for v in vectors {
                if v.len() != dim {
                    return Err(EmbedError::Failed {
                        reason: format!(
                            "the embedding server at {} sent vectors of {} dimensions where \
                             the model gave {dim}; has another model been loaded behind \
                             EMBED_MODEL? The next sync re-embeds",
                            self.endpoint(),
                            v.len()
                        ),
                        cause: None,
                    });
                }
                out.push(&v);
            }
        }
        *self.lock_state() = State::Ready;
        Ok(out)
    }
}

/// One batch's vectors, or why there are none.
type BatchResult = Result<Vec<Vec<f32>>, EmbedError>;

/// A failed probe means no vectors now, whatever the reason: the engine then
/// stores chunks keyword-searchable for the next sync.
fn as_unavailable(e: EmbedError) -> EmbedError {
    match e {
        EmbedError::Failed { reason, cause } => EmbedError::Unavailable { reason, cause },
        e => e,
    }
}

/// A short digest of a vector, rounded so the noise of another batch size
/// or thread count does not change it while another model does.
fn fingerprint(v: &[f32]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for x in v {
        h.update(((x * 100.0).round() as i32).to_le_bytes());
    }
    h.finalize()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Embedder for HttpEmbedder {
    fn state(&self) -> EmbedderState {
        match &*self.lock_state() {
            State::NotProbed => EmbedderState::NotLoaded,
            State::Probing => EmbedderState::Loading { done: 0, total: 0 },
            State::Ready => EmbedderState::Ready,
            State::Failed { reason, .. } => EmbedderState::Failed {
                reason: reason.clone(),
            },
        }
    }

    /// The identity once probed; the configured name while the server cannot
    /// be reached (nothing is embedded then, so nothing is stored under it).
    fn model_id(&self) -> &str {
        match self.identity() {
            Ok(id) => &id.id,
            Err(_) => &self.options().model,
        }
    }

    fn ready(&self) -> Result<(), EmbedError> {
        self.identity().map(|_| ())
    }

    fn dimension(&self) -> usize {
        self.identity().map_or(0, |id| id.dim)
    }

    fn embed_documents(&self, texts: &[&str]) -> Result<Embeddings, EmbedError> {
        let texts = texts.iter().map(|t| self.prompts.passage_text(t)).collect();
        self.embed_all(texts, InputType::Passage)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let e = self.embed_all(vec![self.prompts.query_text(text)], InputType::Query)?;
        Ok(e.data)
    }
}

impl TokenCounter for HttpEmbedder {
    /// EMBED_TOKENIZER's count when given, else the estimate.
    fn count(&self, text: &str) -> usize {
        self.tokenizer
            .as_ref()
            .map_or_else(|| estimate(text), |t| t.count(text))
    }
    fn additive(&self) -> bool {
        self.tokenizer.as_ref().is_some_and(|t| t.additive())
    }
}
