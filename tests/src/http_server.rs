//! `minirag-mcp serve --http 127.0.0.1:0` as a child process: its URL, and
//! its request log read on a thread so the pipe never fills.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::binary;

/// `minirag-mcp serve --http` as a child process.
pub struct HttpServer {
    /// The process.
    pub child: Child,
    /// `http://127.0.0.1:PORT/mcp`
    pub url: String,
    lines: Receiver<String>,
}

impl HttpServer {
    /// Starts the server and waits for its `listening` line.
    pub fn start(env: &[(String, String)], cwd: &Path, args: &[&str]) -> Self {
        Self::spawn(Command::new(binary()), env, cwd, args)
    }

    /// [`HttpServer::start`] with the open-file limit lowered to `files`
    /// (the shell's `ulimit -n`, then the binary in its place).
    pub fn start_with_file_limit(
        env: &[(String, String)],
        cwd: &Path,
        args: &[&str],
        files: u32,
    ) -> Self {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(format!("ulimit -n {files} && exec \"$0\" \"$@\""))
            .arg(binary());
        Self::spawn(cmd, env, cwd, args)
    }

    fn spawn(mut cmd: Command, env: &[(String, String)], cwd: &Path, args: &[&str]) -> Self {
        cmd.arg("serve")
            .arg("--http")
            .arg("127.0.0.1:0")
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .envs(env.iter().cloned())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn serve --http");
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let first = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("serve --http printed its listening line");
        let v: Value =
            serde_json::from_str(&first).unwrap_or_else(|_| panic!("not a JSON line: {first}"));
        let url = v["url"].as_str().expect("listening url").to_string();
        Self { child, url, lines }
    }

    /// `http://127.0.0.1:PORT`
    pub fn base(&self) -> String {
        self.url.trim_end_matches("/mcp").to_string()
    }

    /// The next log line (as JSON) for which `wanted` holds, within `within`.
    pub fn log_line(&self, within: Duration, wanted: impl Fn(&Value) -> bool) -> Option<Value> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let v: Value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                    if wanted(&v) {
                        return Some(v);
                    }
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// Every log line printed so far, without waiting.
    pub fn log_so_far(&self) -> Vec<String> {
        self.lines.try_iter().collect()
    }

    /// Sends a signal (`libc::SIGTERM`, `libc::SIGKILL`) to the server.
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child's pid, which wait() has not reaped.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, signal) };
        assert_eq!(rc, 0, "kill({signal})");
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
