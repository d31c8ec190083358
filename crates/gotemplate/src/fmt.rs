//! Go's `fmt` as templates use it: `%v` of every value, `print`/`println`, and the
//! `printf` verbs with flags, width and precision, including Go's in-band error forms
//! (`%!d(float64=3)`, `%!v(MISSING)`, `%!(EXTRA int=1)`).
//!
//! Floats follow `strconv.FormatFloat`: `%v` is the shortest round-trip form in `%g`
//! style with the exponent switch at 1e+06 / 1e-05.

use topograph_gocompat::strconv::{self, is_print, quote};

use crate::value::Value;

/// Deepest nesting printed; maps can contain themselves through `set`, where Go
/// would recurse until it crashes.
const MAX_PRINT_DEPTH: usize = 100;

/// Largest width or precision Go accepts in a verb (`fmt` ignores bigger ones).
const MAX_WIDTH: usize = 1_000_000;

/// Decimal digits of a finite float: `0.d1d2... × 10^dp`, no trailing zeros.
struct Digits {
    digits: Vec<u8>,
    dp: i32,
}

fn parse_sci(s: &str) -> Digits {
    // `s` is Rust's `{:e}` form of a non-negative finite number, e.g. `1.25e-7`.
    let (mant, exp) = s.split_once('e').unwrap_or((s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).collect();
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits == [b'0'] {
        return Digits {
            digits: Vec::new(),
            dp: 0,
        };
    }
    Digits {
        digits,
        dp: exp + 1,
    }
}

fn shortest_digits(f: f64) -> Digits {
    parse_sci(&format!("{:e}", f.abs()))
}

/// Digits rounded to `n` significant places (at least one).
fn rounded_digits(f: f64, n: usize) -> Digits {
    parse_sci(&format!("{:.*e}", n.saturating_sub(1), f.abs()))
}

fn push_exp(out: &mut String, exp: i32, e: char) {
    out.push(e);
    out.push(if exp < 0 { '-' } else { '+' });
    let a = exp.unsigned_abs();
    if a < 10 {
        out.push('0');
    }
    out.push_str(&a.to_string());
}

/// `%e` layout of `d` with `prec` digits after the point.
fn layout_e(d: &Digits, prec: usize, e: char) -> String {
    let mut out = String::new();
    out.push(*d.digits.first().unwrap_or(&b'0') as char);
    if prec > 0 {
        out.push('.');
        for i in 1..=prec {
            out.push(*d.digits.get(i).unwrap_or(&b'0') as char);
        }
    }
    let exp = if d.digits.is_empty() { 0 } else { d.dp - 1 };
    push_exp(&mut out, exp, e);
    out
}

/// `%f` layout of `d` with `prec` digits after the point.
fn layout_f(d: &Digits, prec: usize) -> String {
    let mut out = String::new();
    if d.dp > 0 {
        for i in 0..d.dp as usize {
            out.push(*d.digits.get(i).unwrap_or(&b'0') as char);
        }
    } else {
        out.push('0');
    }
    if prec > 0 {
        out.push('.');
        for i in 0..prec as i64 {
            let j = d.dp as i64 + i;
            let c = if j < 0 {
                b'0'
            } else {
                *d.digits.get(j as usize).unwrap_or(&b'0')
            };
            out.push(c as char);
        }
    }
    out
}

/// `strconv.FormatFloat(f, fmt, prec, 64)` for `fmt` in `eEfFgG`; `prec` < 0 is shortest.
pub(crate) fn format_float(f: f64, fmt: char, prec: i64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let neg = f.is_sign_negative();
    let body = match fmt {
        'e' | 'E' => {
            let d;
            let p = if prec < 0 {
                d = shortest_digits(f);
                d.digits.len().saturating_sub(1)
            } else {
                d = rounded_digits(f, prec as usize + 1);
                prec as usize
            };
            layout_e(&d, p, fmt)
        }
        'f' | 'F' => {
            if prec < 0 {
                let d = shortest_digits(f);
                let p = (d.digits.len() as i64 - d.dp as i64).max(0) as usize;
                layout_f(&d, p)
            } else {
                let s = format!("{:.*}", prec as usize, f.abs());
                s
            }
        }
        _ => {
            let e = if fmt == 'G' { 'E' } else { 'e' };
            let shortest = prec < 0;
            let (d, mut p) = if shortest {
                let d = shortest_digits(f);
                let n = d.digits.len();
                (d, n as i64)
            } else {
                let p = if prec == 0 { 1 } else { prec };
                (rounded_digits(f, p as usize), p)
            };
            let nd = d.digits.len() as i64;
            let mut eprec = p;
            if eprec > nd && nd >= d.dp as i64 {
                eprec = nd;
            }
            if shortest {
                eprec = 6;
            }
            let exp = d.dp as i64 - 1;
            if exp < -4 || exp >= eprec {
                if p > nd {
                    p = nd;
                }
                layout_e(&d, (p - 1).max(0) as usize, e)
            } else {
                if p > d.dp as i64 {
                    p = nd;
                }
                layout_f(&d, (p - d.dp as i64).max(0) as usize)
            }
        }
    };
    if neg { format!("-{body}") } else { body }
}

/// Go's `%v` of a float64.
pub(crate) fn float_v(f: f64) -> String {
    // Whole numbers under 1e6 (replicas, ports, sizes: most numbers in template data)
    // print as plain integers under %g's rules, so skip finding their shortest digits.
    // -0 keeps its sign in Go, so it takes the long way.
    if f.fract() == 0.0 && f.abs() < 1e6 && !(f == 0.0 && f.is_sign_negative()) {
        return (f as i64).to_string();
    }
    format_float(f, 'g', -1)
}

/// Flags and sizes of one verb.
#[derive(Clone, Copy, Default)]
struct Spec {
    plus: bool,
    minus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    wid: Option<usize>,
    prec: Option<usize>,
}

struct Printer {
    buf: String,
    spec: Spec,
}

impl Printer {
    fn new() -> Self {
        Printer {
            buf: String::new(),
            spec: Spec::default(),
        }
    }

    fn write_padding(&mut self, n: usize) {
        let c = if self.spec.zero && !self.spec.minus {
            '0'
        } else {
            ' '
        };
        self.buf.extend(std::iter::repeat_n(c, n));
    }

    fn pad(&mut self, s: &str) {
        let Some(wid) = self.spec.wid else {
            self.buf.push_str(s);
            return;
        };
        let n = s.chars().count();
        let width = wid.saturating_sub(n);
        if self.spec.minus {
            self.buf.push_str(s);
            self.write_padding(width);
        } else {
            self.write_padding(width);
            self.buf.push_str(s);
        }
    }

    fn truncate<'a>(&self, s: &'a str) -> &'a str {
        if let Some(p) = self.spec.prec
            && let Some((i, _)) = s.char_indices().nth(p)
        {
            return &s[..i];
        }
        s
    }

    fn fmt_s(&mut self, s: &str) {
        let s = self.truncate(s);
        self.pad(s);
    }

    fn fmt_q(&mut self, s: &str) {
        let s = self.truncate(s);
        if self.spec.sharp && !s.contains('`') && s.chars().all(|c| c == '\t' || is_print(c)) {
            let q = format!("`{s}`");
            self.pad(&q);
            return;
        }
        let q = strconv::quote_with(s, '"', self.spec.plus);
        self.pad(&q);
    }

    fn fmt_sx(&mut self, s: &[u8], upper: bool) {
        let digits: &[u8] = if upper {
            b"0123456789ABCDEF"
        } else {
            b"0123456789abcdef"
        };
        let mut b = s;
        if let Some(p) = self.spec.prec
            && p < b.len()
        {
            b = &b[..p];
        }
        let mut out = String::new();
        for (i, c) in b.iter().enumerate() {
            if self.spec.space && i > 0 {
                out.push(' ');
            }
            if self.spec.sharp && (self.spec.space || i == 0) {
                out.push_str(if upper { "0X" } else { "0x" });
            }
            out.push(digits[(c >> 4) as usize] as char);
            out.push(digits[(c & 15) as usize] as char);
        }
        // Padding counts bytes of the encoded form.
        let saved = self.spec.prec.take();
        self.pad(&out);
        self.spec.prec = saved;
    }

    fn fmt_integer(&mut self, u: u64, negative: bool, base: u32, verb: char) {
        let upper = verb == 'X';
        let mut digits = if base == 10 {
            u.to_string()
        } else {
            match base {
                2 => format!("{u:b}"),
                8 => format!("{u:o}"),
                _ if upper => format!("{u:X}"),
                _ => format!("{u:x}"),
            }
        };
        let mut prec = 0usize;
        if let Some(p) = self.spec.prec {
            prec = p;
            if p == 0 && u == 0 {
                let z = self.spec.zero;
                self.spec.zero = false;
                let w = self.spec.wid.unwrap_or(0);
                self.write_padding(w);
                self.spec.zero = z;
                return;
            }
        } else if self.spec.zero
            && !self.spec.minus
            && let Some(w) = self.spec.wid
        {
            prec = w;
            if negative || self.spec.plus || self.spec.space {
                prec = prec.saturating_sub(1);
            }
        }
        if digits.len() < prec {
            digits = format!("{}{}", "0".repeat(prec - digits.len()), digits);
        }
        if self.spec.sharp {
            match base {
                2 => digits = format!("0b{digits}"),
                8 if !digits.starts_with('0') => digits = format!("0{digits}"),
                16 => digits = format!("{}{digits}", if upper { "0X" } else { "0x" }),
                _ => {}
            }
        }
        if verb == 'O' {
            digits = format!("0o{digits}");
        }
        if negative {
            digits.insert(0, '-');
        } else if self.spec.plus {
            digits.insert(0, '+');
        } else if self.spec.space {
            digits.insert(0, ' ');
        }
        let z = self.spec.zero;
        self.spec.zero = false;
        self.pad(&digits);
        self.spec.zero = z;
    }

    fn fmt_int_value(&mut self, v: &Value, verb: char) {
        let (u, neg) = match v {
            Value::Int(i) | Value::Int64(i) => (i.unsigned_abs(), *i < 0),
            Value::Uint8(b) => (*b as u64, false),
            Value::Uint64(u) => (*u, false),
            _ => (0, false),
        };
        match verb {
            'v' | 'd' => self.fmt_integer(u, neg, 10, verb),
            'b' => self.fmt_integer(u, neg, 2, verb),
            'o' | 'O' => self.fmt_integer(u, neg, 8, verb),
            'x' | 'X' => self.fmt_integer(u, neg, 16, verb),
            'c' => {
                let c = if neg {
                    '\u{FFFD}'
                } else {
                    u32::try_from(u)
                        .ok()
                        .and_then(char::from_u32)
                        .unwrap_or('\u{FFFD}')
                };
                let s = c.to_string();
                self.pad(&s);
            }
            'q' => {
                let c = if neg {
                    '\u{FFFD}'
                } else {
                    u32::try_from(u)
                        .ok()
                        .and_then(char::from_u32)
                        .unwrap_or('\u{FFFD}')
                };
                let q = strconv::quote_rune(c, self.spec.plus);
                self.pad(&q);
            }
            'U' => {
                let mut s = format!("U+{u:04X}");
                if self.spec.sharp
                    && let Some(c) = u32::try_from(u).ok().and_then(char::from_u32)
                    && is_print(c)
                {
                    s.push_str(&format!(" '{c}'"));
                }
                self.pad(&s);
            }
            _ => self.bad_verb(verb, v),
        }
    }

    fn fmt_float(&mut self, f: f64, verb: char) {
        if matches!(verb, 'x' | 'X') {
            let h = hex_float(f, verb == 'X', self.spec.prec);
            self.pad(&h);
            return;
        }
        let (fmt, prec) = match verb {
            'v' => ('g', self.spec.prec.map_or(-1, |p| p as i64)),
            'g' | 'G' => (verb, self.spec.prec.map_or(-1, |p| p as i64)),
            'e' | 'E' | 'f' | 'F' => (verb, self.spec.prec.map_or(6, |p| p as i64)),
            _ => {
                self.bad_verb(verb, &Value::Float64(f));
                return;
            }
        };
        let mut num = if fmt == 'g' && prec < 0 {
            float_v(f)
        } else {
            format_float(f, fmt, prec)
        };
        if self.spec.sharp && !num.contains('.') && !num.contains("Inf") && !num.contains("NaN") {
            // `#` keeps a decimal point.
            if let Some(i) = num.find(['e', 'E']) {
                num.insert(i, '.');
            } else {
                num.push('.');
            }
        }
        let mut signed = if num.starts_with('-') || num.starts_with('+') {
            num
        } else {
            format!("+{num}")
        };
        if self.spec.space && signed.starts_with('+') && !self.spec.plus {
            signed.replace_range(0..1, " ");
        }
        if signed.ends_with("Inf") || signed.ends_with("NaN") {
            let z = self.spec.zero;
            self.spec.zero = false;
            let s = if signed.ends_with("NaN") && !self.spec.space && !self.spec.plus {
                &signed[1..]
            } else {
                &signed[..]
            };
            let s = s.to_string();
            self.pad(&s);
            self.spec.zero = z;
            return;
        }
        if self.spec.plus || !signed.starts_with('+') {
            let n = signed.chars().count();
            if let (true, false, Some(w)) = (self.spec.zero, self.spec.minus, self.spec.wid)
                && w > n
            {
                let (sign, rest) = signed.split_at(1);
                self.buf.push_str(sign);
                self.write_padding(w - n);
                self.buf.push_str(rest);
                return;
            }
            self.pad(&signed);
            return;
        }
        let rest = signed[1..].to_string();
        self.pad(&rest);
    }

    fn bad_verb(&mut self, verb: char, v: &Value) {
        self.buf.push_str("%!");
        self.buf.push(verb);
        self.buf.push('(');
        if v.is_nil() {
            self.buf.push_str("<nil>");
        } else {
            self.buf.push_str(v.type_name());
            self.buf.push('=');
            self.print_value(v, 'v', 0);
        }
        self.buf.push(')');
    }

    fn print_arg(&mut self, v: &Value, verb: char) {
        if v.is_nil() {
            match verb {
                'T' | 'v' => self.pad("<nil>"),
                _ => self.bad_verb(verb, v),
            }
            return;
        }
        if verb == 'T' {
            self.fmt_s(v.type_name());
            return;
        }
        self.print_value(v, verb, 0);
    }

    fn print_value(&mut self, v: &Value, verb: char, depth: usize) {
        match v {
            Value::Invalid | Value::Nil => {
                if depth == 0 && matches!(v, Value::Invalid) {
                    self.buf.push_str("<invalid reflect.Value>");
                } else if verb == 'v' || depth > 0 {
                    self.pad("<nil>");
                } else {
                    self.bad_verb(verb, v);
                }
            }
            Value::Bool(b) => match verb {
                't' | 'v' => self.pad(if *b { "true" } else { "false" }),
                _ => self.bad_verb(verb, v),
            },
            Value::Int(_) | Value::Int64(_) | Value::Uint8(_) | Value::Uint64(_) => {
                self.fmt_int_value(v, verb)
            }
            Value::Float64(f) => self.fmt_float(*f, verb),
            Value::Complex(re, im) => match verb {
                'v' | 'g' | 'G' | 'e' | 'E' | 'f' | 'F' => {
                    let saved = self.spec;
                    let wid = self.spec.wid.take();
                    let start = self.buf.len();
                    self.buf.push('(');
                    self.fmt_float(*re, verb);
                    self.spec.plus = true;
                    self.fmt_float(*im, verb);
                    self.buf.push_str("i)");
                    self.spec = saved;
                    if let Some(w) = wid {
                        let s = self.buf.split_off(start);
                        self.spec.wid = Some(w);
                        self.pad(&s);
                    }
                }
                _ => self.bad_verb(verb, v),
            },
            Value::Str(s) => match verb {
                'v' | 's' => self.fmt_s(s),
                'q' => self.fmt_q(s),
                'x' => self.fmt_sx(s.as_bytes(), false),
                'X' => self.fmt_sx(s.as_bytes(), true),
                _ => self.bad_verb(verb, v),
            },
            Value::Version(ver) => match verb {
                'v' | 's' => self.fmt_s(&ver.to_string()),
                'q' => self.fmt_q(&ver.to_string()),
                'x' => self.fmt_sx(ver.to_string().as_bytes(), false),
                'X' => self.fmt_sx(ver.to_string().as_bytes(), true),
                _ => self.bad_verb(verb, v),
            },
            Value::List(items, _) => {
                self.buf.push('[');
                if depth > MAX_PRINT_DEPTH {
                    self.buf.push_str("...]");
                    return;
                }
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.buf.push(' ');
                    }
                    self.print_value(item, verb, depth + 1);
                }
                self.buf.push(']');
            }
            Value::Map(m, _) => {
                self.buf.push_str("map[");
                if depth > MAX_PRINT_DEPTH {
                    self.buf.push_str("...]");
                    return;
                }
                for (i, (k, item)) in Value::entries(m).iter().enumerate() {
                    if i > 0 {
                        self.buf.push(' ');
                    }
                    self.print_value(&Value::str(k.as_str()), verb, depth + 1);
                    self.buf.push(':');
                    self.print_value(item, verb, depth + 1);
                }
                self.buf.push(']');
            }
        }
    }
}

/// `%x` of a float: `[-]0x1.hhhp±dd`.
fn hex_float(f: f64, upper: bool, prec: Option<usize>) -> String {
    if !f.is_finite() {
        return format_float(f, 'g', -1);
    }
    let neg = f.is_sign_negative();
    let bits = f.to_bits();
    let mut exp = ((bits >> 52) & 0x7ff) as i64;
    let mut mant = bits & ((1 << 52) - 1);
    if exp == 0 && mant == 0 {
        let z = match prec {
            Some(p) if p > 0 => format!("0x0.{}p+00", "0".repeat(p)),
            _ => "0x0p+00".to_string(),
        };
        let z = if neg { format!("-{z}") } else { z };
        return if upper { z.to_uppercase() } else { z };
    }
    if exp == 0 {
        // Subnormal: normalise.
        while mant & (1 << 52) == 0 {
            mant <<= 1;
            exp -= 1;
        }
        exp += 1;
        mant &= (1 << 52) - 1;
    }
    let e = exp - 1023;
    let mut digits = format!("{mant:013x}");
    match prec {
        Some(p) if p < 13 => {
            // Round the 52-bit fraction to p hex digits, half to even.
            let shift = 4 * (13 - p) as u32;
            let full = (1u64 << 52) | mant;
            let mut r = full >> shift;
            let rem = full & ((1u64 << shift) - 1);
            let half = 1u64 << (shift - 1);
            if rem > half || (rem == half && r & 1 == 1) {
                r += 1;
            }
            let lead = r >> (4 * p as u32);
            let frac = r & ((1u64 << (4 * p as u32)) - 1);
            let body = if p == 0 {
                format!("0x{lead}")
            } else {
                format!("0x{lead}.{frac:0w$x}", w = p)
            };
            let s = format!(
                "{}{body}p{}{:02}",
                if neg { "-" } else { "" },
                if e < 0 { '-' } else { '+' },
                e.abs()
            );
            return if upper { s.to_uppercase() } else { s };
        }
        Some(p) => {
            while digits.len() < p {
                digits.push('0');
            }
        }
        None => {
            while digits.ends_with('0') {
                digits.pop();
            }
        }
    }
    let frac = if digits.is_empty() {
        String::new()
    } else {
        format!(".{digits}")
    };
    let s = format!(
        "{}0x1{frac}p{}{:02}",
        if neg { "-" } else { "" },
        if e < 0 { '-' } else { '+' },
        e.abs()
    );
    if upper { s.to_uppercase() } else { s }
}

/// `%#v`: Go-syntax representation.
fn go_syntax(v: &Value, depth: usize) -> String {
    match v {
        Value::Invalid | Value::Nil => {
            if depth == 0 {
                "<nil>".into()
            } else {
                "interface {}(nil)".into()
            }
        }
        Value::Str(s) => quote(s),
        Value::Float64(f) => float_v(*f),
        Value::Uint8(b) => format!("0x{b:x}"),
        Value::Uint64(u) => format!("0x{u:x}"),
        Value::List(..) if v.is_nil_list() => format!("{}(nil)", v.type_name()),
        Value::List(items, _) if depth < MAX_PRINT_DEPTH => {
            let inner: Vec<String> = items.iter().map(|x| go_syntax(x, depth + 1)).collect();
            format!("{}{{{}}}", v.type_name(), inner.join(", "))
        }
        Value::Map(m, _) if depth < MAX_PRINT_DEPTH => {
            let inner: Vec<String> = Value::entries(m)
                .iter()
                .map(|(k, x)| format!("{}:{}", quote(k), go_syntax(x, depth + 1)))
                .collect();
            format!("{}{{{}}}", v.type_name(), inner.join(", "))
        }
        other => sprint_value(other),
    }
}

/// `%v` of one value, as `fmt.Sprint(v)` prints it.
pub(crate) fn sprint_value(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        Value::Float64(f) => float_v(*f),
        Value::Int(i) | Value::Int64(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => {
            let mut p = Printer::new();
            p.print_arg(v, 'v');
            p.buf
        }
    }
}

/// `fmt.Sprint`: operands are separated by a space when neither side is a string.
pub(crate) fn sprint(args: &[Value]) -> String {
    let mut p = Printer::new();
    let mut prev_string = false;
    for (i, a) in args.iter().enumerate() {
        let is_string = matches!(a, Value::Str(_));
        if i > 0 && !is_string && !prev_string {
            p.buf.push(' ');
        }
        p.print_arg(a, 'v');
        prev_string = is_string;
    }
    p.buf
}

/// `fmt.Sprintln`: always spaces, then a newline.
pub(crate) fn sprintln(args: &[Value]) -> String {
    let mut p = Printer::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            p.buf.push(' ');
        }
        p.print_arg(a, 'v');
    }
    p.buf.push('\n');
    p.buf
}

fn parse_num(s: &[u8], mut i: usize) -> (Option<usize>, usize) {
    let mut num = 0usize;
    let mut any = false;
    while i < s.len() && s[i].is_ascii_digit() {
        if num >= MAX_WIDTH {
            return (None, s.len());
        }
        num = num * 10 + (s[i] - b'0') as usize;
        any = true;
        i += 1;
    }
    (if any { Some(num) } else { None }, i)
}

/// Reads an explicit argument index `[n]` at `i`.
fn arg_number(arg_num: usize, s: &[u8], i: usize, nargs: usize) -> (usize, usize, bool, bool) {
    if i >= s.len() || s[i] != b'[' {
        return (arg_num, i, false, true);
    }
    for j in i + 1..s.len() {
        if s[j] == b']' {
            let (n, end) = parse_num(s, i + 1);
            return match n {
                Some(n) if end == j && n >= 1 && n <= nargs => (n - 1, j + 1, true, true),
                _ => (arg_num, j + 1, true, false),
            };
        }
    }
    (arg_num, i + 1, false, false)
}

fn int_from_arg(args: &[Value], n: usize) -> (Option<i64>, usize) {
    match args.get(n) {
        Some(Value::Int(i) | Value::Int64(i)) => (Some(*i), n + 1),
        Some(Value::Uint8(b)) => (Some(*b as i64), n + 1),
        Some(Value::Uint64(u)) => (i64::try_from(*u).ok(), n + 1),
        Some(_) => (None, n + 1),
        None => (None, n),
    }
}

/// `fmt.Sprintf`. Widths and precisions are capped, so the result is at most about
/// `format.len() + args × 1e6` bytes; callers check their output budget.
pub(crate) fn sprintf(format: &str, args: &[Value]) -> String {
    let s = format.as_bytes();
    let end = s.len();
    let mut p = Printer::new();
    let mut arg_num = 0usize;
    let mut reordered = false;
    let mut i = 0usize;
    while i < end {
        let lasti = i;
        while i < end && s[i] != b'%' {
            i += 1;
        }
        if i > lasti {
            p.buf.push_str(&format[lasti..i]);
        }
        if i >= end {
            break;
        }
        i += 1;
        p.spec = Spec::default();
        while i < end {
            match s[i] {
                b'#' => p.spec.sharp = true,
                b'0' => p.spec.zero = !p.spec.minus,
                b'+' => p.spec.plus = true,
                b'-' => {
                    p.spec.minus = true;
                    p.spec.zero = false;
                }
                b' ' => p.spec.space = true,
                _ => break,
            }
            i += 1;
        }
        let mut good_arg = true;
        let (n, ni, after_index, ok) = arg_number(arg_num, s, i, args.len());
        arg_num = n;
        i = ni;
        reordered |= after_index;
        good_arg &= ok;
        let mut after_index = after_index;
        if i < end && s[i] == b'*' {
            i += 1;
            let (w, n) = int_from_arg(args, arg_num);
            arg_num = n;
            match w {
                Some(w) if w.unsigned_abs() < MAX_WIDTH as u64 => {
                    if w < 0 {
                        p.spec.minus = true;
                        p.spec.zero = false;
                    }
                    p.spec.wid = Some(w.unsigned_abs() as usize);
                }
                _ => p.buf.push_str("%!(BADWIDTH)"),
            }
            after_index = false;
        } else {
            let (w, ni) = parse_num(s, i);
            p.spec.wid = w;
            i = ni;
            if after_index && w.is_some() {
                good_arg = false;
            }
        }
        if i + 1 < end && s[i] == b'.' {
            i += 1;
            if after_index {
                good_arg = false;
            }
            let (n, ni, ai, ok) = arg_number(arg_num, s, i, args.len());
            arg_num = n;
            i = ni;
            after_index = ai;
            reordered |= ai;
            good_arg &= ok;
            if i < end && s[i] == b'*' {
                i += 1;
                let (pr, n) = int_from_arg(args, arg_num);
                arg_num = n;
                match pr {
                    Some(pr) if pr >= 0 && (pr as u64) < MAX_WIDTH as u64 => {
                        p.spec.prec = Some(pr as usize)
                    }
                    Some(pr) if pr < 0 => p.spec.prec = None,
                    _ => p.buf.push_str("%!(BADPREC)"),
                }
                after_index = false;
            } else {
                let (pr, ni) = parse_num(s, i);
                i = ni;
                p.spec.prec = Some(pr.unwrap_or(0));
            }
        }
        if !after_index {
            let (n, ni, ai, ok) = arg_number(arg_num, s, i, args.len());
            arg_num = n;
            i = ni;
            reordered |= ai;
            good_arg &= ok;
        }
        if i >= end {
            p.buf.push_str("%!(NOVERB)");
            break;
        }
        let Some(verb) = format[i..].chars().next() else {
            break;
        };
        i += verb.len_utf8();
        match verb {
            '%' => p.buf.push('%'),
            _ if !good_arg => {
                p.buf.push_str("%!");
                p.buf.push(verb);
                p.buf.push_str("(BADINDEX)");
            }
            _ if arg_num >= args.len() => {
                p.buf.push_str("%!");
                p.buf.push(verb);
                p.buf.push_str("(MISSING)");
            }
            _ => {
                if verb == 'v' && p.spec.sharp {
                    p.spec.sharp = false;
                    if let Some(a) = args.get(arg_num) {
                        let g = go_syntax(a, 0);
                        p.pad(&g);
                    }
                    arg_num += 1;
                    continue;
                }
                if verb == 'v' {
                    p.spec.plus = false;
                }
                if let Some(a) = args.get(arg_num) {
                    p.print_arg(a, verb);
                }
                arg_num += 1;
            }
        }
    }
    if !reordered && arg_num < args.len() {
        p.spec = Spec::default();
        p.buf.push_str("%!(EXTRA ");
        for (k, a) in args.iter().skip(arg_num).enumerate() {
            if k > 0 {
                p.buf.push_str(", ");
            }
            if a.is_nil() {
                p.buf.push_str("<nil>");
            } else {
                p.buf.push_str(a.type_name());
                p.buf.push('=');
                p.print_arg(a, 'v');
            }
        }
        p.buf.push(')');
    }
    p.buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_like_go() {
        assert_eq!(float_v(1e6), "1e+06");
        assert_eq!(float_v(123456.0), "123456");
        assert_eq!(float_v(3.0), "3");
        assert_eq!(float_v(1.5), "1.5");
        assert_eq!(float_v(0.0001), "0.0001");
        assert_eq!(float_v(0.00001), "1e-05");
        assert_eq!(float_v(-0.0), "-0");
        assert_eq!(float_v(0.0), "0");
        assert_eq!(float_v(-5.0), "-5");
        assert_eq!(float_v(999999.0), "999999");
        assert_eq!(float_v(-999999.0), "-999999");
        assert_eq!(float_v(100000.0), "100000");
        assert_eq!(float_v(-1e6), "-1e+06");
        for i in (-2_000_000..2_000_000).step_by(997) {
            let f = i as f64;
            assert_eq!(float_v(f), format_float(f, 'g', -1), "{f}");
        }
        assert_eq!(float_v(1.234567e21), "1.234567e+21");
        assert_eq!(format_float(1.23456, 'f', 2), "1.23");
        assert_eq!(format_float(100.0, 'g', 5), "100");
        assert_eq!(format_float(1234567.0, 'e', 3), "1.235e+06");
    }

    #[test]
    fn printf_verbs() {
        let f = Value::Float64(3.0);
        assert_eq!(sprintf("%d", std::slice::from_ref(&f)), "%!d(float64=3)");
        assert_eq!(sprintf("%5.2f|", &[Value::Float64(1.23456)]), " 1.23|");
        assert_eq!(sprintf("%s-%d", &[Value::str("a"), Value::Int(3)]), "a-3");
        assert_eq!(sprintf("%d", &[]), "%!d(MISSING)");
        assert_eq!(sprintf("x", &[Value::Int(1)]), "x%!(EXTRA int=1)");
        assert_eq!(sprintf("%05d", &[Value::Int(-42)]), "-0042");
        assert_eq!(sprintf("%x", &[Value::str("hi")]), "6869");
        assert_eq!(sprintf("%q", &[Value::str("a\"b\n")]), "\"a\\\"b\\n\"");
    }

    #[test]
    fn sprint_spacing() {
        assert_eq!(sprint(&[Value::Int(1), Value::Int(2)]), "1 2");
        assert_eq!(sprint(&[Value::str("a"), Value::Int(2)]), "a2");
        assert_eq!(sprintln(&[Value::str("a"), Value::str("b")]), "a b\n");
    }
}
