//! Go `time.Duration` text, as Kubernetes' `metav1.Duration` reads and writes it.
//!
//! Cluster API's v1beta1 types carry timeouts as Go duration strings (`300s`, `3m`,
//! `1h30m`). They pass through Go's parser and printer on their way from a
//! ClusterClass into a generated object, so `3m` comes out as `3m0s`. Matching that
//! byte for byte keeps our desired objects identical to what Cluster API writes.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A signed duration with nanosecond resolution, like Go's `time.Duration`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration {
    nanos: i64,
}

/// Why a duration string was refused; the text follows Go's `time.ParseDuration`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("time: {message}")]
pub struct DurationError {
    message: String,
}

impl DurationError {
    fn new(kind: &'static str, input: &str) -> Self {
        DurationError {
            message: format!("{kind} duration {input:?}"),
        }
    }
}

const NANOSECOND: u128 = 1;
const MICROSECOND: u128 = 1_000 * NANOSECOND;
const MILLISECOND: u128 = 1_000 * MICROSECOND;
const SECOND: u128 = 1_000 * MILLISECOND;
const MINUTE: u128 = 60 * SECOND;
const HOUR: u128 = 60 * MINUTE;

fn unit_nanos(unit: &str) -> Option<u128> {
    Some(match unit {
        "ns" => NANOSECOND,
        "us" | "µs" | "μs" => MICROSECOND,
        "ms" => MILLISECOND,
        "s" => SECOND,
        "m" => MINUTE,
        "h" => HOUR,
        _ => return None,
    })
}

impl Duration {
    /// A duration of whole seconds.
    pub fn from_secs(secs: i64) -> Self {
        Duration {
            nanos: secs.saturating_mul(1_000_000_000),
        }
    }

    /// A duration of nanoseconds.
    pub fn from_nanos(nanos: i64) -> Self {
        Duration { nanos }
    }

    /// The duration in nanoseconds.
    pub fn as_nanos(self) -> i64 {
        self.nanos
    }

    /// The duration in whole seconds, rounded toward zero.
    pub fn as_secs(self) -> i64 {
        self.nanos / 1_000_000_000
    }

    /// Parses Go's duration syntax: an optional sign, then one or more decimal
    /// numbers each followed by a unit (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`).
    pub fn parse(input: &str) -> Result<Self, DurationError> {
        let invalid = || DurationError::new("invalid", input);
        let mut s = input;
        let mut negative = false;
        if let Some(rest) = s.strip_prefix('-') {
            negative = true;
            s = rest;
        } else if let Some(rest) = s.strip_prefix('+') {
            s = rest;
        }
        if s == "0" {
            return Ok(Duration::default());
        }
        if s.is_empty() {
            return Err(invalid());
        }
        let mut total: u128 = 0;
        while !s.is_empty() {
            let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
            let int_part = &s[..int_len];
            s = &s[int_len..];
            let mut frac_part = "";
            if let Some(rest) = s.strip_prefix('.') {
                let frac_len = rest.bytes().take_while(u8::is_ascii_digit).count();
                frac_part = &rest[..frac_len];
                s = &rest[frac_len..];
            }
            if int_part.is_empty() && frac_part.is_empty() {
                return Err(invalid());
            }
            let unit_len = s
                .char_indices()
                .find(|(_, c)| c.is_ascii_digit() || *c == '.')
                .map_or(s.len(), |(i, _)| i);
            let unit = &s[..unit_len];
            s = &s[unit_len..];
            if unit.is_empty() {
                return Err(DurationError::new("missing unit in", input));
            }
            let scale = unit_nanos(unit).ok_or_else(|| DurationError {
                message: format!("unknown unit {unit:?} in duration {input:?}"),
            })?;
            let whole: u128 = if int_part.is_empty() {
                0
            } else {
                int_part.parse().map_err(|_| invalid())?
            };
            let mut value = whole.checked_mul(scale).ok_or_else(invalid)?;
            // Fractions are truncated toward zero, as Go does.
            let mut frac_scale = scale;
            for digit in frac_part.bytes() {
                frac_scale /= 10;
                if frac_scale == 0 {
                    break;
                }
                value += u128::from(digit - b'0') * frac_scale;
            }
            total = total.checked_add(value).ok_or_else(invalid)?;
            if total > i64::MAX as u128 + u128::from(negative) {
                return Err(invalid());
            }
        }
        let nanos = if negative {
            (total as i128).wrapping_neg() as i64
        } else {
            total as i64
        };
        Ok(Duration { nanos })
    }
}

impl fmt::Display for Duration {
    /// Go's `Duration.String`: `0s`, `1.5s`, `300ms`, `5m0s`, `1h2m3.5s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let negative = self.nanos < 0;
        let mut u = self.nanos.unsigned_abs() as u128;
        let sign = if negative { "-" } else { "" };
        if u == 0 {
            return f.write_str("0s");
        }
        if u < SECOND {
            let (unit, scale) = if u < MICROSECOND {
                ("ns", NANOSECOND)
            } else if u < MILLISECOND {
                ("µs", MICROSECOND)
            } else {
                ("ms", MILLISECOND)
            };
            return write!(f, "{sign}{}{unit}", fraction(u, scale));
        }
        let hours = u / HOUR;
        u %= HOUR;
        let minutes = u / MINUTE;
        u %= MINUTE;
        let seconds = fraction(u, SECOND);
        if hours > 0 {
            write!(f, "{sign}{hours}h{minutes}m{seconds}s")
        } else if minutes > 0 {
            write!(f, "{sign}{minutes}m{seconds}s")
        } else {
            write!(f, "{sign}{seconds}s")
        }
    }
}

/// `value / scale` printed with the shortest exact decimal fraction.
fn fraction(value: u128, scale: u128) -> String {
    let whole = value / scale;
    let mut rest = value % scale;
    if rest == 0 {
        return whole.to_string();
    }
    let mut digits = String::new();
    let mut s = scale;
    while rest > 0 && s > 1 {
        s /= 10;
        digits.push(char::from(b'0' + (rest / s) as u8));
        rest %= s;
    }
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Duration::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_like_go() {
        // (input, Go's String() of the parsed value)
        let cases = [
            ("0", "0s"),
            ("0s", "0s"),
            ("300s", "5m0s"),
            ("3m", "3m0s"),
            ("1h30m", "1h30m0s"),
            ("1.5s", "1.5s"),
            ("1.5h", "1h30m0s"),
            ("90m", "1h30m0s"),
            ("100ms", "100ms"),
            ("1500ms", "1.5s"),
            ("2us", "2µs"),
            ("2µs", "2µs"),
            ("7ns", "7ns"),
            ("-5s", "-5s"),
            ("+5s", "5s"),
            ("1h0m0s", "1h0m0s"),
            ("10m0s", "10m0s"),
            ("25h", "25h0m0s"),
            (".5s", "500ms"),
            ("1.000000001s", "1.000000001s"),
        ];
        for (input, want) in cases {
            let d = Duration::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(d.to_string(), want, "input {input}");
        }
    }

    #[test]
    fn refuses_what_go_refuses() {
        let cases = [
            ("", "time: invalid duration \"\""),
            ("5", "time: missing unit in duration \"5\""),
            ("5x", "time: unknown unit \"x\" in duration \"5x\""),
            ("s", "time: invalid duration \"s\""),
            ("-", "time: invalid duration \"-\""),
            (".s", "time: invalid duration \".s\""),
            ("3000000h", "time: invalid duration \"3000000h\""),
        ];
        for (input, want) in cases {
            let err = Duration::parse(input).expect_err(input);
            assert_eq!(err.to_string(), want, "input {input:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn printing_then_parsing_is_identity(nanos in proptest::num::i64::ANY) {
            let d = Duration { nanos: if nanos == i64::MIN { 0 } else { nanos } };
            let back = Duration::parse(&d.to_string()).unwrap();
            proptest::prop_assert_eq!(back, d);
        }

        #[test]
        fn parse_never_panics(s in "\\PC{0,24}") {
            let _ = Duration::parse(&s);
        }
    }
}
