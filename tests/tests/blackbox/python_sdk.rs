//! Interop: the official Python MCP SDK (pinned in `tests/interop/requirements.txt`)
//! drives the real binary. `.ci/run` installs the SDK into `target/interop-venv`;
//! `MINIRAG_PYTHON` names another interpreter that has it.

use std::path::PathBuf;
use std::process::Command;

use minirag_blackbox::{binary, model_dir};

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("MINIRAG_PYTHON") {
        return PathBuf::from(p);
    }
    // binary() is target/debug/minirag-mcp.
    let venv = binary()
        .parent()
        .and_then(|d| d.parent())
        .map(|t| t.join("interop-venv/bin/python"))
        .unwrap();
    assert!(
        venv.exists(),
        "no Python with the MCP SDK at {}: run .ci/run, or `python3 -m venv target/interop-venv && \
         target/interop-venv/bin/pip install -r tests/interop/requirements.txt`, or set MINIRAG_PYTHON",
        venv.display()
    );
    venv
}

fn run_checks(transport: &str, era: &str) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("interop/python_sdk_client.py");
    let out = Command::new(python())
        .arg(&script)
        .arg(binary())
        .arg(model_dir())
        .arg(transport)
        .arg(era)
        .output()
        .expect("run the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success()
            && stdout.contains(&format!("at {era} over {transport}: all checks passed")),
        "python client failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

/// 2025-11-25: `initialize`, a session, list_changed on the session.
#[test]
fn the_python_sdk_client_passes_every_check() {
    run_checks("stdio", "2025");
}

/// The same checks through `serve --http`, with a bearer token, every tool.
#[test]
fn the_python_sdk_streamable_http_client_passes_every_check() {
    run_checks("http", "2025");
}

/// 2026-07-28 (the SDK's default auto mode lands there): no `initialize`,
/// cache hints, `subscriptions/listen` hearing the sync, -32602 for an
/// unknown resource.
#[test]
fn the_python_sdk_client_at_2026_07_28_passes_every_check() {
    run_checks("stdio", "2026");
}

/// 2026-07-28 over HTTP: every request stands alone (no session).
#[test]
fn the_python_sdk_http_client_at_2026_07_28_passes_every_check() {
    run_checks("http", "2026");
}
