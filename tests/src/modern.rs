//! A raw MCP 2026-07-28 client over HTTP: every request stands alone, with
//! its protocol version and capabilities in `_meta` and the `Mcp-Method`
//! and `Mcp-Name` headers, and no session. What a stateless client (or a
//! proxy in front of several servers) sends, byte for byte.

use serde_json::{json, Value};

/// The MCP protocol version these tests speak.
pub const VERSION: &str = "2026-07-28";

/// The answer to one POST: its HTTP status, the JSON-RPC response, and the
/// notifications that came before it on the response stream.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The JSON-RPC response.
    pub response: Value,
    /// Notifications sent before it.
    pub notifications: Vec<Value>,
    /// Whether a session header came back.
    pub session_header: bool,
}

/// `_meta` a 2026-07-28 request carries.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "raw-2026", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// The request body for `method` with `params` (plus `_meta`).
pub fn body(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The `Mcp-Name` a request names: the tool, or the resource's URI.
fn name_of(method: &str, params: &Value) -> Option<String> {
    let key = match method {
        "tools/call" => "name",
        "resources/read" => "uri",
        _ => return None,
    };
    params[key].as_str().map(str::to_string)
}

/// POSTs `body` to `url` with the headers a 2026 client sends (derived from
/// the body); `extra` replaces one of them, or removes it when empty.
pub async fn post(
    http: &reqwest::Client,
    url: &str,
    body: &Value,
    extra: &[(&str, &str)],
) -> Answer {
    let method = body["method"].as_str().unwrap_or_default().to_string();
    let mut headers: Vec<(String, String)> = vec![
        ("content-type".into(), "application/json".into()),
        (
            "accept".into(),
            "application/json, text/event-stream".into(),
        ),
        ("mcp-protocol-version".into(), VERSION.into()),
        ("mcp-method".into(), method.clone()),
    ];
    if let Some(name) = name_of(&method, &body["params"]) {
        headers.push(("mcp-name".into(), name));
    }
    for (k, v) in extra {
        headers.retain(|(name, _)| !name.eq_ignore_ascii_case(k));
        if !v.is_empty() {
            headers.push((k.to_string(), v.to_string()));
        }
    }
    let mut request = http.post(url);
    for (k, v) in &headers {
        request = request.header(k, v);
    }
    let response = request
        .body(body.to_string())
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let session_header = response.headers().contains_key("mcp-session-id");
    let text = response.text().await.unwrap_or_default();
    let mut messages = messages(&text);
    let at = messages.iter().position(|m| m.get("id").is_some());
    let response = match at {
        Some(i) => messages.remove(i),
        None => Value::Null,
    };
    Answer {
        status,
        response,
        notifications: messages,
        session_header,
    }
}

/// The JSON messages of a body: one JSON object, or an SSE stream of them.
pub fn messages(text: &str) -> Vec<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return vec![v];
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// A tool call's structured result, asserting it succeeded.
pub async fn call_tool(
    http: &reqwest::Client,
    url: &str,
    id: u64,
    tool: &str,
    args: Value,
) -> Value {
    let body = body(id, "tools/call", json!({"name": tool, "arguments": args}));
    let a = post(http, url, &body, &[]).await;
    assert_eq!(a.status, 200, "{tool}: {a:?}");
    let result = &a.response["result"];
    assert_ne!(result["isError"], json!(true), "{tool}: {a:?}");
    result["structuredContent"].clone()
}
