//! Any bytes as a Markdown note's front matter (after a `---` line): the
//! converter returns Ok or a named error, never panics, and its memory stays
//! within libFuzzer's RSS limit (aliases are not expanded).
#![no_main]

use libfuzzer_sys::fuzz_target;
use minirag_core::ports::ConvertRequest;

fuzz_target!(|bytes: &[u8]| {
    let mut note = b"---\n".to_vec();
    note.extend_from_slice(bytes);
    let _ = minirag_convert::convert_unguarded(ConvertRequest {
        name: "fuzz.md",
        format: "md",
        bytes: &note,
    });
});
