//! One sync per index across processes: `<DB_PATH>/.sync.lock`, held by an
//! OS lock that dies with its process, holding the holder's pid and start
//! time so a refused sync can say who holds it and for how long.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::Path;

use minirag_core::ports::{IndexError, SyncLease};

fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// `9s`, `4m12s`, `2h03m04s`.
pub fn duration(secs: i64) -> String {
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    if h > 0 {
        format!("{h}h{m:02}m{s:02}s")
    } else if m > 0 {
        format!("{m}m{s:02}s")
    } else {
        format!("{s}s")
    }
}

/// Held while the file is open and locked; truncated and unlocked on drop.
struct Held(File);

impl Drop for Held {
    fn drop(&mut self) {
        let _ = self.0.set_len(0);
        let _ = self.0.unlock();
    }
}

/// Takes the lock, or [`IndexError::Busy`] naming the holder. A lock that
/// cannot be taken for any other reason (a read-only folder) is a warning:
/// the sync runs unlocked.
pub fn take(db_path: &Path) -> Result<SyncLease, IndexError> {
    let path = db_path.join(".sync.lock");
    let unlocked = |e: &dyn std::fmt::Display| {
        Ok(SyncLease::unlocked(Some(format!(
            "could not take the sync lock at {} ({e}), so this sync ran unlocked",
            path.display()
        ))))
    };
    let opened = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path);
    let mut file = match opened {
        Ok(f) => f,
        Err(e) => return unlocked(&e),
    };
    match file.try_lock() {
        Ok(()) => {
            let written = file
                .set_len(0)
                .and_then(|()| file.rewind())
                .and_then(|()| {
                    let now = now_unix();
                    write!(
                        file,
                        "{{\"pid\": {}, \"startedAt\": \"{}\", \"started\": {now}}}",
                        std::process::id(),
                        minirag_core::time::iso_utc(now)
                    )
                })
                .and_then(|()| file.sync_data());
            match written {
                Ok(()) => Ok(SyncLease::held(Box::new(Held(file)))),
                Err(e) => unlocked(&e),
            }
        }
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            Err(IndexError::Busy {
                cause: None,
                reason: holder_message(&text, &path),
            })
        }
        Err(std::fs::TryLockError::Error(e)) => unlocked(&e),
    }
}

fn holder_message(text: &str, path: &Path) -> String {
    let pid = number_field(text, "pid");
    let started = number_field(text, "started");
    match (pid, started) {
        (Some(pid), Some(t)) if t <= now_unix() => format!(
            "Another minirag-mcp process (PID {pid}) has been syncing this index for {}. Wait for it to finish, or use a different DB_PATH.",
            duration(now_unix() - t)
        ),
        (Some(pid), _) => format!(
            "Another minirag-mcp process (PID {pid}) is syncing this index. Wait for it to finish, or use a different DB_PATH."
        ),
        _ => format!(
            "Another minirag-mcp process is syncing this index (lock: {}). Wait for it to finish, or use a different DB_PATH.",
            path.display()
        ),
    }
}

/// The integer after `"name":` in the lock file's one-line JSON object.
fn number_field(text: &str, name: &str) -> Option<i64> {
    let key = format!("\"{name}\"");
    let rest = text[text.find(&key)? + key.len()..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_holder_is_read_from_its_json_line() {
        let text = r#"{"pid": 4242, "startedAt": "2026-11-30T00:00:00Z", "started": 17}"#;
        assert_eq!(super::number_field(text, "pid"), Some(4242));
        assert_eq!(super::number_field(text, "started"), Some(17));
        assert_eq!(super::number_field(text, "missing"), None);
    }

    use super::*;

    #[test]
    fn a_second_taker_is_told_who_holds_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let lease = take(dir.path()).unwrap();
        assert_eq!(lease.warning, None);
        let err = take(dir.path()).err().unwrap().to_string();
        assert!(
            err.contains(&format!("PID {}", std::process::id())) && err.contains("syncing"),
            "{err}"
        );
        drop(lease);
        assert!(take(dir.path()).is_ok(), "released on drop");
    }

    #[test]
    fn durations_read_like_clocks() {
        assert_eq!(duration(9), "9s");
        assert_eq!(duration(252), "4m12s");
        assert_eq!(duration(7384), "2h03m04s");
    }
}
