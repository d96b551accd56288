//! Property tests live in `tests/`.

#![forbid(unsafe_code)]
