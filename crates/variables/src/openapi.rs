//! The OpenAPI validator Kubernetes runs on custom resources (kube-openapi's schema
//! validator), reproduced for the keywords variable and CRD schemas use: its checks,
//! its message texts, its paths (`a.b`, `[0]`, `.key` for map entries) and its way
//! of choosing which failures of `anyOf`/`oneOf` branches to report (the branch with
//! the most passed checks).

use std::cell::RefCell;
use std::collections::HashMap;

use regex::Regex;
use topograph_api::field::go_quote;

use crate::fieldpath;
use crate::formats;
use crate::goregex;
use crate::schema::{Additional, Schema};
use crate::value::{Val, go_float};

/// The value an error carries (Go's `interface{}`).
#[derive(Clone, Debug, PartialEq)]
pub enum EVal {
    /// Nothing.
    Nil,
    /// A string (type names, formats, string data).
    Str(String),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// Any decoded data.
    Data(Val),
}

impl EVal {
    fn of(v: &Val) -> EVal {
        match v {
            Val::Null => EVal::Nil,
            Val::Str(s) => EVal::Str(s.clone()),
            Val::Int(i) => EVal::Int(*i),
            Val::Float(f) => EVal::Float(*f),
            other => EVal::Data(other.clone()),
        }
    }
}

/// The kind of a validation failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// Wrong type or format.
    InvalidType,
    /// A required property is missing.
    Required,
    /// String longer than `maxLength`.
    TooLong,
    /// String shorter than `minLength`.
    TooShort,
    /// `pattern` not matched.
    Pattern,
    /// Not one of `enum`.
    Enum,
    /// Not a multiple of `multipleOf`.
    MultipleOf,
    /// Above `maximum`.
    Max,
    /// Below `minimum`.
    Min,
    /// Duplicate array items.
    Unique,
    /// More than `maxItems`.
    MaxItems,
    /// Fewer than `minItems`.
    MinItems,
    /// Fewer than `minProperties`.
    TooFewProperties,
    /// More than `maxProperties`.
    TooManyProperties,
    /// A key `additionalProperties: false` forbids.
    UnallowedProperty,
    /// A negative `multipleOf`.
    MultipleOfMustBePositive,
}

/// A failure with its kind, the path it is about and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// Kind.
    pub code: Code,
    /// kube-openapi path (`a.b`, `[0]`, `.key`, empty at the root).
    pub name: String,
    /// The offending value.
    pub value: EVal,
    /// The allowed values (enum failures).
    pub values: Vec<Val>,
    /// The limit (maxLength, maxItems, maxProperties).
    pub valid: Option<i64>,
    /// The message.
    pub message: String,
}

/// A reported problem: a typed failure, or a bare message (composition failures and
/// range-capacity problems, which Kubernetes reports on the root).
#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    /// Typed.
    Failure(Failure),
    /// Bare message.
    Message(String),
}

impl Problem {
    /// The message text (also the key under which repeats are merged).
    pub fn text(&self) -> &str {
        match self {
            Problem::Failure(f) => &f.message,
            Problem::Message(m) => m,
        }
    }
}

/// The errors of a validation and how many checks passed on the way.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Errors, without repeats.
    pub errors: Vec<Problem>,
    matches: i64,
}

impl Outcome {
    fn add(&mut self, p: Problem) {
        if !self.errors.iter().any(|e| e.text() == p.text()) {
            self.errors.push(p);
        }
    }

    fn merge(&mut self, other: Outcome) {
        for e in other.errors {
            self.add(e);
        }
        self.matches += other.matches;
    }

    fn err(p: Problem) -> Outcome {
        Outcome {
            errors: vec![p],
            matches: 0,
        }
    }

    fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }
}

const IN: &str = "body";

fn failure(code: Code, name: &str, value: EVal, message: String) -> Problem {
    Problem::Failure(Failure {
        code,
        name: name.to_string(),
        value,
        values: Vec::new(),
        valid: None,
        message,
    })
}

fn invalid_type(name: &str, type_name: &str, value: &str) -> Problem {
    failure(
        Code::InvalidType,
        name,
        EVal::Str(value.to_string()),
        format!(
            "{name} in {IN} must be of type {type_name}: {}",
            go_quote(value)
        ),
    )
}

/// swag's check that a float holds an integer JSON can carry exactly.
pub fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_991.0;
    const SMALLEST: f64 = 5e-324;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    // Negative values convert to 0 here where Go wraps; both fail the checks below.
    let g = (f as u64) as f64;
    if f == g || f == (f as i64) as f64 {
        return true;
    }
    let diff = (f - g).abs();
    if f == 0.0 || g == 0.0 || diff < SMALLEST {
        return diff < 1e-9 * SMALLEST;
    }
    diff / (f.abs() + g.abs()).min(f64::MAX) < 1e-9
}

/// Go's `int64(f)` on amd64: out-of-range values become the minimum.
fn go_f64_to_i64(f: f64) -> i64 {
    if f.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// The validator; compiled patterns are kept between values.
#[derive(Default)]
pub struct Validator {
    patterns: RefCell<HashMap<String, Result<Regex, String>>>,
}

impl Validator {
    /// A validator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Validates `data` against `s`; `path` is the kube-openapi path of `data`.
    pub fn validate(&self, s: &Schema, path: &str, data: &Val) -> Outcome {
        self.node(s, path, data, None)
    }

    /// Validates an update of `old` to `data` against `s` with kube-apiserver's
    /// ratcheting ([`crate::ratchet`]): no error of a part the update left unchanged.
    pub fn validate_update(&self, s: &Schema, path: &str, data: &Val, old: &Val) -> Outcome {
        self.node(s, path, data, Some(old))
    }

    /// One node, `old` its paired old value when ratcheting. The quantors' schemas
    /// are checked without it: kube-apiserver does not ratchet inside them.
    fn node(&self, s: &Schema, path: &str, data: &Val, old: Option<&Val>) -> Outcome {
        if old.is_some_and(|old| crate::ratchet::unchanged(s, data, old)) {
            return Outcome::default();
        }
        let mut result = Outcome::default();
        if matches!(data, Val::Null) {
            result.merge(self.type_check(s, path, data));
            if let Some(e) = self.enum_check(s, path, data) {
                result.add(e);
            }
            return result;
        }
        let format = effective_format(s);
        let types = s.types();
        // The validators, in kube-openapi's order, each only where it applies.
        if !types.is_empty() || !format.is_empty() {
            result.merge(self.type_check(s, path, data));
            result.matches += 1;
        }
        result.merge(self.compositions(s, path, data));
        result.matches += 1;
        if let Val::Str(text) = data {
            if let Some(e) = self.string_check(s, path, text) {
                result.add(e);
            }
            result.matches += 1;
            if formats::known(format) {
                if !formats::validates(format, text) {
                    result.add(invalid_type(path, format, text));
                }
                result.matches += 1;
            }
        }
        if matches!(data, Val::Int(_) | Val::Float(_)) {
            result.merge(self.number_check(s, path, data));
            result.matches += 1;
        }
        if let Val::Arr(items) = data {
            // List items are not paired with old ones (see `crate::ratchet`).
            result.merge(self.array_check(s, path, items));
            result.matches += 1;
        }
        if let Some(e) = self.enum_check(s, path, data) {
            result.add(e);
        }
        result.matches += 1;
        if let Val::Obj(map) = data {
            result.merge(self.object_check(s, path, map, old));
            result.matches += 1;
        }
        result.matches += 1;
        result
    }

    fn type_check(&self, s: &Schema, path: &str, data: &Val) -> Outcome {
        let ok = Outcome {
            errors: Vec::new(),
            matches: 1,
        };
        let types = s.types();
        let format = effective_format(s);
        if matches!(data, Val::Null) {
            if !types.is_empty() && !types.contains(&"null") && !s.nullable {
                return Outcome::err(invalid_type(path, &types.join(","), "null"));
            }
            return ok;
        }
        let sch_type = data.type_name();
        let data_format = match data {
            Val::Int(_) => "int64",
            Val::Float(_) => "float64",
            _ => "",
        };
        let is_float_int =
            matches!(data, Val::Float(f) if is_json_integer(*f)) && types.contains(&"integer");
        let is_int_float = matches!(data, Val::Int(_)) && types.contains(&"number");
        let string_or_slice = matches!(data, Val::Str(_) | Val::Arr(_));
        let type_fits =
            types.contains(&sch_type) || data_format == format || is_float_int || is_int_float;
        if !(string_or_slice || format.is_empty() || type_fits) {
            return Outcome::err(invalid_type(path, format, data_format));
        }
        let numeric = types.contains(&"number") || types.contains(&"integer");
        if string_or_slice && !(numeric || format.is_empty()) {
            return ok;
        }
        if !(types.contains(&sch_type) || is_float_int || is_int_float) {
            return Outcome::err(invalid_type(path, &types.join(","), sch_type));
        }
        ok
    }

    fn compositions(&self, s: &Schema, path: &str, data: &Val) -> Outcome {
        let mut main = Outcome::default();
        let quoted = go_quote(path);
        if !s.any_of.is_empty() {
            let mut best: Option<Outcome> = None;
            let mut first_success: Option<Outcome> = None;
            for sub in &s.any_of {
                let r = self.validate(sub, path, data);
                if r.is_valid() {
                    best = None;
                    first_success = Some(r);
                    break;
                }
                if best.as_ref().is_none_or(|b| r.matches > b.matches) {
                    best = Some(r);
                }
            }
            if first_success.is_none() {
                main.add(Problem::Message(format!(
                    "{quoted} must validate at least one schema (anyOf)"
                )));
            }
            if let Some(b) = best {
                main.merge(b);
            } else if let Some(f) = first_success {
                main.merge(f);
            }
        }
        if !s.one_of.is_empty() {
            let mut best: Option<Outcome> = None;
            let mut first_success: Option<Outcome> = None;
            let mut validated = 0;
            for sub in &s.one_of {
                let r = self.validate(sub, path, data);
                if r.is_valid() {
                    validated += 1;
                    best = None;
                    if first_success.is_none() {
                        first_success = Some(r);
                    }
                    continue;
                }
                if validated == 0 && best.as_ref().is_none_or(|b| r.matches > b.matches) {
                    best = Some(r);
                }
            }
            if validated != 1 {
                let extra = if validated == 0 {
                    "Found none valid".to_string()
                } else {
                    format!("Found {validated} valid alternatives")
                };
                main.add(Problem::Message(format!(
                    "{quoted} must validate one and only one schema (oneOf). {extra}"
                )));
                if let Some(b) = best {
                    main.merge(b);
                }
            } else if let Some(f) = first_success {
                main.merge(f);
            }
        }
        if !s.all_of.is_empty() {
            let mut validated = 0;
            for sub in &s.all_of {
                let r = self.validate(sub, path, data);
                if r.is_valid() {
                    validated += 1;
                }
                main.merge(r);
            }
            if validated != s.all_of.len() {
                let extra = if validated == 0 {
                    ". None validated"
                } else {
                    ""
                };
                main.add(Problem::Message(format!(
                    "{quoted} must validate all the schemas (allOf){extra}"
                )));
            }
        }
        if let Some(not) = &s.not
            && self.validate(not, path, data).is_valid()
        {
            main.add(Problem::Message(format!(
                "{quoted} must not validate the schema (not)"
            )));
        }
        main.matches += 1;
        main
    }

    fn string_check(&self, s: &Schema, path: &str, text: &str) -> Option<Problem> {
        let len = text.chars().count() as i64;
        if let Some(max) = s.max_length
            && len > max
        {
            let mut p = failure(
                Code::TooLong,
                path,
                EVal::Str(text.to_string()),
                format!("{path} in {IN} should be at most {max} chars long"),
            );
            if let Problem::Failure(f) = &mut p {
                f.valid = Some(max);
            }
            return Some(p);
        }
        if let Some(min) = s.min_length
            && len < min
        {
            return Some(failure(
                Code::TooShort,
                path,
                EVal::Str(text.to_string()),
                format!("{path} in {IN} should be at least {min} chars long"),
            ));
        }
        if !s.pattern.is_empty() {
            let mut cache = self.patterns.borrow_mut();
            let compiled = cache
                .entry(s.pattern.clone())
                .or_insert_with(|| goregex::compile(&s.pattern));
            let shown = match compiled {
                Err(e) => Some(format!("{}, but pattern is invalid: {e}", s.pattern)),
                Ok(r) if !r.is_match(text) => Some(s.pattern.clone()),
                Ok(_) => None,
            };
            if let Some(shown) = shown {
                return Some(failure(
                    Code::Pattern,
                    path,
                    EVal::Str(text.to_string()),
                    format!("{path} in {IN} should match '{shown}'"),
                ));
            }
        }
        None
    }

    fn number_check(&self, s: &Schema, path: &str, data: &Val) -> Outcome {
        let mut res = Outcome::default();
        let types = s.types();
        let type_name = if types.len() == 1 { types[0] } else { "" };
        let format = effective_format(s);
        let f = data.as_f64();
        if let Some(e) = range_capacity(&EVal::of(data), type_name, format, "Checked", path) {
            res.add(e);
        }
        let capacity = |limit: f64, what: &str| {
            range_capacity(&EVal::Float(limit), type_name, format, what, path)
        };
        let multiple = s.multiple_of.map_or_else(Outcome::default, |m| {
            limit_check(
                capacity(m, "MultipleOf"),
                || multiple_of_float(path, f, m, data),
                || multiple_of_native(path, data, m),
            )
        });
        let [minimum, maximum] = [
            (s.minimum, s.exclusive_minimum, "Minimum boundary", false),
            (s.maximum, s.exclusive_maximum, "Maximum boundary", true),
        ]
        .map(|(limit, excl, what, upper)| {
            limit.map_or_else(Outcome::default, |l| {
                limit_check(
                    capacity(l, what),
                    || bound_float(path, f, l, excl, upper, data),
                    || bound_native(path, data, l, excl, upper),
                )
            })
        });
        res.merge(multiple);
        res.merge(minimum);
        res.merge(maximum);
        res.matches += 1;
        res
    }

    fn array_check(&self, s: &Schema, path: &str, items: &[Val]) -> Outcome {
        let mut result = Outcome::default();
        if let Some(item_schema) = &s.items {
            for (i, item) in items.iter().enumerate() {
                result.merge(self.validate(item_schema, &format!("{path}[{i}]"), item));
            }
        }
        let size = items.len() as i64;
        if let Some(p) = too_few(Code::MinItems, path, size, s.min_items, "items") {
            result.add(p);
        }
        if let Some(p) = too_many(Code::MaxItems, path, size, s.max_items, "items") {
            result.add(p);
        }
        if s.unique_items {
            let dup = items
                .iter()
                .enumerate()
                .any(|(i, a)| items.iter().take(i).any(|b| a == b));
            if dup {
                result.add(failure(
                    Code::Unique,
                    path,
                    EVal::Nil,
                    format!("{path} in {IN} shouldn't contain duplicates"),
                ));
            }
        }
        result.matches += 1;
        result
    }

    fn enum_check(&self, s: &Schema, path: &str, data: &Val) -> Option<Problem> {
        if s.enum_.is_empty() {
            return None;
        }
        if s.enum_.iter().any(|e| enum_matches(data, e)) {
            return None;
        }
        Some(Problem::Failure(Failure {
            code: Code::Enum,
            name: path.to_string(),
            value: EVal::of(data),
            values: s.enum_.clone(),
            valid: None,
            message: format!("{path} in {IN} should be one of the allowed values"),
        }))
    }

    fn object_check(
        &self,
        s: &Schema,
        path: &str,
        map: &std::collections::BTreeMap<String, Val>,
        old: Option<&Val>,
    ) -> Outcome {
        // The old value of a property, but for the root's `apiVersion` and `kind`,
        // which kube-apiserver never ratchets (both sides are converted to one version).
        let paired = |key: &str| {
            if path.is_empty() && matches!(key, "apiVersion" | "kind") {
                None
            } else {
                crate::ratchet::paired(s, old, key)
            }
        };
        let n = map.len() as i64;
        // Go returns at the first count that is off.
        let what = "properties";
        let off = too_few(Code::TooFewProperties, path, n, s.min_properties, what)
            .or_else(|| too_many(Code::TooManyProperties, path, n, s.max_properties, what));
        if let Some(p) = off {
            return Outcome::err(p);
        }
        let mut res = Outcome::default();
        let pattern_matches = |key: &str| -> Vec<&Schema> {
            s.pattern_properties
                .iter()
                .filter(|(p, _)| goregex::compile(p).is_ok_and(|r| r.is_match(key)))
                .map(|(_, sch)| sch)
                .collect()
        };
        if s.additional == Some(Additional::Allows(false)) {
            for k in map.keys() {
                if !s.properties.contains_key(k) && pattern_matches(k).is_empty() {
                    res.add(failure(
                        Code::UnallowedProperty,
                        path,
                        EVal::Str(k.clone()),
                        format!("{path}.{k} in {IN} is a forbidden property"),
                    ));
                }
            }
        } else {
            for (key, value) in map {
                let regular = s.properties.contains_key(key);
                let matched = pattern_matches(key);
                for sch in &matched {
                    res.merge(self.validate(sch, &fieldpath::member(path, key), value));
                }
                if !regular
                    && matched.is_empty()
                    && let Some(add) = s.additional_schema()
                {
                    res.merge(self.node(add, &fieldpath::member(path, key), value, paired(key)));
                }
            }
        }
        for (name, prop) in &s.properties {
            // The path is built only for properties the object has: schemas name many
            // more than an object sets.
            if let Some(v) = map.get(name) {
                res.merge(self.node(prop, &fieldpath::child(path, name), v, paired(name)));
            }
        }
        for k in &s.required {
            if !map.contains_key(k) {
                let name = format!("{path}.{k}");
                res.add(failure(
                    Code::Required,
                    &name,
                    EVal::Nil,
                    format!("{name} in {IN} is required"),
                ));
            }
        }
        for (key, value) in map {
            if s.properties.contains_key(key) {
                continue;
            }
            for sch in pattern_matches(key) {
                res.merge(self.validate(sch, &fieldpath::member(path, key), value));
            }
        }
        res
    }
}

/// The format the validator uses: a `type: string` schema loses formats CRDs do not support.
pub fn effective_format(s: &Schema) -> &str {
    let types = s.types();
    if types == ["string"] && !formats::supported(&s.format) {
        ""
    } else {
        &s.format
    }
}

/// Go's reflect-based enum comparison: the value converted to the enum entry's type.
fn enum_matches(data: &Val, e: &Val) -> bool {
    match (data, e) {
        (Val::Null, _) | (_, Val::Null) => false,
        (Val::Int(i), Val::Int(j)) => i == j,
        (Val::Int(i), Val::Float(f)) => (*i as f64) == *f,
        (Val::Int(i), Val::Str(s)) => {
            let c = u32::try_from(*i)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{fffd}');
            s.chars().count() == 1 && s.starts_with(c)
        }
        (Val::Float(f), Val::Int(j)) => go_f64_to_i64(*f) == *j,
        (Val::Float(f), Val::Float(g)) => f == g,
        (a, b) => a == b,
    }
}

/// kube-openapi's check that a number (the value or a bound) fits the schema's numeric
/// type and format. Go prints the float with `%g`-style shortest digits first.
fn range_capacity(
    v: &EVal,
    type_name: &str,
    format: &str,
    prefix: &str,
    path: &str,
) -> Option<Problem> {
    let rep = match v {
        EVal::Int(i) => i.to_string(),
        EVal::Float(f) => go_float(*f),
        _ => {
            return Some(Problem::Message(format!(
                "{prefix} value number range checking called with invalid (non numeric) val type in {path}"
            )));
        }
    };
    let ok = match type_name {
        "integer" => match format {
            "int32" => rep.parse::<i32>().is_ok(),
            "uint32" => rep.parse::<u32>().is_ok(),
            "uint64" => rep.parse::<u64>().is_ok(),
            _ => rep.parse::<i64>().is_ok(),
        },
        _ => match format {
            "float" | "float32" => rep
                .parse::<f64>()
                .is_ok_and(|f| f.is_finite() && (f as f32).is_finite()),
            _ => true,
        },
    };
    if ok {
        return None;
    }
    Some(Problem::Message(if format.is_empty() {
        format!("{prefix} value must be of type {type_name} (default format) in {path}")
    } else {
        format!("{prefix} value must be of type {type_name} with format {format} in {path}")
    }))
}

fn bound_message(path: &str, limit: &str, exclusive: bool, upper: bool) -> String {
    let rel = match (upper, exclusive) {
        (true, false) => "less than or equal to",
        (true, true) => "less than",
        (false, false) => "greater than or equal to",
        (false, true) => "greater than",
    };
    format!("{path} in {IN} should be {rel} {limit}")
}

/// `minItems` and `minProperties`: `n` of `what` where at least `min` are wanted.
fn too_few(code: Code, path: &str, n: i64, min: Option<i64>, what: &str) -> Option<Problem> {
    let min = min.filter(|&min| n < min)?;
    Some(failure(
        code,
        path,
        EVal::Int(n),
        format!("{path} in {IN} should have at least {min} {what}"),
    ))
}

/// `maxItems` and `maxProperties`: `n` of `what` where at most `max` are allowed; the
/// failure carries `max` as its valid count.
fn too_many(code: Code, path: &str, n: i64, max: Option<i64>, what: &str) -> Option<Problem> {
    let max = max.filter(|&max| n > max)?;
    let mut p = failure(
        code,
        path,
        EVal::Int(n),
        format!("{path} in {IN} should have at most {max} {what}"),
    );
    if let Problem::Failure(f) = &mut p {
        f.valid = Some(max);
    }
    Some(p)
}

/// One numeric limit (`multipleOf`, `minimum`, `maximum`): a limit the value's type
/// cannot hold is reported (`overflow`), and kube-openapi then still compares the value
/// as a float64; a limit it can hold is compared in the value's own type.
fn limit_check(
    overflow: Option<Problem>,
    in_float: impl FnOnce() -> Option<Problem>,
    native: impl FnOnce() -> Option<Problem>,
) -> Outcome {
    let mut out = Outcome::default();
    if let Some(e) = overflow {
        out.add(e);
        if let Some(e) = in_float() {
            out.add(e);
        }
    } else if let Some(e) = native() {
        out.add(e);
    }
    out
}

fn bound_float(
    path: &str,
    v: f64,
    limit: f64,
    exclusive: bool,
    upper: bool,
    data: &Val,
) -> Option<Problem> {
    let fails = if upper {
        (!exclusive && v > limit) || (exclusive && v >= limit)
    } else {
        (!exclusive && v < limit) || (exclusive && v <= limit)
    };
    fails.then(|| {
        failure(
            if upper { Code::Max } else { Code::Min },
            path,
            EVal::of(data),
            bound_message(path, &go_float(limit), exclusive, upper),
        )
    })
}

fn bound_native(
    path: &str,
    data: &Val,
    limit: f64,
    exclusive: bool,
    upper: bool,
) -> Option<Problem> {
    match data {
        Val::Int(i) => {
            let l = go_f64_to_i64(limit);
            let fails = if upper {
                (!exclusive && *i > l) || (exclusive && *i >= l)
            } else {
                (!exclusive && *i < l) || (exclusive && *i <= l)
            };
            fails.then(|| {
                failure(
                    if upper { Code::Max } else { Code::Min },
                    path,
                    EVal::Int(*i),
                    bound_message(path, &l.to_string(), exclusive, upper),
                )
            })
        }
        _ => bound_float(path, data.as_f64(), limit, exclusive, upper, data),
    }
}

fn multiple_of_float(path: &str, v: f64, factor: f64, data: &Val) -> Option<Problem> {
    if factor < 0.0 {
        return Some(failure(
            Code::MultipleOfMustBePositive,
            path,
            EVal::Float(factor),
            format!(
                "factor MultipleOf declared for {path} must be positive: {}",
                go_float(factor)
            ),
        ));
    }
    let mult = if factor < 1.0 {
        1.0 / factor * v
    } else {
        v / factor
    };
    if is_json_integer(mult) {
        return None;
    }
    Some(failure(
        Code::MultipleOf,
        path,
        EVal::of(data),
        format!(
            "{path} in {IN} should be a multiple of {}",
            go_float(factor)
        ),
    ))
}

fn multiple_of_native(path: &str, data: &Val, factor: f64) -> Option<Problem> {
    match data {
        Val::Int(i) => {
            let fac = go_f64_to_i64(factor);
            if fac < 0 {
                return Some(failure(
                    Code::MultipleOfMustBePositive,
                    path,
                    EVal::Int(fac),
                    format!("factor MultipleOf declared for {path} must be positive: {fac}"),
                ));
            }
            if fac == 0 {
                return None;
            }
            let m = i.wrapping_div(fac);
            if m.wrapping_mul(fac) != *i {
                return Some(failure(
                    Code::MultipleOf,
                    path,
                    EVal::Int(*i),
                    format!("{path} in {IN} should be a multiple of {fac}"),
                ));
            }
            None
        }
        _ => multiple_of_float(path, data.as_f64(), factor, data),
    }
}
