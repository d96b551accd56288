//! The URL guard against real loopback servers. 127.0.0.2 plays a public
//! host (the test policy calls it public); 127.0.0.1 plays the user's
//! private network (loopback, refused). Each server logs every connection.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use minirag_core::ports::{FetchError, Fetcher};
use minirag_fetch_http::{blocked_kind, HttpFetcher, Lookup};

const PUBLIC: &str = "127.0.0.2";
const PRIVATE: &str = "127.0.0.1";

fn test_policy(ip: IpAddr) -> Option<&'static str> {
    if ip == PUBLIC.parse::<IpAddr>().unwrap() {
        None
    } else {
        blocked_kind(ip)
    }
}

/// A server answering by path; `connections` counts accepted connections.
struct Server {
    port: u16,
    connections: Arc<AtomicUsize>,
}

fn serve(addr: &str, route: fn(&str, u16) -> String) -> Server {
    let listener = TcpListener::bind((addr, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counter = connections.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            counter.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]);
            let path = req.split_whitespace().nth(1).unwrap_or("/").to_string();
            let response = route(&path, port);
            if !response.is_empty() {
                let _ = stream.write_all(response.as_bytes());
            } else {
                // Hang: never answer (for the timeout test); keep the socket open.
                std::thread::spawn(move || {
                    let mut sink = [0u8; 16];
                    let _ = stream.read(&mut sink);
                });
            }
        }
    });
    Server { port, connections }
}

fn ok(body: &str, ct: &str) -> String {
    format!("HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
}

fn redirect(to: &str) -> String {
    format!(
        "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
}

fn public_routes(path: &str, _port: u16) -> String {
    if let Some(n) = path
        .strip_prefix("/chain/")
        .and_then(|n| n.parse::<u32>().ok())
    {
        return if n == 0 {
            ok("<title>Public Page</title>PUBLIC-BODY", "text/html")
        } else {
            redirect(&format!("/chain/{}", n - 1))
        };
    }
    if let Some(port) = path.strip_prefix("/to-private/") {
        return redirect(&format!("http://{PRIVATE}:{port}/latest/meta-data/"));
    }
    match path {
        "/doc" => ok("<title>Public Page</title>PUBLIC-BODY", "text/html"),
        "/big" => ok(&"x".repeat(4096), "text/plain"),
        "/binary" => ok("\u{0}\u{1}", "application/octet-stream"),
        "/hang" => String::new(),
        _ => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".into(),
    }
}

fn private_routes(_path: &str, _port: u16) -> String {
    ok("SECRET-METADATA-TOKEN", "text/plain")
}

/// Names → successive answers (the last one repeats).
struct FakeDns(Mutex<HashMap<String, Vec<Vec<IpAddr>>>>, AtomicUsize);

impl FakeDns {
    fn new(entries: &[(&str, &[&[&str]])]) -> Arc<Self> {
        let map = entries
            .iter()
            .map(|(name, answers)| {
                (
                    name.to_string(),
                    answers
                        .iter()
                        .map(|a| a.iter().map(|ip| ip.parse().unwrap()).collect())
                        .collect(),
                )
            })
            .collect();
        Arc::new(Self(Mutex::new(map), AtomicUsize::new(0)))
    }
}

impl Lookup for FakeDns {
    fn lookup(&self, host: &str, _port: u16) -> std::io::Result<Vec<IpAddr>> {
        self.1.fetch_add(1, Ordering::SeqCst);
        let mut map = self.0.lock().unwrap();
        let answers = map
            .get_mut(host)
            .ok_or_else(|| std::io::Error::other("no such host"))?;
        Ok(if answers.len() > 1 {
            answers.remove(0)
        } else {
            answers[0].clone()
        })
    }
}

fn fetcher(dns: Arc<FakeDns>) -> HttpFetcher {
    HttpFetcher::new(1024 * 1024, false)
        .with_lookup(dns)
        .with_policy(test_policy)
}

#[test]
fn a_public_page_is_fetched_through_a_name() {
    let public = serve(PUBLIC, public_routes);
    let dns = FakeDns::new(&[("public.test", &[&[PUBLIC]])]);
    let got = fetcher(dns)
        .fetch(&format!("http://public.test:{}/doc", public.port))
        .unwrap();
    assert!(String::from_utf8_lossy(&got.bytes).contains("PUBLIC-BODY"));
    assert_eq!(got.content_type.as_deref(), Some("text/html"));
}

#[test]
fn a_name_with_any_private_address_is_refused_before_connecting() {
    let private = serve(PRIVATE, private_routes);
    let dns = FakeDns::new(&[("mixed.test", &[&[PUBLIC, PRIVATE]])]);
    let err = fetcher(dns)
        .fetch(&format!("http://mixed.test:{}/", private.port))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("mixed.test")
            && err.contains(PRIVATE)
            && err.contains("loopback")
            && err.contains("ALLOW_PRIVATE_URLS"),
        "{err}"
    );
    assert_eq!(private.connections.load(Ordering::SeqCst), 0);
}

#[test]
fn dns_rebinding_cannot_redirect_the_connection() {
    // First answer public, every later answer private: the fetch must use the
    // checked address and never connect to the private server.
    let public = serve(PUBLIC, public_routes);
    let private = serve(PRIVATE, private_routes);
    assert_ne!(public.port, 0);
    let dns = FakeDns::new(&[("rebind.test", &[&[PUBLIC], &[PRIVATE]])]);
    // Same port on both addresses is not guaranteed, so serve the page on the
    // public server's port and let a rebinding resolver try to move it.
    let result = fetcher(dns.clone()).fetch(&format!("http://rebind.test:{}/doc", public.port));
    assert_eq!(
        private.connections.load(Ordering::SeqCst),
        0,
        "the private server was never contacted"
    );
    let got = result.unwrap();
    assert!(String::from_utf8_lossy(&got.bytes).contains("PUBLIC-BODY"));
    assert_eq!(
        dns.1.load(Ordering::SeqCst),
        1,
        "one lookup per hop: check and connect share it"
    );
}

#[test]
fn five_redirects_are_followed_and_six_refused() {
    let public = serve(PUBLIC, public_routes);
    let f = HttpFetcher::new(1 << 20, false).with_policy(test_policy);
    let got = f
        .fetch(&format!("http://{PUBLIC}:{}/chain/5", public.port))
        .unwrap();
    assert!(got.final_url.ends_with("/chain/0"));
    let err = f
        .fetch(&format!("http://{PUBLIC}:{}/chain/6", public.port))
        .unwrap_err()
        .to_string();
    assert!(err.contains("Exceeded 5 redirects"), "{err}");
}

#[test]
fn a_redirect_to_a_private_host_is_refused_before_connecting() {
    let public = serve(PUBLIC, public_routes);
    let private = serve(PRIVATE, private_routes);
    let f = HttpFetcher::new(1 << 20, false).with_policy(test_policy);
    let err = f
        .fetch(&format!(
            "http://{PUBLIC}:{}/to-private/{}",
            public.port, private.port
        ))
        .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, FetchError::Refused { .. }));
    assert!(
        msg.contains("redirected") && msg.contains(PRIVATE) && msg.contains("loopback"),
        "{msg}"
    );
    assert_eq!(private.connections.load(Ordering::SeqCst), 0);
    // Allowed explicitly, the same chain reaches it.
    let got = HttpFetcher::new(1 << 20, true)
        .fetch(&format!(
            "http://{PUBLIC}:{}/to-private/{}",
            public.port, private.port
        ))
        .unwrap();
    assert!(String::from_utf8_lossy(&got.bytes).contains("SECRET-METADATA-TOKEN"));
}

#[test]
fn size_type_and_time_limits_are_clear_errors() {
    let public = serve(PUBLIC, public_routes);
    let f = HttpFetcher::new(1024, false)
        .with_policy(test_policy)
        .with_timeouts(Duration::from_secs(2), Duration::from_millis(500));
    let base = format!("http://{PUBLIC}:{}", public.port);
    let err = f.fetch(&format!("{base}/big")).unwrap_err().to_string();
    assert!(err.contains("larger than the 1024 byte limit"), "{err}");
    let err = f.fetch(&format!("{base}/binary")).unwrap_err().to_string();
    assert!(
        err.contains("application/octet-stream") && err.contains("cannot read"),
        "{err}"
    );
    let err = f.fetch(&format!("{base}/hang")).unwrap_err().to_string();
    assert!(
        err.contains("could not fetch") && err.to_lowercase().contains("time"),
        "{err}"
    );
    let err = f.fetch(&format!("{base}/missing")).unwrap_err().to_string();
    assert!(err.contains("HTTP 404"), "{err}");
}

#[test]
fn unresolvable_names_are_fetch_errors_not_refusals() {
    let dns = FakeDns::new(&[]);
    let err = fetcher(dns).fetch("http://nowhere.test/").unwrap_err();
    assert!(matches!(err, FetchError::Failed { .. }));
    assert!(err
        .to_string()
        .contains("Could not resolve host 'nowhere.test'"));
}

/// A refused connection keeps the HTTP client's error under the fetch's and
/// the engine's: `source()` reaches ureq's error and the OS's under it.
#[test]
fn a_failed_fetch_keeps_the_clients_error() {
    use minirag_core::error::EngineError;
    // A port nothing listens on: bind one, then close it.
    let port = TcpListener::bind((PUBLIC, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let f = HttpFetcher::new(1 << 20, false).with_policy(test_policy);
    let err = f.fetch(&format!("http://{PUBLIC}:{port}/")).unwrap_err();
    assert!(matches!(err, FetchError::Failed { .. }), "{err}");
    let engine = EngineError::Fetch(err);
    use minirag_core::cause::in_chain;
    let client = in_chain::<ureq::Error>(&engine).is_some();
    let os = in_chain::<std::io::Error>(&engine).is_some();
    assert!(
        client && os,
        "the walk from {engine} reaches ureq's and the OS's errors"
    );
}
