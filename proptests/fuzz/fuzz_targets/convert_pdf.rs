//! Any bytes given as a .pdf file: the converter returns Ok or a named error, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use minirag_core::ports::ConvertRequest;

fuzz_target!(|bytes: &[u8]| {
    let _ = minirag_convert::convert_unguarded(ConvertRequest {
        name: "fuzz.pdf",
        format: "pdf",
        bytes,
    });
});
