//! A page's text as positioned spans: the content stream is replayed with
//! its text and graphics matrices (PDF 32000-1 §9.4), so each string shown
//! gets the page position where it starts and ends. Layout (lines, tables,
//! columns) is built from these in [`crate::pdf_layout`].

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use lopdf::content::Content;
use lopdf::{Dictionary, Document, Encoding, Object, ObjectId};

/// A string shown on the page, in page space (points, y up).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Span {
    pub x0: f32,
    pub x1: f32,
    /// Baseline.
    pub y: f32,
    /// Rendered font size (text size times the matrices' vertical scale).
    pub size: f32,
    pub style: Style,
    pub text: String,
}

/// How a font sets its text, as far as layout cares: bold sets a heading
/// apart from body text of its size, and a monospaced font marks code.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Style {
    pub bold: bool,
    pub mono: bool,
}

impl Style {
    /// What two runs share: a line is bold (or code) only when all of it is.
    pub(crate) fn common(self, other: Style) -> Style {
        Style {
            bold: self.bold && other.bold,
            mono: self.mono && other.mono,
        }
    }
}

/// Fonts already loaded, by their dictionary: pages share fonts, and
/// loading one (its widths and its ToUnicode map) is the costly part.
#[derive(Default)]
pub(crate) struct FontCache<'a> {
    fonts: HashMap<*const Dictionary, Rc<Font<'a>>>,
}

impl<'a> FontCache<'a> {
    fn get(&mut self, doc: &'a Document, dict: &'a Dictionary, limit: usize) -> Rc<Font<'a>> {
        self.fonts
            .entry(dict as *const Dictionary)
            .or_insert_with(|| Rc::new(load_font(doc, dict, limit)))
            .clone()
    }
}

/// Glyph widths of one font, in thousandths of the text size.
struct Font<'a> {
    encoding: Option<Encoding<'a>>,
    /// Two-byte codes (a Type0 font with an Identity or two-byte CMap).
    wide: bool,
    widths: BTreeMap<u32, f32>,
    default_width: f32,
    style: Style,
}

impl Font<'_> {
    fn advance(&self, code: u32) -> f32 {
        self.widths
            .get(&code)
            .copied()
            .unwrap_or(self.default_width)
    }
}

type Matrix = [f32; 6];

const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

/// `a × b` for PDF's row-vector matrices.
fn mul(a: &Matrix, b: &Matrix) -> Matrix {
    [
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
        a[4] * b[0] + a[5] * b[2] + b[4],
        a[4] * b[1] + a[5] * b[3] + b[5],
    ]
}

fn translate(tx: f32, ty: f32) -> Matrix {
    [1.0, 0.0, 0.0, 1.0, tx, ty]
}

fn number(o: &Object) -> Option<f32> {
    match o {
        Object::Integer(i) => Some(*i as f32),
        Object::Real(r) => Some(*r),
        _ => None,
    }
}

fn numbers<const N: usize>(operands: &[Object]) -> Option<[f32; N]> {
    let mut out = [0.0; N];
    for (slot, o) in out.iter_mut().zip(operands) {
        *slot = number(o)?;
    }
    (operands.len() >= N).then_some(out)
}

fn deref<'a>(doc: &'a Document, o: &'a Object) -> &'a Object {
    doc.dereference(o).map(|(_, o)| o).unwrap_or(o)
}

/// `/Widths` of a simple font, or `/W` and `/DW` of a Type0 font's descendant.
fn load_font<'a>(doc: &'a Document, dict: &'a Dictionary, limit: usize) -> Font<'a> {
    let encoding = dict.get_font_encoding_with_limit(doc, limit).ok();
    let mut widths = BTreeMap::new();
    let subtype = dict.get(b"Subtype").and_then(Object::as_name).ok();
    if subtype == Some(b"Type0".as_slice()) {
        let descendant = dict
            .get(b"DescendantFonts")
            .map(|o| deref(doc, o))
            .and_then(Object::as_array)
            .ok()
            .and_then(|a| a.first())
            .map(|o| deref(doc, o))
            .and_then(|o| o.as_dict().ok());
        let mut default_width = 1000.0;
        let style = font_style(doc, dict, descendant);
        if let Some(d) = descendant {
            if let Some(dw) = d.get(b"DW").ok().and_then(number) {
                default_width = dw;
            }
            if let Ok(w) = d
                .get(b"W")
                .map(|o| deref(doc, o))
                .and_then(Object::as_array)
            {
                cid_widths(doc, w, &mut widths);
            }
        }
        return Font {
            encoding,
            wide: true,
            widths,
            default_width,
            style,
        };
    }
    let first = dict.get(b"FirstChar").ok().and_then(number).unwrap_or(0.0) as u32;
    if let Ok(w) = dict
        .get(b"Widths")
        .map(|o| deref(doc, o))
        .and_then(Object::as_array)
    {
        for (i, o) in w.iter().take(256).enumerate() {
            if let Some(v) = number(deref(doc, o)) {
                widths.insert(first + i as u32, v);
            }
        }
    }
    // Standard-14 fonts carry no widths: Courier's are all 600, the others
    // average about 500.
    let style = font_style(doc, dict, None);
    Font {
        encoding,
        wide: false,
        widths,
        default_width: if style.mono { 600.0 } else { 500.0 },
        style,
    }
}

/// Name parts of bold faces (`Arial-BoldMT`, `DejaVuSerif-Bold`, `Inter-SemiBold`).
const BOLD_NAMES: [&str; 5] = ["bold", "black", "heavy", "demi", "semibold"];
/// Name parts of monospaced faces, for fonts whose descriptor does not say.
const MONO_NAMES: [&str; 11] = [
    "mono",
    "courier",
    "consol",
    "menlo",
    "monaco",
    "nimbusmon",
    "cousine",
    "typewriter",
    "lettergothic",
    "cmtt",
    "lmtt",
];
/// `/Flags` bits of a font descriptor (PDF 32000-1 §9.8.2).
const FIXED_PITCH: i64 = 1;
const FORCE_BOLD: i64 = 1 << 18;

/// A font's [`Style`] from its descriptor (`/Flags`, `/FontWeight`) and its
/// name, the font's own or its descendant's for a Type0 font.
fn font_style(doc: &Document, dict: &Dictionary, descendant: Option<&Dictionary>) -> Style {
    let descriptor = descendant
        .unwrap_or(dict)
        .get(b"FontDescriptor")
        .map(|o| deref(doc, o))
        .and_then(Object::as_dict)
        .ok();
    let entry = |key: &[u8]| {
        descriptor
            .and_then(|d| d.get(key).ok())
            .map(|o| deref(doc, o))
    };
    let flags = entry(b"Flags").and_then(|o| o.as_i64().ok()).unwrap_or(0);
    let weight = entry(b"FontWeight").and_then(number).unwrap_or(0.0);
    let name = dict
        .get(b"BaseFont")
        .and_then(Object::as_name)
        .map(|n| String::from_utf8_lossy(n).to_ascii_lowercase())
        .unwrap_or_default();
    // The subset tag (`BAAAAA+`) is six random capitals.
    let name = name.split_once('+').map_or(name.as_str(), |(_, n)| n);
    Style {
        bold: flags & FORCE_BOLD != 0
            || weight >= 600.0
            || BOLD_NAMES.iter().any(|b| name.contains(b)),
        mono: flags & FIXED_PITCH != 0 || MONO_NAMES.iter().any(|m| name.contains(m)),
    }
}

/// `/W` entries: `c [w1 w2 …]` or `c_first c_last w`.
fn cid_widths(doc: &Document, w: &[Object], out: &mut BTreeMap<u32, f32>) {
    let mut i = 0;
    while i < w.len() && out.len() < 65_536 {
        let Some(first) = number(deref(doc, &w[i])) else {
            return;
        };
        match w.get(i + 1).map(|o| deref(doc, o)) {
            Some(Object::Array(list)) => {
                for (k, o) in list.iter().enumerate().take(65_536) {
                    if let Some(v) = number(deref(doc, o)) {
                        out.insert(first as u32 + k as u32, v);
                    }
                }
                i += 2;
            }
            Some(o) => {
                let (Some(last), Some(v)) = (number(o), w.get(i + 2).and_then(number)) else {
                    return;
                };
                let (first, last) = (first as u32, (last as u32).min(first as u32 + 65_535));
                for c in first..=last {
                    out.insert(c, v);
                }
                i += 3;
            }
            None => return,
        }
    }
}

#[derive(Clone)]
struct State {
    ctm: Matrix,
    font: Option<Vec<u8>>,
    size: f32,
    char_space: f32,
    word_space: f32,
    scale: f32,
    leading: f32,
    rise: f32,
}

/// Replays one page's content stream into spans, in stream order.
pub(crate) fn page_spans<'a>(
    doc: &'a Document,
    page: ObjectId,
    limit: usize,
    cache: &mut FontCache<'a>,
) -> Vec<Span> {
    let Ok(data) = doc.get_page_content_with_limit(page, limit) else {
        return Vec::new();
    };
    let Ok(content) = Content::decode(&data) else {
        return Vec::new();
    };
    let fonts: BTreeMap<Vec<u8>, Rc<Font>> = doc
        .get_page_fonts(page)
        .unwrap_or_default()
        .into_iter()
        .map(|(name, dict)| (name, cache.get(doc, dict, limit)))
        .collect();
    let mut spans = Vec::new();
    let mut state = State {
        ctm: IDENTITY,
        font: None,
        size: 0.0,
        char_space: 0.0,
        word_space: 0.0,
        scale: 1.0,
        leading: 0.0,
        rise: 0.0,
    };
    let mut stack: Vec<State> = Vec::new();
    let (mut tm, mut tlm) = (IDENTITY, IDENTITY);
    for op in &content.operations {
        let args = op.operands.as_slice();
        match op.operator.as_str() {
            "q" if stack.len() < 256 => stack.push(state.clone()),
            "Q" => {
                if let Some(s) = stack.pop() {
                    state = s;
                }
            }
            "cm" => {
                if let Some(m) = numbers::<6>(args) {
                    state.ctm = mul(&m, &state.ctm);
                }
            }
            "BT" => (tm, tlm) = (IDENTITY, IDENTITY),
            "Tf" => {
                state.font = args
                    .first()
                    .and_then(|o| o.as_name().ok())
                    .map(<[u8]>::to_vec);
                state.size = args.get(1).and_then(number).unwrap_or(state.size);
            }
            "Tc" => state.char_space = args.first().and_then(number).unwrap_or(0.0),
            "Tw" => state.word_space = args.first().and_then(number).unwrap_or(0.0),
            "Tz" => state.scale = args.first().and_then(number).unwrap_or(100.0) / 100.0,
            "TL" => state.leading = args.first().and_then(number).unwrap_or(0.0),
            "Ts" => state.rise = args.first().and_then(number).unwrap_or(0.0),
            "Td" | "TD" => {
                if let Some([tx, ty]) = numbers::<2>(args) {
                    if op.operator == "TD" {
                        state.leading = -ty;
                    }
                    tlm = mul(&translate(tx, ty), &tlm);
                    tm = tlm;
                }
            }
            "Tm" => {
                if let Some(m) = numbers::<6>(args) {
                    (tm, tlm) = (m, m);
                }
            }
            "T*" => {
                tlm = mul(&translate(0.0, -state.leading), &tlm);
                tm = tlm;
            }
            "Tj" | "TJ" | "'" | "\"" => {
                if op.operator == "'" || op.operator == "\"" {
                    if op.operator == "\"" {
                        if let Some([aw, ac]) = numbers::<2>(args) {
                            (state.word_space, state.char_space) = (aw, ac);
                        }
                    }
                    tlm = mul(&translate(0.0, -state.leading), &tlm);
                    tm = tlm;
                }
                let shown: &[Object] = match op.operator.as_str() {
                    "\"" => args.get(2).map(std::slice::from_ref).unwrap_or(&[]),
                    "TJ" => args
                        .first()
                        .and_then(|o| o.as_array().ok())
                        .map(Vec::as_slice)
                        .unwrap_or(&[]),
                    _ => args.first().map(std::slice::from_ref).unwrap_or(&[]),
                };
                let font = state
                    .font
                    .as_ref()
                    .and_then(|f| fonts.get(f))
                    .map(Rc::as_ref);
                for item in shown {
                    match item {
                        Object::String(bytes, _) => {
                            if let Some(span) = show(bytes, font, &state, &mut tm) {
                                spans.push(span);
                            }
                        }
                        o => {
                            if let Some(n) = number(o) {
                                let tx = -n / 1000.0 * state.size * state.scale;
                                tm = mul(&translate(tx, 0.0), &tm);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    spans
}

/// Shows one string: decodes it, advances the text matrix by its glyph
/// widths, and returns its span (none for whitespace only or no font).
fn show(bytes: &[u8], font: Option<&Font>, state: &State, tm: &mut Matrix) -> Option<Span> {
    let font = font?;
    let start = mul(&mul(&translate(0.0, state.rise), tm), &state.ctm);
    let step = if font.wide { 2 } else { 1 };
    let mut advance = 0.0;
    for code in bytes.chunks(step) {
        let code = code.iter().fold(0u32, |acc, b| acc << 8 | *b as u32);
        let mut w = font.advance(code) / 1000.0 * state.size + state.char_space;
        if !font.wide && code == 32 {
            w += state.word_space;
        }
        advance += w * state.scale;
    }
    *tm = mul(&translate(advance, 0.0), tm);
    let mut text = String::new();
    font.encoding
        .as_ref()?
        .write_to_string(bytes, &mut text)
        .ok()?;
    if text.trim().is_empty() {
        return None;
    }
    let text = without_ligatures(text);
    let end = mul(&mul(&translate(0.0, state.rise), tm), &state.ctm);
    // The vertical scale of text space on the page.
    let full = mul(tm, &state.ctm);
    let vscale = (full[2] * full[2] + full[3] * full[3]).sqrt();
    let size = state.size * vscale;
    Some(Span {
        x0: start[4],
        x1: end[4],
        y: start[5],
        size: if size.is_finite() && size > 0.0 {
            size
        } else {
            1.0
        },
        style: font.style,
        text,
    })
}

/// Typeset ligatures (`ﬁ`, `ﬂ`, `ﬀ`…) as their letters: a search for
/// "file" must find "ﬁle", and a snippet should read as typed.
fn without_ligatures(text: String) -> String {
    let letters = |c: char| match c {
        '\u{FB00}' => Some("ff"),
        '\u{FB01}' => Some("fi"),
        '\u{FB02}' => Some("fl"),
        '\u{FB03}' => Some("ffi"),
        '\u{FB04}' => Some("ffl"),
        '\u{FB05}' | '\u{FB06}' => Some("st"),
        _ => None,
    };
    if !text.chars().any(|c| letters(c).is_some()) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 4);
    for c in text.chars() {
        match letters(c) {
            Some(l) => out.push_str(l),
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn ligatures_read_as_their_letters() {
        assert_eq!(
            super::without_ligatures("ﬁle ﬂow oﬀ eﬃcient baﬄe ﬆop".into()),
            "file flow off efficient baffle stop"
        );
    }
}
