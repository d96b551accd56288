//! Deeply nested html (up to 200,000 levels, built by `minirag_fuzz::html`):
//! the converter returns Ok or a named error, never overflows its stack.
#![no_main]

use libfuzzer_sys::fuzz_target;
use minirag_core::ports::ConvertRequest;

fuzz_target!(|bytes: &[u8]| {
    let doc = minirag_fuzz::html(bytes);
    let _ = minirag_convert::convert_unguarded(ConvertRequest {
        name: "nested.html",
        format: "html",
        bytes: &doc,
    });
});
