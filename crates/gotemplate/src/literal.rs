//! Go literal syntax: quoted strings (`strconv.Unquote`), character constants and
//! number literals with Go's prefixes, underscores and "ideal constant" typing.

use topograph_gocompat::strconv::quote;

use crate::ast::Number;
use crate::lex::ItemType;

const SYNTAX: &str = "invalid syntax";

/// Decodes one escape or character at the start of `s` inside a literal quoted by `q`.
/// Returns the character (or byte, for `\x`/octal escapes) and the rest.
fn unquote_char(s: &str, q: char) -> Result<(u32, bool, &str), &'static str> {
    let mut chars = s.chars();
    let c = chars.next().ok_or(SYNTAX)?;
    if c == q && (q == '\'' || q == '"') {
        return Err(SYNTAX);
    }
    if c != '\\' {
        return Ok((c as u32, false, chars.as_str()));
    }
    let e = chars.next().ok_or(SYNTAX)?;
    let rest = chars.as_str();
    let simple = match e {
        'a' => Some(7),
        'b' => Some(8),
        'f' => Some(12),
        'n' => Some(10),
        'r' => Some(13),
        't' => Some(9),
        'v' => Some(11),
        '\\' => Some(92),
        '\'' | '"' => {
            if e != q {
                return Err(SYNTAX);
            }
            Some(e as u32)
        }
        _ => None,
    };
    if let Some(v) = simple {
        return Ok((v, false, rest));
    }
    let hex = |n: usize| -> Result<(u32, &str), &'static str> {
        let digits = rest.get(..n).ok_or(SYNTAX)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(SYNTAX);
        }
        let v = u32::from_str_radix(digits, 16).map_err(|_| SYNTAX)?;
        Ok((v, rest.get(n..).unwrap_or("")))
    };
    match e {
        'x' => {
            let (v, r) = hex(2)?;
            Ok((v, true, r))
        }
        'u' | 'U' => {
            let (v, r) = hex(if e == 'u' { 4 } else { 8 })?;
            if char::from_u32(v).is_none() {
                return Err(SYNTAX);
            }
            Ok((v, false, r))
        }
        '0'..='7' => {
            let digits = s.get(1..4).ok_or(SYNTAX)?;
            if !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return Err(SYNTAX);
            }
            let v = u32::from_str_radix(digits, 8).map_err(|_| SYNTAX)?;
            if v > 255 {
                return Err(SYNTAX);
            }
            Ok((v, true, s.get(4..).unwrap_or("")))
        }
        _ => Err(SYNTAX),
    }
}

/// `strconv.Unquote` for double-quoted and raw strings.
pub(crate) fn unquote(s: &str) -> Result<String, String> {
    if s.len() >= 2 && s.starts_with('`') && s.ends_with('`') {
        let inner = &s[1..s.len() - 1];
        if inner.contains('`') {
            return Err(SYNTAX.into());
        }
        return Ok(inner.replace('\r', ""));
    }
    if s.len() < 2 || !s.starts_with('"') || !s.ends_with('"') {
        return Err(SYNTAX.into());
    }
    let mut rest = &s[1..s.len() - 1];
    if rest.contains('\n') {
        return Err(SYNTAX.into());
    }
    let mut bytes: Vec<u8> = Vec::with_capacity(rest.len());
    while !rest.is_empty() {
        let (v, is_byte, r) = unquote_char(rest, '"')?;
        if is_byte {
            bytes.push(v as u8);
        } else {
            let c = char::from_u32(v).unwrap_or('\u{FFFD}');
            let mut b = [0u8; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
        }
        rest = r;
    }
    // Byte escapes may form invalid UTF-8; Go keeps the bytes, we substitute.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn underscore_ok(s: &str) -> bool {
    // Underscores must sit between digits (or after a base prefix).
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let mut saw = '^';
    let mut hex = false;
    if b.len() - i >= 2
        && b[i] == b'0'
        && matches!(b[i + 1].to_ascii_lowercase(), b'b' | b'o' | b'x')
    {
        hex = b[i + 1].eq_ignore_ascii_case(&b'x');
        i += 2;
        saw = '0';
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = '0';
        } else if c == b'_' {
            if saw != '0' {
                return false;
            }
            saw = '_';
        } else {
            if saw == '_' {
                return false;
            }
            saw = '!';
        }
        i += 1;
    }
    saw != '_'
}

/// `strconv.ParseInt(s, 0, 64)`-style parse into a wide integer; `signed` allows a sign.
fn parse_int(s: &str, signed: bool) -> Option<i128> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'+') if signed => (false, &s[1..]),
        Some(b'-') if signed => (true, &s[1..]),
        _ => (false, s),
    };
    if body.is_empty() {
        return None;
    }
    if body.contains('_') && !underscore_ok(s) {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(r) = lower.strip_prefix("0x") {
        (16, r.to_string())
    } else if let Some(r) = lower.strip_prefix("0o") {
        (8, r.to_string())
    } else if let Some(r) = lower.strip_prefix("0b") {
        (2, r.to_string())
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower[1..].to_string())
    } else {
        (10, lower)
    };
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() {
        return None;
    }
    let v = u128::from_str_radix(&digits, radix).ok()?;
    if v > u64::MAX as u128 + 1 {
        return None;
    }
    let v = v as i128;
    Some(if neg { -v } else { v })
}

fn parse_hex_float(s: &str) -> Option<f64> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let body = body.get(2..)?;
    let (mant, exp) = match body.find(['p', 'P']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i32>().ok()?),
        None => return None,
    };
    let (int_part, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let mut v = 0f64;
    for c in int_part.chars() {
        v = v * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        v += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    let v = v * 2f64.powi(exp);
    Some(if neg { -v } else { v })
}

/// `strconv.ParseFloat(s, 64)`; out-of-range values are errors.
pub(crate) fn parse_float(s: &str) -> Option<f64> {
    if s.contains('_') {
        if !underscore_ok(s) {
            return None;
        }
        return parse_float(&s.replace('_', ""));
    }
    let lower = s.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    let v = if unsigned.starts_with("0x") {
        parse_hex_float(&lower)?
    } else {
        if unsigned.is_empty()
            || !unsigned
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'+' | b'-'))
        {
            return None;
        }
        lower.parse::<f64>().ok()?
    };
    if v.is_infinite() {
        return None;
    }
    Some(v)
}

fn simplify_complex(n: &mut Number) {
    if n.complex.1 == 0.0 {
        n.is_float = true;
        n.float = n.complex.0;
        if n.float == n.float.trunc() && n.float.abs() < 9.2e18 {
            n.is_int = true;
            n.int = n.float as i64;
        }
        if n.float >= 0.0 && n.float == n.float.trunc() && n.float < 1.8e19 {
            n.is_uint = true;
            n.uint = n.float as u64;
        }
    }
}

/// Go's `newNumber`: parses a number, character or complex literal.
pub(crate) fn number(text: &str, typ: ItemType) -> Result<Number, String> {
    let mut n = Number {
        text: text.to_string(),
        ..Number::default()
    };
    match typ {
        ItemType::CharConstant => {
            let inner = text.get(1..).ok_or(SYNTAX)?;
            let (v, _, tail) = unquote_char(inner, '\'')?;
            if tail != "'" {
                return Err(format!("malformed character constant: {text}"));
            }
            n.is_int = true;
            n.int = v as i64;
            n.is_uint = true;
            n.uint = v as u64;
            n.is_float = true;
            n.float = v as f64;
            return Ok(n);
        }
        ItemType::Complex => {
            // `a+bi`: split at the sign that starts the imaginary part.
            let b = text.as_bytes();
            let split = (1..b.len())
                .rev()
                .find(|&i| {
                    matches!(b[i], b'+' | b'-') && !matches!(b[i - 1], b'e' | b'E' | b'p' | b'P')
                })
                .ok_or_else(|| "expected integer".to_string())?;
            let re = parse_float(&text[..split]).ok_or("expected integer")?;
            let im = parse_float(text[split..].trim_end_matches('i')).ok_or("expected integer")?;
            n.is_complex = true;
            n.complex = (re, im);
            simplify_complex(&mut n);
            return Ok(n);
        }
        _ => {}
    }
    if let Some(body) = text.strip_suffix('i')
        && let Some(f) = parse_float(body)
    {
        n.is_complex = true;
        n.complex = (0.0, f);
        simplify_complex(&mut n);
        return Ok(n);
    }
    let u = parse_int(text, false).filter(|v| (0..=u64::MAX as i128).contains(v));
    if let Some(u) = u {
        n.is_uint = true;
        n.uint = u as u64;
    }
    let i = parse_int(text, true).filter(|v| (i64::MIN as i128..=i64::MAX as i128).contains(v));
    if let Some(i) = i {
        n.is_int = true;
        n.int = i as i64;
        if i == 0 {
            n.is_uint = true;
            n.uint = 0;
        }
    }
    if n.is_int {
        n.is_float = true;
        n.float = n.int as f64;
    } else if n.is_uint {
        n.is_float = true;
        n.float = n.uint as f64;
    } else if let Some(f) = parse_float(text) {
        if !text.contains(['.', 'e', 'E', 'p', 'P']) {
            return Err(format!("integer overflow: {}", quote(text)));
        }
        n.is_float = true;
        n.float = f;
        if f == f.trunc() && f.abs() < 9.223372036854775e18 {
            n.is_int = true;
            n.int = f as i64;
        }
        if f == f.trunc() && (0.0..1.8446744073709552e19).contains(&f) {
            n.is_uint = true;
            n.uint = f as u64;
        }
    }
    if !n.is_int && !n.is_uint && !n.is_float {
        return Err(format!("illegal number syntax: {}", quote(text)));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquotes_go_strings() {
        assert_eq!(unquote("\"a\\tb\\u00e9\"").as_deref(), Ok("a\tb\u{e9}"));
        assert_eq!(unquote("`a\\n`").as_deref(), Ok("a\\n"));
        assert!(unquote("\"\\q\"").is_err());
    }

    #[test]
    fn numbers_carry_every_form() {
        let n = number("0x10", ItemType::Number).unwrap_or_default();
        assert!(n.is_int && n.int == 16);
        let n = number("1e3", ItemType::Number).unwrap_or_default();
        assert!(n.is_float && n.is_int && n.int == 1000);
        let n = number("'a'", ItemType::CharConstant).unwrap_or_default();
        assert_eq!(n.int, 97);
        assert!(number("1_0", ItemType::Number).is_ok_and(|n| n.int == 10));
        assert!(number("99999999999999999999", ItemType::Number).is_err());
    }
}
