//! The convert integration tests, one binary (one link) for the crate: each
//! module was a test binary of its own.

mod declared_fields;
mod fixtures;
mod formats;
mod locations;
