//! A full disk is a clean error: the index lives on a small tmpfs (root
//! mounts one, as CI runs), a sync runs out of space part-way, the index
//! still opens with every file acknowledged before, and once space is freed
//! the next sync converges.

use std::path::{Path, PathBuf};
use std::process::Command;

use minirag_blackbox::Corpus;
use serde_json::Value;

/// A tmpfs mounted for this test, unmounted when dropped.
struct Tmpfs {
    at: PathBuf,
}

fn as_root(args: &[&str]) -> std::process::Output {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let mut cmd = if root {
        Command::new(args[0])
    } else {
        let mut c = Command::new("sudo");
        c.arg("-n").arg(args[0]);
        c
    };
    cmd.args(&args[1..]).output().expect("mount runs")
}

impl Tmpfs {
    fn mount(at: &Path, bytes: u64) -> Self {
        std::fs::create_dir_all(at).unwrap();
        let size = format!("size={bytes}");
        let out = as_root(&[
            "mount",
            "-t",
            "tmpfs",
            "-o",
            &size,
            "tmpfs",
            at.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "mounting a tmpfs needs root (CI runs as root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Self {
            at: at.to_path_buf(),
        }
    }

    fn grow(&self, bytes: u64) {
        let opts = format!("remount,size={bytes}");
        let out = as_root(&["mount", "-o", &opts, self.at.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = as_root(&["umount", self.at.to_str().unwrap()]);
    }
}

fn note(i: usize) -> String {
    let mut t = format!("# Note {i}\n\nTAG{i:03} is here.\n\n");
    for p in 0..30 {
        t.push_str(&format!(
            "Paragraph {p} of note {i}: a long enough passage about subject {} and detail {}, \
             written out so that the index grows with every file it takes in.\n\n",
            (i * 7 + p) % 13,
            (i * 3 + p) % 11
        ));
    }
    t
}

fn status(c: &Corpus, db: &str) -> Value {
    let out = c.cli_env(&["status", "--json"], &[("DB_PATH", db)]);
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

#[test]
fn a_sync_that_fills_the_disk_fails_cleanly_and_converges_once_space_is_freed() {
    const FILES: usize = 30;
    let c = Corpus::generated(FILES, |i| (format!("n{i:02}.md"), note(i)));
    // How much room the whole index takes, measured on a roomy disk.
    let roomy = c.dir.path().join("roomy");
    let out = c.cli_env(&["sync", "--json"], &[("DB_PATH", roomy.to_str().unwrap())]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let need: u64 = std::fs::read_dir(&roomy)
        .unwrap()
        .flatten()
        .map(|e| e.metadata().unwrap().len())
        .sum();

    let disk = Tmpfs::mount(&c.dir.path().join("small"), need / 3);
    let db = disk.at.join("index");
    let db = db.to_str().unwrap();
    let out = c.cli_env(&["sync", "--json"], &[("DB_PATH", db)]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let said = format!("{v} {stderr}");
    println!(
        "the full-disk sync: exit {:?}, {}",
        out.status.code(),
        said.chars().take(600).collect::<String>()
    );
    assert!(
        !out.status.success() || v["counts"]["failed"].as_u64().unwrap_or(0) > 0,
        "the sync notices the full disk: {said}"
    );
    assert!(
        said.contains("No space left on device"),
        "the error names the full disk: {said}"
    );

    // Nothing half-written holds the space the next try needs.
    let left: Vec<String> = std::fs::read_dir(db)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(
        left.is_empty(),
        "temporaries left on the full disk: {left:?}"
    );

    // The index opens, with what was acknowledged.
    let s = status(&c, db);
    assert!(s["indexError"].is_null(), "{s}");
    let held = s["sourceCount"].as_u64().unwrap();
    let unembedded = s["vectorlessChunkCount"].as_u64().unwrap();
    assert!(
        held < FILES as u64 || unembedded > 0,
        "the disk filled before the end: {s}"
    );
    let doctor = c.cli_env(&["doctor", "--deep", "--json"], &[("DB_PATH", db)]);
    let d: Value = serde_json::from_slice(&doctor.stdout).unwrap_or(Value::Null);
    let level = |name: &str| {
        d["checks"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == name))
            .map_or(Value::Null, |c| c["level"].clone())
    };
    assert_ne!(level("index"), "fail", "{d}");
    assert_eq!(
        level("verify"),
        "ok",
        "a failed write leaves nothing half-done: {d}"
    );

    // Space freed: the next sync converges.
    disk.grow(need * 4);
    let out = c.cli_env(&["sync", "--json"], &[("DB_PATH", db)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = status(&c, db);
    assert_eq!(s["sourceCount"], FILES as u64, "{s}");
    assert_eq!(s["staleChunkCount"], 0, "{s}");
    assert_eq!(s["vectorlessChunkCount"], 0, "{s}");
    let q = c.cli_env(
        &["query", "TAG007 is here", "--json", "--top-k", "3"],
        &[("DB_PATH", db)],
    );
    let q: Value = serde_json::from_slice(&q.stdout).unwrap_or(Value::Null);
    assert_eq!(q["results"][0]["source"], c.path("n07.md"), "{q}");
}
