//! The blackbox integration tests, one binary (one link) for the crate: each
//! module was a test binary of its own.

mod attacks;
mod browser;
mod cli;
mod default_model;
mod explain;
mod faults;
mod first_run;
mod full_disk;
mod hostile;
mod http;
mod install;
mod locations;
mod mcp;
mod mcp_2026;
mod multilingual;
mod new_user;
mod ocr;
mod page;
mod python_sdk;
mod remote_embedder;
mod shared_index;
mod structure;
mod watch;
