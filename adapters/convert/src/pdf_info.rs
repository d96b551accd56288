//! The PDF's document information dictionary: the fields its author set
//! (Title, Author, Subject, Keywords), for the `meta` filter.

use lopdf::{decode_text_string, Document, Object};
use minirag_core::meta::{Declared, OverBudget, MAX_DECLARED_VALUE_BYTES};

/// Info entries and the fields they fill.
const INFO_FIELDS: [(&[u8], &str); 4] = [
    (b"Title", "title"),
    (b"Author", "author"),
    (b"Subject", "subject"),
    (b"Keywords", "keywords"),
];

/// The fields the Info dictionary declares; none when it is missing or
/// unreadable (the text is converted all the same). A value's raw length
/// is checked before it is decoded, so an oversized one is never copied.
pub(crate) fn fields(doc: &Document) -> Declared {
    let mut declared = Declared::default();
    let Ok(info) = doc
        .trailer
        .get_deref(b"Info", doc)
        .and_then(|o| o.as_dict())
    else {
        return declared;
    };
    for (key, field) in INFO_FIELDS {
        let Ok(object) = info.get_deref(key, doc) else {
            continue;
        };
        if let Object::String(raw, _) = object {
            if raw.len() > MAX_DECLARED_VALUE_BYTES {
                declared.refuse(OverBudget::LongValue);
                return declared;
            }
        }
        if let Ok(value) = decode_text_string(object) {
            if !value.trim().is_empty() {
                declared.push(field, value);
            }
        }
    }
    declared
}
