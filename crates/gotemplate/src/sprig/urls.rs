//! Sprig's `urlParse` and `urlJoin`: the parts of Go's `net/url` parsing and
//! formatting they expose (scheme, opaque, userinfo, host, path, query, fragment).

use std::collections::BTreeMap;

use topograph_gocompat::strconv::quote;

use super::arg_str;
use crate::funcs::{FnError, Param, Table, def};
use crate::value::Value;

use Param::{MapIface, Str};

fn unhex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// `url.PathUnescape`-style decoding (`+` stays `+`).
fn unescape(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            match (
                b.get(i + 1).and_then(|c| unhex(*c)),
                b.get(i + 2).and_then(|c| unhex(*c)),
            ) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 3;
                    continue;
                }
                _ => {
                    let end = (i + 3).min(b.len());
                    return Err(format!(
                        "invalid URL escape {}",
                        quote(&String::from_utf8_lossy(&b[i..end]))
                    ));
                }
            }
        }
        out.push(b[i]);
        i += 1;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[derive(Default)]
struct Url {
    scheme: String,
    opaque: String,
    user: Option<(String, Option<String>)>,
    host: String,
    path: String,
    raw_query: String,
    fragment: String,
}

fn parse(raw: &str) -> Result<Url, String> {
    let wrap = |e: String| format!("parse {}: {e}", quote(raw));
    let mut u = Url::default();
    let (rest, frag) = match raw.split_once('#') {
        Some((a, f)) => (a, Some(f)),
        None => (raw, None),
    };
    if let Some(f) = frag {
        u.fragment = unescape(f).map_err(wrap)?;
    }
    let mut rest = rest;
    // Scheme: a letter, then letters, digits, + - . up to ':'.
    for (i, c) in rest.char_indices() {
        if c.is_ascii_alphabetic() {
            continue;
        }
        if i > 0 && (c.is_ascii_digit() || "+-.".contains(c)) {
            continue;
        }
        if c == ':' {
            if i == 0 {
                return Err(wrap("missing protocol scheme".into()));
            }
            u.scheme = rest[..i].to_ascii_lowercase();
            rest = &rest[i + 1..];
        }
        break;
    }
    if let Some((a, q)) = rest.split_once('?') {
        u.raw_query = q.to_string();
        rest = a;
    }
    if !rest.starts_with('/') && !u.scheme.is_empty() {
        u.opaque = rest.to_string();
        return Ok(u);
    }
    if rest.starts_with("//") {
        let after = &rest[2..];
        let (auth, path) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, ""),
        };
        if let Some(at) = auth.rfind('@') {
            let info = &auth[..at];
            u.user = Some(match info.split_once(':') {
                Some((n, p)) => (unescape(n).map_err(wrap)?, Some(unescape(p).map_err(wrap)?)),
                None => (unescape(info).map_err(wrap)?, None),
            });
            u.host = auth[at + 1..].to_string();
        } else {
            u.host = auth.to_string();
        }
        rest = path;
    }
    u.path = unescape(rest).map_err(wrap)?;
    Ok(u)
}

fn hostname(host: &str) -> String {
    if let Some(h) = host.strip_prefix('[') {
        return h.split(']').next().unwrap_or("").to_string();
    }
    match host.rfind(':') {
        Some(i) if host[i + 1..].bytes().all(|c| c.is_ascii_digit()) => host[..i].to_string(),
        _ => host.to_string(),
    }
}

fn escape(s: &str, keep: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) || keep.as_bytes().contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn userinfo_string(user: &(String, Option<String>)) -> String {
    let mut s = escape(&user.0, "!$&'()*+,;=");
    if let Some(p) = &user.1 {
        s.push(':');
        s.push_str(&escape(p, "!$&'()*+,;="));
    }
    s
}

impl Url {
    fn to_go_string(&self) -> String {
        let mut buf = String::new();
        if !self.scheme.is_empty() {
            buf.push_str(&self.scheme);
            buf.push(':');
        }
        if !self.opaque.is_empty() {
            buf.push_str(&self.opaque);
        } else {
            if !self.scheme.is_empty() || !self.host.is_empty() || self.user.is_some() {
                if !self.host.is_empty() || !self.path.is_empty() || self.user.is_some() {
                    buf.push_str("//");
                }
                if let Some(u) = &self.user {
                    buf.push_str(&userinfo_string(u));
                    buf.push('@');
                }
                buf.push_str(&escape(&self.host, "!$&'()*+,;=:[]<>\""));
            }
            let path = escape(&self.path, "$&+,/:;=@!'()*");
            if !path.is_empty() && !path.starts_with('/') && !self.host.is_empty() {
                buf.push('/');
            }
            if buf.is_empty()
                && let Some(seg) = path.split('/').next()
                && seg.contains(':')
            {
                buf.push_str("./");
            }
            buf.push_str(&path);
        }
        if !self.raw_query.is_empty() {
            buf.push('?');
            buf.push_str(&self.raw_query);
        }
        if !self.fragment.is_empty() {
            buf.push('#');
            buf.push_str(&escape(&self.fragment, "$&+,/:;=@!'()*?"));
        }
        buf
    }
}

pub(crate) fn register(t: &mut Table) {
    def(t, "urlParse", &[Str], None, |_, a| {
        let u =
            parse(arg_str(a, 0)).map_err(|e| FnError::Go(format!("unable to parse url: {e}")))?;
        let mut m = BTreeMap::new();
        let mut put = |k: &str, v: String| {
            m.insert(k.to_string(), Value::str(v));
        };
        put("scheme", u.scheme.clone());
        put("host", u.host.clone());
        put("hostname", hostname(&u.host));
        put("path", u.path.clone());
        put("query", u.raw_query.clone());
        put("opaque", u.opaque.clone());
        put("fragment", u.fragment.clone());
        put(
            "userinfo",
            u.user.as_ref().map(userinfo_string).unwrap_or_default(),
        );
        Ok(Value::map(m))
    });
    def(t, "urlJoin", &[MapIface], None, |_, a| {
        let Some(Value::Map(m, _)) = a.first() else {
            return Ok(Value::str(""));
        };
        let get = |k: &str| -> Result<String, FnError> {
            match Value::map_get(m, k) {
                None => Ok(String::new()),
                Some(Value::Str(s)) => Ok(s.to_string()),
                Some(Value::Nil) => Err(super::NIL_DEREF.into()),
                Some(other) => Err(FnError::Go(format!(
                    "unable to parse {k} key, must be of type string, but {} found",
                    other.kind_name()
                ))),
            }
        };
        let mut u = Url {
            scheme: get("scheme")?,
            host: get("host")?,
            path: get("path")?,
            raw_query: get("query")?,
            opaque: get("opaque")?,
            fragment: get("fragment")?,
            user: None,
        };
        let info = get("userinfo")?;
        if !info.is_empty() {
            let parsed = parse(&format!("proto://{info}@host"))
                .map_err(|e| FnError::Go(format!("unable to parse userinfo in dict: {e}")))?;
            u.user = parsed.user;
        }
        Ok(Value::str(u.to_go_string()))
    });
}
