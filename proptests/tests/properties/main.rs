//! The properties integration tests, one binary (one link) for the crate: each
//! module was a test binary of its own.

mod chunking;
mod dates;
mod fusion;
mod globs;
mod snapshot_damage;
