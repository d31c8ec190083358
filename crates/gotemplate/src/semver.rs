//! Semantic versions and constraints with Masterminds/semver v3 rules (what Sprig's
//! `semver` and `semverCompare` use): a lenient version syntax (`v1.2`, `1`), `x`/`*`
//! wildcards, `~`/`^` ranges, `a - b` ranges, `,`/space for "and", `||` for "or", and
//! prereleases matched only by constraints that mention one.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::fmt;
use std::rc::Rc;
use std::sync::LazyLock;

use regex::Regex;
use topograph_gocompat::strconv::quote;

use crate::funcs::{FuncDef, Param, Table, def};
use crate::value::Value;

/// A parsed version (`*semver.Version`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: String,
    pub metadata: String,
    pub original: String,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

const SPACE: &str = r"[\t\n\x0C\r ]";
const CV: &str = r"v?([0-9|xX*]+)(\.[0-9|xX*]+)?(\.[0-9|xX*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
const OPS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";

struct Patterns {
    loose: Regex,
    constraint: Regex,
    range: Regex,
    find: Regex,
    valid: Regex,
}

static PATTERNS: LazyLock<Option<Patterns>> = LazyLock::new(|| {
    let s = SPACE;
    Some(Patterns {
        loose: Regex::new(
            r"^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?$",
        )
        .ok()?,
        constraint: Regex::new(&format!(r"^{s}*({OPS}){s}*({CV}){s}*$")).ok()?,
        range: Regex::new(&format!(r"{s}*({CV}){s}+-{s}+({CV}){s}*")).ok()?,
        find: Regex::new(&format!(r"({OPS}){s}*({CV})")).ok()?,
        valid: Regex::new(&format!(
            r"^({s}*({OPS}){s}*({CV}){s}*)((?:{s}+|,{s}*)({OPS}){s}*({CV}){s}*)*$"
        ))
        .ok()?,
    })
});

fn patterns() -> Result<&'static Patterns, String> {
    PATTERNS
        .as_ref()
        .ok_or_else(|| "semver patterns failed to compile".to_string())
}

fn all_digits(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

fn validate_prerelease(p: &str) -> Result<(), String> {
    for part in p.split('.') {
        if part.is_empty() {
            return Err("invalid prerelease string".into());
        } else if all_digits(part) {
            if part.len() > 1 && part.starts_with('0') {
                return Err("version segment starts with 0".into());
            }
        } else if !part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err("invalid prerelease string".into());
        }
    }
    Ok(())
}

fn parse_segment(s: &str) -> Result<u64, String> {
    s.parse::<u64>().map_err(|_| {
        format!(
            "error parsing version segment: strconv.ParseUint: parsing {}: value out of range",
            quote(s)
        )
    })
}

/// `semver.NewVersion` (coercing mode).
pub(crate) fn parse_version(v: &str) -> Result<Version, String> {
    let p = patterns()?;
    let m = p
        .loose
        .captures(v)
        .ok_or_else(|| "invalid semantic version".to_string())?;
    let group = |i: usize| m.get(i).map_or("", |g| g.as_str());
    let mut out = Version {
        major: parse_segment(group(1))?,
        minor: 0,
        patch: 0,
        pre: group(5).to_string(),
        metadata: group(8).to_string(),
        original: v.to_string(),
    };
    if !group(2).is_empty() {
        out.minor = parse_segment(group(2).trim_start_matches('.'))?;
    }
    if !group(3).is_empty() {
        out.patch = parse_segment(group(3).trim_start_matches('.'))?;
    }
    if !out.pre.is_empty() {
        validate_prerelease(&out.pre)?;
    }
    Ok(out)
}

fn compare_pre_part(s: &str, o: &str) -> Ordering {
    if s == o {
        return Ordering::Equal;
    }
    if s.is_empty() {
        return Ordering::Less;
    }
    if o.is_empty() {
        return Ordering::Greater;
    }
    match (s.parse::<u64>(), o.parse::<u64>()) {
        (Err(_), Err(_)) => {
            if s > o {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Ok(a), Ok(b)) => {
            if a > b {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
    }
}

fn compare_prerelease(v: &str, o: &str) -> Ordering {
    let sp: Vec<&str> = v.split('.').collect();
    let op: Vec<&str> = o.split('.').collect();
    for i in 0..sp.len().max(op.len()) {
        let d = compare_pre_part(
            sp.get(i).copied().unwrap_or(""),
            op.get(i).copied().unwrap_or(""),
        );
        if d != Ordering::Equal {
            return d;
        }
    }
    Ordering::Equal
}

impl Version {
    pub(crate) fn compare(&self, o: &Version) -> Ordering {
        let c = (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch));
        if c != Ordering::Equal {
            return c;
        }
        match (self.pre.is_empty(), o.pre.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => compare_prerelease(&self.pre, &o.pre),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    TildeOrEqual,
    NotEqual,
    Greater,
    Less,
    GreaterEqual,
    LessEqual,
    Tilde,
    Caret,
}

struct Constraint {
    con: Version,
    op: Op,
    minor_dirty: bool,
    patch_dirty: bool,
    dirty: bool,
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "*" | "X")
}

fn parse_constraint(c: &str) -> Result<Constraint, String> {
    let p = patterns()?;
    let m = p
        .constraint
        .captures(c)
        .ok_or_else(|| format!("improper constraint: {c}"))?;
    let g = |i: usize| m.get(i).map_or("", |x| x.as_str());
    let op = match g(1) {
        "" | "=" => Op::TildeOrEqual,
        "!=" => Op::NotEqual,
        ">" => Op::Greater,
        "<" => Op::Less,
        ">=" | "=>" => Op::GreaterEqual,
        "<=" | "=<" => Op::LessEqual,
        "~" | "~>" => Op::Tilde,
        _ => Op::Caret,
    };
    let (mut minor_dirty, mut patch_dirty, mut dirty) = (false, false, false);
    let ver = if is_x(g(3)) || g(3).is_empty() {
        dirty = true;
        format!("0.0.0{}", g(6))
    } else if is_x(g(4).trim_start_matches('.')) || g(4).is_empty() {
        minor_dirty = true;
        dirty = true;
        format!("{}.0.0{}", g(3), g(6))
    } else if is_x(g(5).trim_start_matches('.')) || g(5).is_empty() {
        dirty = true;
        patch_dirty = true;
        format!("{}{}.0{}", g(3), g(4), g(6))
    } else {
        g(2).to_string()
    };
    let con = parse_version(&ver).map_err(|_| "constraint parser error".to_string())?;
    Ok(Constraint {
        con,
        op,
        minor_dirty,
        patch_dirty,
        dirty,
    })
}

impl Constraint {
    fn tilde(&self, v: &Version) -> bool {
        if v.compare(&self.con) == Ordering::Less {
            return false;
        }
        let c = &self.con;
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        if v.major != c.major {
            return false;
        }
        v.minor == c.minor || self.minor_dirty
    }

    fn check(&self, v: &Version, include_pre: bool) -> bool {
        if !v.pre.is_empty() && !include_pre {
            return false;
        }
        let c = &self.con;
        match self.op {
            Op::NotEqual => {
                if self.dirty {
                    if c.major != v.major {
                        return true;
                    }
                    if c.minor != v.minor && !self.minor_dirty {
                        return true;
                    } else if self.minor_dirty {
                        return false;
                    } else if c.patch != v.patch && !self.patch_dirty {
                        return true;
                    } else if self.patch_dirty {
                        if !v.pre.is_empty() || !c.pre.is_empty() {
                            return compare_prerelease(&v.pre, &c.pre) != Ordering::Equal;
                        }
                        return false;
                    }
                }
                v.compare(c) != Ordering::Equal
            }
            Op::Greater => {
                if !self.dirty {
                    return v.compare(c) == Ordering::Greater;
                }
                if v.major > c.major {
                    true
                } else if v.major < c.major || self.minor_dirty {
                    false
                } else if self.patch_dirty {
                    v.minor > c.minor
                } else {
                    v.compare(c) == Ordering::Greater
                }
            }
            Op::Less => v.compare(c) == Ordering::Less,
            Op::GreaterEqual => v.compare(c) != Ordering::Less,
            Op::LessEqual => {
                if !self.dirty {
                    return v.compare(c) != Ordering::Greater;
                }
                !(v.major > c.major
                    || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
            }
            Op::Tilde => self.tilde(v),
            Op::TildeOrEqual => {
                if self.dirty {
                    return self.tilde(v);
                }
                v.compare(c) == Ordering::Equal
            }
            Op::Caret => {
                if v.compare(c) == Ordering::Less {
                    return false;
                }
                if c.major > 0 || self.minor_dirty {
                    return v.major == c.major;
                }
                if c.major == 0 && v.major > 0 {
                    return false;
                }
                if c.minor > 0 || self.patch_dirty {
                    return v.minor == c.minor;
                }
                if c.minor == 0 && v.minor > 0 {
                    return false;
                }
                c.patch == v.patch
            }
        }
    }
}

/// A parsed constraint set: OR of ANDs.
pub(crate) struct Constraints {
    groups: Vec<(Vec<Constraint>, bool)>,
}

fn rewrite_range(s: &str, p: &Patterns) -> String {
    let mut out = s.to_string();
    for m in p.range.captures_iter(s) {
        let whole = m.get(0).map_or("", |x| x.as_str());
        let a = m.get(1).map_or("", |x| x.as_str());
        let b = m.get(11).map_or("", |x| x.as_str());
        out = out.replacen(whole, &format!(">= {a}, <= {b} "), 1);
    }
    out
}

/// `semver.NewConstraint`.
pub(crate) fn parse_constraints(c: &str) -> Result<Constraints, String> {
    let p = patterns()?;
    let c = rewrite_range(c, p);
    let mut groups = Vec::new();
    for part in c.split("||") {
        if !p.valid.is_match(part) {
            return Err(format!("improper constraint: {part}"));
        }
        let mut cs = Vec::new();
        let mut has_pre = false;
        for m in p.find.find_iter(part) {
            let pc = parse_constraint(m.as_str())?;
            has_pre |= !pc.con.pre.is_empty();
            cs.push(pc);
        }
        groups.push((cs, has_pre));
    }
    Ok(Constraints { groups })
}

/// How many constraint texts, and how many version texts, a thread remembers parsed.
const REMEMBERED: usize = 16;
/// Longer texts are parsed each time rather than remembered.
const REMEMBERED_LEN: usize = 128;

thread_local! {
    /// Constraints and versions parsed lately on this thread. Patch templates compare
    /// the same few texts (`semverCompare ">=1.29.0" .builtin.controlPlane.version`)
    /// for every patch and item, and parsing them (regular expressions) costs more
    /// than the rest of such a template.
    static CONSTRAINTS: RefCell<Recent<Result<Rc<Constraints>, String>>> =
        const { RefCell::new(Recent::new()) };
    static VERSIONS: RefCell<Recent<Result<Rc<Version>, String>>> =
        const { RefCell::new(Recent::new()) };
}

/// A few parse results by text; the oldest makes way when full.
struct Recent<T> {
    entries: Vec<(Box<str>, T)>,
    oldest: usize,
}

impl<T: Clone> Recent<T> {
    const fn new() -> Self {
        Recent {
            entries: Vec::new(),
            oldest: 0,
        }
    }

    fn get_or_parse(&mut self, text: &str, parse: impl FnOnce(&str) -> T) -> T {
        if let Some((_, parsed)) = self.entries.iter().find(|(t, _)| **t == *text) {
            return parsed.clone();
        }
        let parsed = parse(text);
        if text.len() <= REMEMBERED_LEN {
            let entry = (Box::from(text), parsed.clone());
            if self.entries.len() < REMEMBERED {
                self.entries.push(entry);
            } else if let Some(slot) = self.entries.get_mut(self.oldest) {
                *slot = entry;
                self.oldest = (self.oldest + 1) % REMEMBERED;
            }
        }
        parsed
    }
}

/// [`parse_constraints`], remembered per thread (parsing is deterministic).
pub(crate) fn recent_constraints(c: &str) -> Result<Rc<Constraints>, String> {
    let parse = |c: &str| parse_constraints(c).map(Rc::new);
    CONSTRAINTS.with(|recent| match recent.try_borrow_mut() {
        Ok(mut recent) => recent.get_or_parse(c, parse),
        Err(_) => parse(c),
    })
}

/// [`parse_version`], remembered per thread (parsing is deterministic).
pub(crate) fn recent_version(v: &str) -> Result<Rc<Version>, String> {
    let parse = |v: &str| parse_version(v).map(Rc::new);
    VERSIONS.with(|recent| match recent.try_borrow_mut() {
        Ok(mut recent) => recent.get_or_parse(v, parse),
        Err(_) => parse(v),
    })
}

impl Constraints {
    pub(crate) fn check(&self, v: &Version) -> bool {
        self.groups
            .iter()
            .any(|(cs, pre)| cs.iter().all(|c| c.check(v, *pre)))
    }
}

fn ver(v: &Value) -> Option<&Version> {
    match v {
        Value::Version(v) => Some(v),
        _ => None,
    }
}

fn two(a: &[Value]) -> Result<(&Version, &Version), String> {
    match (a.first().and_then(ver), a.get(1).and_then(ver)) {
        (Some(x), Some(y)) => Ok((x, y)),
        _ => Err("runtime error: invalid memory address or nil pointer dereference".into()),
    }
}

fn bumped(v: &Version, f: impl FnOnce(&mut Version)) -> Value {
    let mut n = v.clone();
    f(&mut n);
    let prefix = if v.original.starts_with('v') { "v" } else { "" };
    n.original = format!("{prefix}{n}");
    Value::Version(std::rc::Rc::new(n))
}

static METHODS: LazyLock<Table> = LazyLock::new(|| {
    use Param::Version as V;
    let mut t = Table::new();
    def(&mut t, "String", &[], None, |_, a| {
        Ok(Value::str(
            a.first()
                .and_then(ver)
                .map(|v| v.to_string())
                .unwrap_or_default(),
        ))
    });
    def(&mut t, "Original", &[], None, |_, a| {
        Ok(Value::str(
            a.first()
                .and_then(ver)
                .map(|v| v.original.clone())
                .unwrap_or_default(),
        ))
    });
    def(&mut t, "Major", &[], None, |_, a| {
        Ok(Value::Uint64(
            a.first().and_then(ver).map_or(0, |v| v.major),
        ))
    });
    def(&mut t, "Minor", &[], None, |_, a| {
        Ok(Value::Uint64(
            a.first().and_then(ver).map_or(0, |v| v.minor),
        ))
    });
    def(&mut t, "Patch", &[], None, |_, a| {
        Ok(Value::Uint64(
            a.first().and_then(ver).map_or(0, |v| v.patch),
        ))
    });
    def(&mut t, "Prerelease", &[], None, |_, a| {
        Ok(Value::str(
            a.first()
                .and_then(ver)
                .map(|v| v.pre.clone())
                .unwrap_or_default(),
        ))
    });
    def(&mut t, "Metadata", &[], None, |_, a| {
        Ok(Value::str(
            a.first()
                .and_then(ver)
                .map(|v| v.metadata.clone())
                .unwrap_or_default(),
        ))
    });
    def(&mut t, "LessThan", &[V], None, |_, a| {
        let (x, y) = two(a)?;
        Ok(Value::Bool(x.compare(y) == Ordering::Less))
    });
    def(&mut t, "LessThanEqual", &[V], None, |_, a| {
        let (x, y) = two(a)?;
        Ok(Value::Bool(x.compare(y) != Ordering::Greater))
    });
    def(&mut t, "GreaterThan", &[V], None, |_, a| {
        let (x, y) = two(a)?;
        Ok(Value::Bool(x.compare(y) == Ordering::Greater))
    });
    def(&mut t, "GreaterThanEqual", &[V], None, |_, a| {
        let (x, y) = two(a)?;
        Ok(Value::Bool(x.compare(y) != Ordering::Less))
    });
    def(&mut t, "Equal", &[V], None, |_, a| {
        let (x, y) = two(a)?;
        Ok(Value::Bool(x.compare(y) == Ordering::Equal))
    });
    def(&mut t, "Compare", &[V], None, |_, a| {
        let (x, y) = two(a)?;
        Ok(Value::Int(x.compare(y) as i64))
    });
    def(&mut t, "IncPatch", &[], None, |_, a| {
        let v = a.first().and_then(ver).ok_or("nil version")?;
        Ok(bumped(v, |n| {
            if n.pre.is_empty() {
                n.patch = n.patch.wrapping_add(1);
            }
            n.pre.clear();
            n.metadata.clear();
        }))
    });
    def(&mut t, "IncMinor", &[], None, |_, a| {
        let v = a.first().and_then(ver).ok_or("nil version")?;
        Ok(bumped(v, |n| {
            n.minor = n.minor.wrapping_add(1);
            n.patch = 0;
            n.pre.clear();
            n.metadata.clear();
        }))
    });
    def(&mut t, "IncMajor", &[], None, |_, a| {
        let v = a.first().and_then(ver).ok_or("nil version")?;
        Ok(bumped(v, |n| {
            n.major = n.major.wrapping_add(1);
            n.minor = 0;
            n.patch = 0;
            n.pre.clear();
            n.metadata.clear();
        }))
    });
    t
});

/// A method of `*semver.Version` by name (`(semver .v).Minor`).
pub(crate) fn method(name: &str) -> Option<&'static FuncDef> {
    METHODS.get(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(c: &str, v: &str) -> bool {
        match (parse_constraints(c), parse_version(v)) {
            (Ok(c), Ok(v)) => c.check(&v),
            _ => false,
        }
    }

    #[test]
    fn versions_parse_leniently() {
        assert_eq!(
            parse_version("v1.2").map(|v| v.to_string()),
            Ok("1.2.0".into())
        );
        assert!(parse_version("1.2.3-01").is_err());
        assert!(parse_version("nope").is_err());
    }

    #[test]
    fn constraints_follow_masterminds() {
        assert!(check(">=1.28.0", "v1.29.3"));
        assert!(!check(">=1.28.0", "v1.29.3-rc.1"));
        assert!(check(">=1.28.0-0", "v1.29.3-rc.1"));
        assert!(check("~1.2", "1.2.9"));
        assert!(!check("~1.2", "1.3.0"));
        assert!(check("^1.2", "1.9.0"));
        assert!(check("1.2.x", "1.2.7"));
        assert!(check(">= 1.2, < 3.0.0 || >= 4.2.3", "4.5.0"));
        assert!(!check(">= 1.2, < 3.0.0 || >= 4.2.3", "3.5.0"));
        assert!(check("1.1 - 1.3", "1.2.5"));
        assert!(parse_constraints("not a constraint").is_err());
    }

    #[test]
    fn remembered_parses_agree_with_fresh_ones() {
        let v = |s: &str| recent_version(s).map(|v| v.to_string());
        let c = |s: &str, x: &str| {
            recent_constraints(s).map(|c| parse_version(x).is_ok_and(|x| c.check(&x)))
        };
        let fresh = |s: &str, x: &str| {
            parse_constraints(s).map(|c| parse_version(x).is_ok_and(|x| c.check(&x)))
        };
        // More texts than are remembered, twice over, so entries are also replaced.
        for round in 0..2 {
            for i in 0..(REMEMBERED as u64 + 5) {
                let text = format!("1.{i}.{round}");
                assert_eq!(v(&text), parse_version(&text).map(|v| v.to_string()));
                let constraint = format!(">= {text}");
                assert_eq!(c(&constraint, "1.3.0"), fresh(&constraint, "1.3.0"));
            }
            assert_eq!(v("nope"), Err("invalid semantic version".to_string()));
            assert_eq!(
                c("not a constraint", "1.0.0"),
                Err("improper constraint: not a constraint".to_string())
            );
        }
    }
}
