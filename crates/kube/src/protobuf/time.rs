//! Timestamps between their JSON text and protobuf's seconds and nanoseconds. `Time` is
//! RFC 3339 to the second (Kubernetes drops fractions on both wires), `MicroTime` keeps
//! microseconds; both are written in UTC with `Z`, as Go's `metav1` writes them.

use topograph_gocompat::time::{days_from_civil, rfc3339};

/// Seconds and nanoseconds since the Unix epoch of an RFC 3339 date-time (`T` and a
/// `Z` or `±hh:mm` offset required, any fraction), or what is wrong with it.
pub fn parse_rfc3339(text: &str) -> Result<(i64, u32), String> {
    let bad = || format!("parsing time {text:?} as RFC 3339: not a date-time");
    let b = text.as_bytes();
    let digits = |from: usize, n: usize| -> Result<i64, String> {
        let part = b.get(from..from + n).ok_or_else(bad)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return Err(bad());
        }
        Ok(part
            .iter()
            .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
    };
    let sep = |at: usize, c: u8| b.get(at).is_some_and(|x| *x == c);
    if !(sep(4, b'-') && sep(7, b'-') && sep(10, b'T') && sep(13, b':') && sep(16, b':')) {
        return Err(bad());
    }
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let (hour, minute, second) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return Err(format!("parsing time {text:?}: value out of range"));
    }
    let mut at = 19;
    let mut nanos: u32 = 0;
    if sep(at, b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == start {
            return Err(bad());
        }
        // Digits past the ninth are below a nanosecond: dropped, as Go drops them.
        for (i, d) in b[start..at].iter().take(9).enumerate() {
            nanos += u32::from(d - b'0') * 10u32.pow(8 - i as u32);
        }
    }
    let offset = match b.get(at) {
        Some(b'Z') if at + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if at + 6 == b.len() && sep(at + 3, b':') => {
            let (h, m) = (digits(at + 1, 2)?, digits(at + 4, 2)?);
            if h > 23 || m > 59 {
                return Err(format!(
                    "parsing time {text:?}: time zone offset out of range"
                ));
            }
            let minutes = h * 60 + m;
            if *sign == b'-' { -minutes } else { minutes }
        }
        _ => return Err(bad()),
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset * 60;
    Ok((seconds, nanos))
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Whole seconds since the epoch that RFC 3339 can write (years 0000 to 9999).
pub fn in_range(seconds: i64) -> bool {
    const MIN: i64 = -62_167_219_200; // 0000-01-01T00:00:00Z
    const MAX: i64 = 253_402_300_799; // 9999-12-31T23:59:59Z
    (MIN..=MAX).contains(&seconds)
}

/// `2006-01-02T15:04:05Z`.
pub fn format_seconds(seconds: i64) -> Result<String, String> {
    if !in_range(seconds) {
        return Err(format!(
            "time {seconds} s since the epoch is outside years 0-9999"
        ));
    }
    Ok(rfc3339(seconds))
}

/// `2006-01-02T15:04:05.000000Z`: microseconds, the rest of the nanoseconds dropped.
pub fn format_micro(seconds: i64, nanos: u32) -> Result<String, String> {
    let whole = format_seconds(seconds)?;
    let micros = (nanos.min(999_999_999)) / 1_000;
    Ok(format!(
        "{}.{micros:06}Z",
        whole.strip_suffix('Z').unwrap_or(&whole)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_formats() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Ok((0, 0)));
        assert_eq!(
            parse_rfc3339("2024-02-29T12:30:45.5+02:00"),
            Ok((1_709_202_645, 500_000_000))
        );
        assert_eq!(
            format_seconds(1_709_202_645).unwrap(),
            "2024-02-29T10:30:45Z"
        );
        assert_eq!(
            format_micro(1_709_202_645, 123_456_789).unwrap(),
            "2024-02-29T10:30:45.123456Z"
        );
        assert_eq!(
            format_seconds(-62_135_596_800).unwrap(),
            "0001-01-01T00:00:00Z"
        );
        assert_eq!(format_seconds(-1).unwrap(), "1969-12-31T23:59:59Z");
        assert_eq!(
            format_seconds(-62_167_219_200).unwrap(),
            "0000-01-01T00:00:00Z"
        );
        for bad in [
            "",
            "2024-02-30T00:00:00Z",
            "2024-01-01 00:00:00Z",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00.Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:00:00+0200",
        ] {
            assert!(parse_rfc3339(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn round_trips_every_second_shape() {
        for s in [
            0,
            1,
            -1,
            951_782_400,
            4_102_444_800,
            253_402_300_799,
            -62_167_219_200,
            -2_208_988_800,
        ] {
            let text = format_seconds(s).unwrap();
            assert_eq!(parse_rfc3339(&text), Ok((s, 0)), "{text}");
        }
    }
}
