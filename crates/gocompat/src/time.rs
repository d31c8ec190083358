//! Times as Kubernetes' `metav1.Time` writes them: RFC 3339 in UTC, whole seconds, `Z`
//! (`2026-11-28T04:58:00Z`). Go marshals a `Time` truncated to the second, so a time is
//! never stamped ahead of the clock; the calendar is the proleptic Gregorian one, as
//! Go's `time` package keeps it, both ways ([`days_from_civil`] for the readers of
//! times).

use std::time::{SystemTime, UNIX_EPOCH};

/// `seconds` since the Unix epoch (negative: before it), as `metav1.Time` writes it.
pub fn rfc3339(seconds: i64) -> String {
    let (days, rem) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Now, as `metav1.Time` writes it (the clock before the epoch reads as the epoch).
/// The text changes once a second and every write asks for it (managed-fields times),
/// so each thread keeps the last second's text.
pub fn now() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    thread_local! {
        static LAST: std::cell::RefCell<Option<(i64, String)>> = const { std::cell::RefCell::new(None) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        match &*last {
            Some((at, text)) if *at == seconds => text.clone(),
            _ => {
                let text = rfc3339(seconds);
                *last = Some((seconds, text.clone()));
                text
            }
        }
    })
}

/// Howard Hinnant's days-from-civil algorithm: the days from 1970-01-01 to a date of
/// the proleptic Gregorian calendar (`month` 1–12; negative before the epoch).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Howard Hinnant's days-to-civil algorithm: the date `days` after 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calendar_reads_back_what_it_writes() {
        for days in (-800_000..3_000_000).step_by(7) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(
                days_from_civil(y, i64::from(m), i64::from(d)),
                days,
                "{y}-{m}-{d}"
            );
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 2, 29), 11_016);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
    }

    #[test]
    fn seconds_are_written_as_go_writes_a_time() {
        for (seconds, want) in [
            (0, "1970-01-01T00:00:00Z"),
            (-1, "1969-12-31T23:59:59Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_700_000_000, "2023-11-14T22:13:20Z"),
            (1_790_000_000, "2026-09-21T14:13:20Z"),
            (1_795_694_400, "2026-11-26T12:00:00Z"),
            (253_402_300_799, "9999-12-31T23:59:59Z"),
        ] {
            assert_eq!(rfc3339(seconds), want, "{seconds}");
        }
        let now = now();
        assert!(now.len() == 20 && now.ends_with('Z'), "{now}");
        // The kept text is never ahead of the clock, and moves with it.
        let fresh = rfc3339(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0),
        );
        assert!(now <= fresh, "{now} {fresh}");
        let again = super::now();
        assert!(fresh <= again, "{fresh} {again}");
    }
}
