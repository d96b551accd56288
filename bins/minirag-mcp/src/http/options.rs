//! `serve --http` flags, checked before anything listens: where to bind,
//! who may connect, and the limits. Each refusal names the flag that fixes it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use sha2::{Digest, Sha256};

/// Shortest bearer token accepted: 128 bits as hex, or a long passphrase.
const MIN_TOKEN_CHARS: usize = 16;

#[derive(Args, Clone, Debug)]
pub(crate) struct ServeArgs {
    /// Serve MCP over Streamable HTTP at http://ADDR/mcp (IP:PORT; port 0
    /// picks a free one) instead of stdio.
    #[arg(long, value_name = "IP:PORT")]
    pub http: Option<String>,
    /// Allow a non-loopback address. Requires a bearer token.
    #[arg(long)]
    pub allow_remote: bool,
    /// A file whose content is the bearer token (else MINIRAG_TOKEN).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// A Host name (or host:port) clients may use, besides loopback names (repeatable).
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub allowed_hosts: Vec<String>,
    /// A browser Origin allowed to call, besides loopback origins (repeatable), e.g. https://app.example.com:443.
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,
    /// A TLS proxy is in front: believe its X-Forwarded-Proto, so the
    /// page's sign-in cookie is Secure when the request came over https.
    #[arg(long)]
    pub trust_proxy: bool,
    /// Put the query text of query_documents in the request log.
    #[arg(long)]
    pub log_queries: bool,
    /// An MCP session with no request for this long is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = 1800)]
    pub session_idle_secs: u64,
    /// Largest request body.
    #[arg(long, value_name = "BYTES", default_value_t = 8 * 1024 * 1024)]
    pub max_body_bytes: usize,
    /// Requests and event streams one client may have open at once (a client:
    /// an MCP session, or an address for requests without one).
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub max_inflight_per_client: usize,
    /// Requests and event streams one address may have open at once, over
    /// all its sessions.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub max_inflight_per_ip: usize,
    /// On SIGTERM, how long in-flight requests may take to finish.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub drain_secs: u64,
    /// Live MCP sessions in all; at the cap the one used longest ago closes
    /// for a new one.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_sessions: usize,
    /// Live MCP sessions opened from one address; at the cap its session
    /// used longest ago closes for a new one.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub max_sessions_per_ip: usize,
    /// Open connections in all (lowered to what the open-file limit
    /// allows); at the cap the oldest idle one is closed for a new one.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_connections: usize,
    /// Open connections from one address; at the cap its oldest idle one
    /// is closed for a new one.
    #[arg(long, value_name = "N", default_value_t = 128)]
    pub max_connections_per_ip: usize,
    /// A connection with no request in flight and no byte for this long is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub idle_timeout_secs: u64,
    /// A request head (line and headers) must arrive within this long.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub header_timeout_secs: u64,
    /// A request body must arrive within this long.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub body_timeout_secs: u64,
}

impl ServeArgs {
    /// Every flag at its default, as `serve --http` has them (for `ui`).
    pub(crate) fn defaults() -> Self {
        #[derive(clap::Parser)]
        struct Only {
            #[command(flatten)]
            args: ServeArgs,
        }
        <Only as clap::Parser>::parse_from(["serve"]).args
    }
}

/// Checked HTTP settings.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub bind: SocketAddr,
    /// SHA-256 of the bearer token, when one is required.
    pub token: Option<[u8; 32]>,
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    /// The `--allowed-origin`s alone, without the loopback defaults.
    pub extra_origins: Vec<String>,
    pub log_queries: bool,
    pub trust_proxy: bool,
    pub session_idle: Duration,
    pub max_body_bytes: usize,
    pub max_inflight_per_client: usize,
    pub max_inflight_per_ip: usize,
    pub max_sessions: usize,
    pub max_sessions_per_ip: usize,
    pub drain: Duration,
    pub connections: super::connections::Limits,
    pub body_timeout: Duration,
    /// Set by `ui`: print the page's URL on stdout, and open a browser when
    /// this is `Some(true)` and one is present.
    pub page_opens: Option<bool>,
}

impl Options {
    /// `env_token`: the value of MINIRAG_TOKEN, if set.
    pub(crate) fn check(args: &ServeArgs, bind: &str, env_token: Option<String>) -> Result<Self> {
        let bind: SocketAddr = bind.parse().map_err(|_| {
            anyhow::anyhow!("--http takes IP:PORT, got '{bind}'; for example --http 127.0.0.1:8765")
        })?;
        let token = match (&args.token_file, env_token) {
            (Some(file), _) => Some(read_token_file(file)?),
            (None, Some(t)) => Some(valid_token(t.trim(), "MINIRAG_TOKEN")?.to_string()),
            (None, None) => None,
        };
        let loopback = bind.ip().is_loopback();
        if !loopback && !args.allow_remote {
            bail!(
                "refusing to listen on {bind}: it is not a loopback address. Bind 127.0.0.1, or pass --allow-remote with a bearer token (MINIRAG_TOKEN or --token-file) and put TLS in front (README: HTTP mode)"
            );
        }
        if !loopback && token.is_none() {
            bail!(
                "--allow-remote needs a bearer token: set MINIRAG_TOKEN or pass --token-file FILE"
            );
        }
        for (flag, n) in [
            ("--max-body-bytes", args.max_body_bytes as u64),
            (
                "--max-inflight-per-client",
                args.max_inflight_per_client as u64,
            ),
            ("--session-idle-secs", args.session_idle_secs),
            ("--max-inflight-per-ip", args.max_inflight_per_ip as u64),
            ("--max-sessions", args.max_sessions as u64),
            ("--max-sessions-per-ip", args.max_sessions_per_ip as u64),
            ("--max-connections", args.max_connections as u64),
            (
                "--max-connections-per-ip",
                args.max_connections_per_ip as u64,
            ),
            ("--idle-timeout-secs", args.idle_timeout_secs),
            ("--header-timeout-secs", args.header_timeout_secs),
            ("--body-timeout-secs", args.body_timeout_secs),
        ] {
            if n == 0 {
                bail!("{flag} must be at least 1");
            }
        }
        let mut allowed_hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
            .into_iter()
            .map(String::from)
            .collect();
        if !bind.ip().is_unspecified() && !loopback {
            allowed_hosts.push(bind.ip().to_string());
        }
        allowed_hosts.extend(args.allowed_hosts.iter().cloned());
        let mut allowed_origins: Vec<String> =
            ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
                .into_iter()
                .map(String::from)
                .collect();
        for origin in &args.allowed_origins {
            if !origin.contains("://") {
                bail!("--allowed-origin needs a scheme, got '{origin}'; for example https://app.example.com:443");
            }
            allowed_origins.push(origin.clone());
        }
        Ok(Self {
            bind,
            token: token.map(|t| digest(&t)),
            allowed_hosts,
            allowed_origins,
            extra_origins: args.allowed_origins.clone(),
            log_queries: args.log_queries,
            trust_proxy: args.trust_proxy,
            session_idle: Duration::from_secs(args.session_idle_secs),
            max_body_bytes: args.max_body_bytes,
            max_inflight_per_client: args.max_inflight_per_client,
            max_inflight_per_ip: args.max_inflight_per_ip,
            max_sessions: args.max_sessions,
            max_sessions_per_ip: args.max_sessions_per_ip,
            drain: Duration::from_secs(args.drain_secs),
            connections: super::connections::Limits {
                total: args.max_connections,
                per_ip: args.max_connections_per_ip,
                idle: Duration::from_secs(args.idle_timeout_secs),
                header: Duration::from_secs(args.header_timeout_secs),
            }
            .within_file_limit(),
            body_timeout: Duration::from_secs(args.body_timeout_secs),
            page_opens: None,
        })
    }
}

pub(super) fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn read_token_file(file: &PathBuf) -> Result<String> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read --token-file {}", file.display()))?;
    Ok(valid_token(text.trim(), &format!("--token-file {}", file.display()))?.to_string())
}

fn valid_token<'a>(token: &'a str, from: &str) -> Result<&'a str> {
    if token.chars().count() < MIN_TOKEN_CHARS {
        bail!(
            "the bearer token in {from} is too short ({} characters; at least {MIN_TOKEN_CHARS}): generate one with `openssl rand -hex 32`",
            token.chars().count()
        );
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        bail!("the bearer token in {from} contains whitespace; use one line of visible characters");
    }
    let bits = estimated_bits(token);
    if bits < MIN_TOKEN_BITS {
        bail!(
            "the bearer token in {from} is too easy to guess (about {bits:.0} bits; at least \
             {MIN_TOKEN_BITS:.0}): generate one with `openssl rand -hex 32`"
        );
    }
    Ok(token)
}

/// Least estimated entropy of a token (`openssl rand -hex 32` has 256).
const MIN_TOKEN_BITS: f64 = 120.0;

/// A guesser's view of a token: its length times the bits of a symbol of
/// the alphabet its character classes span (lower, upper, digits, the rest;
/// hex digits alone are 16), scaled down by how unevenly it uses them
/// (its characters' Shannon entropy against the most its length allows),
/// so repeats and patterns count for little: `aaaa…` is 0 bits.
fn estimated_bits(token: &str) -> f64 {
    let chars: Vec<char> = token.chars().collect();
    let n = chars.len();
    if n == 0 {
        return 0.0;
    }
    let mut counts = std::collections::HashMap::<char, usize>::new();
    for c in &chars {
        *counts.entry(*c).or_default() += 1;
    }
    let has = |f: fn(&char) -> bool| chars.iter().any(f);
    let alphabet: usize = if chars.iter().all(char::is_ascii_hexdigit) {
        16
    } else {
        [
            (has(char::is_ascii_lowercase), 26),
            (has(char::is_ascii_uppercase), 26),
            (has(char::is_ascii_digit), 10),
            (has(|c| !c.is_ascii_alphanumeric()), 33),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, size)| size)
        .sum()
    };
    let entropy: f64 = counts
        .values()
        .map(|&k| {
            let p = k as f64 / n as f64;
            p * (1.0 / p).log2() // never -0, which prints "-0 bits"
        })
        .sum();
    let most = (n.min(alphabet) as f64).log2();
    let evenness = if most > 0.0 {
        (entropy / most).min(1.0)
    } else {
        0.0
    };
    n as f64 * (alphabet as f64).log2() * evenness
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> ServeArgs {
        ServeArgs {
            session_idle_secs: 60,
            max_body_bytes: 1024,
            max_inflight_per_client: 4,
            ..ServeArgs::defaults()
        }
    }

    #[test]
    fn loopback_needs_no_token() {
        let o = Options::check(&args(), "127.0.0.1:0", None).unwrap();
        assert!(o.token.is_none());
        assert!(o.allowed_hosts.contains(&"localhost".to_string()));
    }

    #[test]
    fn a_remote_address_needs_the_flag_and_a_token() {
        let e = Options::check(&args(), "0.0.0.0:8765", None).unwrap_err();
        assert!(e.to_string().contains("--allow-remote"), "{e}");
        let mut a = args();
        a.allow_remote = true;
        let e = Options::check(&a, "0.0.0.0:8765", None).unwrap_err();
        assert!(e.to_string().contains("MINIRAG_TOKEN"), "{e}");
        let o = Options::check(
            &a,
            "0.0.0.0:8765",
            Some("test-token-9f86d081884c7d659a2feaa0c55ad015".into()),
        )
        .unwrap();
        assert_eq!(
            o.token,
            Some(digest("test-token-9f86d081884c7d659a2feaa0c55ad015"))
        );
    }

    #[test]
    fn short_or_spaced_tokens_and_bad_addresses_are_refused() {
        let e = Options::check(&args(), "127.0.0.1:1", Some("short".into())).unwrap_err();
        assert!(e.to_string().contains("too short"), "{e}");
        let e =
            Options::check(&args(), "127.0.0.1:1", Some("0123456789 abcdef0".into())).unwrap_err();
        assert!(e.to_string().contains("whitespace"), "{e}");
        for weak in [
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "0123456789abcdef0",
            "abababababababababababababababab",
        ] {
            let e = Options::check(&args(), "127.0.0.1:1", Some(weak.into())).unwrap_err();
            assert!(e.to_string().contains("too easy to guess"), "{weak}: {e}");
        }
        // `openssl rand -hex 32`, and a long passphrase, pass.
        for strong in [
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "Lantern-Orbit-Quiver-Mosaic-Thistle-Harbor-7",
        ] {
            assert!(
                Options::check(&args(), "127.0.0.1:1", Some(strong.into())).is_ok(),
                "{strong}: {}",
                estimated_bits(strong)
            );
        }
        let e = Options::check(&args(), "localhost", None).unwrap_err();
        assert!(e.to_string().contains("IP:PORT"), "{e}");
        let mut a = args();
        a.allowed_origins = vec!["app.example.com".into()];
        let e = Options::check(&a, "127.0.0.1:1", None).unwrap_err();
        assert!(e.to_string().contains("scheme"), "{e}");
    }
}
