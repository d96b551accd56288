//! Path patterns: core's matcher agrees with `globset` (the ripgrep glob
//! crate, with `*` and `?` kept within a folder name) on patterns built of
//! every element it reads, and no pattern or path makes it panic.

use globset::GlobBuilder;
use minirag_core::search::glob::Glob;
use proptest::prelude::*;

/// A name pattern of literals, `*`, `?` and classes, or `**`.
fn part() -> impl Strategy<Value = String> {
    let element = prop_oneof![Just("[ab]".to_string()), Just("[a-b]".to_string()),];
    prop_oneof![
        1 => Just("**".to_string()),
        4 => prop::collection::vec(element, 1..4)
            .prop_map(|e| e.concat())
            .prop_filter("`**` stands alone", |name| !name.contains("**")),
    ]
}

fn pattern() -> impl Strategy<Value = String> {
    prop::collection::vec(part(), 1..5).prop_map(|p| p.join("/"))
}

fn path() -> impl Strategy<Value = String> {
    let name = prop::collection::vec(
        prop_oneof![Just('a'), Just('b'), Just('c'), Just('.')],
        1..4,
    )
    .prop_map(|c| c.into_iter().collect::<String>());
    prop::collection::vec(name, 1..6).prop_map(|n| n.join("/"))
}

/// The same pattern for globset: a bare name matches in any folder.
fn as_globset(pattern: &str) -> globset::GlobMatcher {
    let full = if pattern.contains('/') || pattern == "**" {
        pattern.to_string()
    } else {
        format!("**/{pattern}")
    };
    GlobBuilder::new(&full)
        .literal_separator(true)
        .build()
        .unwrap()
        .compile_matcher()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn agrees_with_globset(pattern in pattern(), path in path()) {
        let ours = Glob::new(&pattern).unwrap();
        prop_assert_eq!(
            ours.matches(&path),
            as_globset(&pattern).is_match(&path),
            "{} against {}", pattern, path
        );
    }

    #[test]
    fn any_text_is_a_pattern_or_a_named_error(pattern in ".{0,64}", path in ".{0,64}") {
        if let Ok(glob) = Glob::new(&pattern) {
            let _ = glob.matches(&path);
        }
    }
}
