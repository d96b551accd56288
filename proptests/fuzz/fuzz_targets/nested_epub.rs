//! Deeply nested epub (up to 200,000 levels, built by `minirag_fuzz::epub`):
//! the converter returns Ok or a named error, never overflows its stack.
#![no_main]

use libfuzzer_sys::fuzz_target;
use minirag_core::ports::ConvertRequest;

fuzz_target!(|bytes: &[u8]| {
    let doc = minirag_fuzz::epub(bytes);
    let _ = minirag_convert::convert_unguarded(ConvertRequest {
        name: "nested.epub",
        format: "epub",
        bytes: &doc,
    });
});
