//! Label and field selectors as list and watch requests give them (`labelSelector`,
//! `fieldSelector`), parsed with Kubernetes' grammar and matched against objects.

use crate::util::meta_str;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Equals,
    NotEquals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub op: Op,
    pub values: Vec<String>,
}

/// A parsed label selector: all requirements must hold (empty matches everything).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(pub Vec<Requirement>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Not,
    Eq,
    DoubleEq,
    NotEq,
    Open,
    Close,
    Comma,
}

fn tokenize(input: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = input.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            ',' => {
                tokens.push(Token::Comma);
                i += 1
            }
            '(' => {
                tokens.push(Token::Open);
                i += 1
            }
            ')' => {
                tokens.push(Token::Close);
                i += 1
            }
            '=' if chars.get(i + 1) == Some(&'=') => {
                tokens.push(Token::DoubleEq);
                i += 2
            }
            '=' => {
                tokens.push(Token::Eq);
                i += 1
            }
            '!' if chars.get(i + 1) == Some(&'=') => {
                tokens.push(Token::NotEq);
                i += 2
            }
            '!' => {
                tokens.push(Token::Not);
                i += 1
            }
            _ => {
                let start = i;
                while i < chars.len() && !chars[i].is_whitespace() && !",()=!".contains(chars[i]) {
                    i += 1;
                }
                tokens.push(Token::Ident(chars[start..i].iter().collect()));
            }
        }
    }
    Ok(tokens)
}

/// Label keys: an optional DNS-subdomain prefix and a name of alphanumerics, `-`, `_`, `.`.
fn valid_key(key: &str) -> bool {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix
        && (p.is_empty()
            || p.len() > 253
            || !p
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.'))
    {
        return false;
    }
    !name.is_empty() && name.len() <= 63 && valid_value(name)
}

fn valid_value(value: &str) -> bool {
    value.len() <= 63
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && value
            .chars()
            .next()
            .is_none_or(|c| c.is_ascii_alphanumeric())
        && value
            .chars()
            .last()
            .is_none_or(|c| c.is_ascii_alphanumeric())
}

impl LabelSelector {
    pub fn parse(input: &str) -> Result<Self, String> {
        let tokens = tokenize(input)?;
        let mut reqs = Vec::new();
        let mut pos = 0;
        if tokens.is_empty() {
            return Ok(LabelSelector(reqs));
        }
        loop {
            let (req, next) = parse_requirement(&tokens, pos)?;
            reqs.push(req);
            pos = next;
            match tokens.get(pos) {
                None => break,
                Some(Token::Comma) => pos += 1,
                Some(t) => {
                    return Err(format!(
                        "found '{}', expected: ',' or 'end of string'",
                        show(t)
                    ));
                }
            }
        }
        for r in &reqs {
            if !valid_key(&r.key) {
                return Err(format!("invalid label key \"{}\"", r.key));
            }
            if let Some(v) = r.values.iter().find(|v| !valid_value(v)) {
                return Err(format!("invalid label value: \"{v}\""));
            }
        }
        Ok(LabelSelector(reqs))
    }

    pub fn matches(&self, labels: Option<&serde_json::Map<String, Value>>) -> bool {
        self.0.iter().all(|r| {
            let value = labels.and_then(|l| l.get(&r.key)).and_then(Value::as_str);
            match r.op {
                Op::Exists => value.is_some(),
                Op::DoesNotExist => value.is_none(),
                Op::Equals | Op::In => value.is_some_and(|v| r.values.iter().any(|x| x == v)),
                Op::NotEquals | Op::NotIn => value.is_none_or(|v| !r.values.iter().any(|x| x == v)),
            }
        })
    }

    pub fn matches_object(&self, obj: &Value) -> bool {
        self.matches(obj.pointer("/metadata/labels").and_then(Value::as_object))
    }
}

fn show(t: &Token) -> String {
    match t {
        Token::Ident(s) => s.clone(),
        Token::Not => "!".into(),
        Token::Eq => "=".into(),
        Token::DoubleEq => "==".into(),
        Token::NotEq => "!=".into(),
        Token::Open => "(".into(),
        Token::Close => ")".into(),
        Token::Comma => ",".into(),
    }
}

fn parse_requirement(tokens: &[Token], mut pos: usize) -> Result<(Requirement, usize), String> {
    let negated = tokens.get(pos) == Some(&Token::Not);
    if negated {
        pos += 1;
    }
    let key = match tokens.get(pos) {
        Some(Token::Ident(k)) => k.clone(),
        Some(t) => return Err(format!("found '{}', expected: identifier", show(t))),
        None => return Err("found 'end of string', expected: identifier".into()),
    };
    pos += 1;
    if negated {
        return Ok((
            Requirement {
                key,
                op: Op::DoesNotExist,
                values: vec![],
            },
            pos,
        ));
    }
    let op = match tokens.get(pos) {
        None | Some(Token::Comma) => {
            return Ok((
                Requirement {
                    key,
                    op: Op::Exists,
                    values: vec![],
                },
                pos,
            ));
        }
        Some(Token::Eq) | Some(Token::DoubleEq) => Op::Equals,
        Some(Token::NotEq) => Op::NotEquals,
        Some(Token::Ident(w)) if w == "in" => Op::In,
        Some(Token::Ident(w)) if w == "notin" => Op::NotIn,
        Some(t) => {
            return Err(format!(
                "found '{}', expected: '=', '!=', '==', 'in', notin'",
                show(t)
            ));
        }
    };
    pos += 1;
    if matches!(op, Op::Equals | Op::NotEquals) {
        // A missing value means the empty string, as in `a=`.
        return match tokens.get(pos) {
            Some(Token::Ident(v)) => Ok((
                Requirement {
                    key,
                    op,
                    values: vec![v.clone()],
                },
                pos + 1,
            )),
            None | Some(Token::Comma) => Ok((
                Requirement {
                    key,
                    op,
                    values: vec![String::new()],
                },
                pos,
            )),
            Some(t) => Err(format!("found '{}', expected: identifier", show(t))),
        };
    }
    if tokens.get(pos) != Some(&Token::Open) {
        return Err("found 'identifier', expected: '('".into());
    }
    pos += 1;
    let mut values = Vec::new();
    loop {
        match tokens.get(pos) {
            Some(Token::Ident(v)) => {
                values.push(v.clone());
                pos += 1;
            }
            Some(Token::Comma) | Some(Token::Close) => values.push(String::new()),
            Some(t) => return Err(format!("found '{}', expected: identifier", show(t))),
            None => return Err("found 'end of string', expected: ')'".into()),
        }
        match tokens.get(pos) {
            Some(Token::Comma) => pos += 1,
            Some(Token::Close) => {
                pos += 1;
                break;
            }
            Some(t) => return Err(format!("found '{}', expected: ',' or ')'", show(t))),
            None => return Err("found 'end of string', expected: ')'".into()),
        }
    }
    // `a in ()` has no values: parse it as one empty value, which Kubernetes rejects as well.
    values.dedup();
    Ok((Requirement { key, op, values }, pos))
}

/// A field selector over the fields every object supports (`metadata.name`,
/// `metadata.namespace`) and those kube-apiserver registers for the kind ([`fields_of`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(pub Vec<(String, bool, String)>);

/// The field labels kube-apiserver registers for a built-in kind beyond `metadata.name`
/// and `metadata.namespace`, each with where its value is in the object (and the value
/// when the field is absent). `kubectl describe` lists a object's Events by
/// `involvedObject.*`.
pub fn fields_of(group: &str, kind: &str) -> &'static [(&'static str, &'static str, &'static str)] {
    match (group, kind) {
        ("", "Event") => &[
            ("involvedObject.kind", "involvedObject.kind", ""),
            ("involvedObject.namespace", "involvedObject.namespace", ""),
            ("involvedObject.name", "involvedObject.name", ""),
            ("involvedObject.uid", "involvedObject.uid", ""),
            ("involvedObject.apiVersion", "involvedObject.apiVersion", ""),
            (
                "involvedObject.resourceVersion",
                "involvedObject.resourceVersion",
                "",
            ),
            ("involvedObject.fieldPath", "involvedObject.fieldPath", ""),
            ("reason", "reason", ""),
            ("reportingComponent", "reportingComponent", ""),
            ("source", "source.component", ""),
            ("type", "type", ""),
        ],
        ("", "Secret") => &[("type", "type", "Opaque")],
        ("", "Namespace") => &[("status.phase", "status.phase", "Active")],
        _ => &[],
    }
}

impl FieldSelector {
    /// A selector over the fields every object has.
    pub fn parse(input: &str) -> Result<Self, String> {
        Self::parse_for(input, &[])
    }

    /// A selector over the fields every object has and `extra` ([`fields_of`]).
    pub fn parse_for(
        input: &str,
        extra: &[(&'static str, &'static str, &'static str)],
    ) -> Result<Self, String> {
        let mut terms = Vec::new();
        for part in input.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, true, v)
            } else {
                return Err(format!(
                    "invalid selector: '{input}'; can't understand '{part}'"
                ));
            };
            let field = field.trim();
            let path = match field {
                "metadata.name" | "metadata.namespace" => field.to_string(),
                _ => match extra.iter().find(|(label, _, _)| *label == field) {
                    // The absent value rides after a NUL: labels never contain one.
                    Some((_, path, absent)) => format!("{path}\0{absent}"),
                    None => return Err(format!("field label not supported: {field}")),
                },
            };
            terms.push((path, equal, value.trim().to_string()));
        }
        Ok(FieldSelector(terms))
    }

    pub fn matches_object(&self, obj: &Value) -> bool {
        self.0.iter().all(|(field, equal, value)| {
            let actual = match field.as_str() {
                "metadata.name" => meta_str(obj, "name").to_string(),
                "metadata.namespace" => meta_str(obj, "namespace").to_string(),
                other => {
                    let (path, absent) = other.split_once('\0').unwrap_or((other, ""));
                    path.split('.')
                        .try_fold(obj, |v, key| v.get(key))
                        .and_then(Value::as_str)
                        .unwrap_or(absent)
                        .to_string()
                }
            };
            (actual == *value) == *equal
        })
    }
}

/// Both selectors of a list or watch request.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Filter {
    pub fn matches(&self, obj: &Value) -> bool {
        self.labels.matches_object(obj) && self.fields.matches_object(obj)
    }

    /// Whether it selects everything.
    pub fn is_empty(&self) -> bool {
        self.labels.0.is_empty() && self.fields.0.is_empty()
    }

    /// Whether it reads nothing but an object's name, namespace and labels.
    pub fn reads_only_metadata(&self) -> bool {
        self.fields
            .0
            .iter()
            .all(|(field, _, _)| matches!(field.as_str(), "metadata.name" | "metadata.namespace"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn label_selectors_match_like_kubernetes() {
        let l =
            labels(json!({"app": "web", "tier": "front", "cluster.x-k8s.io/cluster-name": "c1"}));
        let cases = [
            ("", true),
            ("app=web", true),
            ("app==web", true),
            ("app=db", false),
            ("app!=db", true),
            ("app!=web", false),
            ("missing!=x", true),
            ("app", true),
            ("missing", false),
            ("!missing", true),
            ("!app", false),
            ("app in (web,db)", true),
            ("app in (db)", false),
            ("app notin (db)", true),
            ("app notin (db, web)", false),
            ("missing notin (x)", true),
            ("missing in (x)", false),
            ("app=web,tier=front", true),
            ("app=web, tier=back", false),
            ("cluster.x-k8s.io/cluster-name=c1", true),
            ("  app = web  ", true),
        ];
        for (sel, want) in cases {
            let parsed = LabelSelector::parse(sel).unwrap_or_else(|e| panic!("{sel}: {e}"));
            assert_eq!(parsed.matches(Some(&l)), want, "{sel}");
        }
    }

    #[test]
    fn malformed_label_selectors_are_errors() {
        for sel in [
            "app in web",
            "app in (web",
            "=web",
            "app=web,",
            "a b",
            "app=(x)",
            "-bad=x",
            "a=b c",
            "!",
            "a in (x y)",
        ] {
            assert!(LabelSelector::parse(sel).is_err(), "{sel} should not parse");
        }
    }

    #[test]
    fn field_selectors_on_the_fields_a_kind_registers() {
        let event = json!({
            "metadata": {"name": "e", "namespace": "ns"},
            "involvedObject": {"kind": "ConfigMap", "name": "cm", "uid": "u-1"},
            "source": {"component": "kubelet"},
            "type": "Normal"
        });
        let events = fields_of("", "Event");
        let ok = |s: &str| FieldSelector::parse_for(s, events).map(|f| f.matches_object(&event));
        // What `kubectl describe configmap cm` asks.
        assert_eq!(
            ok("involvedObject.name=cm,involvedObject.namespace=ns,involvedObject.uid=u-1"),
            Ok(false)
        );
        assert_eq!(
            ok("involvedObject.name=cm,involvedObject.uid=u-1,involvedObject.kind=ConfigMap"),
            Ok(true)
        );
        assert_eq!(ok("source=kubelet,type!=Warning"), Ok(true));
        // A field of one kind is not a field of another.
        assert_eq!(
            FieldSelector::parse_for("involvedObject.uid=u", fields_of("", "ConfigMap")),
            Err("field label not supported: involvedObject.uid".to_string())
        );
        // An absent Secret type is Opaque, as kube-apiserver defaults it.
        let secret = json!({"metadata": {"name": "s"}});
        let secrets = FieldSelector::parse_for("type=Opaque", fields_of("", "Secret"));
        assert_eq!(secrets.map(|f| f.matches_object(&secret)), Ok(true));
    }

    #[test]
    fn field_selectors_on_name_and_namespace() {
        let obj = json!({"metadata": {"name": "a", "namespace": "ns"}});
        let ok = |s: &str| FieldSelector::parse(s).map(|f| f.matches_object(&obj));
        assert_eq!(ok("metadata.name=a"), Ok(true));
        assert_eq!(ok("metadata.name==b"), Ok(false));
        assert_eq!(ok("metadata.name!=b,metadata.namespace=ns"), Ok(true));
        assert_eq!(ok("metadata.namespace!=ns"), Ok(false));
        assert_eq!(
            ok("spec.x=1"),
            Err("field label not supported: spec.x".to_string())
        );
        assert!(ok("metadata.name").is_err());
    }
}
