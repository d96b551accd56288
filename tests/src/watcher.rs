//! `minirag-mcp watch --json` as a child process, its lines read on a thread.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{binary, Corpus};

/// A `minirag-mcp` server with the watcher on, as a child process.
pub struct WatchProcess {
    /// The process.
    pub child: Child,
    lines: Receiver<Value>,
}

impl WatchProcess {
    /// Starts one over `c`, with `extra` variables.
    pub fn start(c: &Corpus, extra: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(binary());
        cmd.args(["watch", "--json"])
            .current_dir(&c.root)
            .env_clear()
            .envs(c.env.iter().cloned())
            .envs(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn watch");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let v = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Self { child, lines }
    }

    /// The next line, within `within`.
    pub fn next_line(&self, within: Duration) -> Option<Value> {
        self.lines.recv_timeout(within).ok()
    }

    /// Lines up to and including the first for which `done` holds; panics
    /// after `within`.
    pub fn until(&self, within: Duration, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + within;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) => {
                    let stop = done(&v);
                    seen.push(v);
                    if stop {
                        return seen;
                    }
                }
                Err(_) => panic!("no matching watch line within {within:?}; saw {seen:?}"),
            }
        }
    }
}

impl Drop for WatchProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
