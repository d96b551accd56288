//! A failed recognition keeps the error underneath: an image whose header
//! cannot be read is refused with the decoder's own error as the cause.

use minirag_core::error::EngineError;
use minirag_core::ports::Ocr;
use minirag_ocr_tesseract::Tesseract;

#[test]
fn an_unreadable_images_cause_is_kept_to_the_decoder() {
    let err = Tesseract::new("eng")
        .image("scan.png", b"\x89PNG but nothing after")
        .unwrap_err();
    assert!(err.to_string().contains("scan.png"), "{err}");
    let engine = EngineError::Ocr(err);
    let found = minirag_core::cause::in_chain::<imagesize::ImageError>(&engine).is_some();
    assert!(found, "the walk from {engine} reaches imagesize's error");
}
