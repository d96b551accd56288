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
