//! Counts in words: "1 line", "2 lines", never "1 lines".

/// `n` with the noun that agrees with it.
pub fn counted(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_is_singular_and_the_rest_plural() {
        assert_eq!(super::counted(1u32, "document", "documents"), "1 document");
        assert_eq!(super::counted(0u32, "chunk", "chunks"), "0 chunks");
        assert_eq!(super::counted(21u64, "file", "files"), "21 files");
    }
}
