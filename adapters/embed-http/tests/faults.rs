//! The remote embedder against real loopback sockets that misbehave the way
//! servers do: silence, rate limits, errors for ever, wrong vectors.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use minirag_core::ports::{EmbedError, Embedder, EmbedderState};
use minirag_embed_http::{parse_endpoint, HttpEmbedder, HttpOptions};

/// One canned answer: status line, extra headers, body.
type Answer = (u16, &'static str, String);

/// A loopback HTTP server answering the n-th request with `answer(n)`;
/// counts requests. The thread ends with the test process.
fn server(answer: impl Fn(usize, &str) -> Answer + Send + 'static) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let n = count.fetch_add(1, Ordering::SeqCst);
            let body = read_request(&stream);
            let (code, headers, text) = answer(n, &body);
            let mut s = stream;
            let _ = write!(
                s,
                "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{text}",
                text.len()
            );
        }
    });
    (url, seen)
}

fn read_request(stream: &TcpStream) -> String {
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    String::from_utf8_lossy(&body).into_owned()
}

/// An answer with one vector per input, each `[1, i, 0]`.
fn vectors(body: &str) -> String {
    let req: serde_json::Value = serde_json::from_str(body).unwrap();
    let n = req["input"].as_array().map_or(1, Vec::len);
    let data: Vec<_> = (0..n)
        .map(|i| serde_json::json!({"index": i, "embedding": [1.0, i as f32, 0.0]}))
        .collect();
    serde_json::json!({"data": data}).to_string()
}

fn embedder(url: &str, tune: impl FnOnce(&mut HttpOptions)) -> HttpEmbedder {
    let mut o = HttpOptions::new(parse_endpoint(url, false).unwrap(), "test-model");
    o.connect_timeout = Duration::from_secs(1);
    o.read_timeout = Duration::from_secs(1);
    o.total_timeout = Duration::from_secs(3);
    o.retries = 2;
    tune(&mut o);
    HttpEmbedder::new(o)
}

#[test]
fn a_server_that_never_answers_is_unavailable_within_its_limits() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let e = embedder(&url, |_| {});
    let started = Instant::now();
    let err = e.embed_documents(&["a"]).unwrap_err();
    // One attempt: a server gone silent is not asked again.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(err, EmbedError::Unavailable { .. }), "{err}");
    assert!(err.to_string().contains("did not answer"), "{err}");
    assert!(matches!(e.state(), EmbedderState::Failed { .. }));
    // Until the pause is over, calls fail at once instead of waiting again.
    let again = Instant::now();
    assert!(e.embed_query("b").is_err());
    assert!(again.elapsed() < Duration::from_millis(100));
    drop(listener);
}

#[test]
fn a_rate_limit_is_waited_out_and_then_served() {
    let (url, seen) = server(|n, body| {
        if n == 0 {
            (
                429,
                "Retry-After: 1\r\n",
                r#"{"error":{"message":"slow down"}}"#.into(),
            )
        } else {
            (200, "", vectors(body))
        }
    });
    let e = embedder(&url, |_| {});
    let started = Instant::now();
    let v = e.embed_documents(&["a", "b"]).unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After was not honoured"
    );
    assert_eq!(v.len(), 2);
    assert_eq!(v.dim, 3);
    // Unit length, in the order of the inputs.
    assert!((v.row(1)[0] - 1.0 / 2f32.sqrt()).abs() < 1e-6);
    assert_eq!(
        seen.load(Ordering::SeqCst),
        3,
        "429, then the probe, then the batch"
    );
}

#[test]
fn errors_for_ever_end_in_a_named_error_after_the_retries() {
    let (url, seen) = server(|_, _| (500, "", r#"{"error":"model crashed"}"#.into()));
    let e = embedder(&url, |_| {});
    let err = e.embed_documents(&["a"]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("HTTP 500") && text.contains("model crashed"),
        "{text}"
    );
    assert_eq!(seen.load(Ordering::SeqCst), 3, "one try and two retries");
}

#[test]
fn a_refusal_is_named_with_the_servers_message_and_not_retried() {
    let (url, seen) = server(|_, _| {
        (
            404,
            "",
            r#"{"error":{"message":"model 'test-model' not found, try pulling it first"}}"#.into(),
        )
    });
    let e = embedder(&url, |_| {});
    let err = e.embed_documents(&["a"]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("HTTP 404") && text.contains("try pulling it first"),
        "{text}"
    );
    assert!(text.contains("EMBED_MODEL"), "{text}");
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[test]
fn wrong_vectors_are_refused_by_name() {
    for (bad, words) in [
        (r#"{"data":[]}"#, "0 vectors for 1 texts"),
        (r#"{"data":[{"embedding":[0.0,0.0]}]}"#, "all-zero"),
        (
            r#"{"data":[{"embedding":[1.0,"NaN"]}]}"#,
            "not an embeddings list",
        ),
        (r#"{"oops":1}"#, "not an embeddings list"),
    ] {
        let (url, _) = server(move |_, _| (200, "", bad.into()));
        let err = embedder(&url, |_| {}).embed_documents(&["a"]).unwrap_err();
        assert!(err.to_string().contains(words), "{bad}: {err}");
    }
    // A second batch of another length than the probe's.
    let (url, _) = server(|n, body| {
        if n == 0 {
            (200, "", vectors(body))
        } else {
            (200, "", r#"{"data":[{"embedding":[1.0,2.0]}]}"#.into())
        }
    });
    let err = embedder(&url, |_| {}).embed_documents(&["a"]).unwrap_err();
    assert!(
        err.to_string()
            .contains("2 dimensions where the model gave 3"),
        "{err}"
    );
}

#[test]
fn batches_go_out_in_parallel_and_come_back_in_order() {
    let (url, seen) = server(|_, body| (200, "", vectors(body)));
    let e = embedder(&url, |o| {
        o.batch = 2;
        o.concurrency = 3;
    });
    let texts: Vec<String> = (0..7).map(|i| format!("text {i}")).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let v = e.embed_documents(&refs).unwrap();
    assert_eq!(v.len(), 7);
    // Each batch's rows are [1, i, 0] for i within the batch.
    for (row, i) in (0..7).zip([0, 1, 0, 1, 0, 1, 0]) {
        assert_eq!(v.row(row)[1] > 0.0, i == 1, "row {row}");
    }
    assert_eq!(
        seen.load(Ordering::SeqCst),
        1 + 4,
        "the probe and four batches"
    );
}

#[test]
fn the_identity_follows_the_model_not_the_server() {
    let answer = |scale: f32| {
        move |_: usize, body: &str| {
            let req: serde_json::Value = serde_json::from_str(body).unwrap();
            let n = req["input"].as_array().map_or(1, Vec::len);
            let data: Vec<_> = (0..n)
                .map(|i| serde_json::json!({"index": i, "embedding": [1.0, scale, 0.5]}))
                .collect();
            (200, "", serde_json::json!({"data": data}).to_string())
        }
    };
    let (a, _) = server(answer(0.1));
    let (a_again, _) = server(answer(0.1));
    let (b, _) = server(answer(0.9));
    let id = |url: &str| embedder(url, |_| {}).model_id().to_string();
    assert!(id(&a).starts_with("http:test-model:3:"), "{}", id(&a));
    assert_eq!(
        id(&a),
        id(&a_again),
        "a restarted server with the same model"
    );
    assert_ne!(id(&a), id(&b), "another model behind the same name");
}

#[test]
fn prefixes_are_put_in_front_once() {
    let (url, _) = server(|_, body| {
        let req: serde_json::Value = serde_json::from_str(body).unwrap();
        let first = req["input"][0].as_str().unwrap().to_string();
        let kind = req["input_type"].as_str().unwrap().to_string();
        // The text seen comes back as the vector's length: 1 + prefix length.
        let probe = first.starts_with("passage: minirag identity probe")
            || first.starts_with("minirag identity probe");
        let marker = if probe { 1.0 } else { first.len() as f32 };
        let kind = if kind == "query" { 1.0 } else { 2.0 };
        (
            200,
            "",
            serde_json::json!({"data": [{"embedding": [marker, kind]}]}).to_string(),
        )
    });
    let e5 = embedder(&url, |o| o.model = "intfloat/multilingual-e5-small".into());
    let q = e5.embed_query("abc").unwrap();
    // "query: abc" is 10 characters; input_type query.
    assert!((q[0] / q[1] - 10.0).abs() < 1e-4, "{q:?}");
    let server_side = embedder(&url, |o| {
        o.model = "intfloat/multilingual-e5-small".into();
        o.server_prefixes = true;
    });
    let q = server_side.embed_query("abc").unwrap();
    assert!((q[0] / q[1] - 3.0).abs() < 1e-4, "sent bare: {q:?}");
    let d = server_side.embed_documents(&["abcd"]).unwrap();
    assert!(
        (d.row(0)[0] / d.row(0)[1] - 2.0).abs() < 1e-4,
        "input_type passage: {:?}",
        d.row(0)
    );
}

/// A loopback server that hands each connection (numbered) to `handle` on
/// a thread of its own, for servers that misbehave below HTTP.
fn raw_server(
    handle: impl Fn(usize, TcpStream) + Send + Sync + 'static,
) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    let handle = Arc::new(handle);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let n = count.fetch_add(1, Ordering::SeqCst);
            let handle = handle.clone();
            std::thread::spawn(move || handle(n, stream));
        }
    });
    (url, seen)
}

/// Answers one request on `stream` with vectors, keeping the connection.
fn answer_kept_alive(stream: &mut TcpStream) {
    let body = vectors(&read_request(stream));
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n{body}",
        body.len()
    );
}

#[test]
fn a_server_gone_silent_after_a_kept_alive_answer_is_given_up_at_the_deadline() {
    // The first connection answers once and stays open; every later
    // request, on it or on a new one, gets silence.
    let (url, _) = raw_server(|n, mut stream| {
        if n == 0 {
            answer_kept_alive(&mut stream);
        }
        let _ = read_request(&stream);
        std::thread::sleep(Duration::from_secs(60));
    });
    let e = embedder(&url, |o| o.retries = 0);
    assert!(e.ready().is_ok());
    let started = Instant::now();
    let err = e.embed_documents(&["after the probe"]).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(err, EmbedError::Unavailable { .. }), "{err}");
}

#[test]
fn headers_trickled_a_byte_at_a_time_end_at_the_deadline() {
    let (url, _) = raw_server(|_, mut stream| {
        let _ = read_request(&stream);
        for b in b"HTTP/1.1 200 OK\r\nX-Slow: "
            .iter()
            .chain([b'a'; 200].iter())
        {
            if stream.write_all(&[*b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let e = embedder(&url, |o| {
        o.read_timeout = Duration::from_secs(2);
        o.retries = 0;
    });
    let started = Instant::now();
    assert!(e.embed_query("slow").is_err());
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_retry_after_of_an_hour_ends_the_try_at_once() {
    let (url, seen) = server(|_, _| (429, "Retry-After: 3600\r\n", "{}".into()));
    let e = embedder(&url, |_| {});
    let started = Instant::now();
    let err = e.embed_query("q").unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(err.to_string().contains("HTTP 429"), "{err}");
    assert_eq!(seen.load(Ordering::SeqCst), 1, "not retried");
}

#[test]
fn redirects_are_named_and_never_followed() {
    let (elsewhere, asked) = server(|_, body| (200, "", vectors(body)));
    for target in [
        "file:///etc/passwd".to_string(),
        format!("{elsewhere}/embeddings"),
    ] {
        let (url, _) = raw_server(move |_, mut stream| {
            let _ = read_request(&stream);
            let _ = write!(
                stream,
                "HTTP/1.1 302 Found\r\nLocation: {target}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        });
        let err = embedder(&url, |_| {}).embed_query("q").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("HTTP 302") && text.contains("not followed"),
            "{text}"
        );
    }
    assert_eq!(
        asked.load(Ordering::SeqCst),
        0,
        "the other host supplied nothing"
    );
}

#[test]
fn a_server_that_just_failed_is_not_asked_again_for_the_next_file() {
    let (url, seen) = server(|n, body| {
        if n == 0 {
            (200, "", vectors(body))
        } else {
            (503, "", r#"{"error":"overloaded"}"#.into())
        }
    });
    let e = embedder(&url, |_| {});
    assert!(e.embed_documents(&["first file"]).is_err());
    assert_eq!(
        seen.load(Ordering::SeqCst),
        4,
        "the probe, one try, two retries"
    );
    let started = Instant::now();
    let err = e.embed_documents(&["second file"]).unwrap_err();
    assert!(started.elapsed() < Duration::from_millis(100));
    assert!(err.to_string().contains("HTTP 503"), "{err}");
    assert_eq!(seen.load(Ordering::SeqCst), 4, "not asked again");
}
