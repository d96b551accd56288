//! The mem integration tests, one binary (one link) for the crate: each
//! module was a test binary of its own.

mod common;
mod conformance;
mod generations;
mod persistence;
mod processes;
mod quantized;
