//! WebVTT transcripts → speaker turns the chunker recognises as a transcript:
//! `**Name** MM:SS` (or a bare timestamp), then the words; adjacent
//! cues of one speaker in the same two-minute window merge into one turn.

use minirag_core::chunk::sections::{format_timestamp, WINDOW_SECONDS};
use minirag_core::ports::{ConvertError, Converted};

use crate::office::malformed;

const MAX_NAME: usize = 80;

struct Cue {
    /// Teams cue ids `<meeting>/<n>-<segment>`: the utterance `<meeting>/<n>`.
    utterance: Option<String>,
    start: u64,
    speaker: Option<String>,
    lines: Vec<String>,
}

/// One rendered unit: a speaker turn, or a NOTE kept where it stood.
enum Item {
    Turn(Cue),
    Note(String),
}

/// A Markdown list line (`-`, `+`, `*`, `1.`, `1)`): turns holding one keep
/// their line breaks and never merge.
fn is_list_line(line: &str) -> bool {
    let l = line.trim_start();
    if l.starts_with("- ") || l.starts_with("+ ") || l.starts_with("* ") {
        return true;
    }
    let digits = l.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && (l[digits..].starts_with(". ") || l[digits..].starts_with(") "))
}

impl Cue {
    fn has_list(&self) -> bool {
        self.lines.iter().any(|l| is_list_line(l))
    }
}

/// `<meeting>/<n>-<segment>` → `<meeting>/<n>`.
fn teams_utterance(id: &str) -> Option<String> {
    let (meeting, tail) = id.rsplit_once('/')?;
    let (n, seg) = tail.split_once('-')?;
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (!meeting.is_empty() && numeric(n) && numeric(seg)).then(|| format!("{meeting}/{n}"))
}

/// Seconds of `[H:]M:S[.fff]`.
fn seconds(stamp: &str) -> Option<u64> {
    let main = stamp.trim().split('.').next()?;
    let parts: Vec<u64> = main
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    match parts.as_slice() {
        [m, s] => Some(m * 60 + s),
        [h, m, s] => Some(h * 3600 + m * 60 + s),
        _ => None,
    }
}

/// Removes WebVTT tags (keeping a `<v Name>` voice), then HTML entities.
fn clean(payload: &str) -> (Option<String>, String) {
    let mut voice = None;
    let mut out = String::new();
    let mut rest = payload;
    while let Some(open) = rest.find('<') {
        let Some(close) = rest[open..].find('>') else {
            break;
        };
        let tag = &rest[open + 1..open + close];
        let name = tag
            .trim_start_matches('/')
            .split(['.', ' '])
            .next()
            .unwrap_or("");
        let known = matches!(name, "b" | "c" | "i" | "u" | "v" | "lang" | "ruby" | "rt")
            || seconds(tag).is_some() && tag.contains(':');
        if !known {
            out.push_str(&rest[..open + 1]);
            rest = &rest[open + 1..];
            continue;
        }
        out.push_str(&rest[..open]);
        if name == "v" && !tag.starts_with('/') {
            voice = tag[1..]
                .split_once(' ')
                .map(|(_, n)| n.trim().to_string())
                .filter(|n| !n.is_empty());
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    let text = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", " ")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    (voice, text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// `Name: text` with a short colon-free name and a space after the colon.
fn zoom_speaker(text: &str) -> Option<(&str, &str)> {
    let (name, rest) = text.split_once(": ")?;
    (!name.is_empty() && name.chars().count() <= MAX_NAME && !name.contains(':'))
        .then_some((name, rest))
}

/// Converts a WebVTT transcript: one timestamped line per cue.
pub fn convert(name: &str, text: &str) -> Result<Converted, ConvertError> {
    let text = text.replace("\r\n", "\n");
    let mut cues: Vec<Cue> = Vec::new();
    // (cue count before the note, note text)
    let mut notes: Vec<(usize, String)> = Vec::new();
    for (i, block) in text
        .split("\n\n")
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .enumerate()
    {
        let lines: Vec<&str> = block.lines().collect();
        if i == 0 && lines[0].starts_with("WEBVTT") {
            // A cue right under the header (no blank line) is kept.
            if let Some(t) = lines.iter().position(|l| l.contains("-->")) {
                cues.extend(cue(name, &lines[t.saturating_sub(1).max(1)..])?);
            }
            continue;
        }
        if lines[0].starts_with("NOTE") {
            let body: Vec<String> = std::iter::once(lines[0].trim_start_matches("NOTE").trim())
                .chain(lines[1..].iter().copied())
                .filter(|l| !l.is_empty())
                .map(|l| format!("> {l}"))
                .collect();
            notes.push((cues.len(), body.join("\n")));
            continue;
        }
        if lines[0].starts_with("STYLE") || lines[0].starts_with("REGION") {
            continue;
        }
        match cue(name, &lines)? {
            Some(c) => cues.push(c),
            None => {
                return Err(malformed(
                    name,
                    format!(
                        "block {} is neither a cue nor a NOTE: {:?}",
                        i + 1,
                        lines[0]
                    ),
                ))
            }
        }
    }
    // Zoom-style "Name: text" speakers, only when every early cue looks like that.
    let first_line = |c: &Cue| c.lines.first().cloned().unwrap_or_default();
    let sample: Vec<&Cue> = cues.iter().take(50).collect();
    if sample.len() >= 2
        && sample
            .iter()
            .all(|c| c.speaker.is_none() && zoom_speaker(&first_line(c)).is_some())
    {
        for c in cues.iter_mut() {
            let line = first_line(c);
            if let Some((n, t)) = zoom_speaker(&line) {
                c.speaker = Some(n.to_string());
                c.lines[0] = t.to_string();
            }
        }
    }
    let markdown = format!("{}\n", render_items(&merge(cues, notes)).join("\n\n"));
    // The cue text's lines in the file (timings and voice tags are not).
    let places = crate::source_lines::marks(&text, &markdown);
    Ok(Converted {
        markdown,
        metadata_title: None,
        page_chars: Vec::new(),
        places,
        meta: Default::default(),
    })
}

/// Teams segments join their utterance's turn wherever it stands; otherwise
/// adjacent cues of one named speaker in one window merge unless a NOTE
/// stands between them or either holds a list line.
fn merge(cues: Vec<Cue>, notes: Vec<(usize, String)>) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    let mut utterances: std::collections::HashMap<String, usize> = Default::default();
    let mut notes = notes.into_iter().peekable();
    for (i, c) in cues.into_iter().enumerate() {
        while let Some((_, note)) = notes.next_if(|(at, _)| *at <= i) {
            items.push(Item::Note(note));
        }
        if let Some(&at) = c.utterance.as_ref().and_then(|u| utterances.get(u)) {
            if let Item::Turn(t) = &mut items[at] {
                t.lines.extend(c.lines);
                continue;
            }
        }
        let last = items.len().wrapping_sub(1);
        if let Some(Item::Turn(t)) = items.last_mut() {
            if t.speaker.is_some()
                && t.speaker == c.speaker
                && t.start / WINDOW_SECONDS == c.start / WINDOW_SECONDS
                && !t.has_list()
                && !c.has_list()
            {
                if let Some(u) = c.utterance {
                    utterances.insert(u, last);
                }
                t.lines.extend(c.lines);
                continue;
            }
        }
        if let Some(u) = c.utterance.clone() {
            utterances.insert(u, items.len());
        }
        items.push(Item::Turn(c));
    }
    items.extend(notes.map(|(_, n)| Item::Note(n)));
    items
}

fn render_items(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .map(|item| match item {
            Item::Turn(t) => render(t),
            Item::Note(n) => n.clone(),
        })
        .collect()
}

fn render(t: &Cue) -> String {
    let stamp = format_timestamp(t.start);
    let text = t.lines.join(if t.has_list() { "\n" } else { " " });
    match t.speaker.as_deref().map(|s| s.replace('*', "")) {
        Some(s) if s.chars().count() <= MAX_NAME => format!("**{s}** {stamp}\n{text}"),
        Some(s) => format!("{stamp}\n{s}: {text}"),
        None => format!("{stamp}\n{text}"),
    }
}

fn cue(name: &str, lines: &[&str]) -> Result<Option<Cue>, ConvertError> {
    let Some(t) = lines.iter().position(|l| l.contains("-->")) else {
        return Ok(None);
    };
    if t > 1 {
        return Ok(None);
    }
    let start = lines[t]
        .split("-->")
        .next()
        .and_then(seconds)
        .ok_or_else(|| malformed(name, format!("bad cue timing {:?}", lines[t])))?;
    let mut speaker = None;
    let mut text = Vec::new();
    for line in &lines[t + 1..] {
        let (voice, cleaned) = clean(line);
        speaker = speaker.or(voice);
        if !cleaned.is_empty() {
            text.push(cleaned);
        }
    }
    let utterance = (t == 1).then(|| teams_utterance(lines[0].trim())).flatten();
    Ok(Some(Cue {
        utterance,
        start,
        speaker,
        lines: text,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voices_merge_within_a_window_and_tags_go() {
        let vtt = "WEBVTT\n\n1\n00:00:02.000 --> 00:00:05.000\n<v Marx, Dana>Коллеги, добрый день.\n\n\
                   2\n00:00:05.500 --> 00:00:06.000\n<v Marx, Dana>Начнём.\n\n\
                   3\n00:00:06.000 --> 00:00:07.000\n<v Ivanova, Olga>Ага.\n\n\
                   NOTE checked by QA\n\n\
                   00:02:04.000 --> 00:02:06.000\n<v Marx, Dana><c.yellow>Цена</c> &lt;b&gt; <00:02:04.500><i>важна</i> &amp; срочна";
        let c = convert("call.vtt", vtt).unwrap();
        assert_eq!(
            c.markdown,
            "**Marx, Dana** 00:02\nКоллеги, добрый день. Начнём.\n\n**Ivanova, Olga** 00:06\nАга.\n\n> checked by QA\n\n**Marx, Dana** 02:04\nЦена <b> важна & срочна\n"
        );
    }

    #[test]
    fn zoom_speakers_and_bare_captions() {
        let zoom = "WEBVTT\n\n00:01.000 --> 00:02.000\nAnna: Hello all.\n\n00:03.000 --> 00:04.000\nBoris: Hi. Meeting at 10:30 then.";
        assert_eq!(
            convert("z.vtt", zoom).unwrap().markdown,
            "**Anna** 00:01\nHello all.\n\n**Boris** 00:03\nHi. Meeting at 10:30 then.\n"
        );
        let captions = "WEBVTT\nKind: captions\n\n0:2:7.5 --> 0:2:9\nplain words";
        assert_eq!(
            convert("c.vtt", captions).unwrap().markdown,
            "02:07\nplain words\n"
        );
    }

    #[test]
    fn teams_segments_join_their_utterance_even_across_another_cue() {
        let vtt = "WEBVTT\n\nab12/18-0\n00:00:02.000 --> 00:00:04.000\n<v Marx, Dana>Коллеги,</v>\n\n\
                   ab12/19-0\n00:00:04.100 --> 00:00:05.000\n<v Ivanova, Olga>Ага.</v>\n\n\
                   ab12/18-1\n00:00:05.000 --> 00:00:07.000\n<v Marx, Dana>свежая выгрузка.</v>\n\n\
                   ab12/20-0\n00:02:04.000 --> 00:02:06.000\n<v Marx, Dana>Тогда по срокам оплаты.</v>";
        assert_eq!(
            convert("teams.vtt", vtt).unwrap().markdown,
            "**Marx, Dana** 00:02\nКоллеги, свежая выгрузка.\n\n**Ivanova, Olga** 00:04\nАга.\n\n**Marx, Dana** 02:04\nТогда по срокам оплаты.\n"
        );
    }

    #[test]
    fn list_lines_keep_breaks_and_stop_merging() {
        let vtt = "WEBVTT\n\n00:01.000 --> 00:02.000\n<v Anna>Agenda:\n- budget\n- hiring\n\n\
                   00:03.000 --> 00:04.000\n<v Anna>Let us start.";
        assert_eq!(
            convert("l.vtt", vtt).unwrap().markdown,
            "**Anna** 00:01\nAgenda:\n- budget\n- hiring\n\n**Anna** 00:03\nLet us start.\n"
        );
    }

    #[test]
    fn a_malformed_block_names_the_file() {
        let e = convert("bad.vtt", "WEBVTT\n\njust some text\nwithout timing")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad.vtt") && e.contains("neither a cue"), "{e}");
    }
}
