//! Markdown front matter: the YAML block between `---` lines at the top of
//! a note (Obsidian, Jekyll, Hugo, Zola). Its scalar and list fields become
//! the document's declared fields and its `title` the metadata title; the
//! block itself is blanked, not removed, so every line below keeps its
//! number (citations give file lines).

use minirag_core::meta::{Declared, OverBudget};
use yaml_rust2::parser::{Event, EventReceiver, Parser};
use yaml_rust2::{Yaml, YamlLoader};

/// A block longer than this is not front matter but a document that
/// happens to open with a rule.
const MAX_BYTES: usize = 64 * 1024;
/// Bracket nesting beyond this is refused before the parser sees it:
/// real front matter nests a level or two.
const MAX_NESTING: usize = 32;

/// What a note's front matter declares.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct FrontMatter {
    pub title: Option<String>,
    pub fields: Declared,
}

/// What a first pass over the block's events finds, before any tree is
/// built: aliases, which the loader would expand by copying (a few hundred
/// bytes of nested aliases become gigabytes), and the deepest nesting.
#[derive(Default)]
struct Shape {
    /// The first node is a mapping, as front matter's is.
    mapping: Option<bool>,
    aliases: bool,
    depth: usize,
    deepest: usize,
}

impl EventReceiver for Shape {
    fn on_event(&mut self, ev: Event) {
        if self.mapping.is_none()
            && matches!(
                ev,
                Event::MappingStart(..)
                    | Event::SequenceStart(..)
                    | Event::Scalar(..)
                    | Event::Alias(_)
            )
        {
            self.mapping = Some(matches!(ev, Event::MappingStart(..)));
        }
        match ev {
            Event::Alias(_) => self.aliases = true,
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                self.depth += 1;
                self.deepest = self.deepest.max(self.depth);
            }
            Event::MappingEnd | Event::SequenceEnd => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
    }
}

/// Splits a note into its front matter and its text with the block
/// blanked; `None` when it has none or the block is not a YAML mapping
/// (the text is then left as it is).
pub(crate) fn split(text: &str) -> Option<(FrontMatter, String)> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = body.split_inclusive('\n');
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    let mut end = None;
    let mut at = body.find('\n')? + 1;
    for (i, line) in lines.enumerate() {
        if matches!(line.trim_end(), "---" | "...") {
            end = Some((at, at + line.len(), i + 2));
            break;
        }
        at += line.len();
        if at > MAX_BYTES {
            return None;
        }
    }
    let (yaml_end, block_end, block_lines) = end?;
    let yaml = &body[body.find('\n')? + 1..yaml_end];
    if nesting(yaml) > MAX_NESTING {
        return None;
    }
    let blanked = "\n".repeat(block_lines) + &body[block_end..];
    let mut shape = Shape::default();
    Parser::new_from_str(yaml).load(&mut shape, false).ok()?;
    if shape.deepest > MAX_NESTING || shape.mapping != Some(true) {
        return None;
    }
    if shape.aliases {
        let mut fields = Declared::default();
        fields.refuse(OverBudget::Aliases);
        let matter = FrontMatter {
            title: None,
            fields,
        };
        return Some((matter, blanked));
    }
    let docs = YamlLoader::load_from_str(yaml).ok()?;
    let Some(Yaml::Hash(map)) = docs.into_iter().next() else {
        return None;
    };
    let mut matter = FrontMatter::default();
    for (key, value) in map {
        let Some(key) = scalar(&key) else { continue };
        match value {
            Yaml::Array(items) => {
                for item in items.iter().filter_map(scalar) {
                    matter.fields.push(key.clone(), item);
                }
            }
            other => {
                if let Some(v) = scalar(&other) {
                    if key.eq_ignore_ascii_case("title") {
                        matter.title = Some(v.clone());
                    }
                    matter.fields.push(key, v);
                }
            }
        }
    }
    Some((matter, blanked))
}

fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The deepest run of unclosed `[` and `{`.
fn nesting(yaml: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for c in yaml.chars() {
        match c {
            '[' | '{' => {
                depth += 1;
                max = max.max(depth);
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_and_the_block_is_blanked_line_for_line() {
        let note = "---\ntitle: Outage review\ntags: [incident, db]\nauthor:\n  - Ada\n  - Grace\ndraft: false\nnested: {a: 1}\n---\n# Heading\n\nBody.\n";
        let (matter, text) = split(note).unwrap();
        assert_eq!(matter.title.as_deref(), Some("Outage review"));
        let pairs: Vec<(&str, &str)> = matter
            .fields
            .pairs()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("title", "Outage review"),
                ("tags", "incident"),
                ("tags", "db"),
                ("author", "Ada"),
                ("author", "Grace"),
                ("draft", "false"),
            ]
        );
        assert_eq!(text, "\n".repeat(9) + "# Heading\n\nBody.\n");
        assert_eq!(text.lines().count(), note.lines().count());
    }

    #[test]
    fn aliases_are_not_expanded_and_the_fields_are_dropped_with_a_reason() {
        let mut yaml = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..8 {
            let refs = vec![format!("*a{}", level - 1); 10].join(", ");
            yaml.push_str(&format!("a{level}: &a{level} [{refs}]\n"));
        }
        let note = format!("---\ntitle: Bomb\n{yaml}---\nBody words.\n");
        let (matter, text) = split(&note).unwrap();
        assert_eq!(matter.fields.over_budget(), Some(OverBudget::Aliases));
        assert!(matter.fields.pairs().is_empty());
        assert_eq!(matter.title, None);
        assert!(text.ends_with("Body words.\n"));
        assert_eq!(text.lines().count(), note.lines().count());
    }

    #[test]
    fn a_rule_that_is_not_front_matter_leaves_the_text_alone() {
        for text in [
            "---\nJust a rule above a paragraph.\n",
            "---\n- a list\n---\n",
            "Intro\n---\ntitle: x\n---\n",
            "---\n[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n---\n",
            "---\ntitle: [unclosed\n---\n",
        ] {
            assert_eq!(split(text), None, "{text:?}");
        }
    }
}
