//! Any text as a path pattern and a path (split at the first newline): a
//! pattern is compiled or refused by name, and matching ends, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use minirag_core::search::glob::Glob;

fuzz_target!(|bytes: &[u8]| {
    let text = String::from_utf8_lossy(bytes);
    let (pattern, path) = text.split_once('\n').unwrap_or((&text, "a/b/c.md"));
    if let Ok(glob) = Glob::new(pattern) {
        let _ = glob.matches(path);
    }
});
