//! Media types: which serialization a request body is in (`Content-Type`) and which one
//! the client takes back (`Accept`), negotiated as kube-apiserver does it. JSON and YAML
//! are served for every kind; protobuf only for the built-in kinds this server has
//! messages for (custom resources never have a protobuf form, whatever the client
//! prefers). Of the conversions asked with `as=`, reads (get, list, watch) are served a
//! `meta.k8s.io` `Table` (`as=Table;g=meta.k8s.io;v=v1` or `v1beta1`) in JSON or YAML,
//! as kube-apiserver allows it; a protobuf Table, `PartialObjectMetadata` and any
//! conversion on a write are not served: such clauses are passed over, so the client's
//! next clause (kubectl's trailing plain `application/json`) is what it gets.

use crate::status::ApiError;

pub const JSON: &str = "application/json";
pub const YAML: &str = "application/yaml";
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// One serialization of objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
    Protobuf,
}

impl Format {
    pub fn media_type(self) -> &'static str {
        match self {
            Format::Json => JSON,
            Format::Yaml => YAML,
            Format::Protobuf => PROTOBUF,
        }
    }

    /// The Content-Type of a watch stream in this format.
    pub fn stream_media_type(self) -> &'static str {
        match self {
            // Kept as this server always answered JSON watches.
            Format::Json => JSON,
            Format::Yaml => YAML,
            Format::Protobuf => "application/vnd.kubernetes.protobuf;stream=watch",
        }
    }

    /// YAML has no framing for a stream of events.
    fn streams(self) -> bool {
        self != Format::Yaml
    }

    fn split(self) -> (&'static str, &'static str) {
        let (t, s) = self.media_type().split_once('/').unwrap_or(("", ""));
        (t, s)
    }
}

/// The formats a resource is served in, in the server's order of preference (the
/// first is the answer to a request without Accept, or with `*/*`).
pub fn served(protobuf: bool) -> Vec<Format> {
    let mut formats = vec![Format::Json, Format::Yaml];
    if protobuf {
        formats.push(Format::Protobuf);
    }
    formats
}

/// What the client's Accept header settles on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    pub format: Format,
    /// The answer is a Table of this `apiVersion` (`meta.k8s.io/v1` or
    /// `meta.k8s.io/v1beta1`), in `format`.
    pub table: Option<&'static str>,
    /// The client also takes JSON: the answer to fall back on when an object cannot be
    /// put in `format` (a stored built-in object that does not fit its kind's message).
    pub json_too: bool,
}

/// One media range of an Accept header.
#[derive(Debug, Clone, PartialEq)]
struct Clause {
    main: String,
    sub: String,
    q: f64,
    params: Vec<(String, String)>,
}

fn parse_accept(header: &str) -> Vec<Clause> {
    let mut clauses: Vec<Clause> = header
        .split(',')
        .filter_map(|part| {
            let mut pieces = part.split(';');
            let range = pieces.next()?.trim().to_ascii_lowercase();
            let (main, sub) = match range.as_str() {
                "" => return None,
                "*" => ("*".to_string(), "*".to_string()),
                r => {
                    let (m, s) = r.split_once('/')?;
                    (m.trim().to_string(), s.trim().to_string())
                }
            };
            let mut q = 1.0;
            let mut params = Vec::new();
            for p in pieces {
                let Some((k, v)) = p.split_once('=') else {
                    continue;
                };
                let key = k.trim().to_ascii_lowercase();
                let value = v.trim().trim_matches('"').to_string();
                if key == "q" {
                    // An unreadable weight counts as 0, as Go's goautoneg reads it.
                    q = value.parse::<f64>().unwrap_or(0.0);
                } else {
                    params.push((key, value));
                }
            }
            Some(Clause {
                main,
                sub,
                q,
                params,
            })
        })
        .collect();
    // Heaviest first; at equal weight a concrete type before a wildcard; otherwise the
    // client's order (a stable sort).
    clauses.sort_by(|a, b| {
        b.q.total_cmp(&a.q)
            .then((a.main == "*").cmp(&(b.main == "*")))
            .then((a.sub == "*").cmp(&(b.sub == "*")))
    });
    clauses
}

impl Clause {
    fn matches(&self, format: Format) -> bool {
        let (main, sub) = format.split();
        (self.main == main && (self.sub == sub || self.sub == "*"))
            || (self.main == "*" && self.sub == "*")
    }

    fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The Table version a clause converts to, when it asks for a Table this server
    /// serves in `format` (kube-apiserver's `AllowsConversion`: JSON or YAML).
    fn table(&self, format: Format) -> Option<&'static str> {
        if self.param("as") != Some("Table")
            || self.param("g") != Some(crate::table::META_GROUP)
            || format == Format::Protobuf
        {
            return None;
        }
        match self.param("v") {
            Some("v1") => Some("meta.k8s.io/v1"),
            Some("v1beta1") => Some("meta.k8s.io/v1beta1"),
            _ => None,
        }
    }

    /// Whether this server can answer the clause's parameters in `format`; `tables`:
    /// whether a Table conversion can be.
    fn acceptable(&self, format: Format, tables: bool) -> bool {
        if ["as", "g", "v"].iter().any(|k| self.param(k).is_some())
            && !(tables && self.table(format).is_some())
        {
            return false;
        }
        match self.param("stream") {
            None | Some("") => true,
            // Any read may name the watch stream; it only matters to watches.
            Some("watch") => format.streams(),
            Some(_) => false,
        }
    }
}

/// The answer's format for this Accept header, and the Table version when the chosen
/// clause converts to one (only with `tables`): `None` when nothing acceptable is
/// served (the caller answers 406 with [`not_acceptable`]).
fn choose(accept: &str, served: &[Format], tables: bool) -> Option<(Format, Option<&'static str>)> {
    if accept.trim().is_empty() {
        return served.first().map(|f| (*f, None));
    }
    for clause in parse_accept(accept) {
        // A weight of 0 means "not acceptable" (RFC 9110); kube-apiserver only sorts by
        // weight, but no client sends a zero to mean anything else.
        if clause.q <= 0.0 {
            continue;
        }
        for &format in served {
            if clause.matches(format) && clause.acceptable(format, tables) {
                let table = if tables { clause.table(format) } else { None };
                return Some((format, table));
            }
        }
    }
    None
}

/// Negotiates the format of an answer that cannot be a Table. `watch`: the answer is a
/// stream of events, which YAML cannot be.
pub fn negotiate(accept: &str, protobuf: bool, watch: bool) -> Result<Negotiated, ApiError> {
    negotiate_read(accept, protobuf, watch, false)
}

/// Negotiates the format of an answer; `tables`: the request reads objects (get, list
/// or watch), which may be answered as a Table.
pub fn negotiate_read(
    accept: &str,
    protobuf: bool,
    watch: bool,
    tables: bool,
) -> Result<Negotiated, ApiError> {
    let served = served(protobuf);
    let (format, table) = choose(accept, &served, tables)
        .filter(|(f, _)| !watch || f.streams())
        .ok_or_else(|| not_acceptable(&served, watch))?;
    let json_too = format == Format::Json || choose(accept, &[Format::Json], false).is_some();
    Ok(Negotiated {
        format,
        table,
        json_too,
    })
}

/// kube-apiserver's 406, listing what is served.
pub fn not_acceptable(served: &[Format], watch: bool) -> ApiError {
    let types: Vec<String> = served
        .iter()
        .filter(|f| !watch || f.streams())
        .map(|f| {
            if watch {
                format!("{};stream=watch", f.media_type())
            } else {
                f.media_type().to_string()
            }
        })
        .collect();
    ApiError::not_acceptable(format!(
        "only the following media types are accepted: {}",
        types.join(", ")
    ))
}

/// The format of a request body from its Content-Type (none: JSON), or kube-apiserver's
/// 415 listing what the resource takes.
pub fn body_format(content_type: Option<&str>, protobuf: bool) -> Result<Format, ApiError> {
    let served = served(protobuf);
    let media = content_type
        .and_then(|v| v.split(';').next())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let found = match media.as_str() {
        // `*/*` has always been read as JSON here; some clients send it.
        "" | "*/*" => Some(Format::Json),
        m => served.iter().copied().find(|f| f.media_type() == m),
    };
    found.ok_or_else(|| {
        let names: Vec<&str> = served.iter().map(|f| f.media_type()).collect();
        ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format - accepted media types include: {}",
            names.join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(accept: &str, protobuf: bool) -> Option<Format> {
        negotiate(accept, protobuf, false).ok().map(|n| n.format)
    }

    #[test]
    fn kubectl_accept_headers() {
        let typed = "application/vnd.kubernetes.protobuf,application/json";
        assert_eq!(pick(typed, true), Some(Format::Protobuf));
        // A custom resource has no protobuf form: JSON even when protobuf comes first.
        assert_eq!(pick(typed, false), Some(Format::Json));
        let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(pick(table, true), Some(Format::Json));
        assert_eq!(pick("application/json, */*", true), Some(Format::Json));
        assert_eq!(pick("", true), Some(Format::Json));
        assert_eq!(pick("*/*", true), Some(Format::Json));
        assert_eq!(pick("application/*", true), Some(Format::Json));
        assert_eq!(pick("application/yaml", false), Some(Format::Yaml));
    }

    #[test]
    fn reads_take_tables_in_json_or_yaml() {
        let table = |accept: &str, protobuf: bool| {
            negotiate_read(accept, protobuf, false, true)
                .ok()
                .map(|n| (n.format, n.table))
        };
        let kubectl_120 = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(
            table(kubectl_120, true),
            Some((Format::Json, Some("meta.k8s.io/v1")))
        );
        // A protobuf Table is not served: the JSON Table after it is.
        let kubectl_133 = "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
        assert_eq!(
            table(kubectl_133, true),
            Some((Format::Json, Some("meta.k8s.io/v1")))
        );
        assert_eq!(
            table("application/json;as=Table;v=v1beta1;g=meta.k8s.io", false),
            Some((Format::Json, Some("meta.k8s.io/v1beta1")))
        );
        assert_eq!(
            table("application/yaml;as=Table;v=v1;g=meta.k8s.io", false),
            Some((Format::Yaml, Some("meta.k8s.io/v1")))
        );
        // Not a Table this server has: passed over.
        for other in [
            "application/json;as=Table;v=v2;g=meta.k8s.io,application/yaml",
            "application/json;as=Table;v=v1;g=example.com,application/yaml",
            "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,application/yaml",
        ] {
            assert_eq!(table(other, false), Some((Format::Yaml, None)), "{other}");
        }
        // Writes are not converted.
        let n = negotiate(kubectl_120, true, false).unwrap();
        assert_eq!((n.format, n.table), (Format::Json, None));
        let n = negotiate_read(
            "application/json;as=Table;v=v1;g=meta.k8s.io;stream=watch",
            true,
            true,
            true,
        )
        .unwrap();
        assert_eq!(n.table, Some("meta.k8s.io/v1"));
    }

    #[test]
    fn weights_and_wildcards_order_the_clauses() {
        let accept = "application/json;q=0.5, application/vnd.kubernetes.protobuf";
        assert_eq!(pick(accept, true), Some(Format::Protobuf));
        let accept = "application/vnd.kubernetes.protobuf;q=0.2, application/json;q=0.9";
        assert_eq!(pick(accept, true), Some(Format::Json));
        assert_eq!(
            pick("*/*;q=0.1, application/yaml", true),
            Some(Format::Yaml)
        );
        assert_eq!(pick("application/json;q=0", true), None);
        assert_eq!(pick("application/json;q=zero", true), None);
    }

    #[test]
    fn nothing_acceptable_is_406_naming_what_is_served() {
        let e = negotiate(PROTOBUF, false, false).unwrap_err();
        assert_eq!((e.code, e.reason), (406, "NotAcceptable"));
        assert_eq!(
            e.message,
            "only the following media types are accepted: application/json, application/yaml"
        );
        let e = negotiate("application/json;as=Table;v=v1;g=meta.k8s.io", true, false).unwrap_err();
        assert!(e.message.ends_with("application/vnd.kubernetes.protobuf"));
        assert!(negotiate("text/html", true, false).is_err());
    }

    #[test]
    fn watches_stream_json_or_protobuf() {
        let n = negotiate(
            "application/vnd.kubernetes.protobuf;stream=watch, application/json",
            true,
            true,
        )
        .unwrap();
        assert_eq!(n.format, Format::Protobuf);
        assert!(n.json_too);
        let e = negotiate("application/yaml", true, true).unwrap_err();
        assert_eq!(
            e.message,
            "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
        );
        assert_eq!(
            pick("application/json;stream=watch", true),
            Some(Format::Json)
        );
        assert_eq!(pick("application/json;stream=other", true), None);
    }

    #[test]
    fn json_fallback_is_known() {
        let n = negotiate(PROTOBUF, true, false).unwrap();
        assert!(!n.json_too);
        let n = negotiate("application/vnd.kubernetes.protobuf, */*", true, false).unwrap();
        assert!(n.json_too);
    }

    #[test]
    fn bodies() {
        assert_eq!(body_format(None, false), Ok(Format::Json));
        assert_eq!(
            body_format(Some("application/json; charset=utf-8"), false),
            Ok(Format::Json)
        );
        assert_eq!(body_format(Some(PROTOBUF), true), Ok(Format::Protobuf));
        assert_eq!(
            body_format(Some("application/yaml"), true),
            Ok(Format::Yaml)
        );
        let e = body_format(Some(PROTOBUF), false).unwrap_err();
        assert_eq!(e.code, 415);
        assert_eq!(
            e.message,
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
        );
        let e = body_format(Some("text/plain"), true).unwrap_err();
        assert!(
            e.message.ends_with(
                "application/json, application/yaml, application/vnd.kubernetes.protobuf"
            )
        );
    }
}
