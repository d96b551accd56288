//! Deeply nested xlsx (up to 200,000 levels, built by `minirag_fuzz::xlsx`):
//! the converter returns Ok or a named error, never overflows its stack.
#![no_main]

use libfuzzer_sys::fuzz_target;
use minirag_core::ports::ConvertRequest;

fuzz_target!(|bytes: &[u8]| {
    let doc = minirag_fuzz::xlsx(bytes);
    let _ = minirag_convert::convert_unguarded(ConvertRequest {
        name: "nested.xlsx",
        format: "xlsx",
        bytes: &doc,
    });
});
