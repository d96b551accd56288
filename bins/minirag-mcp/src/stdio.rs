//! MCP on stdio with JSON-RPC's answers to lines that are no request: rmcp
//! drops a line it cannot parse without a word, where JSON-RPC requires a
//! `-32700` parse error (and `-32600` for JSON that is no request object).
//! Lines go through here: objects on to rmcp, the rest answered here; both
//! streams of answers are written to stdout a whole line at a time.

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// The largest line held at once between stdin and rmcp.
const PIPE: usize = 1 << 20;

/// What rmcp reads and writes instead of stdin and stdout, and the task
/// that writes stdout: await it after rmcp ends, so the last answers are out.
pub(crate) fn transport() -> ((DuplexStream, DuplexStream), tokio::task::JoinHandle<()>) {
    let (to_server, server_in) = tokio::io::duplex(PIPE);
    let (server_out, from_server) = tokio::io::duplex(PIPE);
    let (errors, mut error_lines) = mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin());
        let mut to_server = to_server;
        let mut line = Vec::new();
        loop {
            line.clear();
            match stdin.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            match judge(text) {
                None => {
                    if to_server.write_all(text).await.is_err()
                        || to_server.write_all(b"\n").await.is_err()
                    {
                        break;
                    }
                }
                Some(answer) => {
                    let _ = errors.send(answer);
                }
            }
        }
        // EOF on stdin: rmcp sees its input end and stops.
    });
    let writer = tokio::spawn(async move {
        let mut from_server = BufReader::new(from_server);
        let mut stdout = tokio::io::stdout();
        let mut line = Vec::new();
        loop {
            line.clear();
            tokio::select! {
                read = from_server.read_until(b'\n', &mut line) => match read {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if stdout.write_all(&line).await.is_err() {
                            break;
                        }
                    }
                },
                Some(answer) = error_lines.recv() => {
                    if stdout.write_all(format!("{answer}\n").as_bytes()).await.is_err() {
                        break;
                    }
                }
            }
            let _ = stdout.flush().await;
        }
    });
    ((server_in, server_out), writer)
}

/// `None` for a request object (rmcp's to read); else the error to answer.
fn judge(line: &[u8]) -> Option<String> {
    let error = |code: i64, message: String| {
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}})
            .to_string()
    };
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            return Some(error(
                -32700,
                format!(
                    "parse error: the line is not UTF-8 ({e}); send one JSON-RPC message per line"
                ),
            ))
        }
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(_)) => None,
        Ok(Value::Array(_)) => Some(error(
            -32600,
            "a JSON-RPC batch is not served: MCP revisions from 2025-06-18 on have no batches; \
             send each request on a line of its own"
                .into(),
        )),
        Ok(_) => Some(error(
            -32600,
            "invalid request: a JSON-RPC message is a JSON object".into(),
        )),
        Err(e) => Some(error(
            -32700,
            format!("parse error: the line is not JSON ({e}); send one JSON-RPC message per line"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::judge;

    #[test]
    fn only_request_objects_pass() {
        assert_eq!(judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        for (line, code) in [
            (&b"not json"[..], "-32700"),
            (b"\xff\xfe{", "-32700"),
            (br#"{"unterminated": "#, "-32700"),
            (b"[1, 2]", "-32600"),
            (b"42", "-32600"),
        ] {
            let answer = judge(line).unwrap();
            assert!(
                answer.contains(code) && answer.contains("\"id\":null"),
                "{answer}"
            );
        }
    }
}
