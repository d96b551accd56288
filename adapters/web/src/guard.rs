//! What every page request passes: an allowed `Host` (against DNS
//! rebinding), the token when one is set (a bearer header, or an
//! `HttpOnly`, `SameSite=Strict` cookie holding the session id the login
//! form gave), and on every POST an `Origin` of this page or an allowed one
//! (against cross-site requests).

use std::sync::Arc;

use axum::http::{header, HeaderMap, HeaderValue};

/// Checks a presented token; supplied by the binary so that `/mcp` and the
/// page compare tokens the same way.
pub type TokenCheck = Arc<dyn Fn(&str) -> bool + Send + Sync>;

pub(crate) const COOKIE: &str = "minirag_session";

/// What the page checks on every request: hosts, origins and tokens.
#[derive(Clone)]
pub struct Guard {
    /// Host names (or host:port) the page answers to.
    pub allowed_hosts: Vec<String>,
    /// Origins besides the page's own that may POST (`http://host:*` allowed).
    pub allowed_origins: Vec<String>,
    /// `None`: no token is needed (loopback without one).
    pub token: Option<TokenCheck>,
    /// Who signed in at `/login`.
    pub signed_in: Arc<crate::SignedIn>,
    /// Trust `X-Forwarded-Proto` (a TLS proxy in front): the cookie is then
    /// `Secure` when the proxy says the request came over https.
    pub trust_proxy: bool,
}

/// Why a request was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    Host,
    Token,
    Origin,
}

impl Guard {
    /// The request's `Host` is one this page answers to.
    pub fn host_ok(&self, headers: &HeaderMap) -> bool {
        let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
            return false;
        };
        let name = host_name(host);
        self.allowed_hosts
            .iter()
            .any(|a| a.eq_ignore_ascii_case(host) || a.eq_ignore_ascii_case(name))
    }

    /// The token, from the cookie or a bearer header, is right (or none is needed).
    pub fn token_ok(&self, headers: &HeaderMap) -> bool {
        let Some(check) = &self.token else {
            return true;
        };
        if let Some(token) = bearer_token(headers.get(header::AUTHORIZATION)) {
            return check(token);
        }
        cookie(headers, COOKIE)
            .is_some_and(|id| self.signed_in.valid(id, std::time::Instant::now()))
    }

    /// A POST comes from this page (its `Origin` is `scheme://Host`) or from
    /// an allowed origin; a POST without `Origin` is refused.
    pub fn origin_ok(&self, headers: &HeaderMap) -> bool {
        let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
            return false;
        };
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
        let same = host.is_some_and(|h| {
            origin.eq_ignore_ascii_case(&format!("http://{h}"))
                || origin.eq_ignore_ascii_case(&format!("https://{h}"))
        });
        same || self
            .allowed_origins
            .iter()
            .any(|a| origin_matches(a, origin))
    }

    /// The first check a request fails.
    pub fn check(&self, headers: &HeaderMap, post: bool) -> Result<(), Refusal> {
        if !self.host_ok(headers) {
            return Err(Refusal::Host);
        }
        if post && !self.origin_ok(headers) {
            return Err(Refusal::Origin);
        }
        if !self.token_ok(headers) {
            return Err(Refusal::Token);
        }
        Ok(())
    }
}

/// `localhost:8080` → `localhost`; `[::1]:80` → `::1`.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

/// `pattern` is an origin, or one whose port is `*`.
fn origin_matches(pattern: &str, origin: &str) -> bool {
    match pattern.strip_suffix(":*") {
        Some(base) => {
            origin.eq_ignore_ascii_case(base)
                || origin
                    .get(..base.len())
                    .is_some_and(|p| p.eq_ignore_ascii_case(base))
                    && origin[base.len()..].strip_prefix(':').is_some_and(|port| {
                        !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())
                    })
        }
        None => pattern.eq_ignore_ascii_case(origin),
    }
}

/// The token of an `Authorization: Bearer …` header; the scheme's name is
/// matched without regard to case, as HTTP's authentication schemes are.
pub fn bearer_token(value: Option<&HeaderValue>) -> Option<&str> {
    let value = value?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start_matches(' '))
}

/// The value of cookie `name`.
pub(crate) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn guard(token: Option<&'static str>) -> Guard {
        Guard {
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into()],
            allowed_origins: vec!["http://127.0.0.1:*".into()],
            token: token.map(|t| Arc::new(move |p: &str| p == t) as TokenCheck),
            signed_in: Arc::default(),
            trust_proxy: false,
        }
    }

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(k.clone(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn hosts_origins_and_tokens() {
        let g = guard(Some("secret-token-123456"));
        let id = g.signed_in.start(std::time::Instant::now()).unwrap();
        let session = format!("a=b; minirag_session={id}");
        let ok = headers(&[
            (header::HOST, "127.0.0.1:8080"),
            (header::ORIGIN, "http://127.0.0.1:8080"),
            (header::COOKIE, session.as_str()),
        ]);
        assert_eq!(g.check(&ok, true), Ok(()));
        let evil = headers(&[(header::HOST, "evil.example:8080")]);
        assert_eq!(g.check(&evil, false), Err(Refusal::Host));
        let cross = headers(&[
            (header::HOST, "localhost:8080"),
            (header::ORIGIN, "https://evil.example"),
            (header::COOKIE, session.as_str()),
        ]);
        assert_eq!(g.check(&cross, true), Err(Refusal::Origin));
        assert_eq!(g.check(&cross, false), Ok(()));
        let no_origin = headers(&[(header::HOST, "localhost:8080")]);
        assert_eq!(g.check(&no_origin, true), Err(Refusal::Origin));
        let wrong = headers(&[
            (header::HOST, "localhost"),
            (header::COOKIE, "minirag_session=wrong"),
        ]);
        assert_eq!(g.check(&wrong, false), Err(Refusal::Token));
        // The cookie holds a session id: the token itself there is refused.
        let raw = headers(&[
            (header::HOST, "localhost"),
            (header::COOKIE, "minirag_session=secret-token-123456"),
        ]);
        assert_eq!(g.check(&raw, false), Err(Refusal::Token));
        let bearer = headers(&[
            (header::HOST, "localhost"),
            (header::AUTHORIZATION, "Bearer secret-token-123456"),
        ]);
        assert_eq!(g.check(&bearer, false), Ok(()));
        for scheme in ["bearer", "BEARER", "BeArEr"] {
            let value = format!("{scheme} secret-token-123456");
            let h = headers(&[
                (header::HOST, "localhost"),
                (header::AUTHORIZATION, value.as_str()),
            ]);
            assert_eq!(g.check(&h, false), Ok(()), "{scheme}");
        }
        let basic = headers(&[
            (header::HOST, "localhost"),
            (header::AUTHORIZATION, "Basic secret-token-123456"),
        ]);
        assert_eq!(g.check(&basic, false), Err(Refusal::Token));
        assert!(guard(None).token_ok(&no_origin));
    }

    #[test]
    fn port_patterns_match_digits_only() {
        assert!(origin_matches("http://127.0.0.1:*", "http://127.0.0.1:9"));
        assert!(origin_matches("http://127.0.0.1:*", "http://127.0.0.1"));
        assert!(!origin_matches(
            "http://127.0.0.1:*",
            "http://127.0.0.1.evil:9"
        ));
        assert!(!origin_matches("http://127.0.0.1:*", "http://127.0.0.1:9x"));
        assert_eq!(host_name("[::1]:80"), "::1");
        assert_eq!(host_name("localhost"), "localhost");
    }
}
