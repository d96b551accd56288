//! The PDF's document information dictionary: the fields its author set
//! (Title, Author, Subject, Keywords), for the `meta` filter.

use lopdf::{decode_text_string, Document};
use minirag_core::meta::Declared;

/// Info entries and the fields they fill.
const INFO_FIELDS: [(&[u8], &str); 4] = [
    (b"Title", "title"),
    (b"Author", "author"),
    (b"Subject", "subject"),
    (b"Keywords", "keywords"),
];

/// The fields the Info dictionary declares; none when it is missing or
/// unreadable (the text is converted all the same).
pub(crate) fn fields(doc: &Document) -> Declared {
    let Ok(info) = doc
        .trailer
        .get_deref(b"Info", doc)
        .and_then(|o| o.as_dict())
    else {
        return Declared::default();
    };
    INFO_FIELDS
        .iter()
        .filter_map(|(key, field)| {
            let value = decode_text_string(info.get_deref(key, doc).ok()?).ok()?;
            Some((field.to_string(), value))
        })
        .filter(|(_, v)| !v.trim().is_empty())
        .collect()
}
