//! The rest of Sprig's hermetic set: defaults and flow control, JSON, reflection,
//! semver, paths, durations, and the time and crypto functions this engine does
//! not evaluate (they stay defined so templates parse as in Go, and fail when run).

use super::json::{marshal, unmarshal};
use super::{arg_str, deep_equal, empty};
use crate::funcs::{FnError, FnResult, Param, Table, def};
use crate::value::Value;

use Param::{Any, Bool, Cert, Int, ListIface, Str, Time, Uint32};

const UNSUPPORTED: &str = "not supported by this template engine";

fn unsupported(_: &mut crate::funcs::Ctx, _: &[Value]) -> FnResult {
    Err(FnError::Go(UNSUPPORTED.into()))
}

fn first(a: &[Value]) -> Value {
    a.first().cloned().unwrap_or(Value::Nil)
}

pub(crate) fn register(t: &mut Table) {
    def(t, "default", &[Any], Some(Any), |_, a| {
        let d = first(a);
        match a.get(1) {
            Some(g) if !empty(g) => Ok(g.clone()),
            _ => Ok(d),
        }
    });
    def(t, "empty", &[Any], None, |_, a| {
        Ok(Value::Bool(empty(&first(a))))
    });
    def(t, "coalesce", &[], Some(Any), |_, a| {
        Ok(a.iter().find(|v| !empty(v)).cloned().unwrap_or(Value::Nil))
    });
    def(t, "all", &[], Some(Any), |_, a| {
        Ok(Value::Bool(a.iter().all(|v| !empty(v))))
    });
    def(t, "any", &[], Some(Any), |_, a| {
        Ok(Value::Bool(a.iter().any(|v| !empty(v))))
    });
    def(t, "ternary", &[Any, Any, Bool], None, |_, a| {
        let pick = matches!(a.get(2), Some(Value::Bool(true)));
        Ok(a.get(if pick { 0 } else { 1 })
            .cloned()
            .unwrap_or(Value::Nil))
    });
    def(t, "fail", &[Str], None, |_, a| {
        Err(FnError::Go(arg_str(a, 0).to_string()))
    });

    def(t, "toJson", &[Any], None, |c, a| {
        let s = marshal(&first(a), true, false).unwrap_or_default();
        c.check_size(s.len() as u128)?;
        Ok(Value::str(s))
    });
    def(t, "mustToJson", &[Any], None, |c, a| {
        let s = marshal(&first(a), true, false)?;
        c.check_size(s.len() as u128)?;
        Ok(Value::str(s))
    });
    def(t, "toPrettyJson", &[Any], None, |c, a| {
        let s = marshal(&first(a), true, true).unwrap_or_default();
        c.check_size(s.len() as u128)?;
        Ok(Value::str(s))
    });
    def(t, "mustToPrettyJson", &[Any], None, |c, a| {
        let s = marshal(&first(a), true, true)?;
        c.check_size(s.len() as u128)?;
        Ok(Value::str(s))
    });
    for name in ["toRawJson", "mustToRawJson"] {
        def(t, name, &[Any], None, |c, a| {
            let s = marshal(&first(a), false, false)?;
            c.check_size(s.len() as u128)?;
            Ok(Value::str(s))
        });
    }
    def(t, "fromJson", &[Str], None, |_, a| {
        Ok(unmarshal(arg_str(a, 0)).unwrap_or(Value::Nil))
    });
    def(t, "mustFromJson", &[Str], None, |_, a| {
        Ok(unmarshal(arg_str(a, 0))?)
    });

    def(t, "typeOf", &[Any], None, |_, a| {
        Ok(Value::str(type_of(&first(a))))
    });
    def(t, "typeIs", &[Str, Any], None, |_, a| {
        Ok(Value::Bool(
            arg_str(a, 0) == type_of(a.get(1).unwrap_or(&Value::Nil)),
        ))
    });
    def(t, "typeIsLike", &[Str, Any], None, |_, a| {
        let target = arg_str(a, 0);
        let ty = type_of(a.get(1).unwrap_or(&Value::Nil));
        Ok(Value::Bool(target == ty || format!("*{target}") == ty))
    });
    def(t, "kindOf", &[Any], None, |_, a| {
        Ok(Value::str(first(a).kind_name()))
    });
    def(t, "kindIs", &[Str, Any], None, |_, a| {
        Ok(Value::Bool(
            arg_str(a, 0) == a.get(1).unwrap_or(&Value::Nil).kind_name(),
        ))
    });
    def(t, "deepEqual", &[Any, Any], None, |_, a| {
        Ok(Value::Bool(deep_equal(
            a.first().unwrap_or(&Value::Nil),
            a.get(1).unwrap_or(&Value::Nil),
        )))
    });

    def(t, "semver", &[Str], None, |_, a| {
        // A fresh pointer each call, as in Go: `eq` compares versions by identity.
        let v = crate::semver::recent_version(arg_str(a, 0))?;
        Ok(Value::Version(std::rc::Rc::new(
            crate::semver::Version::clone(&v),
        )))
    });
    def(t, "semverCompare", &[Str, Str], None, |_, a| {
        let c = crate::semver::recent_constraints(arg_str(a, 0))?;
        let v = crate::semver::recent_version(arg_str(a, 1))?;
        Ok(Value::Bool(c.check(&v)))
    });

    for name in ["base", "osBase"] {
        def(t, name, &[Str], None, |_, a| {
            Ok(Value::str(path_base(arg_str(a, 0))))
        });
    }
    for name in ["dir", "osDir"] {
        def(t, name, &[Str], None, |_, a| {
            Ok(Value::str(path_dir(arg_str(a, 0))))
        });
    }
    for name in ["clean", "osClean"] {
        def(t, name, &[Str], None, |_, a| {
            Ok(Value::str(path_clean(arg_str(a, 0))))
        });
    }
    for name in ["ext", "osExt"] {
        def(t, name, &[Str], None, |_, a| {
            Ok(Value::str(path_ext(arg_str(a, 0))))
        });
    }
    for name in ["isAbs", "osIsAbs"] {
        def(t, name, &[Str], None, |_, a| {
            Ok(Value::Bool(arg_str(a, 0).starts_with('/')))
        });
    }

    def(t, "duration", &[Any], None, |_, a| {
        let n = match a.first() {
            Some(Value::Str(s)) => s.parse::<i64>().unwrap_or(0),
            Some(Value::Int64(n)) => *n,
            _ => 0,
        };
        Ok(Value::str(duration_string(n.wrapping_mul(1_000_000_000))))
    });
    def(t, "durationRound", &[Any], None, |_, a| {
        let d = match a.first() {
            Some(Value::Str(s)) => parse_duration(s).unwrap_or(0),
            Some(Value::Int64(n)) => *n,
            _ => 0,
        };
        Ok(Value::str(duration_round(d)))
    });
    def(t, "ago", &[Any], None, |_, a| {
        let secs = match a.first() {
            Some(Value::Int(n) | Value::Int64(n)) => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs() as i64);
                now.saturating_sub(*n)
            }
            _ => 0,
        };
        Ok(Value::str(duration_string(
            secs.wrapping_mul(1_000_000_000),
        )))
    });
    def(t, "toDate", &[Str, Str], None, unsupported);
    def(t, "mustToDate", &[Str, Str], None, unsupported);
    def(t, "unixEpoch", &[Time], None, unsupported);
    for name in ["mustDateModify", "must_date_modify"] {
        def(t, name, &[Str, Time], None, unsupported);
    }

    def(t, "bcrypt", &[Str], None, unsupported);
    def(t, "htpasswd", &[Str, Str], None, unsupported);
    def(t, "genPrivateKey", &[Str], None, unsupported);
    def(
        t,
        "derivePassword",
        &[Uint32, Str, Str, Str, Str],
        None,
        unsupported,
    );
    def(t, "buildCustomCert", &[Str, Str], None, unsupported);
    def(t, "genCA", &[Str, Int], None, unsupported);
    def(t, "genCAWithKey", &[Str, Int, Str], None, unsupported);
    def(
        t,
        "genSelfSignedCert",
        &[Str, ListIface, ListIface, Int],
        None,
        unsupported,
    );
    def(
        t,
        "genSelfSignedCertWithKey",
        &[Str, ListIface, ListIface, Int, Str],
        None,
        unsupported,
    );
    def(
        t,
        "genSignedCert",
        &[Str, ListIface, ListIface, Int, Cert],
        None,
        unsupported,
    );
    def(
        t,
        "genSignedCertWithKey",
        &[Str, ListIface, ListIface, Int, Cert, Str],
        None,
        unsupported,
    );
    def(t, "encryptAES", &[Str, Str], None, unsupported);
    def(t, "decryptAES", &[Str, Str], None, unsupported);
}

/// `fmt.Sprintf("%T", v)`.
fn type_of(v: &Value) -> String {
    v.type_name().to_string()
}

/// `path.Clean`.
pub(crate) fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

/// `path.Base`.
fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

/// `path.Dir`.
fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    path_clean(dir)
}

/// `path.Ext`.
fn path_ext(p: &str) -> String {
    for (i, c) in p.char_indices().rev() {
        if c == '/' {
            break;
        }
        if c == '.' {
            return p[i..].to_string();
        }
    }
    String::new()
}

fn fmt_frac(mut v: u64, prec: u32) -> (String, u64) {
    let mut digits = String::new();
    let mut print = false;
    for _ in 0..prec {
        let d = v % 10;
        print = print || d != 0;
        if print {
            digits.insert(0, char::from(b'0' + d as u8));
        }
        v /= 10;
    }
    if print {
        digits.insert(0, '.');
    }
    (digits, v)
}

/// Go's `time.Duration.String`.
pub(crate) fn duration_string(d: i64) -> String {
    if d == 0 {
        return "0s".into();
    }
    let neg = d < 0;
    let mut u = d.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        let (frac, unit) = if u < 1_000 {
            (String::new(), "ns")
        } else if u < 1_000_000 {
            let (f, rest) = fmt_frac(u, 3);
            u = rest;
            (f, "µs")
        } else {
            let (f, rest) = fmt_frac(u, 6);
            u = rest;
            (f, "ms")
        };
        out = format!("{u}{frac}{unit}");
    } else {
        let (frac, rest) = fmt_frac(u, 9);
        u = rest;
        out.insert_str(0, &format!("{}{frac}s", u % 60));
        u /= 60;
        if u > 0 {
            out.insert_str(0, &format!("{}m", u % 60));
            u /= 60;
            if u > 0 {
                out.insert_str(0, &format!("{u}h"));
            }
        }
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

/// `time.ParseDuration` (nanoseconds).
pub(crate) fn parse_duration(s: &str) -> Option<i64> {
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let num = &rest[..num_end];
        if num.is_empty() || num == "." {
            return None;
        }
        let v: f64 = num.parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_end];
        rest = &rest[unit_end..];
        let scale = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 6e10,
            "h" => 3.6e12,
            _ => return None,
        };
        total += v * scale;
    }
    if total > 9.223372036854775e18 {
        return None;
    }
    let t = total as i64;
    Some(if neg { -t } else { t })
}

fn duration_round(d: i64) -> String {
    let u = d.unsigned_abs();
    let second = 1_000_000_000u64;
    let minute = 60 * second;
    let hour = 60 * minute;
    let day = 24 * hour;
    let month = 30 * day;
    let year = 365 * day;
    if u > year {
        format!("{}y", u / year)
    } else if u > month {
        format!("{}mo", u / month)
    } else if u > day {
        format!("{}d", u / day)
    } else if u > hour {
        format!("{}h", u / hour)
    } else if u > minute {
        format!("{}m", u / minute)
    } else if u > second {
        format!("{}s", u / second)
    } else {
        "0s".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_like_go() {
        assert_eq!(path_clean("a//b/../c/."), "a/c");
        assert_eq!(path_clean("/../x"), "/x");
        assert_eq!(path_base("/a/b/"), "b");
        assert_eq!(path_dir("/a/b/c"), "/a/b");
        assert_eq!(path_ext("x/y.tar.gz"), ".gz");
    }

    #[test]
    fn durations_like_go() {
        assert_eq!(duration_string(3661 * 1_000_000_000), "1h1m1s");
        assert_eq!(duration_string(1_500_000), "1.5ms");
        assert_eq!(parse_duration("1h30m"), Some(5_400_000_000_000));
        assert_eq!(duration_round(5_400_000_000_000), "1h");
    }
}
