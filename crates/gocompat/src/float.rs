//! How Go prints a `float64`: `strconv.FormatFloat(f, 'g', -1, 64)` (which `%v` and
//! go-yaml use) and `encoding/json`'s variant, both from the shortest digits that read
//! back as the same number.

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`, which is also what `%v` prints.
pub fn go_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".into()
        } else if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let (digits, point) = shortest_digits(f);
    let exp = point - 1;
    if !(-4..6).contains(&exp) {
        scientific(f < 0.0, &digits, point, 2)
    } else {
        fixed(f < 0.0, &digits, point)
    }
}

/// How Go's `encoding/json` writes a `float64`.
pub fn json_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let abs = f.abs();
    let (digits, point) = shortest_digits(f);
    if !(1e-6..1e21).contains(&abs) {
        let s = scientific(f < 0.0, &digits, point, 2);
        // encoding/json trims the exponent's leading zero: 1e-07 becomes 1e-7.
        if let Some(i) = s.find("e-0") {
            let mut t = s.clone();
            t.remove(i + 2);
            return t;
        }
        s
    } else {
        fixed(f < 0.0, &digits, point)
    }
}

/// Shortest decimal digits of a finite, non-zero `|f|`, and the decimal point position
/// (value = 0.DIGITS × 10^point).
fn shortest_digits(f: f64) -> (String, i32) {
    let s = format!("{:e}", f.abs());
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    (digits, exp + 1)
}

fn fixed(neg: bool, digits: &str, point: i32) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    let nd = digits.len() as i32;
    if point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-point) as usize));
        out.push_str(digits);
    } else if point >= nd {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (point - nd) as usize));
    } else {
        out.push_str(digits.get(..point as usize).unwrap_or_default());
        out.push('.');
        out.push_str(digits.get(point as usize..).unwrap_or_default());
    }
    out
}

fn scientific(neg: bool, digits: &str, point: i32, min_exp_digits: usize) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push_str(digits.get(..1).unwrap_or("0"));
    if digits.len() > 1 {
        out.push('.');
        out.push_str(digits.get(1..).unwrap_or_default());
    }
    let exp = point - 1;
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    let e = exp.unsigned_abs().to_string();
    for _ in e.len()..min_exp_digits {
        out.push('0');
    }
    out.push_str(&e);
    out
}
