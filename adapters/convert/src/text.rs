//! Bytes → text: UTF-8 with or without BOM, UTF-16 with BOM, and legacy
//! single-byte encodings detected by chardetng (a cp1251 Russian file reads).

use std::borrow::Cow;

use minirag_core::ports::ConvertError;

/// Non-ASCII bytes needed before a legacy encoding is guessed.
const MIN_EVIDENCE: usize = 16;

/// Borrowed when the bytes are UTF-8 already: a converter that reads the
/// text once (CSV, HTML) then never holds a second copy of a big file.
pub fn decode<'a>(name: &str, bytes: &'a [u8]) -> Result<Cow<'a, str>, ConvertError> {
    // UTF-32 first: its little-endian BOM begins like UTF-16's.
    if let Some(text) = utf32(name, bytes) {
        return text.map(Cow::Owned);
    }
    if let Some((enc, bom_len)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, had_errors) = enc.decode_without_bom_handling(&bytes[bom_len..]);
        if had_errors {
            return Err(malformed(name, &format!("it is not valid {}", enc.name())));
        }
        return Ok(Cow::Owned(text.into_owned()));
    }
    if let Some(evidence) = binary(bytes) {
        return Err(malformed(
            name,
            &format!(
                "it holds binary data, not text ({evidence}); index the original document, \
                 or save it as UTF-8 text if it is one"
            ),
        ));
    }
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Ok(Cow::Borrowed(s));
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
    Ok(Cow::Owned(text.into_owned()))
}

/// Why `bytes` (with no BOM) are no text file, whatever the name says: a
/// NUL byte, or control bytes other than tab, line breaks, form feed and
/// escape in more than 1 in 100 bytes (random data has 1 in 8).
fn binary(bytes: &[u8]) -> Option<String> {
    if let Some(at) = bytes.iter().position(|b| *b == 0) {
        return Some(format!("a NUL byte at offset {at}"));
    }
    let controls = bytes
        .iter()
        .filter(|b| **b < 0x20 && !matches!(**b, b'\t' | b'\n' | b'\r' | 0x0C | 0x1B))
        .count();
    (controls * 100 > bytes.len()).then(|| format!("{controls} control bytes in {}", bytes.len()))
}

/// UTF-32 with a BOM (encoding_rs has no UTF-32 decoder).
fn utf32(name: &str, bytes: &[u8]) -> Option<Result<String, ConvertError>> {
    let little = bytes.starts_with(&[0xFF, 0xFE, 0, 0]);
    if !little && !bytes.starts_with(&[0, 0, 0xFE, 0xFF]) {
        return None;
    }
    let body = &bytes[4..];
    if !body.len().is_multiple_of(4) {
        return Some(Err(malformed(name, "it is not valid UTF-32 (odd length)")));
    }
    Some(
        body.chunks_exact(4)
            .map(|b| {
                let b = [b[0], b[1], b[2], b[3]];
                let u = if little {
                    u32::from_le_bytes(b)
                } else {
                    u32::from_be_bytes(b)
                };
                char::from_u32(u)
            })
            .collect::<Option<String>>()
            .ok_or_else(|| malformed(name, "it is not valid UTF-32")),
    )
}

fn malformed(name: &str, reason: &str) -> ConvertError {
    ConvertError::Malformed {
        cause: None,
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
    fn utf32_with_either_bom() {
        let le: Vec<u8> = [0xFF, 0xFE, 0, 0]
            .into_iter()
            .chain("Привет".chars().flat_map(|c| (c as u32).to_le_bytes()))
            .collect();
        assert_eq!(decode("a", &le).unwrap(), "Привет");
        let be: Vec<u8> = [0, 0, 0xFE, 0xFF]
            .into_iter()
            .chain("Да".chars().flat_map(|c| (c as u32).to_be_bytes()))
            .collect();
        assert_eq!(decode("a", &be).unwrap(), "Да");
        let e = decode("u.vtt", &le[..le.len() - 1])
            .unwrap_err()
            .to_string();
        assert!(e.contains("u.vtt") && e.contains("UTF-32"), "{e}");
    }

    #[test]
    fn a_short_legacy_file_asks_for_utf8() {
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode("Да");
        let e = decode("r.txt", &bytes).unwrap_err().to_string();
        assert!(e.contains("r.txt") && e.contains("UTF-8"), "{e}");
    }

    #[test]
    fn binary_bytes_are_refused_whatever_the_name() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let random: Vec<u8> = (0..200_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect();
        let e = decode("notes.md", &random).unwrap_err().to_string();
        assert!(e.contains("notes.md") && e.contains("binary data"), "{e}");
        let mut nul = b"# Title\n\nText".to_vec();
        nul.insert(3, 0);
        let e = decode("n.txt", &nul).unwrap_err().to_string();
        assert!(e.contains("a NUL byte at offset 3"), "{e}");
        // Text with a form feed, an escape and a stray bell reads.
        let text = format!(
            "Page one\x0cPage two \x1b[1mbold\x1b[0m\x07 {}",
            "words ".repeat(30)
        );
        assert_eq!(decode("t.txt", text.as_bytes()).unwrap(), text);
    }

    #[test]
    fn cp1251_russian_reads() {
        let text = "Настоящий документ определяет порядок хранения товарно-материальных ценностей на складе. ".repeat(4);
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(&text);
        assert_eq!(decode("r.txt", &bytes).unwrap(), text);
    }
}
