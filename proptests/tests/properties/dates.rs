//! Dates from clients: any text is an instant or `None`, never a panic, and
//! a multi-byte character anywhere in a valid instant makes it `None`.

use minirag_core::time::parse_instant;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn any_text_is_an_instant_or_none(text in ".{0,40}") {
        let _ = parse_instant(&text);
    }

    #[test]
    fn a_multibyte_character_anywhere_is_refused(at in 0usize..25, c in "[€é日😀]") {
        let valid = "2026-12-01T09:30:00+02:00";
        let mut text = valid.to_string();
        text.insert_str(at.min(valid.len()), &c);
        prop_assert_eq!(parse_instant(&text), None, "{}", text);
    }
}
