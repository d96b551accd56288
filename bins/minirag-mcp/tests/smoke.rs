//! Smoke tests of the built binary. (Having integration tests here also makes
//! `cargo test --workspace` build the binary that `tests/` drives.)

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_minirag-mcp");

#[test]
fn version_flag_prints_the_version() {
    let out = Command::new(BIN).arg("--version").output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("minirag-mcp {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn an_unknown_subcommand_is_an_error_that_names_it() {
    let out = Command::new(BIN).arg("serch").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("serch"));
}
