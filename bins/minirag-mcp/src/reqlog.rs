//! One structured line per request on stderr (`serve --http`): what was
//! asked, how long it took and how it ended. Query text is logged only when
//! the operator asked for it (`--log-queries`): queries are user data.

use std::io::Write;
use std::time::Duration;

use serde_json::{json, Map, Value};

/// Where request lines go, and whether they may carry query text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestLog {
    pub log_queries: bool,
}

/// How a request ended, as the log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Ok,
    /// The tool ran and answered with `isError` (bad argument, missing file…).
    ToolError,
    /// The request never reached a tool: a protocol or transport refusal.
    Refused,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError => "tool_error",
            Self::Refused => "refused",
        }
    }
}

impl RequestLog {
    /// A finished tool call.
    pub(crate) fn tool(&self, tool: &str, took: Duration, outcome: Outcome, query: Option<&str>) {
        let mut line = Map::new();
        line.insert("event".into(), json!("tool"));
        line.insert("tool".into(), json!(tool));
        if let (true, Some(q)) = (self.log_queries, query) {
            line.insert("query".into(), json!(q));
        }
        self.emit(line, took, outcome);
    }

    /// An HTTP request that did not end in a tool call line.
    pub(crate) fn http(&self, request: &HttpLine<'_>, took: Duration, outcome: Outcome) {
        let mut line = Map::new();
        line.insert("event".into(), json!("http"));
        line.insert("method".into(), json!(request.method));
        line.insert("path".into(), json!(request.path));
        if let Some(rpc) = request.rpc {
            line.insert("rpc".into(), json!(rpc));
        }
        line.insert("status".into(), json!(request.status));
        self.emit(line, took, outcome);
    }

    fn emit(&self, mut line: Map<String, Value>, took: Duration, outcome: Outcome) {
        line.insert(
            "ts".into(),
            json!(minirag_core::time::iso_utc(crate::app::now_unix())),
        );
        line.insert("ms".into(), json!(took.as_secs_f64() * 1000.0));
        line.insert("outcome".into(), json!(outcome.as_str()));
        let mut text = Value::Object(line).to_string();
        text.push('\n');
        // A closed stderr must not take the server down; the line is lost.
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
}

/// The parts of an HTTP request its log line names.
pub(crate) struct HttpLine<'a> {
    pub method: &'a str,
    pub path: &'a str,
    /// The JSON-RPC method, when the body was one.
    pub rpc: Option<&'a str>,
    pub status: u16,
}
