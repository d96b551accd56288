//! `displayPath`: the source relative to the longest root that holds
//! it, by plain string slicing (no Unicode normalisation), never empty.

/// `source` as shown to people: relative to the root it is under, as it is otherwise.
pub fn display_path<S: AsRef<str>>(source: &str, roots: &[S]) -> String {
    roots
        .iter()
        .map(|r| r.as_ref().trim_end_matches('/'))
        .filter_map(|root| {
            let rest = source.strip_prefix(root)?.strip_prefix('/')?;
            (!rest.is_empty()).then_some((root.len(), rest))
        })
        .max_by_key(|(len, _)| *len)
        .map_or_else(|| source.to_string(), |(_, rest)| rest.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_to_the_longest_root() {
        let roots = ["/a", "/a/b"];
        assert_eq!(display_path("/a/b/c.md", &roots), "c.md");
        assert_eq!(display_path("/a/b/c.md", &["/a/b", "/a"]), "c.md");
        assert_eq!(display_path("/a/x/y.md", &roots), "x/y.md");
    }

    #[test]
    fn full_source_when_no_root_holds_it() {
        let roots = ["/data"];
        assert_eq!(
            display_path("/data_archive/x.md", &roots),
            "/data_archive/x.md"
        );
        assert_eq!(display_path("/data", &roots), "/data");
        assert_eq!(display_path("https://x.io/p", &roots), "https://x.io/p");
        assert_eq!(display_path("note-1", &roots), "note-1");
        assert_eq!(display_path("/data/f.md", &["/data/"]), "f.md");
    }

    #[test]
    fn keeps_cyrillic_and_decomposed_names_as_they_are() {
        let root = "/home/u/docs";
        let src = "/home/u/docs/instructions/11. Учет затрат/И-112_ЗПС_Хранение ТМЗ.docx";
        assert_eq!(
            display_path(src, &[root]),
            "instructions/11. Учет затрат/И-112_ЗПС_Хранение ТМЗ.docx"
        );
        let decomposed = "/home/u/docs/и\u{306}.md";
        assert_eq!(display_path(decomposed, &[root]), "и\u{306}.md");
    }
}
