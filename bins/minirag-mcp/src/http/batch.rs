//! JSON-RPC batches, served on MCP 2025-03-26, the one revision that has
//! them (a request of a session there carries no `MCP-Protocol-Version`,
//! or that version): each message goes through the rest of the stack on
//! its own, as if it had been POSTed alone, and the answers come back as
//! one array. On the later revisions a batch is refused with 400.

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// The revision whose sessions may send batches.
const BATCH_REVISION: &str = "2025-03-26";

/// Whether a POST with these headers may carry a batch: a session's
/// request on 2025-03-26 (`initialize` may not be batched).
pub(super) fn allowed(headers: &HeaderMap) -> bool {
    let session = headers.contains_key("mcp-session-id");
    let revision = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok());
    session && revision.is_none_or(|r| r == BATCH_REVISION)
}

/// Serves each message of `batch` through `next`; the answers of the
/// requests among them, as one JSON array (202 when all were notifications).
pub(super) async fn serve(uri: Uri, headers: HeaderMap, batch: Vec<Value>, next: Next) -> Response {
    let mut answers = Vec::new();
    for message in batch {
        let mut request = Request::new(Body::from(message.to_string()));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = uri.clone();
        *request.headers_mut() = headers.clone();
        request.headers_mut().remove(header::CONTENT_LENGTH);
        let response = next.clone().run(request).await;
        let json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
        let Ok(body) = axum::body::to_bytes(response.into_body(), usize::MAX).await else {
            continue;
        };
        answers.extend(answers_in(&body, json));
    }
    if answers.is_empty() {
        return StatusCode::ACCEPTED.into_response();
    }
    let mut r = Response::new(Body::from(Value::Array(answers).to_string()));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// The JSON-RPC answers in one response body: a JSON one, or the `data:`
/// lines of an event stream.
fn answers_in(body: &Bytes, json: bool) -> Vec<Value> {
    let is_answer = |v: &Value| {
        v.get("id").is_some() && (v.get("result").is_some() || v.get("error").is_some())
    };
    if json {
        return serde_json::from_slice::<Value>(body)
            .ok()
            .filter(is_answer)
            .into_iter()
            .collect();
    }
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .filter(is_answer)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_2025_03_26_session_may_batch() {
        let mut h = HeaderMap::new();
        assert!(!allowed(&h), "no session: an initialize");
        h.insert("mcp-session-id", HeaderValue::from_static("s"));
        assert!(allowed(&h), "no version header: 2025-03-26");
        h.insert(
            "mcp-protocol-version",
            HeaderValue::from_static("2025-06-18"),
        );
        assert!(!allowed(&h));
        h.insert(
            "mcp-protocol-version",
            HeaderValue::from_static("2025-03-26"),
        );
        assert!(allowed(&h));
    }

    #[test]
    fn answers_come_from_json_or_event_stream_bodies() {
        let sse = Bytes::from("id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n");
        assert_eq!(answers_in(&sse, false).len(), 1);
        let json =
            Bytes::from("{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-1,\"message\":\"x\"}}");
        assert_eq!(answers_in(&json, true).len(), 1);
    }
}
