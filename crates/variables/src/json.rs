//! A JSON reader that keeps what Go's decoders get to see and `serde_json` throws away:
//! the literal text of every number, repeated object keys in document order, and the
//! raw text of members (a variable's bad value is printed as it was sent).

use std::fmt;

/// One JSON value as written. Numbers keep their literal; objects keep every member,
/// repeated keys included, in document order.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, as its literal text.
    Num(String),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object, members in document order.
    Obj(Vec<(String, Json)>),
}

/// Why a text is not JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.offset)
    }
}

impl std::error::Error for SyntaxError {}

/// Deep nesting is refused rather than risking the stack on hostile input.
const MAX_DEPTH: usize = 512;

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
}

/// Parses a complete JSON text (surrounding white space allowed).
pub fn parse(text: &str) -> Result<Json, SyntaxError> {
    let mut r = Reader {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    r.ws();
    let v = r.value()?;
    r.ws();
    if r.pos != r.bytes.len() {
        return Err(r.err("invalid character after top-level value"));
    }
    Ok(v)
}

/// Parses a JSON object and returns each member's key with the raw text of its value
/// (as written, without surrounding white space), in document order.
pub fn raw_members(text: &str) -> Result<Vec<(String, &str)>, SyntaxError> {
    let mut r = Reader {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    r.ws();
    if r.peek() != Some(b'{') {
        return Err(r.err("not an object"));
    }
    r.pos += 1;
    let mut out = Vec::new();
    r.ws();
    if r.peek() == Some(b'}') {
        return Ok(out);
    }
    loop {
        r.ws();
        let key = r.string()?;
        r.ws();
        r.expect(b':')?;
        r.ws();
        let start = r.pos;
        r.value()?;
        let raw = text.get(start..r.pos).unwrap_or_default();
        out.push((key, raw));
        r.ws();
        match r.peek() {
            Some(b',') => r.pos += 1,
            Some(b'}') => return Ok(out),
            _ => return Err(r.err("expected , or }")),
        }
    }
}

impl Reader<'_> {
    fn err(&self, message: &str) -> SyntaxError {
        SyntaxError {
            offset: self.pos,
            message: message.to_string(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn expect(&mut self, b: u8) -> Result<(), SyntaxError> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected {}", b as char)))
        }
    }

    fn literal(&mut self, word: &str, v: Json) -> Result<Json, SyntaxError> {
        if self
            .text
            .get(self.pos..)
            .is_some_and(|t| t.starts_with(word))
        {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.err("invalid literal"))
        }
    }

    fn value(&mut self) -> Result<Json, SyntaxError> {
        match self.peek() {
            Some(b'n') => self.literal("null", Json::Null),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b'[') => self.nested(Self::array),
            Some(b'{') => self.nested(Self::object),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("invalid character looking for beginning of value")),
            None => Err(self.err("unexpected end of JSON input")),
        }
    }

    fn nested(
        &mut self,
        f: fn(&mut Self) -> Result<Json, SyntaxError>,
    ) -> Result<Json, SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("exceeded max depth"));
        }
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn array(&mut self) -> Result<Json, SyntaxError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Json::Arr(items));
        }
        loop {
            self.ws();
            items.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Json::Arr(items));
                }
                _ => return Err(self.err("expected , or ]")),
            }
        }
    }

    fn object(&mut self) -> Result<Json, SyntaxError> {
        self.pos += 1;
        let mut members = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Json::Obj(members));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(self.err("expected object key"));
            }
            let key = self.string()?;
            self.ws();
            self.expect(b':')?;
            self.ws();
            let v = self.value()?;
            members.push((key, v));
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Obj(members));
                }
                _ => return Err(self.err("expected , or }")),
            }
        }
    }

    fn number(&mut self) -> Result<Json, SyntaxError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                while let Some(b'0'..=b'9') = self.peek() {
                    self.pos += 1;
                }
            }
            _ => return Err(self.err("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("invalid number"));
            }
            while let Some(b'0'..=b'9') = self.peek() {
                self.pos += 1;
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("invalid number"));
            }
            while let Some(b'0'..=b'9') = self.peek() {
                self.pos += 1;
            }
        }
        Ok(Json::Num(
            self.text.get(start..self.pos).unwrap_or("0").to_string(),
        ))
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.err("invalid escape"))?;
        let v = u32::from_str_radix(digits, 16).map_err(|_| self.err("invalid escape"))?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(self.err("invalid escape"));
        }
        self.pos += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        self.expect(b'"')?;
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            out.push_str(self.text.get(start..self.pos).unwrap_or_default());
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let e = self.peek().ok_or_else(|| self.err("invalid escape"))?;
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            out.push(self.surrogate(hi));
                        }
                        _ => return Err(self.err("invalid escape")),
                    }
                }
                Some(_) => return Err(self.err("invalid character in string literal")),
                None => return Err(self.err("unexpected end of JSON input")),
            }
        }
    }

    /// Combines a surrogate pair; like Go, a lone surrogate becomes U+FFFD.
    fn surrogate(&mut self, hi: u32) -> char {
        if (0xd800..0xdc00).contains(&hi) {
            let save = self.pos;
            if self
                .text
                .get(self.pos..)
                .is_some_and(|t| t.starts_with("\\u"))
            {
                self.pos += 2;
                if let Ok(lo) = self.hex4()
                    && (0xdc00..0xe000).contains(&lo)
                {
                    let c = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
                    return char::from_u32(c).unwrap_or('\u{fffd}');
                }
            }
            self.pos = save;
            return '\u{fffd}';
        }
        char::from_u32(hi).unwrap_or('\u{fffd}')
    }
}

/// Converts a `serde_json` value (whose numbers print back as their shortest form).
pub fn from_serde(v: &serde_json::Value) -> Json {
    match v {
        serde_json::Value::Null => Json::Null,
        serde_json::Value::Bool(b) => Json::Bool(*b),
        serde_json::Value::Number(n) => Json::Num(n.to_string()),
        serde_json::Value::String(s) => Json::Str(s.clone()),
        serde_json::Value::Array(a) => Json::Arr(a.iter().map(from_serde).collect()),
        serde_json::Value::Object(o) => {
            Json::Obj(o.iter().map(|(k, v)| (k.clone(), from_serde(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_literals_and_repeats() {
        let v = parse(r#"{"a":1.0,"a":1e2,"s":"\ud83d\ude00\ud800"}"#).unwrap();
        let Json::Obj(m) = v else { panic!() };
        assert_eq!(m[0], ("a".into(), Json::Num("1.0".into())));
        assert_eq!(m[1], ("a".into(), Json::Num("1e2".into())));
        assert_eq!(m[2].1, Json::Str("😀\u{fffd}".into()));
    }

    #[test]
    fn raw_member_text() {
        let m = raw_members(r#"{"value": {"a" : 1 }, "x":2}"#).unwrap();
        assert_eq!(m[0], ("value".into(), r#"{"a" : 1 }"#));
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse("{").is_err());
        assert!(parse("01").is_err());
        assert!(parse("[1,]").is_err());
        assert!(parse(&"[".repeat(10_000)).is_err());
    }
}
