//! Running a tool as a contained child: an address-space cap, a time limit,
//! one thread, and its output collected without blocking on a full pipe.
//! A hostile image can then crash, hang or bloat only the child.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

/// What a child may use.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall time a child may run.
    pub time: Duration,
    /// RLIMIT_AS, bytes.
    pub memory: u64,
}

/// Runs `cmd` with `input` on stdin; its stdout, or a message that says
/// what went wrong (exit status and the last stderr line, time limit).
pub(crate) fn run(
    mut cmd: Command,
    input: Option<&[u8]>,
    limits: Limits,
) -> Result<Vec<u8>, String> {
    let memory = limits.memory;
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    // Tesseract's OpenMP pool would otherwise take every core per page.
    .env("OMP_THREAD_LIMIT", "1");
    // SAFETY: the closure runs in the forked child before exec and calls
    // only setrlimit, which is async-signal-safe; it touches no memory of
    // the parent beyond the copied `memory` value.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(move || {
            let cap = libc::rlimit {
                rlim_cur: memory as libc::rlim_t,
                rlim_max: memory as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &cap) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let program = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = channel();
    std::thread::scope(|s| {
        if let (Some(mut pipe), Some(bytes)) = (stdin.take(), input) {
            // A child that dies early closes its stdin: the write error is
            // then reported through its exit status instead.
            s.spawn(move || {
                let _ = pipe.write_all(bytes);
            });
        }
        let errors = s.spawn(move || {
            let mut e = Vec::new();
            let _ = stderr.read_to_end(&mut e);
            e
        });
        s.spawn(move || {
            let mut out = Vec::new();
            let _ = stdout.read_to_end(&mut out);
            let _ = tx.send(out);
        });
        let out = match rx.recv_timeout(limits.time) {
            Ok(out) => out,
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{program} took longer than {} s and was stopped",
                    limits.time.as_secs()
                ));
            }
        };
        let status = child.wait().map_err(|e| format!("{program}: {e}"))?;
        let errors = errors.join().unwrap_or_default();
        if status.success() {
            Ok(out)
        } else {
            let text = String::from_utf8_lossy(&errors);
            let last = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            Err(format!("{program} failed ({status}): {}", last.trim()))
        }
    })
}
