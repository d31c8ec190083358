//! Composed nodes decoded into Go values as go-yaml v2 fills an `interface{}`: YAML
//! 1.1's resolution of plain scalars, tags, merge keys, aliases (with go-yaml's guard
//! against alias bombs) and its refusals of map keys.

use base64::Engine as _;

use super::json::go_syntax;
use super::{Doc, MAX_DEPTH, Node};

const CORE: &str = "tag:yaml.org,2002:";
const STR: &str = "tag:yaml.org,2002:str";
const BINARY: &str = "tag:yaml.org,2002:binary";
const BOOL: &str = "tag:yaml.org,2002:bool";
const INT: &str = "tag:yaml.org,2002:int";
const FLOAT: &str = "tag:yaml.org,2002:float";
const NULL: &str = "tag:yaml.org,2002:null";
const TIMESTAMP: &str = "tag:yaml.org,2002:timestamp";
const MERGE: &str = "tag:yaml.org,2002:merge";

/// A Go value as go-yaml v2 makes one.
#[derive(Clone, Debug)]
pub(super) enum Go {
    Nil,
    Bool(bool),
    /// Go `int`.
    Int(i64),
    /// Go `uint64` (integers above `int`'s range).
    Uint(u64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    Seq(Vec<Go>),
    /// `map[interface{}]interface{}`: one entry per key (Go's `==`), in the order the
    /// keys were first set.
    Map(Vec<(Go, Go)>),
}

impl Go {
    /// Go's `==` on map keys (collections never are keys).
    fn same_key(&self, other: &Go) -> bool {
        match (self, other) {
            (Go::Nil, Go::Nil) => true,
            (Go::Bool(a), Go::Bool(b)) => a == b,
            (Go::Int(a), Go::Int(b)) => a == b,
            (Go::Uint(a), Go::Uint(b)) => a == b,
            (Go::Float(a), Go::Float(b)) => a == b,
            (Go::Str(a), Go::Str(b)) => a == b,
            (Go::Bytes(a), Go::Bytes(b)) => a == b,
            (Go::Str(a), Go::Bytes(b)) | (Go::Bytes(b), Go::Str(a)) => a.as_bytes() == b,
            _ => false,
        }
    }

    pub(super) fn set(entries: &mut Vec<(Go, Go)>, key: Go, value: Go) {
        match entries.iter_mut().find(|(k, _)| k.same_key(&key)) {
            Some(entry) => entry.1 = value,
            None => entries.push((key, value)),
        }
    }
}

pub(super) struct Decoder<'a> {
    doc: &'a Doc,
    /// Aliases being expanded (go-yaml refuses one inside itself).
    expanding: Vec<usize>,
    decoded: u64,
    aliased: u64,
}

impl<'a> Decoder<'a> {
    pub(super) fn new(doc: &'a Doc) -> Self {
        Decoder {
            doc,
            expanding: Vec::new(),
            decoded: 0,
            aliased: 0,
        }
    }

    fn node(&self, at: usize) -> Result<&'a Node, String> {
        self.doc
            .nodes
            .get(at)
            .ok_or_else(|| "yaml: unknown anchor referenced".to_string())
    }

    /// go-yaml's guard against alias bombs: past 1000 decoded nodes, too large a
    /// share of them coming from alias expansion stops the decoding.
    fn count(&mut self) -> Result<(), String> {
        self.decoded += 1;
        if !self.expanding.is_empty() {
            self.aliased += 1;
        }
        if self.aliased > 100 && self.decoded > 1000 {
            let ratio = self.aliased as f64 / self.decoded as f64;
            let allowed = match self.decoded {
                d if d <= 400_000 => 0.99,
                d if d >= 4_000_000 => 0.10,
                d => 0.99 - 0.89 * ((d - 400_000) as f64 / 3_600_000.0),
            };
            if ratio > allowed {
                return Err("yaml: document contains excessive aliasing".into());
            }
        }
        Ok(())
    }

    pub(super) fn decode(&mut self, at: usize, depth: usize) -> Result<Go, String> {
        if depth > MAX_DEPTH {
            return Err(format!("yaml: exceeded max depth of {MAX_DEPTH}"));
        }
        self.count()?;
        match self.node(at)? {
            Node::Scalar {
                value,
                tag,
                implicit,
            } => scalar(value, tag, *implicit),
            Node::Alias { .. } => self.alias(at, depth),
            Node::Seq(items) => items
                .iter()
                .map(|i| self.decode(*i, depth + 1))
                .collect::<Result<Vec<_>, _>>()
                .map(Go::Seq),
            Node::Map(_) => {
                let mut entries = Vec::new();
                self.mapping_into(at, &mut entries, depth)?;
                Ok(Go::Map(entries))
            }
        }
    }

    fn alias(&mut self, at: usize, depth: usize) -> Result<Go, String> {
        let Node::Alias { name, target } = self.node(at)? else {
            return Err("yaml: unknown anchor referenced".into());
        };
        if self.expanding.contains(&at) {
            return Err(format!("yaml: anchor '{name}' value contains itself"));
        }
        self.expanding.push(at);
        let out = self.decode(*target, depth + 1);
        self.expanding.pop();
        out
    }

    /// Decodes the mapping at `at` into `entries`, which may already hold keys: merged
    /// maps are written into the map that merges them, in document order, so a merged
    /// key overrides one set before the merge and is overridden by one set after it.
    fn mapping_into(
        &mut self,
        at: usize,
        entries: &mut Vec<(Go, Go)>,
        depth: usize,
    ) -> Result<(), String> {
        let Node::Map(pairs) = self.node(at)? else {
            return Err(WANT_MAP.into());
        };
        for (k, v) in pairs {
            if self.is_merge(*k)? {
                self.merge(*v, entries, depth)?;
                continue;
            }
            let key = self.decode(*k, depth + 1)?;
            if matches!(key, Go::Seq(_) | Go::Map(_)) {
                return Err(format!("yaml: invalid map key: {}", go_syntax(&key, true)));
            }
            let value = self.decode(*v, depth + 1)?;
            Go::set(entries, key, value);
        }
        Ok(())
    }

    fn is_merge(&self, at: usize) -> Result<bool, String> {
        Ok(matches!(
            self.node(at)?,
            Node::Scalar { value, tag, implicit } if value == "<<" && (*implicit || tag == MERGE)
        ))
    }

    /// The node an alias stands for (aliases of aliases do not occur: an anchor is
    /// always on a node).
    fn target_is_map(&self, at: usize) -> Result<bool, String> {
        match self.node(at)? {
            Node::Alias { target, .. } => Ok(matches!(self.node(*target)?, Node::Map(_))),
            Node::Map(_) => Ok(true),
            _ => Ok(false),
        }
    }

    fn merge(
        &mut self,
        at: usize,
        entries: &mut Vec<(Go, Go)>,
        depth: usize,
    ) -> Result<(), String> {
        match self.node(at)? {
            Node::Map(_) => {
                self.count()?;
                self.mapping_into(at, entries, depth + 1)
            }
            Node::Alias { .. } => {
                if !self.target_is_map(at)? {
                    return Err(WANT_MAP.into());
                }
                self.merge_alias(at, entries, depth)
            }
            Node::Seq(items) => {
                // Earlier maps take precedence: they are written last.
                for item in items.iter().rev() {
                    if !self.target_is_map(*item)? {
                        return Err(WANT_MAP.into());
                    }
                    match self.node(*item)? {
                        Node::Alias { .. } => self.merge_alias(*item, entries, depth)?,
                        _ => {
                            self.count()?;
                            self.mapping_into(*item, entries, depth + 1)?;
                        }
                    }
                }
                Ok(())
            }
            Node::Scalar { .. } => Err(WANT_MAP.into()),
        }
    }

    fn merge_alias(
        &mut self,
        at: usize,
        entries: &mut Vec<(Go, Go)>,
        depth: usize,
    ) -> Result<(), String> {
        self.count()?;
        let Node::Alias { name, target } = self.node(at)? else {
            return Err(WANT_MAP.into());
        };
        if self.expanding.contains(&at) {
            return Err(format!("yaml: anchor '{name}' value contains itself"));
        }
        self.expanding.push(at);
        let out = self
            .count()
            .and_then(|()| self.mapping_into(*target, entries, depth + 1));
        self.expanding.pop();
        out
    }
}

const WANT_MAP: &str = "yaml: map merge requires map or sequence of maps as the value";

/// A scalar's Go value: quoted and block scalars are strings; a plain one is resolved
/// from its text by YAML 1.1's rules as go-yaml has them; a tag asks for a type.
fn scalar(value: &str, tag: &str, implicit: bool) -> Result<Go, String> {
    if tag.is_empty() && !implicit {
        return Ok(Go::Str(value.to_string()));
    }
    let (resolved_tag, resolved) = resolve(tag, value)?;
    if resolved_tag == BINARY {
        let cleaned: String = value.chars().filter(|c| *c != '\r' && *c != '\n').collect();
        return GO_BASE64
            .decode(cleaned)
            .map(Go::Bytes)
            .map_err(|_| "yaml: !!binary value contains invalid base64 data".to_string());
    }
    // go-yaml leaves what looks like a timestamp as its text in an `interface{}`.
    if resolved_tag == TIMESTAMP {
        return Ok(Go::Str(value.to_string()));
    }
    Ok(resolved)
}

/// An untagged plain scalar's value, as [`scalar`] gives it.
pub(super) fn plain_scalar(text: &str) -> Go {
    match resolve_text("", text) {
        (TIMESTAMP, _) => Go::Str(text.to_string()),
        (_, value) => value,
    }
}

/// Go's `base64.StdEncoding`: padding required, stray bits in the last byte allowed.
const GO_BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireCanonical),
);

/// go-yaml's `resolve`: the tag a scalar's text resolves to and its value, checked
/// against the tag asked for (`""`: none).
fn resolve(tag: &str, text: &str) -> Result<(&'static str, Go), String> {
    const RESOLVABLE: &[&str] = &["", STR, BOOL, INT, FLOAT, NULL, TIMESTAMP];
    if !RESOLVABLE.contains(&tag) {
        // Any other tag keeps the text (`!!binary` is decoded by the caller).
        let kept = if tag == BINARY { BINARY } else { STR };
        return Ok((kept, Go::Str(text.to_string())));
    }
    let (rtag, value) = resolve_text(tag, text);
    if tag.is_empty() || tag == rtag || tag == STR {
        return Ok((rtag, value));
    }
    if tag == FLOAT && rtag == INT {
        let f = match value {
            Go::Int(i) => i as f64,
            Go::Uint(u) => u as f64,
            other => return Ok((rtag, other)),
        };
        return Ok((FLOAT, Go::Float(f)));
    }
    Err(format!(
        "yaml: cannot decode {} `{text}` as a {}",
        short_tag(rtag),
        short_tag(tag)
    ))
}

fn short_tag(tag: &str) -> String {
    match tag.strip_prefix(CORE) {
        Some(rest) => format!("!!{rest}"),
        None => tag.to_string(),
    }
}

/// YAML 1.1 as go-yaml v2 resolves an untagged plain scalar (or one tagged with a
/// core type other than `!!str`, whose text is resolved the same way).
fn resolve_text(tag: &str, text: &str) -> (&'static str, Go) {
    let as_str = (STR, Go::Str(text.to_string()));
    if tag == STR {
        return as_str;
    }
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return (BOOL, Go::Bool(true));
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return (BOOL, Go::Bool(false));
        }
        "" | "~" | "null" | "Null" | "NULL" => return (NULL, Go::Nil),
        ".nan" | ".NaN" | ".NAN" => return (FLOAT, Go::Float(f64::NAN)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return (FLOAT, Go::Float(f64::INFINITY));
        }
        "-.inf" | "-.Inf" | "-.INF" => return (FLOAT, Go::Float(f64::NEG_INFINITY)),
        _ => {}
    }
    match text.as_bytes().first() {
        Some(b'.') => match go_parse_float(text) {
            Some(f) => (FLOAT, Go::Float(f)),
            None => as_str,
        },
        Some(b'0'..=b'9' | b'+' | b'-') => {
            if (tag.is_empty() || tag == TIMESTAMP) && is_timestamp(text) {
                return (TIMESTAMP, Go::Str(text.to_string()));
            }
            let plain: String = text.chars().filter(|c| *c != '_').collect();
            if let Some(i) = go_parse_int(&plain) {
                return (INT, Go::Int(i));
            }
            if let Some(u) = go_parse_uint(&plain) {
                return (INT, Go::Uint(u));
            }
            if is_yaml_float(&plain)
                && let Some(f) = finite(plain.parse::<f64>().ok())
            {
                return (FLOAT, Go::Float(f));
            }
            if let Some(bits) = plain.strip_prefix("0b") {
                if let Some(i) = parse_radix_i64(bits, 2, false) {
                    return (INT, Go::Int(i));
                }
                if let Some(u) = parse_radix_u64(bits, 2) {
                    return (INT, Go::Uint(u));
                }
            } else if let Some(bits) = plain.strip_prefix("-0b")
                && let Some(i) = parse_radix_i64(bits, 2, true)
            {
                return (INT, Go::Int(i));
            }
            as_str
        }
        _ => as_str,
    }
}

/// Go's `ParseFloat` fails (out of range) where Rust's parse gives an infinity.
fn finite(f: Option<f64>) -> Option<f64> {
    f.filter(|f| f.is_finite())
}

/// go-yaml's `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` for decimal text (underscores only between
/// digits); `None` where Go fails, out of range included.
fn go_parse_float(s: &str) -> Option<f64> {
    if s.contains('_') && !underscores_ok(s) {
        return None;
    }
    let plain: String = s.chars().filter(|c| *c != '_').collect();
    let body = plain.strip_prefix(['+', '-']).unwrap_or(&plain);
    // Rust also reads `inf` and `nan`, which cannot reach here but are not decimals.
    if !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') || !is_yaml_float(&plain) {
        return None;
    }
    finite(plain.parse::<f64>().ok())
}

/// Go's rule for underscores in number literals: only between digits, or between a
/// base prefix and a digit.
fn underscores_ok(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let b = s.as_bytes();
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = b[1].eq_ignore_ascii_case(&b'x');
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

/// The base and digits of Go's base-0 integer syntax (`0x`, `0o`, `0b`, a leading `0`
/// for octal, else decimal).
fn base_of(s: &str) -> (u32, &str) {
    let b = s.as_bytes();
    if b.len() >= 2 && b[0] == b'0' {
        match b[1].to_ascii_lowercase() {
            b'x' => return (16, &s[2..]),
            b'o' => return (8, &s[2..]),
            b'b' => return (2, &s[2..]),
            _ => return (8, &s[1..]),
        }
    }
    (10, s)
}

/// Go's `strconv.ParseInt(s, 0, 64)` (underscores already removed).
fn go_parse_int(s: &str) -> Option<i64> {
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (base, digits) = base_of(rest);
    parse_radix_i64(digits, base, negative)
}

/// Go's `strconv.ParseUint(s, 0, 64)` (no sign allowed).
fn go_parse_uint(s: &str) -> Option<u64> {
    let (base, digits) = base_of(s);
    parse_radix_u64(digits, base)
}

fn parse_radix_u64(digits: &str, base: u32) -> Option<u64> {
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(base)) {
        return None;
    }
    u64::from_str_radix(digits, base).ok()
}

fn parse_radix_i64(digits: &str, base: u32, negative: bool) -> Option<i64> {
    let magnitude = parse_radix_u64(digits, base)?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Whether go-yaml takes the text for a timestamp: a four-digit year and `-`, then one
/// of the layouts `2006-1-2T15:4:5.999999999Z07:00` (also with `t`),
/// `2006-1-2 15:4:5.999999999` or `2006-1-2`, as Go's `time.Parse` reads them.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let mut p = Cursor { b, i: 5 };
    let year: u32 = s[..4].parse().unwrap_or(0);
    let Some(month) = p.number(1, 12) else {
        return false;
    };
    if !p.eat(b'-') {
        return false;
    }
    let Some(day) = p.number(1, 31) else {
        return false;
    };
    if day > days_in(month, year) {
        return false;
    }
    if p.done() {
        return true;
    }
    let zoned = match p.next() {
        Some(b'T' | b't') => true,
        Some(b' ') => false,
        _ => return false,
    };
    if p.number(0, 23).is_none() || !p.eat(b':') || p.number(0, 59).is_none() || !p.eat(b':') {
        return false;
    }
    if p.number(0, 59).is_none() {
        return false;
    }
    if matches!(p.peek(), Some(b'.' | b',')) && p.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
        p.i += 1;
        while p.peek().is_some_and(|c| c.is_ascii_digit()) {
            p.i += 1;
        }
    }
    if zoned {
        if p.eat(b'Z') {
            return p.done();
        }
        if !matches!(p.next(), Some(b'+' | b'-')) {
            return false;
        }
        let hh = p.fixed(2);
        let colon = p.eat(b':');
        let mm = p.fixed(2);
        return hh.is_some_and(|h| h <= 24) && colon && mm.is_some_and(|m| m <= 59) && p.done();
    }
    p.done()
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn peek_at(&self, n: usize) -> Option<u8> {
        self.b.get(self.i + n).copied()
    }
    fn next(&mut self) -> Option<u8> {
        let c = self.peek();
        self.i += 1;
        c
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn done(&self) -> bool {
        self.i >= self.b.len()
    }
    /// One or two digits within `lo..=hi`, as Go's layouts `1`, `2`, `15`, `4`, `5` read.
    fn number(&mut self, lo: u32, hi: u32) -> Option<u32> {
        let mut n = 0;
        let mut len = 0;
        while len < 2 && self.peek().is_some_and(|c| c.is_ascii_digit()) {
            n = n * 10 + u32::from(self.peek().unwrap_or(b'0') - b'0');
            self.i += 1;
            len += 1;
        }
        (len > 0 && (lo..=hi).contains(&n)).then_some(n)
    }
    fn fixed(&mut self, len: usize) -> Option<u32> {
        let digits = self.b.get(self.i..self.i + len)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.i += len;
        Some(digits.iter().fold(0, |n, c| n * 10 + u32::from(c - b'0')))
    }
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_integers() {
        assert_eq!(go_parse_int("010"), Some(8));
        assert_eq!(go_parse_int("08"), None);
        assert_eq!(go_parse_int("-0x1F"), Some(-31));
        assert_eq!(go_parse_int("+0b11"), Some(3));
        assert_eq!(go_parse_int("0o17"), Some(15));
        assert_eq!(go_parse_int("0x"), None);
        assert_eq!(go_parse_int("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(go_parse_int("9223372036854775808"), None);
        assert_eq!(go_parse_uint("9223372036854775808"), Some(1 << 63));
        assert_eq!(go_parse_uint("+1"), None);
    }

    #[test]
    fn timestamps() {
        for yes in [
            "2001-12-14",
            "2001-1-2",
            "2001-12-14t21:59:43.10-05:00",
            "2001-12-14T21:59:43Z",
            "2001-12-14 21:59:43.10",
            "2000-02-29",
        ] {
            assert!(is_timestamp(yes), "{yes}");
        }
        for no in [
            "2001-12-14x",
            "2001-13-01",
            "2001-02-29",
            "2001-12-14T21:59:43",
            "01-12-14",
            "2001-12-14 21:59",
        ] {
            assert!(!is_timestamp(no), "{no}");
        }
    }
}
