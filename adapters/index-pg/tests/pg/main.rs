//! The pg integration tests, one binary (one link) for the crate: each
//! module was a test binary of its own.

mod conformance;
mod errors;
mod first_open;
mod migration;
mod snapshot;
mod support;
mod tls;
mod vector_graph;
