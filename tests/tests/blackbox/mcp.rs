//! The server over MCP stdio, driven by rmcp's client against the real binary.

use std::time::Instant;

use minirag_blackbox::mcp_client::{
    call, call_json, connect, finished_job, note, sync_when_free, sync_with_progress_token,
    transport, FirstProgress, ListChanged,
};
use minirag_blackbox::{binary, serve_page, Corpus};
use rmcp::model::CallToolRequestParams;
use rmcp::ServiceExt;
use serde_json::{json, Value};

fn corpus() -> Corpus {
    Corpus::new(&[
        ("a.md", "# Alpha\n\nThe alpha service listens on port 8080.\n\n## Limits\n\nAt most 64 connections."),
        ("b/b.md", "# Beta\n\nBeta stores invoices for the accounting team."),
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_instructions_and_round_trips() {
    let c = corpus();
    let started = Instant::now();
    let client = connect(&c, &[]).await;
    let init_ms = started.elapsed().as_millis();
    let info = client.peer_info().expect("server info");
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(
        instructions.contains("Sources list")
            && instructions.contains("`displayPath` copied verbatim")
    );
    assert!(instructions.chars().count() <= 1700);
    eprintln!("spawn → initialize: {init_ms} ms");

    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    assert_eq!(names, minirag_blackbox::mcp_client::TOOLS);
    for t in client.list_all_tools().await.unwrap() {
        assert!(
            t.description.as_deref().unwrap_or("").len() > 40,
            "{} description too short",
            t.name
        );
    }

    // sync in the background, then poll to a terminal state.
    let job = call_json(&client, "sync_start", json!({})).await;
    let status = finished_job(&client, &job).await;
    assert_eq!(status["state"], "succeeded", "{status}");
    assert_eq!(status["counts"]["ingested"], 2);
    let (err, text) = call(&client, "sync_status", json!({"jobId": "nope"})).await;
    assert!(err && text.contains("Unknown sync job 'nope'"));

    let q = call_json(
        &client,
        "query_documents",
        json!({"query": "which port does alpha use", "topK": 3}),
    )
    .await;
    assert_eq!(q["results"][0]["source"], c.path("a.md"));
    let pid = q["results"][0]["parentId"].as_str().unwrap();
    assert!(pid.starts_with(&format!("{}#p", c.path("a.md"))));
    assert!(q["parents"][pid].as_str().unwrap().contains("8080"));

    // Same payload from the CLI (parity).
    let (code, cli_q, _) = c.json(&["query", "which port does alpha use", "--top-k", "3"]);
    assert_eq!(code, 0);
    assert_eq!(cli_q, q);

    // Filters: a.md's folder left out by a path pattern, kept by its format.
    let sources = |v: &serde_json::Value| -> Vec<String> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["source"].as_str().unwrap().to_string())
            .collect()
    };
    let narrowed = call_json(
        &client,
        "query_documents",
        json!({"query": "which port does alpha use", "topK": 3, "excludePath": ["a.md"]}),
    )
    .await;
    assert!(!sources(&narrowed).contains(&c.path("a.md")), "{narrowed}");
    let by_format = call_json(
        &client,
        "query_documents",
        json!({"query": "which port does alpha use", "format": "md", "modifiedAfter": "2000-01-01"}),
    )
    .await;
    assert_eq!(sources(&by_format)[0], c.path("a.md"));
    let (code, cli_f, _) = c.json(&[
        "query",
        "which port does alpha use",
        "--format",
        "md",
        "--since",
        "2000-01-01",
    ]);
    assert_eq!((code, &cli_f), (0, &by_format));

    let r = call_json(&client, "read_file", json!({"filePath": c.path("a.md")})).await;
    assert!(r["text"].as_str().unwrap().starts_with("# Alpha"));
    let n = call_json(
        &client,
        "read_chunk_neighbors",
        json!({"source": c.path("a.md"), "chunkIndex": 0, "after": 5}),
    )
    .await;
    assert!(!n["chunks"].as_array().unwrap().is_empty());

    let d = call_json(&client, "ingest_data", json!({"data": "# Gamma\n\nGamma notes about kites.", "source": "note-1", "format": "markdown"})).await;
    assert_eq!(
        (d["source"].as_str(), d["title"].as_str()),
        (Some("note-1"), Some("Gamma"))
    );
    let l = call_json(&client, "list_files", json!({})).await;
    assert_eq!(l["files"].as_array().unwrap().len(), 3);
    let del = call_json(&client, "delete_file", json!({"source": "note-1"})).await;
    assert!(del["deletedChunks"].as_u64().unwrap() >= 1);
    let s = call_json(&client, "status", json!({})).await;
    assert_eq!(s["sourceCount"], 2);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn documented_errors() {
    let c = corpus();
    let client = connect(&c, &[]).await;
    let cases = [
        (
            "query_documents",
            json!({"query": " "}),
            "query must not be empty",
        ),
        (
            "query_documents",
            json!({"query": "x", "topK": 0}),
            "topK must be at least 1, got 0",
        ),
        (
            "query_documents",
            json!({"query": "x", "bogus": 1}),
            "bogus",
        ),
        (
            "query_documents",
            json!({"query": "x", "format": ["md", "doc"]}),
            "unknown format \"doc\"; use one of: md, txt, html",
        ),
        (
            "query_documents",
            json!({"query": "x", "modifiedAfter": "last week"}),
            "modifiedAfter \"last week\" is not a date; write 2026-12-01",
        ),
        (
            "query_documents",
            json!({"query": "x", "excludePath": "**/[x"}),
            "path pattern \"**/[x\" cannot be used",
        ),
        (
            "ingest_file",
            json!({"filePath": "relative.md"}),
            "Path must be absolute",
        ),
        (
            "ingest_file",
            json!({"filePath": "/etc/hostname"}),
            "outside",
        ),
        (
            "ingest_file",
            json!({"filePath": c.root.display().to_string()}),
            "is a folder",
        ),
        (
            "ingest_file",
            json!({"filePath": c.path("x.py")}),
            "Unsupported file extension '.py'",
        ),
        (
            "read_file",
            json!({"filePath": c.path("missing.md")}),
            "File does not exist",
        ),
        ("read_file", json!({"filePath": c.path("b")}), "Not a file"),
        (
            "read_file",
            json!({"filePath": c.path("a.md")}),
            "Source not found in index",
        ),
        ("read_file", json!({}), "Provide filePath or source"),
        (
            "ingest_data",
            json!({"data": "x", "source": "s", "format": "pdf"}),
            "format must be one of",
        ),
        ("ingest_url", json!({"url": "file:///etc/passwd"}), "http"),
        (
            "delete_file",
            json!({"source": "nothing"}),
            "Source not found in index",
        ),
    ];
    std::fs::write(c.root.join("x.py"), "print()").unwrap();
    for (tool, args, want) in cases {
        let (err, text) = call(&client, tool, args.clone()).await;
        assert!(err, "{tool} {args} should fail");
        assert!(text.contains(want), "{tool} {args}: {text}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_configuration_keeps_status_answering() {
    let c = corpus();
    let client = connect(&c, &[("RAG_HYBRID_WEIGHT", "1.5")]).await;
    let s = call_json(&client, "status", json!({})).await;
    assert!(s["configError"]
        .as_str()
        .unwrap()
        .contains("RAG_HYBRID_WEIGHT"));
    let (err, text) = call(&client, "list_files", json!({})).await;
    assert!(
        err && text.starts_with("Configuration error") && text.contains("RAG_HYBRID_WEIGHT"),
        "{text}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_model_the_server_stays_useful() {
    let c = corpus();
    let client = connect(&c, &[("MODEL_PATH", "/nonexistent/model")]).await;
    let out = call_json(&client, "ingest_file", json!({"filePath": c.path("a.md")})).await;
    assert!(out["notice"].as_str().unwrap().contains("without vectors"));
    let q = call_json(&client, "query_documents", json!({"query": "alpha port"})).await;
    assert_eq!(q["results"][0]["source"], c.path("a.md"));
    assert!(q["notice"].as_str().unwrap().contains("keyword-only"));
    let s = call_json(&client, "status", json!({})).await;
    assert!(s["vectorlessChunkCount"].as_u64().unwrap() > 0);
    client.cancel().await.unwrap();
}

/// A loopback HTTP server that answers every request with one HTML page and
/// counts the connections it accepted.
#[tokio::test(flavor = "multi_thread")]
async fn ingest_url_refuses_loopback_unless_allowed() {
    let (url, hits) = serve_page("<html><head><title>Local Page</title></head><body><h1>Kites</h1><p>LOOPBACK-BODY about kites.</p></body></html>");
    let c = corpus();
    let client = connect(&c, &[]).await;
    let (err, text) = call(&client, "ingest_url", json!({"url": url})).await;
    assert!(
        err && text.contains("loopback") && text.contains("ALLOW_PRIVATE_URLS"),
        "{text}"
    );
    // The same page through addresses that embed 127.0.0.1: NAT64's
    // well-known prefix and 6to4. Each is judged by the address inside it.
    let port = url::Url::parse(&url).unwrap().port().unwrap();
    for wrapped in [
        format!("http://[64:ff9b::7f00:1]:{port}/"),
        format!("http://[2002:7f00:1::]:{port}/"),
    ] {
        let (err, text) = call(&client, "ingest_url", json!({"url": wrapped})).await;
        assert!(
            err && text.contains("loopback") && text.contains("ALLOW_PRIVATE_URLS"),
            "{wrapped}: {text}"
        );
    }
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no request reached the server"
    );
    client.cancel().await.unwrap();

    let client = connect(&c, &[("ALLOW_PRIVATE_URLS", "1")]).await;
    let out = call_json(&client, "ingest_url", json!({"url": url})).await;
    assert_eq!(
        (out["source"].as_str(), out["title"].as_str()),
        (Some(url.as_str()), Some("Local Page"))
    );
    let q = call_json(
        &client,
        "query_documents",
        json!({"query": "LOOPBACK-BODY"}),
    )
    .await;
    assert_eq!(q["results"][0]["source"], url);
    client.cancel().await.unwrap();
}

/// A client that records the progress notifications it receives.
#[derive(Clone, Default)]
struct Recorder(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl rmcp::ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0
            .lock()
            .unwrap()
            .push(params.message.unwrap_or_default());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sync_with_a_progress_token_reports_each_file() {
    use rmcp::model::ServerResult;
    let c = corpus();
    let recorder = Recorder::default();
    let client = recorder.clone().serve(transport(&c, &[])).await.unwrap();
    let handle = sync_with_progress_token(&client).await;
    let ServerResult::CallToolResult(result) = handle.await_response().await.unwrap() else {
        panic!("not a tool result")
    };
    let text = result.content[0].as_text().unwrap().text.clone();
    let job: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(job["state"], "succeeded", "{job}");
    assert_eq!(job["counts"]["ingested"], 2);
    // Notifications precede the response on the wire; let the handler run.
    for _ in 0..10_000 {
        if recorder.0.lock().unwrap().len() >= 2 {
            break;
        }
        tokio::task::yield_now().await;
    }
    let seen = recorder.0.lock().unwrap().clone();
    assert!(
        seen.iter().filter(|m| m.starts_with("ingested ")).count() == 2,
        "{seen:?}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_sync_stops_between_files_and_keeps_what_it_did() {
    const FILES: usize = 30;
    let c = Corpus::generated(FILES, note);
    let woke = std::sync::Arc::new(tokio::sync::Notify::new());
    let client = FirstProgress(woke.clone())
        .serve(transport(&c, &[]))
        .await
        .unwrap();
    let handle = sync_with_progress_token(&client).await;
    woke.notified().await;
    handle
        .cancel(Some("user pressed stop".into()))
        .await
        .unwrap();

    // Once the server has let go of the sync lock, a new sync may start; it
    // finds the files the cancelled one kept and indexes only the rest.
    let job = sync_when_free(&client).await;
    let status = finished_job(&client, &job).await;
    assert_eq!(status["state"], "succeeded", "{status}");
    // Two-phase sync: a kept file is embedded already (skipped now) or was
    // stored keyword-only (embedded now, not converted again).
    let skipped = status["counts"]["skipped"].as_u64().unwrap() as usize;
    let reembedded = status["counts"]["reembedded"].as_u64().unwrap() as usize;
    let ingested = status["counts"]["ingested"].as_u64().unwrap() as usize;
    let kept = skipped + reembedded;
    eprintln!("cancelled sync kept {kept} of {FILES} files ({reembedded} not yet embedded)");
    assert!(kept >= 1, "the cancelled sync kept nothing: {status}");
    assert!(
        skipped < FILES,
        "the cancelled sync ran to the end: {status}"
    );
    assert_eq!(kept + ingested, FILES, "{status}");
    let list = call_json(&client, "list_files", json!({})).await;
    assert_eq!(list["files"].as_array().unwrap().len(), FILES, "{list}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn annotations_structured_output_and_resources() {
    let c = Corpus::new(&[
        (
            "guide.md",
            "# Guide\n\nThe error ERR_CONN_RESET means the peer closed the socket.",
        ),
        (
            "food/soup.md",
            "# Soup\n\nBoil water, add vegetables and salt.",
        ),
    ]);
    // A loopback page for ingest_url.
    let web = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let page = format!("http://{}/kites.txt", web.local_addr().unwrap());
    std::thread::spawn(move || {
        use std::io::{BufRead, Write};
        for stream in web.incoming().flatten() {
            let mut line = String::new();
            let mut reader = std::io::BufReader::new(&stream);
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let body = "Kites need steady wind.";
            let _ = write!(
                &stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let (heard, mut woke) = tokio::sync::watch::channel(0);
    let client = ListChanged {
        heard,
        version: None,
    }
    .serve(transport(&c, &[("ALLOW_PRIVATE_URLS", "1")]))
    .await
    .unwrap();

    // (readOnly, destructive, idempotent, openWorld)
    let hints = |name: &str| match name {
        "query_documents"
        | "read_file"
        | "read_chunk_neighbors"
        | "list_files"
        | "status"
        | "sync_status" => (true, false, true, false),
        "delete_file" | "ingest_file" | "ingest_data" | "sync_start" => (false, true, true, false),
        "ingest_url" => (false, true, false, true),
        other => panic!("unexpected tool {other}"),
    };
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 11);
    let mut validators = std::collections::HashMap::new();
    for t in &tools {
        let a = t.annotations.as_ref().expect("annotations");
        assert!(a.title.is_some() && t.title.is_some(), "{}", t.name);
        let got = (
            a.read_only_hint.unwrap(),
            a.destructive_hint.unwrap(),
            a.idempotent_hint.unwrap(),
            a.open_world_hint.unwrap(),
        );
        assert_eq!(got, hints(&t.name), "{}", t.name);
        let schema = Value::Object(t.output_schema.as_deref().expect("outputSchema").clone());
        assert_eq!(schema["type"], "object", "{}", t.name);
        validators.insert(
            t.name.to_string(),
            jsonschema::validator_for(&schema).unwrap(),
        );
    }
    // A job's state and phase, and a listed file's state, are enums a
    // client can read from the schema.
    let enums: [(&str, &[&str]); 2] = [
        (
            "sync_status",
            &[
                "running",
                "succeeded",
                "failed",
                "indexing",
                "recognising",
                "embedding",
            ],
        ),
        (
            "list_files",
            &[
                "ingested",
                "stale",
                "stale_scheme",
                "not_ingested",
                "unlisted",
                "unreadable",
            ],
        ),
    ];
    for (tool, values) in enums {
        let t = tools.iter().find(|t| t.name == tool).unwrap();
        let schema = Value::Object(t.output_schema.as_deref().unwrap().clone()).to_string();
        for value in values {
            assert!(
                schema.contains(&format!("\"{value}\"")),
                "{tool} {value}: {schema}"
            );
        }
    }
    // Every tool's structuredContent matches its schema and the text block.
    let structured = |name: &str, r: &rmcp::model::CallToolResult| -> Value {
        assert_ne!(r.is_error, Some(true), "{name}: {:?}", r.content);
        let s = r.structured_content.clone().expect("structuredContent");
        if let Err(e) = validators[name].validate(&s) {
            panic!("{name}: {e} in {s}");
        }
        let text = r.content[0].as_text().unwrap().text.clone();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), s, "{name}");
        s
    };
    let run = |name: &str, args: Value| {
        let params = CallToolRequestParams::new(name.to_string())
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        client.call_tool(params)
    };
    let job = run("sync_start", json!({})).await.unwrap();
    let job = structured("sync_start", &job);
    let done = finished_job(&client, &job).await;
    assert_eq!(done["state"], "succeeded", "{done}");
    woke.changed().await.unwrap(); // list_changed after the sync added documents

    let guide = c.path("guide.md");
    for (name, args) in [
        ("sync_status", json!({"jobId": job["jobId"]})),
        ("query_documents", json!({"query": "ERR_CONN_RESET"})),
        (
            "query_documents",
            json!({"query": "ERR_CONN_RESET", "explain": true}),
        ),
        ("read_file", json!({"source": guide})),
        (
            "read_chunk_neighbors",
            json!({"source": guide, "chunkIndex": 0}),
        ),
        ("list_files", json!({})),
        ("status", json!({})),
        ("ingest_file", json!({"filePath": guide})),
        (
            "ingest_data",
            json!({"source": "note-1", "data": "Kites need wind."}),
        ),
        ("delete_file", json!({"source": "note-1"})),
        ("ingest_url", json!({"url": page})),
    ] {
        let r = run(name, args).await.unwrap();
        structured(name, &r);
    }

    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates.len(), 1);
    assert_eq!(templates[0].uri_template, "minirag://doc/{source}");
    let resources = client.list_all_resources().await.unwrap();
    let names: Vec<&str> = resources.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, [c.path("food/soup.md"), guide.clone(), page.clone()]);
    let read = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            resources[1].uri.clone(),
        ))
        .await
        .unwrap();
    let text = match &read.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    };
    assert!(text.contains("ERR_CONN_RESET"), "{text}");
    let refused = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "minirag://doc/%2Fetc%2Fpasswd",
        ))
        .await;
    assert!(refused.is_err(), "an unindexed source is not readable");
    client.cancel().await.unwrap();
}

#[test]
fn an_older_client_gets_its_protocol_version() {
    use std::io::{BufRead, BufReader, Write};
    let c = Corpus::new(&[("a.md", "# A\n\nalpha")]);
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut child = std::process::Command::new(binary())
            .env_clear()
            .envs(c.env.iter().cloned())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "old-client", "version": "0"}}});
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{init}").unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
        drop(stdin);
        child.wait().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sync_job_started_through_one_process_is_read_through_another() {
    let c = corpus();
    let one = connect(&c, &[]).await;
    let other = connect(&c, &[]).await;
    let job = call_json(&one, "sync_start", json!({})).await;
    let here = finished_job(&one, &job).await;
    assert_eq!(here["state"], "succeeded", "{here}");
    let there = call_json(&other, "sync_status", json!({"jobId": job["jobId"]})).await;
    for field in [
        "jobId",
        "state",
        "startedAt",
        "finishedAt",
        "counts",
        "errors",
        "progress",
    ] {
        assert_eq!(there[field], here[field], "{field}: {there} against {here}");
    }
    let (err, text) = call(&other, "sync_status", json!({"jobId": "../../etc/passwd"})).await;
    assert!(err && text.contains("Unknown sync job"), "{text}");
}

/// The tool list as the TypeScript SDK's validator reads it: Ajv with
/// ajv-formats (installed by `.ci/run` under `target/ajv-node`), through
/// Node. Any warning (an unknown format) or compile error fails.
#[tokio::test(flavor = "multi_thread")]
async fn ajv_compiles_every_tool_schema_without_a_warning() {
    use std::io::Write;
    let modules = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/ajv-node/node_modules")
        .canonicalize()
        .expect("Ajv expected under target/ajv-node: run .ci/run, or `npm install --prefix target/ajv-node ajv@8.20.0 ajv-formats@3.0.1`");
    let c = corpus();
    let client = connect(&c, &[]).await;
    let tools = client.list_all_tools().await.unwrap();
    client.cancel().await.unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/ajv_check.mjs");
    let mut node = std::process::Command::new("node")
        .arg(script)
        .env("AJV_NODE_MODULES", &modules)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node runs");
    node.stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(&tools).unwrap().as_bytes())
        .unwrap();
    let out = node.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("22 schemas compiled, 0 warnings"), "{text}");
}

/// JSON-RPC on stdio: a line that is not JSON gets `-32700`, a batch or a
/// bare value `-32600`, and the session goes on.
#[test]
fn lines_that_are_no_request_are_answered_on_stdio() {
    use std::io::{BufRead, BufReader, Write};
    let c = corpus();
    let mut child = std::process::Command::new(binary())
        .current_dir(&c.root)
        .env_clear()
        .envs(c.env.iter().cloned())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"not json\n\xff\xfe broken utf-8\n[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n42\n")
        .unwrap();
    stdin
        .write_all(
            br#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        )
        .unwrap();
    stdin.write_all(b"\n").unwrap();
    stdin.flush().unwrap();
    let mut answers: Vec<Value> = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        answers.push(serde_json::from_str(&line.unwrap()).unwrap());
        if answers.len() == 5 {
            break;
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let codes: Vec<i64> = answers
        .iter()
        .filter_map(|a| a["error"]["code"].as_i64())
        .collect();
    assert_eq!(codes, [-32700, -32700, -32600, -32600], "{answers:?}");
    assert!(answers.iter().all(|a| a["jsonrpc"] == "2.0"));
    let init = answers.iter().find(|a| a["id"] == 7).unwrap();
    assert_eq!(
        init["result"]["serverInfo"]["name"], "minirag-mcp",
        "{init}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn language_and_declared_fields_narrow_a_search() {
    let c = Corpus::new(&[
        (
            "outage.md",
            "---\ntags: [incident, db]\n---\n# Outage\n\nThe database ran out of disk at night, and the \
             team moved the oldest backups to the archive before restarting it.",
        ),
        (
            "ru.md",
            "# База данных\n\nКоманда перенесла базу данных на новый сервер. Резервные копии \
             database снимаются каждую ночь и хранятся тридцать дней.",
        ),
    ])
    .without_model();
    let docx = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../adapters/convert/tests/fixtures/memo.docx");
    std::fs::copy(docx, c.root.join("memo.docx")).unwrap();
    let client = connect(&c, &[]).await;
    let job = call_json(&client, "sync_start", json!({})).await;
    assert_eq!(finished_job(&client, &job).await["state"], "succeeded");
    let sources = |v: &Value| -> Vec<String> {
        let mut s: Vec<String> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["source"].as_str().unwrap().to_string())
            .collect();
        s.dedup();
        s
    };
    let q = |extra: Value| {
        let mut args = json!({"query": "database budget", "topK": 10});
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        args
    };
    let ru = call_json(&client, "query_documents", q(json!({"language": "ru"}))).await;
    assert_eq!(sources(&ru), [c.path("ru.md")], "{ru}");
    let tagged = call_json(
        &client,
        "query_documents",
        q(json!({"meta": {"tags": "INCIDENT"}, "language": ["en", "ru"]})),
    )
    .await;
    assert_eq!(sources(&tagged), [c.path("outage.md")], "{tagged}");
    let by_author = call_json(
        &client,
        "list_files",
        json!({"meta": {"author": "Finance Team"}}),
    )
    .await;
    let files = by_author["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{by_author}");
    assert_eq!(files[0]["source"], c.path("memo.docx"));
    assert_eq!(files[0]["meta"]["author"], json!(["Finance Team"]));
    let read = call_json(&client, "read_file", json!({"filePath": c.path("ru.md")})).await;
    assert_eq!(read["language"], "ru", "{read}");
    let (err, text) = call(
        &client,
        "query_documents",
        q(json!({"meta": {"team": "finance"}})),
    )
    .await;
    assert!(err, "{text}");
    assert!(
        text.contains("\"team\"") && text.contains("author") && text.contains("tags"),
        "{text}"
    );
    client.cancel().await.unwrap();
}

/// Where a schema writes a type array (`"type": ["string", "null"]`), as
/// JSON pointers. Gemini-style clients refuse them, and Inspector warns.
fn type_arrays(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![(String::new(), schema)];
    while let Some((at, v)) = stack.pop() {
        match v {
            Value::Object(o) => {
                if o.get("type").is_some_and(Value::is_array) {
                    found.push(at.clone());
                }
                stack.extend(o.iter().map(|(k, v)| (format!("{at}/{k}"), v)));
            }
            Value::Array(a) => {
                stack.extend(a.iter().enumerate().map(|(i, v)| (format!("{at}/{i}"), v)));
            }
            _ => {}
        }
    }
    found
}

/// Every input and output schema of `tools/list` is portable: no type
/// arrays anywhere (issue 76, item 9).
#[tokio::test(flavor = "multi_thread")]
async fn no_tool_schema_writes_a_type_array() {
    let c = corpus();
    let client = connect(&c, &[]).await;
    let tools = client.list_all_tools().await.unwrap();
    client.cancel().await.unwrap();
    let mut found = Vec::new();
    for t in &tools {
        let input = Value::Object((*t.input_schema).clone());
        found.extend(
            type_arrays(&input)
                .into_iter()
                .map(|p| format!("{} input{p}", t.name)),
        );
        if let Some(output) = &t.output_schema {
            let output = Value::Object((**output).clone());
            found.extend(
                type_arrays(&output)
                    .into_iter()
                    .map(|p| format!("{} output{p}", t.name)),
            );
        }
    }
    assert_eq!(tools.len(), 11);
    assert!(found.is_empty(), "{} type arrays: {found:#?}", found.len());
}
