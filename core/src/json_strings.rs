//! A parser for one JSON value shape: an array of strings. `BASE_DIRS` is
//! the only JSON the domain reads, so a full JSON library is not worth a
//! dependency in core.

/// Parses `["a", "b"]`; `None` for anything else (other JSON types included).
pub fn parse_string_array(input: &str) -> Option<Vec<String>> {
    let mut p = Parser {
        chars: input.trim().chars().collect(),
        pos: 0,
    };
    p.expect('[')?;
    let mut out = Vec::new();
    p.skip_ws();
    if p.peek() == Some(']') {
        p.pos += 1;
    } else {
        loop {
            p.skip_ws();
            out.push(p.string()?);
            p.skip_ws();
            match p.next()? {
                ',' => continue,
                ']' => break,
                _ => return None,
            }
        }
    }
    p.skip_ws();
    (p.pos == p.chars.len()).then_some(out)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }
    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }
    fn expect(&mut self, c: char) -> Option<()> {
        (self.next()? == c).then_some(())
    }
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.pos += 1;
        }
    }
    fn hex4(&mut self) -> Option<u32> {
        let mut v = 0;
        for _ in 0..4 {
            v = v * 16 + self.next()?.to_digit(16)?;
        }
        Some(v)
    }
    fn string(&mut self) -> Option<String> {
        self.expect('"')?;
        let mut out = String::new();
        loop {
            match self.next()? {
                '"' => return Some(out),
                '\\' => match self.next()? {
                    '"' => out.push('"'),
                    '\\' => out.push('\\'),
                    '/' => out.push('/'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'u' => {
                        let hi = self.hex4()?;
                        let code = if (0xD800..0xDC00).contains(&hi) {
                            self.expect('\\')?;
                            self.expect('u')?;
                            let lo = self.hex4()?;
                            if !(0xDC00..0xE000).contains(&lo) {
                                return None;
                            }
                            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                        } else {
                            hi
                        };
                        out.push(char::from_u32(code)?);
                    }
                    _ => return None,
                },
                c if (c as u32) < 0x20 => return None,
                c => out.push(c),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_arrays_of_strings() {
        assert_eq!(
            parse_string_array(r#"["/a", "/b"]"#),
            Some(vec!["/a".into(), "/b".into()])
        );
        assert_eq!(parse_string_array("[]"), Some(vec![]));
        assert_eq!(
            parse_string_array(r#"["\u0414\u043e\u043a", "a\"b"]"#),
            Some(vec!["Док".into(), "a\"b".into()])
        );
        assert_eq!(
            parse_string_array(r#"["\ud83d\ude00"]"#),
            Some(vec!["😀".into()])
        );
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [
            "/a:/b",
            "not json",
            r#""str""#,
            "[1]",
            r#"["a",]"#,
            r#"["a"] x"#,
            r#"["a""#,
            "{}",
        ] {
            assert_eq!(parse_string_array(bad), None, "{bad}");
        }
    }
}
