//! Go's `encoding/json` as Sprig uses it: `toJson`/`toPrettyJson`/`toRawJson`
//! (sorted keys, HTML-safe escaping unless raw, Go's float layout) and
//! `fromJson` (numbers become float64; syntax errors worded as Go words them).

use std::collections::BTreeMap;

use topograph_gocompat::json::{self, UNEXPECTED_END, quote_char, syntax_error};

use crate::value::Value;

/// Deepest nesting encoded; Go reports a cycle past a similar depth.
const MAX_DEPTH: usize = 1000;

fn float_json(f: f64) -> Result<String, String> {
    if !f.is_finite() {
        return Err(format!(
            "json: unsupported value: {}",
            crate::fmt::format_float(f, 'g', -1)
        ));
    }
    let a = f.abs();
    let fmt = if a != 0.0 && !(1e-6..1e21).contains(&a) {
        'e'
    } else {
        'f'
    };
    let mut s = crate::fmt::format_float(f, fmt, -1);
    if fmt == 'e' {
        // Go writes e-7, not e-07.
        if let Some(i) = s.find("e-0")
            && s.len() - i == 4
        {
            s.replace_range(i..i + 3, "e-");
        }
    }
    Ok(s)
}

struct Encoder {
    out: String,
    escape_html: bool,
    indent: bool,
}

impl Encoder {
    fn newline(&mut self, depth: usize) {
        if self.indent {
            self.out.push('\n');
            for _ in 0..depth {
                self.out.push_str("  ");
            }
        }
    }

    fn value(&mut self, v: &Value, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "json: unsupported value: encountered a cycle via {}",
                v.type_name()
            ));
        }
        match v {
            Value::Invalid | Value::Nil => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) | Value::Int64(i) => self.out.push_str(&i.to_string()),
            Value::Uint8(b) => self.out.push_str(&b.to_string()),
            Value::Uint64(u) => self.out.push_str(&u.to_string()),
            Value::Float64(f) => self.out.push_str(&float_json(*f)?),
            Value::Complex(..) => return Err("json: unsupported type: complex128".into()),
            Value::Str(s) => json::write_string(&mut self.out, s, self.escape_html),
            Value::Version(ver) => {
                json::write_string(&mut self.out, &ver.to_string(), self.escape_html)
            }
            Value::List(..) if v.is_nil_list() => self.out.push_str("null"),
            Value::List(items, _) => {
                if items.is_empty() {
                    self.out.push_str("[]");
                    return Ok(());
                }
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.newline(depth + 1);
                    self.value(item, depth + 1)?;
                }
                self.newline(depth);
                self.out.push(']');
            }
            Value::Map(m, _) => {
                let entries = Value::entries(m);
                if entries.is_empty() {
                    self.out.push_str("{}");
                    return Ok(());
                }
                self.out.push('{');
                for (i, (k, item)) in entries.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.newline(depth + 1);
                    json::write_string(&mut self.out, k, self.escape_html);
                    self.out.push(':');
                    if self.indent {
                        self.out.push(' ');
                    }
                    self.value(item, depth + 1)?;
                }
                self.newline(depth);
                self.out.push('}');
            }
        }
        Ok(())
    }
}

/// `json.Marshal` (`indent`: `json.MarshalIndent(v, "", "  ")`).
pub(crate) fn marshal(v: &Value, escape_html: bool, indent: bool) -> Result<String, String> {
    let mut e = Encoder {
        out: String::new(),
        escape_html,
        indent,
    };
    e.value(v, 0)?;
    Ok(e.out)
}

struct Decoder<'a> {
    b: &'a [u8],
    i: usize,
    depth: usize,
}

impl Decoder<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        self.ws();
        let c = self.peek().ok_or(UNEXPECTED_END)?;
        match c {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => self.string().map(Value::str),
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Nil),
            c => Err(syntax_error(Some(c), "looking for beginning of value")),
        }
    }

    fn literal(&mut self, word: &str, v: Value) -> Result<Value, String> {
        for want in word.bytes() {
            let c = self.peek().unwrap_or(b' ');
            if c != want {
                return Err(syntax_error(
                    Some(c),
                    &format!("in literal {word} (expecting {})", quote_char(want)),
                ));
            }
            self.i += 1;
        }
        Ok(v)
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > 512 {
            return Err("json: exceeded max depth".into());
        }
        Ok(())
    }

    fn object(&mut self) -> Result<Value, String> {
        self.enter()?;
        self.i += 1;
        let mut m = BTreeMap::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            self.depth -= 1;
            return Ok(Value::map(m));
        }
        loop {
            self.ws();
            match self.peek() {
                Some(b'"') => {}
                c => {
                    return Err(syntax_error(
                        c,
                        "looking for beginning of object key string",
                    ));
                }
            }
            let k = self.string()?;
            self.ws();
            match self.peek() {
                Some(b':') => self.i += 1,
                c => return Err(syntax_error(c, "after object key")),
            }
            let v = self.value()?;
            m.insert(k, v);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(Value::map(m));
                }
                c => return Err(syntax_error(c, "after object key:value pair")),
            }
        }
    }

    fn array(&mut self) -> Result<Value, String> {
        self.enter()?;
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            self.depth -= 1;
            return Ok(Value::list(items));
        }
        loop {
            items.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(Value::list(items));
                }
                c => return Err(syntax_error(c, "after array element")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let mut v = 0u32;
        for _ in 0..4 {
            let c = self.peek().unwrap_or(b' ');
            let d = (c as char)
                .to_digit(16)
                .ok_or_else(|| syntax_error(Some(c), "in \\u hexadecimal character escape"))?;
            v = v * 16 + d;
            self.i += 1;
        }
        Ok(v)
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.peek().ok_or(UNEXPECTED_END)?;
            match c {
                b'"' => {
                    self.i += 1;
                    return Ok(String::from_utf8_lossy(&out).into_owned());
                }
                b'\\' => {
                    self.i += 1;
                    let e = self.peek().unwrap_or(b' ');
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let u = self.hex4()?;
                            if (0xD800..0xDC00).contains(&u)
                                && self.b.get(self.i..self.i + 2) == Some(b"\\u")
                            {
                                let save = self.i;
                                self.i += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    char::from_u32(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00))
                                        .unwrap_or('\u{FFFD}')
                                } else {
                                    self.i = save;
                                    '\u{FFFD}'
                                }
                            } else {
                                char::from_u32(u).unwrap_or('\u{FFFD}')
                            }
                        }
                        c => return Err(syntax_error(Some(c), "in string escape code")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                c if c < 0x20 => return Err(syntax_error(Some(c), "in string literal")),
                c => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
            match self.peek().unwrap_or(b' ') {
                b'0'..=b'9' => {}
                c => return Err(syntax_error(Some(c), "in numeric literal")),
            }
        }
        if self.peek() == Some(b'0') {
            self.i += 1;
        } else {
            self.digits();
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            match self.peek().unwrap_or(b' ') {
                b'0'..=b'9' => {}
                c => {
                    return Err(syntax_error(
                        Some(c),
                        "after decimal point in numeric literal",
                    ));
                }
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            match self.peek().unwrap_or(b' ') {
                b'0'..=b'9' => {}
                c => return Err(syntax_error(Some(c), "in exponent of numeric literal")),
            }
            self.digits();
        }
        let text = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("0");
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::Float64(f)),
            _ => Ok(Value::str(format!("\u{0}overflow:{text}"))),
        }
    }
}

/// `json.Unmarshal` into `interface{}`.
pub(crate) fn unmarshal(s: &str) -> Result<Value, String> {
    let mut d = Decoder {
        b: s.as_bytes(),
        i: 0,
        depth: 0,
    };
    let v = d.value()?;
    d.ws();
    if let Some(c) = d.peek() {
        return Err(syntax_error(Some(c), "after top-level value"));
    }
    // A number too large for float64 is a type error, reported after the syntax check.
    if let Some(text) = find_overflow(&v) {
        return Err(format!(
            "json: cannot unmarshal number {text} into Go value of type float64"
        ));
    }
    Ok(v)
}

fn find_overflow(v: &Value) -> Option<String> {
    match v {
        Value::Str(s) => s.strip_prefix("\u{0}overflow:").map(str::to_string),
        Value::List(items, _) => items.iter().find_map(find_overflow),
        Value::Map(m, _) => Value::entries(m).iter().find_map(|(_, v)| find_overflow(v)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_go() {
        let v = unmarshal(r#"{"b":[1,2.5,1e21,1e-7],"a":"<x>"}"#).unwrap_or(Value::Nil);
        assert_eq!(
            marshal(&v, true, false).as_deref(),
            Ok(r#"{"a":"\u003cx\u003e","b":[1,2.5,1e+21,1e-7]}"#)
        );
        assert_eq!(
            marshal(&v, false, true).as_deref(),
            Ok("{\n  \"a\": \"<x>\",\n  \"b\": [\n    1,\n    2.5,\n    1e+21,\n    1e-7\n  ]\n}")
        );
    }

    #[test]
    fn decode_errors_like_go() {
        assert_eq!(unmarshal("").err().as_deref(), Some(UNEXPECTED_END));
        assert_eq!(
            unmarshal("{x").err().as_deref(),
            Some("invalid character 'x' looking for beginning of object key string")
        );
        assert_eq!(
            unmarshal("[1 2]").err().as_deref(),
            Some("invalid character '2' after array element")
        );
        assert_eq!(
            unmarshal("tru").err().as_deref(),
            Some("invalid character ' ' in literal true (expecting 'e')")
        );
    }
}
