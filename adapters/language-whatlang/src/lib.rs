//! The [`Languages`] port over whatlang: trigram profiles of 70 languages,
//! no model files, microseconds per document. whatlang names languages by
//! ISO 639-3; the filter speaks ISO 639-1, the codes people type.

#![forbid(unsafe_code)]

use minirag_core::ports::Languages;
use whatlang::Lang;

/// How much of a document is read: its opening pages tell its language,
/// and a whole book would cost time for no better answer.
const SAMPLE_BYTES: usize = 16 * 1024;

/// The [`Languages`] port by whatlang: trigram statistics, no model files.
#[derive(Debug, Default, Clone, Copy)]
pub struct Whatlang;

impl Languages for Whatlang {
    fn detect(&self, text: &str) -> Option<&'static str> {
        let mut end = text.len().min(SAMPLE_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let info = whatlang::detect(&text[..end])?;
        info.is_reliable().then(|| iso_639_1(info.lang()))
    }
}

/// whatlang's ISO 639-3 code as ISO 639-1 (the macrolanguage's code where
/// whatlang names an individual language: `cmn` → `zh`, `pes` → `fa`).
fn iso_639_1(lang: Lang) -> &'static str {
    use Lang::*;
    match lang {
        Epo => "eo",
        Eng => "en",
        Rus => "ru",
        Cmn => "zh",
        Spa => "es",
        Por => "pt",
        Ita => "it",
        Ben => "bn",
        Fra => "fr",
        Deu => "de",
        Ukr => "uk",
        Kat => "ka",
        Ara => "ar",
        Hin => "hi",
        Jpn => "ja",
        Heb => "he",
        Yid => "yi",
        Pol => "pl",
        Amh => "am",
        Jav => "jv",
        Kor => "ko",
        Nob => "nb",
        Dan => "da",
        Swe => "sv",
        Fin => "fi",
        Tur => "tr",
        Nld => "nl",
        Hun => "hu",
        Ces => "cs",
        Ell => "el",
        Bul => "bg",
        Bel => "be",
        Mar => "mr",
        Kan => "kn",
        Ron => "ro",
        Slv => "sl",
        Hrv => "hr",
        Srp => "sr",
        Mkd => "mk",
        Lit => "lt",
        Lav => "lv",
        Est => "et",
        Tam => "ta",
        Vie => "vi",
        Urd => "ur",
        Tha => "th",
        Guj => "gu",
        Uzb => "uz",
        Pan => "pa",
        Aze => "az",
        Ind => "id",
        Tel => "te",
        Pes => "fa",
        Mal => "ml",
        Ori => "or",
        Mya => "my",
        Nep => "ne",
        Sin => "si",
        Khm => "km",
        Tuk => "tk",
        Aka => "ak",
        Zul => "zu",
        Sna => "sn",
        Afr => "af",
        Lat => "la",
        Slk => "sk",
        Cat => "ca",
        Tgl => "tl",
        Hye => "hy",
        Cym => "cy",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn russian_and_english_prose_get_their_codes() {
        let ru = "Резервные копии базы данных снимаются каждую ночь и хранятся тридцать дней. \
                  Перед восстановлением проверьте контрольную сумму архива.";
        let en = "Database backups are taken every night and kept for thirty days. \
                  Check the archive's checksum before restoring it.";
        assert_eq!(Whatlang.detect(ru), Some("ru"));
        assert_eq!(Whatlang.detect(en), Some("en"));
    }

    #[test]
    fn too_little_text_tells_nothing() {
        assert_eq!(Whatlang.detect(""), None);
        assert_eq!(Whatlang.detect("42 — 17"), None);
    }

    #[test]
    fn a_long_document_is_sampled_at_a_character_boundary() {
        let text = "ж".repeat(SAMPLE_BYTES);
        // Two-byte characters put SAMPLE_BYTES + 1 inside one; no panic.
        let _ = Whatlang.detect(&format!("x{text}"));
    }

    #[test]
    fn every_code_is_two_letters() {
        for l in Lang::all() {
            let code = iso_639_1(*l);
            assert!(
                code.len() == 2 && code.bytes().all(|b| b.is_ascii_lowercase()),
                "{l:?}"
            );
        }
    }
}
