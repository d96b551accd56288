//! Input that must cost one file, never the index or the process: bytes that
//! are no text under a text format's name.

use minirag_blackbox::Corpus;

#[test]
fn binary_bytes_named_md_are_one_refused_file() {
    let c = Corpus::new(&[(
        "plain.md",
        "# Plain\n\nThe plain file beside the binary one.",
    )])
    .without_model();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let random: Vec<u8> = (0..200_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u8
        })
        .collect();
    std::fs::write(c.path("random.md"), &random).unwrap();
    let mut utf16 = Vec::new();
    for u in "# Notes saved as UTF-16 without a mark".encode_utf16() {
        utf16.extend_from_slice(&u.to_le_bytes());
    }
    std::fs::write(c.path("wide.txt"), &utf16).unwrap();
    let (code, v, stderr) = c.json(&["sync"]);
    assert_eq!(code, 1, "a refused file fails the sync: {v} {stderr}");
    assert_eq!(v["counts"]["ingested"], 1, "{v}");
    assert_eq!(v["counts"]["failed"], 2, "{v}");
    for name in ["random.md", "wide.txt"] {
        let error = v["errors"]
            .as_array()
            .and_then(|e| {
                e.iter()
                    .find(|e| e["source"].as_str().is_some_and(|s| s.ends_with(name)))
            })
            .unwrap_or_else(|| panic!("{name} is not named: {v}"));
        assert!(
            error["error"]
                .as_str()
                .is_some_and(|e| e.contains("binary data")),
            "{error}"
        );
    }
    let (_, status, _) = c.json(&["status"]);
    assert!(
        status["chunkCount"].as_u64().is_some_and(|n| n <= 2),
        "{status}"
    );
}
