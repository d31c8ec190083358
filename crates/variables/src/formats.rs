//! The string formats Kubernetes checks (`uri`, `email`, `ipv4`, `cidr`, `date-time`,
//! `duration`, ...): which names are known, which of them CRD schemas keep, and the
//! checks themselves with the same leniencies as the Go code they stand in for.

use std::sync::OnceLock;

use regex::Regex;

/// Format names as the registry stores them: dashes removed.
pub fn normalize(name: &str) -> String {
    name.replace('-', "")
}

/// Formats the validator knows (its registry), each with whether a `type: string`
/// schema keeps it: any other format is dropped before validation. One table, so a
/// format a schema keeps is always one the registry knows.
const FORMATS: &[(&str, bool)] = &[
    ("uri", true),
    ("email", true),
    ("hostname", true),
    ("ipv4", true),
    ("ipv6", true),
    ("cidr", true),
    ("mac", true),
    ("uuid", true),
    ("uuid3", true),
    ("uuid4", true),
    ("uuid5", true),
    ("isbn", true),
    ("isbn10", true),
    ("isbn13", true),
    ("creditcard", true),
    ("ssn", true),
    ("hexcolor", true),
    ("rgbcolor", true),
    ("byte", true),
    ("password", true),
    ("bsonobjectid", true),
    ("date", true),
    ("datetime", true),
    ("duration", true),
    ("k8sshortname", true),
    ("k8slongname", true),
    ("k8sipsloppy", false),
];

/// Whether the registry knows the format.
pub fn known(format: &str) -> bool {
    let format = normalize(format);
    FORMATS.iter().any(|(name, _)| *name == format)
}

/// Whether a `type: string` schema keeps the format.
pub fn supported(format: &str) -> bool {
    let format = normalize(format);
    FORMATS.iter().any(|(name, kept)| *kept && *name == format)
}

fn re(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

macro_rules! regex_fn {
    ($name:ident, $pattern:expr) => {
        fn $name(s: &str) -> bool {
            static CELL: OnceLock<Option<Regex>> = OnceLock::new();
            re(&CELL, $pattern).is_some_and(|r| r.is_match(s))
        }
    };
}

regex_fn!(
    hostname_re,
    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$"
);
regex_fn!(
    uuid_re,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
);
regex_fn!(
    uuid3_re,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
);
regex_fn!(
    uuid4_re,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
regex_fn!(
    uuid5_re,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
regex_fn!(ssn_re, r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$");
regex_fn!(hexcolor_re, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$");
regex_fn!(
    rgbcolor_re,
    r"^rgb\([\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*,[\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*,[\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*\)$"
);
regex_fn!(
    base64_re,
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
);
regex_fn!(
    creditcard_re,
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11}|6[27][0-9]{14})$"
);
regex_fn!(short_name_re, r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
regex_fn!(
    long_name_re,
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
);
const DATETIME_TAIL: &str =
    r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$";

/// Checks `s` against a known format.
pub fn validates(format: &str, s: &str) -> bool {
    match normalize(format).as_str() {
        "uri" => is_request_uri(s),
        "email" => is_email(s),
        "hostname" => is_hostname(s),
        "ipv4" => parse_ip_sloppy(s).is_some() && s.contains('.'),
        "ipv6" => parse_ip(s, false).is_some() && s.contains(':'),
        "cidr" => is_cidr_sloppy(s),
        "mac" => is_mac(s),
        "uuid" => uuid_re(s),
        "uuid3" => uuid3_re(s),
        "uuid4" => uuid4_re(s),
        "uuid5" => uuid5_re(s),
        "isbn" => is_isbn10(s) || is_isbn13(s),
        "isbn10" => is_isbn10(s),
        "isbn13" => is_isbn13(s),
        "creditcard" => is_credit_card(s),
        "ssn" => s.len() == 11 && ssn_re(s),
        "hexcolor" => hexcolor_re(s),
        "rgbcolor" => rgbcolor_re(s),
        "byte" => base64_re(s),
        "password" => true,
        "bsonobjectid" => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        "date" => is_date(s),
        "datetime" => is_datetime(s),
        "duration" => is_duration(s),
        "k8sshortname" => s.len() <= 63 && short_name_re(s),
        "k8slongname" => s.len() <= 253 && long_name_re(s),
        "k8sipsloppy" => parse_ip_sloppy(s).is_some(),
        _ => false,
    }
}

fn is_hostname(s: &str) -> bool {
    hostname_re(s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

// ---------------------------------------------------------------------------------
// IP addresses.

/// IPv4 in dotted form; `sloppy` allows leading zeros (Go before 1.17).
fn parse_ipv4(s: &str, sloppy: bool) -> Option<[u8; 4]> {
    let mut out = [0u8; 4];
    let mut parts = s.split('.');
    for slot in &mut out {
        let p = parts.next()?;
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if !sloppy && p.len() > 1 && p.starts_with('0') {
            return None;
        }
        let mut n: u32 = 0;
        for b in p.bytes() {
            n = n * 10 + u32::from(b - b'0');
            if n > 255 {
                return None;
            }
        }
        *slot = n as u8;
    }
    if parts.next().is_some() {
        return None;
    }
    Some(out)
}

/// IPv6 (with an optional trailing IPv4 part); no zones.
fn parse_ipv6(s: &str, sloppy: bool) -> Option<[u8; 16]> {
    let mut out = [0u8; 16];
    let mut groups: Vec<u16> = Vec::new();
    let mut ellipsis: Option<usize> = None;
    let mut rest = s;
    if rest.starts_with("::") {
        ellipsis = Some(0);
        rest = &rest[2..];
        if rest.is_empty() {
            return Some(out);
        }
    }
    let mut tail_v4: Option<[u8; 4]> = None;
    loop {
        // A trailing IPv4 part.
        if rest.contains('.') && !rest.contains(':') {
            tail_v4 = Some(parse_ipv4(rest, sloppy)?);
            break;
        }
        let end = rest.find(':').unwrap_or(rest.len());
        let g = &rest[..end];
        if g.is_empty() || g.len() > 4 || !g.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        groups.push(u16::from_str_radix(g, 16).ok()?);
        rest = &rest[end..];
        if rest.is_empty() {
            break;
        }
        rest = &rest[1..];
        if let Some(r) = rest.strip_prefix(':') {
            if ellipsis.is_some() {
                return None;
            }
            ellipsis = Some(groups.len());
            rest = r;
            if rest.is_empty() {
                break;
            }
        } else if rest.is_empty() {
            return None;
        }
    }
    let mut words: Vec<u16> = groups;
    let v4_words = if let Some(v4) = tail_v4 {
        vec![
            u16::from(v4[0]) << 8 | u16::from(v4[1]),
            u16::from(v4[2]) << 8 | u16::from(v4[3]),
        ]
    } else {
        Vec::new()
    };
    let total = words.len() + v4_words.len();
    match ellipsis {
        Some(at) => {
            if total >= 8 {
                return None;
            }
            let fill = 8 - total;
            let tail: Vec<u16> = words.split_off(at);
            words.extend(std::iter::repeat_n(0, fill));
            words.extend(tail);
        }
        None => {
            if total != 8 {
                return None;
            }
        }
    }
    words.extend(v4_words);
    for (i, w) in words.iter().enumerate() {
        let b = w.to_be_bytes();
        *out.get_mut(2 * i)? = b[0];
        *out.get_mut(2 * i + 1)? = b[1];
    }
    Some(out)
}

/// Go's `net.ParseIP` (strict) or the pre-1.17 sloppy form.
fn parse_ip(s: &str, sloppy: bool) -> Option<Vec<u8>> {
    if s.contains(':') {
        parse_ipv6(s, sloppy).map(|a| a.to_vec())
    } else {
        parse_ipv4(s, sloppy).map(|a| a.to_vec())
    }
}

fn parse_ip_sloppy(s: &str) -> Option<Vec<u8>> {
    parse_ip(s, true)
}

fn is_cidr_sloppy(s: &str) -> bool {
    let Some((addr, mask)) = s.split_once('/') else {
        return false;
    };
    let bits = if addr.contains(':') { 128 } else { 32 };
    if parse_ip_sloppy(addr).is_none() {
        return false;
    }
    if mask.is_empty() || !mask.bytes().all(|b| b.is_ascii_digit()) || mask.len() > 3 {
        return false;
    }
    mask.parse::<u32>().is_ok_and(|n| n <= bits)
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets separated by `:` or `-`, or dotted groups of four.
fn is_mac(s: &str) -> bool {
    if s.len() < 14 {
        return false;
    }
    let bytes = s.as_bytes();
    let hex = |x: &[u8]| x.iter().all(u8::is_ascii_hexdigit);
    if bytes.get(2) == Some(&b':') || bytes.get(2) == Some(&b'-') {
        if !(s.len() + 1).is_multiple_of(3) {
            return false;
        }
        let n = (s.len() + 1) / 3;
        if n != 6 && n != 8 && n != 20 {
            return false;
        }
        let sep = bytes[2];
        for i in 0..n {
            let x = i * 3;
            if !hex(&bytes[x..x + 2]) {
                return false;
            }
            if i + 1 < n && bytes[x + 2] != sep {
                return false;
            }
        }
        true
    } else if bytes.get(4) == Some(&b'.') {
        if !(s.len() + 1).is_multiple_of(5) {
            return false;
        }
        let n = 2 * (s.len() + 1) / 5;
        if n != 6 && n != 8 && n != 20 {
            return false;
        }
        for i in 0..n / 2 {
            let x = i * 5;
            if !hex(&bytes[x..x + 4]) {
                return false;
            }
            if i + 1 < n / 2 && bytes[x + 4] != b'.' {
                return false;
            }
        }
        true
    } else {
        false
    }
}

// ---------------------------------------------------------------------------------
// Numbers with check digits.

fn is_isbn10(s: &str) -> bool {
    let t: String = s
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .collect();
    let b = t.as_bytes();
    if b.len() != 10 || !b[..9].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let last = b[9];
    if !(last.is_ascii_digit() || last == b'X') {
        return false;
    }
    let mut sum: i64 = 0;
    for (i, d) in b[..9].iter().enumerate() {
        sum += (i as i64 + 1) * i64::from(d - b'0');
    }
    sum += if last == b'X' {
        100
    } else {
        10 * i64::from(last - b'0')
    };
    sum % 11 == 0
}

fn is_isbn13(s: &str) -> bool {
    let t: String = s
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .collect();
    let b = t.as_bytes();
    if b.len() != 13 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let mut sum: i64 = 0;
    for (i, d) in b[..12].iter().enumerate() {
        let f = if i % 2 == 0 { 1 } else { 3 };
        sum += f * i64::from(d - b'0');
    }
    i64::from(b[12] - b'0') - ((10 - (sum % 10)) % 10) == 0
}

fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if !creditcard_re(&digits) {
        return false;
    }
    let mut sum = 0u32;
    let mut double = false;
    for b in digits.bytes().rev() {
        let mut n = u32::from(b - b'0');
        if double {
            n *= 2;
            sum += if n >= 10 { n % 10 + 1 } else { n };
        } else {
            sum += n;
        }
        double = !double;
    }
    sum.is_multiple_of(10)
}

// ---------------------------------------------------------------------------------
// Dates and durations.

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 {
                29
            } else {
                28
            }
        }
    }
}

/// `time.Parse("2006-01-02", s)`.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: &[u8]| -> Option<u32> {
        if r.iter().all(u8::is_ascii_digit) {
            std::str::from_utf8(r).ok()?.parse().ok()
        } else {
            None
        }
    };
    let (Some(y), Some(m), Some(d)) = (num(&b[..4]), num(&b[5..7]), num(&b[8..10])) else {
        return false;
    };
    (1..=12).contains(&m) && d >= 1 && d <= days_in_month(i64::from(y), m)
}

fn is_datetime(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    static CELL: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(r) = re(&CELL, DATETIME_TAIL) else {
        return false;
    };
    let Some(c) = r.captures(time) else {
        return false;
    };
    let g = |i| c.get(i).map(|m| m.as_str()).unwrap_or("");
    g(1) <= "23" && g(2) <= "59" && g(3) <= "59"
}

/// Go's `time.ParseDuration`.
pub fn go_parse_duration(s: &str) -> Option<i128> {
    let mut rest = s;
    let neg = if let Some(r) = rest.strip_prefix('-') {
        rest = r;
        true
    } else {
        if let Some(r) = rest.strip_prefix('+') {
            rest = r;
        }
        false
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let int_end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let int_part = &rest[..int_end];
        rest = &rest[int_end..];
        let mut frac_part = "";
        if let Some(r) = rest.strip_prefix('.') {
            let e = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            frac_part = &r[..e];
            rest = &r[e..];
            if int_part.is_empty() && frac_part.is_empty() {
                return None;
            }
        } else if int_part.is_empty() {
            return None;
        }
        let unit_end = rest
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = &rest[..unit_end];
        rest = &rest[unit_end..];
        let scale: f64 = match unit {
            "ns" => 1.0,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        let v: f64 = format!(
            "{}.{}",
            if int_part.is_empty() { "0" } else { int_part },
            if frac_part.is_empty() { "0" } else { frac_part }
        )
        .parse()
        .ok()?;
        total += v * scale;
        if total > 9.223_372_036_854_776e18 {
            return None;
        }
    }
    Some(if neg { -(total as i128) } else { total as i128 })
}

fn is_duration(s: &str) -> bool {
    if go_parse_duration(s).is_some() {
        return true;
    }
    static CELL: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(r) = re(
        &CELL,
        r"(((?:-[\t\n\f\r ]?)?[0-9]+)[\t\n\f\r ]*([A-Za-zµ]+))",
    ) else {
        return false;
    };
    const UNITS: &[&[&str]] = &[
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let mut ok = false;
    for c in r.captures_iter(s) {
        let value = c.get(2).map(|m| m.as_str()).unwrap_or("");
        let value = value.strip_prefix('-').unwrap_or(value).trim();
        if value.parse::<i64>().is_err() {
            return false;
        }
        let unit = c
            .get(3)
            .map(|m| m.as_str().trim().to_lowercase())
            .unwrap_or_default();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, v) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(v)) || v.eq_ignore_ascii_case(&unit) {
                    ok = true;
                }
            }
        }
    }
    ok
}

// ---------------------------------------------------------------------------------
// URIs and e-mail addresses.

fn is_scheme_char(c: u8, first: bool) -> bool {
    c.is_ascii_alphabetic() || (!first && (c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.')))
}

fn valid_escapes(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            match (b.get(i + 1), b.get(i + 2)) {
                (Some(x), Some(y)) if x.is_ascii_hexdigit() && y.is_ascii_hexdigit() => i += 3,
                _ => return false,
            }
        } else {
            i += 1;
        }
    }
    true
}

fn host_char_ok(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'-' | b'.'
                | b'_'
                | b'~'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
                | b'%'
        )
        || c >= 0x80
}

/// Go's `url.ParseRequestURI(s) == nil`.
fn is_request_uri(s: &str) -> bool {
    if s.bytes().any(|b| b < 0x20 || b == 0x7f) || s.is_empty() {
        return false;
    }
    if s == "*" {
        return true;
    }
    let bytes = s.as_bytes();
    let mut scheme_end = None;
    for (i, &c) in bytes.iter().enumerate() {
        if c == b':' {
            if i == 0 {
                return false;
            }
            scheme_end = Some(i);
            break;
        }
        if !is_scheme_char(c, i == 0) {
            break;
        }
    }
    let (has_scheme, mut rest) = match scheme_end {
        Some(i) => (true, &s[i + 1..]),
        None => (false, s),
    };
    if let Some(q) = rest.find('?') {
        rest = &rest[..q];
    }
    if !rest.starts_with('/') {
        // An opaque URI (`mailto:x`) is fine once there is a scheme.
        return has_scheme;
    }
    if has_scheme && rest.starts_with("//") {
        let after = &rest[2..];
        let end = after.find('/').unwrap_or(after.len());
        let authority = &after[..end];
        let host = match authority.rfind('@') {
            Some(i) => {
                let user = &authority[..i];
                if !valid_escapes(user) {
                    return false;
                }
                &authority[i + 1..]
            }
            None => authority,
        };
        if !valid_host(host) {
            return false;
        }
        rest = &after[end..];
    }
    valid_escapes(rest)
}

fn valid_host(host: &str) -> bool {
    if let Some(inner) = host.strip_prefix('[') {
        let Some(close) = inner.find(']') else {
            return false;
        };
        let port = &inner[close + 1..];
        if !port.is_empty() && !valid_port(port) {
            return false;
        }
        return true;
    }
    if let Some(i) = host.rfind(':')
        && !valid_port(&host[i..])
    {
        return false;
    }
    valid_escapes(host) && host.bytes().all(host_char_ok)
}

fn valid_port(p: &str) -> bool {
    match p.strip_prefix(':') {
        Some(d) => d.bytes().all(|b| b.is_ascii_digit()),
        None => false,
    }
}

/// Go's `net/mail.ParseAddress(s)` succeeding with a non-empty address.
fn is_email(s: &str) -> bool {
    let mut p = MailParser {
        s: s.as_bytes(),
        pos: 0,
    };
    p.single_address()
}

struct MailParser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl MailParser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    fn skip_cfws(&mut self) -> bool {
        self.skip_space();
        while self.peek() == Some(b'(') {
            let mut depth = 0;
            while let Some(c) = self.peek() {
                self.pos += 1;
                match c {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    b'\\' => self.pos += 1,
                    _ => {}
                }
            }
            if depth != 0 {
                return false;
            }
            self.skip_space();
        }
        true
    }

    fn is_atext(c: u8, dot: bool) -> bool {
        match c {
            b'.' => dot,
            b'(' | b')' | b'<' | b'>' | b'[' | b']' | b':' | b';' | b'@' | b'\\' | b',' | b'"' => {
                false
            }
            c => (b'!'..=b'~').contains(&c) || c >= 0x80,
        }
    }

    fn atom(&mut self, dot: bool) -> Option<&[u8]> {
        let start = self.pos;
        while self.peek().is_some_and(|c| Self::is_atext(c, dot)) {
            self.pos += 1;
        }
        if self.pos == start {
            return None;
        }
        let a = &self.s[start..self.pos];
        if dot
            && (a.first() == Some(&b'.')
                || a.last() == Some(&b'.')
                || a.windows(2).any(|w| w == b".."))
        {
            return None;
        }
        Some(a)
    }

    fn quoted_string(&mut self) -> bool {
        if self.peek() != Some(b'"') {
            return false;
        }
        self.pos += 1;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                b'"' => return true,
                b'\\' => {
                    if self.peek().is_none() {
                        return false;
                    }
                    self.pos += 1;
                }
                c if c < 0x20 && c != b'\t' => return false,
                _ => {}
            }
        }
        false
    }

    fn addr_spec(&mut self) -> bool {
        let save = self.pos;
        let ok = (|| {
            self.skip_space();
            if self.peek() == Some(b'"') {
                if !self.quoted_string() {
                    return false;
                }
            } else if self.atom(true).is_none() {
                return false;
            }
            if self.peek() != Some(b'@') {
                return false;
            }
            self.pos += 1;
            self.skip_space();
            if self.peek() == Some(b'[') {
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    if c == b']' {
                        return true;
                    }
                }
                return false;
            }
            self.atom(true).is_some()
        })();
        if !ok {
            self.pos = save;
        }
        ok
    }

    fn at_end(&mut self) -> bool {
        self.skip_cfws() && self.pos == self.s.len()
    }

    fn single_address(&mut self) -> bool {
        self.skip_space();
        if self.pos == self.s.len() {
            return false;
        }
        let save = self.pos;
        if self.addr_spec() && self.at_end() {
            return true;
        }
        self.pos = save;
        // display-name <addr-spec>
        let mut words = 0;
        loop {
            self.skip_cfws();
            if self.peek() == Some(b'"') {
                if !self.quoted_string() {
                    return false;
                }
            } else if self.atom(true).is_none() {
                break;
            }
            words += 1;
        }
        let _ = words;
        self.skip_cfws();
        if self.peek() != Some(b'<') {
            return false;
        }
        self.pos += 1;
        if !self.addr_spec() {
            return false;
        }
        self.skip_space();
        if self.peek() != Some(b'>') {
            return false;
        }
        self.pos += 1;
        self.at_end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples() {
        assert!(validates("uri", "http://x.io/a"));
        assert!(!validates("uri", "a@b.c"));
        assert!(validates("email", "a@b.c"));
        assert!(!validates("email", "http://x.io/a"));
        assert!(validates("ipv4", "1.2.3.4"));
        assert!(validates("ipv6", "::1"));
        assert!(validates("cidr", "10.0.0.0/8"));
        assert!(validates("mac", "00:11:22:33:44:55"));
        assert!(validates("date-time", "2024-01-02T03:04:05Z"));
        assert!(validates("duration", "1h2m"));
        assert!(validates(
            "duration",
            "123e4567-e89b-12d3-a456-426614174000"
        ));
        assert!(validates("byte", "aGVsbG8="));
        assert!(!validates("byte", ""));
        assert!(!validates("hostname", "Host-Name"));
        assert!(!validates("hostname", "1.2.3.4"));
    }
}
