//! Timestamps as Kubernetes writes them: RFC 3339, UTC, whole seconds, the fraction
//! dropped (Go's `metav1.Time` truncates when it marshals; rounding could stamp a time
//! up to half a second ahead of the clock).

use k8s_openapi::jiff::{RoundMode, Timestamp, TimestampRound, Unit};

/// `at`, as Kubernetes writes a `Time`.
pub fn stamp(at: Timestamp) -> String {
    let whole = TimestampRound::new()
        .smallest(Unit::Second)
        .mode(RoundMode::Trunc);
    // `Display` writes a whole-second timestamp as `2026-11-28T04:58:00Z`.
    at.round(whole).unwrap_or(at).to_string()
}

/// Now, as Kubernetes writes a `Time`.
pub fn now() -> String {
    stamp(Timestamp::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_are_dropped_not_rounded() {
        let cases = [
            (1_790_000_000_999_999_999i128, "2026-09-21T14:13:20Z"),
            (1_790_000_000_500_000_000, "2026-09-21T14:13:20Z"),
            (1_790_000_000_000_000_000, "2026-09-21T14:13:20Z"),
            (1_790_000_001_000_000_001, "2026-09-21T14:13:21Z"),
        ];
        for (nanos, want) in cases {
            let at = Timestamp::from_nanosecond(nanos).unwrap_or(Timestamp::UNIX_EPOCH);
            assert_eq!(stamp(at), want, "{nanos}");
        }
    }
}
