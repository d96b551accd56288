//! The `Fetcher` port: http(s) only, redirects followed by hand with scheme and host re-checked on every
//! hop. Each hop resolves its host once (with a timeout), refuses it if any
//! address is loopback, private, link-local, shared, unspecified or reserved
//! (unless ALLOW_PRIVATE_URLS), and then connects only to those validated
//! addresses through a pinned resolver: check and connection cannot disagree,
//! so DNS rebinding cannot slip in between. Body size, content type and time
//! are capped.
//!
//! ureq (blocking, rustls) is used because hf-hub already brings it: the
//! fetcher adds no new dependency tree.

#![forbid(unsafe_code)]

use std::io::Read;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use minirag_core::formats;
use minirag_core::ports::{FetchError, Fetched, Fetcher};

/// Redirects followed, each hop checked like the first URL.
pub const MAX_REDIRECTS: usize = 5;
/// Body bytes read at most, unless the caller says.
pub const DEFAULT_BODY_CAP: u64 = 20 << 20;

/// Name → addresses, injectable so tests can map names to loopback servers.
pub trait Lookup: Send + Sync {
    /// The addresses of `host`.
    fn lookup(&self, host: &str, port: u16) -> std::io::Result<Vec<IpAddr>>;
}

/// The system resolver (getaddrinfo).
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup(&self, host: &str, port: u16) -> std::io::Result<Vec<IpAddr>> {
        Ok((host, port).to_socket_addrs()?.map(|a| a.ip()).collect())
    }
}

/// Which addresses are refused, and as what kind.
pub type Policy = fn(IpAddr) -> Option<&'static str>;

/// Time a name lookup may take.
pub const DNS_TIMEOUT: Duration = Duration::from_secs(5);

/// The [`Fetcher`]: HTTP(S) with time limits, a body cap and no private hosts unless allowed.
pub struct HttpFetcher {
    body_cap: u64,
    allow_private: bool,
    lookup: Arc<dyn Lookup>,
    policy: Policy,
    connect_timeout: Duration,
    total_timeout: Duration,
}

impl Default for HttpFetcher {
    fn default() -> Self {
        Self::new(DEFAULT_BODY_CAP, false)
    }
}

/// Resolves only to the addresses validated for this hop: the connection
/// cannot go anywhere the check did not see (no DNS-rebinding gap).
struct Pinned(Vec<SocketAddr>);

impl ureq::Resolver for Pinned {
    fn resolve(&self, _netloc: &str) -> std::io::Result<Vec<SocketAddr>> {
        Ok(self.0.clone())
    }
}

/// The kind of a non-public address, or `None` for a public one.
/// An address that carries an IPv4 address inside it (IPv4-mapped or
/// -compatible, NAT64's well-known prefix, 6to4, Teredo's client) reaches
/// that IPv4 address: it is judged as that address.
pub fn blocked_kind(ip: IpAddr) -> Option<&'static str> {
    let ip = match ip {
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => IpAddr::V4(v4),
            None if v6.segments()[..3] == [0x64, 0xff9b, 1] => return Some("NAT64 (local use)"),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    };
    match ip {
        IpAddr::V4(a) => {
            let o = a.octets();
            if a.is_loopback() {
                Some("loopback")
            } else if a.is_link_local() {
                Some("link-local")
            } else if a.is_unspecified() {
                Some("unspecified")
            } else if a.is_private() {
                Some("private")
            } else if o[0] == 100 && (64..128).contains(&o[1]) {
                Some("shared (carrier-grade NAT)")
            } else if a.is_multicast()
                || a.is_broadcast()
                || a.is_documentation()
                || o[0] == 0
                || o[0] >= 240
                // 198.18.0.0/15 (benchmarking), 192.0.0.0/24 (protocol assignments).
                || (o[0] == 198 && (o[1] & 0xfe) == 18)
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)
            {
                Some("reserved")
            } else {
                None
            }
        }
        IpAddr::V6(a) => {
            let s = a.segments();
            if a.is_loopback() {
                Some("loopback")
            } else if a.is_unspecified() {
                Some("unspecified")
            } else if (s[0] & 0xffc0) == 0xfe80 {
                Some("link-local")
            } else if (s[0] & 0xfe00) == 0xfc00 {
                Some("private")
            } else if (s[0] & 0xffc0) == 0xfec0 {
                Some("site-local")
            } else if a.is_multicast()
                || (s[0] == 0x2001 && s[1] == 0x0db8)
                // 100::/64 (discard), 2001:10::/28 (ORCHID).
                || (s[0] == 0x0100 && s[1] == 0 && s[2] == 0 && s[3] == 0)
                || (s[0] == 0x2001 && (s[1] & 0xfff0) == 0x0010)
            {
                Some("reserved")
            } else {
                None
            }
        }
    }
}

fn embedded_v4(a: std::net::Ipv6Addr) -> Option<std::net::Ipv4Addr> {
    use std::net::Ipv4Addr;
    let s = a.segments();
    let last =
        |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    if let Some(v4) = a.to_ipv4_mapped() {
        return Some(v4);
    }
    match s {
        // IPv4-compatible (::a.b.c.d), deprecated but routable by some stacks.
        [0, 0, 0, 0, 0, 0, hi, lo] if hi != 0 => Some(last(hi, lo)),
        // NAT64, well-known prefix 64:ff9b::/96.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(last(hi, lo)),
        // 6to4, 2002:aabb:ccdd::/48.
        [0x2002, hi, lo, ..] => Some(last(hi, lo)),
        // Teredo, 2001:0::/32: the client's address, inverted, in the last 32 bits.
        [0x2001, 0, _, _, _, _, hi, lo] => Some(last(!hi, !lo)),
        _ => None,
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
    /// A fetcher reading at most `body_cap` bytes; `allow_private` lets it reach loopback and private hosts.
    pub fn new(body_cap: u64, allow_private: bool) -> Self {
        Self {
            body_cap,
            allow_private,
            lookup: Arc::new(SystemLookup),
            policy: blocked_kind,
            connect_timeout: Duration::from_secs(10),
            total_timeout: Duration::from_secs(60),
        }
    }

    /// Replaces the resolver (tests map names to loopback servers).
    pub fn with_lookup(mut self, lookup: Arc<dyn Lookup>) -> Self {
        self.lookup = lookup;
        self
    }

    /// Replaces the address policy (tests treat one loopback address as public).
    pub fn with_policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// With other connect and total time limits.
    pub fn with_timeouts(mut self, connect: Duration, total: Duration) -> Self {
        self.connect_timeout = connect;
        self.total_timeout = total;
        self
    }

    /// Resolves a host once (with a timeout) and validates every address.
    fn resolve(&self, url: &url::Url) -> Result<Vec<SocketAddr>, FetchError> {
        let port = url.port_or_known_default().unwrap_or(80);
        let refuse = |host: &str, ip: IpAddr, kind: &str, literal: bool| {
            FetchError::Refused {
            reason: format!(
                "Refusing to fetch from host '{host}': it {}{ip}, a {kind} address. Set ALLOW_PRIVATE_URLS=1 if this server should read your private network.",
                if literal { "is " } else { "resolves to " }
            ),
        }
        };
        let (host, ips, literal) = match url.host() {
            None => {
                return Err(FetchError::Refused {
                    reason: format!("URL has no host to check: {url}"),
                })
            }
            Some(url::Host::Ipv4(ip)) => (ip.to_string(), vec![IpAddr::V4(ip)], true),
            Some(url::Host::Ipv6(ip)) => (ip.to_string(), vec![IpAddr::V6(ip)], true),
            Some(url::Host::Domain(name)) => {
                let (tx, rx) = std::sync::mpsc::channel();
                let lookup = self.lookup.clone();
                let (n, p) = (name.to_string(), port);
                std::thread::spawn(move || {
                    let _ = tx.send(lookup.lookup(&n, p));
                });
                let ips = match rx.recv_timeout(DNS_TIMEOUT) {
                    Ok(Ok(ips)) => ips,
                    Ok(Err(e)) => {
                        return Err(FetchError::Failed {
                            reason: format!("Could not resolve host '{name}': {e}"),
                            cause: Some(minirag_core::cause::Cause::new(e)),
                        })
                    }
                    Err(_) => {
                        return Err(FetchError::Failed {
                            cause: None,
                            reason: format!(
                                "Timed out after {}s resolving host '{name}'",
                                DNS_TIMEOUT.as_secs()
                            ),
                        })
                    }
                };
                if ips.is_empty() {
                    return Err(FetchError::Failed {
                        cause: None,
                        reason: format!("Host '{name}' resolved to no addresses"),
                    });
                }
                (name.to_string(), ips, false)
            }
        };
        if !self.allow_private {
            for ip in &ips {
                if let Some(kind) = (self.policy)(*ip) {
                    return Err(refuse(&host, *ip, kind, literal));
                }
            }
        }
        Ok(ips
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect())
    }
}

impl Fetcher for HttpFetcher {
    fn fetch(&self, url: &str) -> Result<Fetched, FetchError> {
        let mut current = url.to_string();
        for hop in 0..=MAX_REDIRECTS {
            check_scheme(&current)?;
            let parsed = url::Url::parse(&current).map_err(|e| FetchError::Refused {
                reason: format!("Malformed URL {current}: {e}"),
            })?;
            let addrs = self.resolve(&parsed).map_err(|e| match (e, hop) {
                (FetchError::Refused { reason }, h) if h > 0 => FetchError::Refused {
                    reason: format!("Refused to fetch {url}: it redirected to {current}, which this server must not fetch. {reason}"),
                },
                (e, _) => e,
            })?;
            let agent = ureq::AgentBuilder::new()
                .redirects(0)
                .timeout_connect(self.connect_timeout)
                .timeout(self.total_timeout)
                .resolver(Pinned(addrs))
                .build();
            let resp = match agent
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
                        cause: None,
                        reason: format!("{current} answered HTTP {code}"),
                    })
                }
                Err(e) => {
                    return Err(FetchError::Failed {
                        reason: format!("could not fetch {current}: {e}"),
                        cause: Some(minirag_core::cause::Cause::new(e)),
                    })
                }
            };
            if (300..400).contains(&resp.status()) {
                let Some(location) = resp.header("location") else {
                    return Err(FetchError::Failed {
                        cause: None,
                        reason: format!("{current} redirected without a Location"),
                    });
                };
                let bad = |e: url::ParseError| FetchError::Failed {
                    reason: format!("{current} redirected to a malformed URL: {e}"),
                    cause: Some(minirag_core::cause::Cause::new(e)),
                };
                current = parsed.join(location).map_err(bad)?.to_string();
                continue;
            }
            let content_type = resp.header("content-type").map(|c| {
                c.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase()
            });
            if let Some(ct) = content_type
                .as_deref()
                .filter(|ct| !ct.is_empty() && formats::by_content_type(ct).is_none())
            {
                return Err(FetchError::Failed {
                    cause: None,
                    reason: format!(
                        "{current} is of type '{ct}', which minirag cannot read; readable: {}",
                        formats::readable_content_types().join(", ")
                    ),
                });
            }
            let mut bytes = Vec::new();
            resp.into_reader()
                .take(self.body_cap + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| FetchError::Failed {
                    reason: format!("could not read the body of {current}: {e}"),
                    cause: Some(minirag_core::cause::Cause::new(e)),
                })?;
            if bytes.len() as u64 > self.body_cap {
                return Err(FetchError::Failed {
                    cause: None,
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
            cause: None,
            reason: format!("Failed to fetch {url}: Exceeded {MAX_REDIRECTS} redirects"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_hosts_are_refused_by_kind() {
        for (url, kind) in [
            ("http://127.0.0.1/", "loopback"),
            ("http://localhost:8080/x", "loopback"),
            ("http://169.254.169.254/latest/meta-data/", "link-local"),
            ("http://10.0.0.1/", "private"),
            ("http://192.168.1.1/", "private"),
            ("http://[::1]/", "loopback"),
            ("http://[::ffff:127.0.0.1]/", "loopback"),
            ("http://[::ffff:10.0.0.1]/", "private"),
            ("http://0.0.0.0/", "unspecified"),
            ("http://100.64.0.1/", "shared"),
            ("http://[64:ff9b::7f00:1]/", "loopback"),
            ("http://[2002:7f00:1::]/", "loopback"),
            ("http://[64:ff9b:1::1]/", "NAT64"),
            ("http://198.18.0.1/", "reserved"),
            ("http://198.19.255.254/", "reserved"),
            ("http://192.0.0.170/", "reserved"),
            ("http://[100::1]/", "reserved"),
            ("http://[fec0::1]/", "site-local"),
            ("http://[2001:10::1]/", "reserved"),
        ] {
            let e = HttpFetcher::default().fetch(url).unwrap_err().to_string();
            assert!(
                e.contains(kind) && e.contains("ALLOW_PRIVATE_URLS"),
                "{url}: {e}"
            );
        }
        assert_eq!(blocked_kind("93.184.216.34".parse().unwrap()), None);
        assert_eq!(blocked_kind("::ffff:93.184.216.34".parse().unwrap()), None);
        assert_eq!(blocked_kind("198.20.0.1".parse().unwrap()), None);
        assert_eq!(blocked_kind("2001:20::1".parse().unwrap()), None);
    }

    #[test]
    fn a_refused_host_is_never_contacted() {
        // A loopback listener that records connections: the default fetcher must not connect.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let e = HttpFetcher::default().fetch(&url).unwrap_err().to_string();
        assert!(e.contains("loopback"), "{e}");
        assert!(listener.accept().is_err(), "no connection was made");
    }

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
