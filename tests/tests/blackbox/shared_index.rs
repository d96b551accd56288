//! One PostgreSQL index, two machines: processes with different roots
//! share a schema. One syncs while the other answers queries, and neither
//! loses the other's files.

use minirag_blackbox::mcp_client::{call_json, connect, note};
use minirag_blackbox::{fresh_schema, test_pg_url, Corpus};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn one_syncs_while_another_answers_and_nothing_is_lost() {
    let url = test_pg_url();
    let schema = fresh_schema("shared");
    let a = Corpus::generated(30, note).share(&url, &schema);
    let b = Corpus::new(&[(
        "gateway.md",
        "# Gateway\n\nThe ZEBRA-7 gateway forwards invoices to the ledger.",
    )])
    .share(&url, &schema);
    let (code, _, err) = b.json(&["sync"]);
    assert_eq!(code, 0, "{err}");

    let server = connect(&b, &[]).await;
    let (mut child, lines) = a.spawn_sync();
    let mut answered_during = 0;
    // Every progress line of A's sync is a moment to ask B's server.
    for line in lines {
        let line = line.unwrap();
        if !line.contains(".md") {
            continue;
        }
        let q = call_json(
            &server,
            "query_documents",
            json!({"query": "ZEBRA-7 gateway", "topK": 3}),
        )
        .await;
        assert_eq!(
            q["results"][0]["source"],
            b.path("gateway.md"),
            "during A's sync: {line}"
        );
        answered_during += 1;
    }
    assert!(child.wait().unwrap().success());
    assert!(
        answered_during >= 10,
        "B answered {answered_during} times while A synced"
    );

    // B's server sees A's files, and B's own.
    let q = call_json(
        &server,
        "query_documents",
        json!({"query": "shipment 17 pallets", "topK": 3}),
    )
    .await;
    assert_eq!(q["results"][0]["source"], a.path("f17.md"));
    let s = call_json(&server, "status", json!({})).await;
    assert_eq!(s["sourceCount"], 31, "{s}");

    // Each sync owns only its own roots: B's sync deletes none of A's
    // files, A's none of B's.
    let (code, v, err) = b.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["counts"]["deleted"], 0, "{v}");
    let (code, v, err) = a.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        (
            v["counts"]["deleted"].clone(),
            v["counts"]["skipped"].clone()
        ),
        (json!(0), json!(30)),
        "{v}"
    );
    let (_, s, _) = a.json(&["status"]);
    assert_eq!(
        (
            s["sourceCount"].clone(),
            s["chunkCount"].as_u64().unwrap() > 30
        ),
        (json!(31), true),
        "{s}"
    );
    server.cancel().await.unwrap();
}

/// Three `serve --http` processes on three loopback ports share one
/// PostgreSQL index, and a 2026-07-28 client sends each request to the next
/// port in turn, as a proxy without stickiness would: a sync started through
/// one is followed through the others, a listener on another hears it, and
/// every request succeeds.
#[tokio::test(flavor = "multi_thread")]
async fn three_processes_answer_any_request_in_turn() {
    use minirag_blackbox::http_server::HttpServer;
    use minirag_blackbox::modern::{body, call_tool, messages, post, VERSION};

    let url = test_pg_url();
    let schema = fresh_schema("three");
    let c = Corpus::generated(12, note).share(&url, &schema);
    let servers: Vec<HttpServer> = (0..3)
        .map(|_| HttpServer::start(&c.env, &c.root, &[]))
        .collect();
    let urls: Vec<&str> = servers.iter().map(|s| s.url.as_str()).collect();
    let http = reqwest::Client::new();

    // A listener on the third process.
    let mut listen = http
        .post(urls[2])
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSION)
        .header("mcp-method", "subscriptions/listen")
        .body(
            body(
                1,
                "subscriptions/listen",
                json!({"notifications": {"resourcesListChanged": true}}),
            )
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    let mut heard = String::new();
    while messages(&heard).is_empty() {
        let chunk = listen.chunk().await.unwrap().expect("the acknowledgment");
        heard.push_str(&String::from_utf8_lossy(&chunk));
    }

    let mut turn = 0usize;
    let mut next = || {
        turn += 1;
        urls[turn % 3]
    };
    let started = call_tool(&http, next(), 2, "sync_start", json!({})).await;
    let job = started["jobId"].as_str().expect("a job id").to_string();
    let mut polls = 0;
    let done = loop {
        let s = call_tool(&http, next(), 3, "sync_status", json!({"jobId": job})).await;
        polls += 1;
        if s["state"] == "succeeded" || s["state"] == "failed" {
            break s;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(
        (done["state"].as_str(), done["counts"]["ingested"].as_u64()),
        (Some("succeeded"), Some(12)),
        "{done}"
    );
    assert!(polls >= 1);
    for i in 0..9 {
        let q = call_tool(
            &http,
            next(),
            10 + i,
            "query_documents",
            json!({"query": format!("shipment {i} pallets"), "topK": 3}),
        )
        .await;
        assert_eq!(
            q["results"][0]["source"],
            c.path(&format!("f{i:02}.md")),
            "{q}"
        );
    }
    let a = post(&http, next(), &body(30, "resources/list", json!({})), &[]).await;
    assert_eq!(
        a.response["result"]["resources"].as_array().map(Vec::len),
        Some(12),
        "{a:?}"
    );

    // The third process heard of a sync the first ran (its fingerprint poll).
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    while !messages(&heard)
        .iter()
        .any(|m| m["method"] == "notifications/resources/list_changed")
    {
        let chunk = tokio::time::timeout_at(deadline, listen.chunk())
            .await
            .expect("the listener hears the sync within a minute")
            .unwrap()
            .expect("the stream stays open");
        heard.push_str(&String::from_utf8_lossy(&chunk));
    }
}
