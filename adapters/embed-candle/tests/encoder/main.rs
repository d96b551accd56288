//! The encoder integration tests, one binary (one link) for the crate: each
//! module was a test binary of its own.

mod additive;
mod against_candle;
mod blind_rule;
mod identity;
mod int8;
mod multilingual;
mod reference;
