//! Bytes → text: UTF-8 with or without BOM, UTF-16 with BOM, and legacy
//! single-byte encodings detected by chardetng (a cp1251 Russian file reads).

use minirag_core::ports::ConvertError;

/// Non-ASCII bytes needed before a legacy encoding is guessed.
const MIN_EVIDENCE: usize = 16;

pub fn decode(name: &str, bytes: &[u8]) -> Result<String, ConvertError> {
    if let Some((enc, bom_len)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, had_errors) = enc.decode_without_bom_handling(&bytes[bom_len..]);
        if had_errors {
            return Err(malformed(name, &format!("it is not valid {}", enc.name())));
        }
        return Ok(text.into_owned());
    }
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Ok(s.to_string());
    }
    // Too little non-ASCII text to tell one legacy encoding from another.
    let evidence = bytes.iter().filter(|b| **b >= 0x80).count();
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    let enc = detector.guess(None, chardetng::Utf8Detection::Deny);
    let (text, _, had_errors) = enc.decode(bytes);
    if had_errors || evidence < MIN_EVIDENCE {
        return Err(malformed(
            name,
            "cannot tell what encoding this file is in; save it as UTF-8",
        ));
    }
    Ok(text.into_owned())
}

fn malformed(name: &str, reason: &str) -> ConvertError {
    ConvertError::Malformed {
        name: name.into(),
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_with_and_without_bom() {
        assert_eq!(decode("a", "héllo".as_bytes()).unwrap(), "héllo");
        assert_eq!(decode("a", b"\xEF\xBB\xBFhi").unwrap(), "hi");
    }

    #[test]
    fn utf16_with_bom() {
        let mut bytes = vec![0xFF, 0xFE];
        for u in "Привет".encode_utf16() {
            bytes.extend_from_slice(&u.to_le_bytes());
        }
        assert_eq!(decode("a", &bytes).unwrap(), "Привет");
    }

    #[test]
    fn a_short_legacy_file_asks_for_utf8() {
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode("Да");
        let e = decode("r.txt", &bytes).unwrap_err().to_string();
        assert!(e.contains("r.txt") && e.contains("UTF-8"), "{e}");
    }

    #[test]
    fn cp1251_russian_reads() {
        let text = "Настоящий документ определяет порядок хранения товарно-материальных ценностей на складе. ".repeat(4);
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(&text);
        assert_eq!(decode("r.txt", &bytes).unwrap(), text);
    }
}
