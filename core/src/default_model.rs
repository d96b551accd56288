//! Which model an index uses when neither `MODEL_NAME` nor `MODEL_PATH`
//! says. A new index gets [`DEFAULT_MODEL`]; an index whose vectors came
//! from the model that was the default before keeps it, so upgrading never
//! re-embeds a folder behind the user's back, and says how to switch.

/// The default for a new index: trained for retrieval (`query: ` /
/// `passage: `), reads Russian and about 100 other languages.
pub const DEFAULT_MODEL: &str = "intfloat/multilingual-e5-small";

/// The default before [`DEFAULT_MODEL`], kept by indexes made with it.
pub const PREVIOUS_DEFAULT_MODEL: &str =
    "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2";

/// Chunks a second that a 12-layer model of this size embeds on an
/// ordinary 2-core laptop, for the cost of a switch.
const CHUNKS_PER_SECOND: u64 = 15;

/// What the index holds, as far as the choice needs it.
#[derive(Debug, Clone, Copy, Default)]
pub struct IndexModel<'a> {
    /// The model whose vectors the index holds (its content id).
    pub vector_model: Option<&'a str>,
    /// The content id of [`PREVIOUS_DEFAULT_MODEL`] where it is on disk
    /// (it always is where an index was embedded with it here).
    pub previous_default_id: Option<&'a str>,
    /// Chunks the index holds, to say what a switch would re-embed.
    pub chunk_count: u64,
}

/// The model to load and, when it is not the default, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChoice {
    /// The model to load.
    pub name: String,
    /// Why it is not the configured default, when it is not.
    pub notice: Option<String>,
}

/// The model for an index with no model configured.
pub fn unconfigured(index: IndexModel) -> ModelChoice {
    let kept = matches!(
        (index.vector_model, index.previous_default_id),
        (Some(held), Some(previous)) if held == previous
    );
    if !kept {
        return ModelChoice {
            name: DEFAULT_MODEL.into(),
            notice: None,
        };
    }
    ModelChoice {
        name: PREVIOUS_DEFAULT_MODEL.into(),
        notice: Some(format!(
            "This index keeps {PREVIOUS_DEFAULT_MODEL}, the model its vectors came from. \
             The default is now {DEFAULT_MODEL}, trained for retrieval. To switch, set \
             MODEL_NAME={DEFAULT_MODEL} and sync: it re-embeds {}, about {} on a \
             2-core laptop, and search is keyword-only until that sync ends. To keep this model and silence this notice, set \
             MODEL_NAME={PREVIOUS_DEFAULT_MODEL}.",
            crate::plural::counted(index.chunk_count, "chunk", "chunks"),
            duration(index.chunk_count / CHUNKS_PER_SECOND)
        )),
    }
}

/// `secs` as people say it: "40 s", "12 min", "3 h 20 min".
fn duration(secs: u64) -> String {
    match secs {
        0..=59 => format!("{} s", secs.max(1)),
        60..=3599 => format!("{} min", secs.div_ceil(60)),
        _ => {
            let minutes = secs.div_ceil(60);
            format!("{} h {} min", minutes / 60, minutes % 60)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_or_other_index_gets_the_default() {
        for index in [
            IndexModel::default(),
            IndexModel {
                vector_model: Some("sha-of-e5"),
                previous_default_id: Some("sha-of-old"),
                chunk_count: 10,
            },
            // The old model on disk, the index empty.
            IndexModel {
                vector_model: None,
                previous_default_id: Some("sha-of-old"),
                chunk_count: 0,
            },
            // Vectors of some model, the old default not on disk.
            IndexModel {
                vector_model: Some("sha-of-old"),
                previous_default_id: None,
                chunk_count: 10,
            },
        ] {
            assert_eq!(
                unconfigured(index),
                ModelChoice {
                    name: DEFAULT_MODEL.into(),
                    notice: None
                },
                "{index:?}"
            );
        }
    }

    #[test]
    fn an_index_of_the_previous_default_keeps_it_and_says_how_to_switch() {
        let choice = unconfigured(IndexModel {
            vector_model: Some("sha-of-old"),
            previous_default_id: Some("sha-of-old"),
            chunk_count: 54_000,
        });
        assert_eq!(choice.name, PREVIOUS_DEFAULT_MODEL);
        let notice = choice.notice.unwrap();
        assert!(
            notice.contains(&format!("MODEL_NAME={DEFAULT_MODEL}")),
            "{notice}"
        );
        assert!(notice.contains("54000 chunks, about 1 h 0 min"), "{notice}");
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(0), "1 s");
        assert_eq!(duration(59), "59 s");
        assert_eq!(duration(61), "2 min");
        assert_eq!(duration(3600), "1 h 0 min");
        assert_eq!(duration(12_000), "3 h 20 min");
    }
}
