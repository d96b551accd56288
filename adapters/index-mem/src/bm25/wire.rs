//! A [`Field`] in the snapshot keeps the layout it had as a derived
//! `{ postings: HashMap<String, Vec<(u32, u32)>>, lengths, live, total_len }`,
//! so snapshots written before the compact in-memory form open unchanged,
//! and older builds read new ones. Retired postings are not written.

use std::fmt;

use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Field;
use std::sync::Arc;

use crate::pages::Column;
use crate::postings::Postings;
use crate::terms::Terms;

impl Serialize for Field {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Field", 4)?;
        st.serialize_field("postings", &MapOut(self))?;
        st.serialize_field("lengths", &self.lengths.iter().collect::<Vec<_>>())?;
        st.serialize_field("live", &self.live)?;
        st.serialize_field("total_len", &self.total_len)?;
        st.end()
    }
}

struct MapOut<'a>(&'a Field);

impl Serialize for MapOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.0;
        // Counted from the postings themselves, not the dead counters: the
        // lengths written must be those of what follows.
        let held = |id: u32| f.live_postings(&f.whole_list(id)).next().is_some();
        let n = (0..f.terms.len()).filter(|&id| held(id)).count();
        let mut map = s.serialize_map(Some(n))?;
        for id in (0..f.terms.len()).filter(|&id| held(id)) {
            map.serialize_entry(f.terms.term(id), &ListOut(f, &f.whole_list(id)))?;
        }
        map.end()
    }
}

struct ListOut<'a>(&'a Field, &'a Postings);

impl Serialize for ListOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.live_postings(self.1).count()))?;
        for pair in self.0.live_postings(self.1) {
            seq.serialize_element(&pair)?;
        }
        seq.end()
    }
}

#[derive(Deserialize)]
#[serde(rename = "Field")]
struct FieldIn {
    postings: MapIn,
    lengths: Vec<u32>,
    live: u64,
    total_len: u64,
}

/// The postings map, read straight into the compact form.
struct MapIn(Terms, Vec<Postings>);

impl<'de> Deserialize<'de> for MapIn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MapIn;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of term to postings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<MapIn, A::Error> {
                let mut terms = Terms::default();
                let mut postings = Vec::new();
                while let Some((term, ListIn(list))) = m.next_entry::<String, ListIn>()? {
                    let id = terms.intern(&term) as usize;
                    if id == postings.len() {
                        postings.push(list);
                    } else {
                        // A term twice (never written so): the later wins.
                        postings[id] = list;
                    }
                }
                Ok(MapIn(terms, postings))
            }
        }
        d.deserialize_map(V)
    }
}

struct ListIn(Postings);

impl<'de> Deserialize<'de> for ListIn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ListIn;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of (document, term frequency)")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ListIn, A::Error> {
                let mut list = Postings::default();
                while let Some((doc, tf)) = seq.next_element::<(u32, u32)>()? {
                    list.add(doc, tf);
                }
                Ok(ListIn(list))
            }
        }
        d.deserialize_seq(V)
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let FieldIn {
            postings: MapIn(terms, postings),
            lengths,
            live,
            total_len,
        } = FieldIn::deserialize(d)?;
        Ok(Field {
            terms: Arc::new(terms),
            postings: postings.into_iter().collect(),
            delta: Default::default(),
            lengths: Column::from_slice(&lengths),
            live,
            total_len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The derived form snapshots held before.
    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct OldField {
        postings: HashMap<String, Vec<(u32, u32)>>,
        lengths: Vec<u32>,
        live: u64,
        total_len: u64,
    }

    fn config() -> impl bincode::config::Config {
        bincode::config::standard()
    }

    #[test]
    fn reads_the_old_form_and_writes_it_without_retired_postings() {
        let old = OldField {
            postings: HashMap::from([
                ("a".to_string(), vec![(0, 2), (300, 1)]),
                ("b".to_string(), vec![(300, 1)]),
            ]),
            lengths: (0..=300)
                .map(|d| if d % 300 == 0 { 2 } else { 0 })
                .collect(),
            live: 2,
            total_len: 4,
        };
        let bytes = bincode::serde::encode_to_vec(&old, config()).unwrap();
        let (mut field, _): (Field, usize) =
            bincode::serde::decode_from_slice(&bytes, config()).unwrap();
        let mut hits = Vec::new();
        field.score(&["b"], |d, _| hits.push(d));
        assert_eq!(hits, [300]);

        field.retire(300);
        let bytes = bincode::serde::encode_to_vec(&field, config()).unwrap();
        let (back, _): (OldField, usize) =
            bincode::serde::decode_from_slice(&bytes, config()).unwrap();
        assert_eq!(
            back.postings,
            HashMap::from([("a".to_string(), vec![(0, 2)])])
        );
        assert_eq!((back.live, back.total_len), (1, 2));
    }
}
