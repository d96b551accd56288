//! The `Fetcher` port, first slice: http(s) only (the reference's scheme
//! rule), redirects followed by hand with the scheme re-checked on every
//! hop, a body cap, timeouts. Host and DNS-rebinding rules are the hardened
//! adapter's job (its own issue).
//!
//! ureq (blocking, rustls) is used because hf-hub already brings it: the
//! interim fetcher adds no new dependency tree.

use std::io::Read;
use std::time::Duration;

use minirag_core::ports::{FetchError, Fetched, Fetcher};

pub const MAX_REDIRECTS: usize = 5;
pub const DEFAULT_BODY_CAP: u64 = 20 << 20;

pub struct HttpFetcher {
    agent: ureq::Agent,
    body_cap: u64,
}

impl Default for HttpFetcher {
    fn default() -> Self {
        Self::new(DEFAULT_BODY_CAP)
    }
}

/// The scheme rule: only http and https, named when refused.
pub fn check_scheme(url: &str) -> Result<(), FetchError> {
    let scheme = match url.split_once("://") {
        Some((s, _)) => s.to_ascii_lowercase(),
        None => url
            .split_once(':')
            .map_or("(none)".into(), |(s, _)| s.to_ascii_lowercase()),
    };
    if scheme == "http" || scheme == "https" {
        Ok(())
    } else {
        Err(FetchError::Refused {
            reason: format!("Only http/https URLs are allowed, got scheme '{scheme}' in {url}"),
        })
    }
}

impl HttpFetcher {
    pub fn new(body_cap: u64) -> Self {
        let agent = ureq::AgentBuilder::new()
            .redirects(0)
            .timeout_connect(Duration::from_secs(10))
            .timeout(Duration::from_secs(60))
            .build();
        Self { agent, body_cap }
    }
}

impl Fetcher for HttpFetcher {
    fn fetch(&self, url: &str) -> Result<Fetched, FetchError> {
        let mut current = url.to_string();
        for _ in 0..=MAX_REDIRECTS {
            check_scheme(&current)?;
            let resp = match self
                .agent
                .get(&current)
                .set(
                    "Accept",
                    "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.1",
                )
                .call()
            {
                Ok(r) => r,
                Err(ureq::Error::Status(code, r)) if (300..400).contains(&code) => r,
                Err(ureq::Error::Status(code, _)) => {
                    return Err(FetchError::Failed {
                        reason: format!("{current} answered HTTP {code}"),
                    })
                }
                Err(e) => {
                    return Err(FetchError::Failed {
                        reason: format!("could not fetch {current}: {e}"),
                    })
                }
            };
            if (300..400).contains(&resp.status()) {
                let Some(location) = resp.header("location") else {
                    return Err(FetchError::Failed {
                        reason: format!("{current} redirected without a Location"),
                    });
                };
                let bad = |e: url::ParseError| FetchError::Failed {
                    reason: format!("{current} redirected to a malformed URL: {e}"),
                };
                current = url::Url::parse(&current)
                    .and_then(|b| b.join(location))
                    .map_err(bad)?
                    .to_string();
                continue;
            }
            let content_type = resp.header("content-type").map(|c| {
                c.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase()
            });
            let mut bytes = Vec::new();
            resp.into_reader()
                .take(self.body_cap + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| FetchError::Failed {
                    reason: format!("could not read the body of {current}: {e}"),
                })?;
            if bytes.len() as u64 > self.body_cap {
                return Err(FetchError::Failed {
                    reason: format!(
                        "{current} is larger than the {} byte limit; nothing was indexed",
                        self.body_cap
                    ),
                });
            }
            return Ok(Fetched {
                bytes,
                content_type,
                final_url: current,
            });
        }
        Err(FetchError::Failed {
            reason: format!("Failed to fetch {url}: Exceeded {MAX_REDIRECTS} redirects"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_and_https() {
        assert!(check_scheme("https://x.io/a").is_ok());
        assert!(check_scheme("HTTP://x.io").is_ok());
        for (url, scheme) in [
            ("file:///etc/passwd", "file"),
            ("data:text/html,hi", "data"),
            ("ftp://x.io", "ftp"),
            ("x.io/nope", "(none)"),
        ] {
            let e = check_scheme(url).unwrap_err().to_string();
            assert!(
                e.contains(&format!("'{scheme}'")) && e.contains("http"),
                "{e}"
            );
        }
    }
}
