//! Kubernetes versions as the upgrade logic compares them: blang/semver's tolerant
//! parser (`v` prefix, missing minor or patch, leading zeros) and Cluster API's
//! comparison "with build tags", where build metadata that cannot be ordered (`+abc`
//! against `+def`) makes two versions *different* rather than equal.

use std::cmp::Ordering;
use std::fmt;

/// One pre-release identifier.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Pre {
    Number(u64),
    Text(String),
}

impl Pre {
    fn cmp(&self, other: &Pre) -> Ordering {
        match (self, other) {
            (Pre::Number(a), Pre::Number(b)) => a.cmp(b),
            (Pre::Number(_), Pre::Text(_)) => Ordering::Less,
            (Pre::Text(_), Pre::Number(_)) => Ordering::Greater,
            (Pre::Text(a), Pre::Text(b)) => a.cmp(b),
        }
    }
}

impl fmt::Display for Pre {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pre::Number(n) => write!(f, "{n}"),
            Pre::Text(t) => f.write_str(t),
        }
    }
}

/// A parsed semantic version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    /// Major.
    pub major: u64,
    /// Minor.
    pub minor: u64,
    /// Patch.
    pub patch: u64,
    pre: Vec<Pre>,
    build: Vec<String>,
}

/// How two versions relate when build metadata counts (Cluster API's
/// `version.Compare(a, b, version.WithBuildTags())`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Lower.
    Less,
    /// The same version, build metadata included.
    Equal,
    /// Higher.
    Greater,
    /// Same version but build metadata that cannot be ordered (Go's `2`).
    Different,
}

impl Order {
    /// Go's `>= 1`: greater, or not orderable against.
    pub fn greater_or_different(self) -> bool {
        matches!(self, Order::Greater | Order::Different)
    }
}

fn only_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn identifier_chars(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn number(text: &str, what: &str) -> Result<u64, String> {
    if !only_digits(text) {
        return Err(format!(
            "Invalid character(s) found in {what} number {text:?}"
        ));
    }
    if text.len() > 1 && text.starts_with('0') {
        let what = capitalized(what);
        return Err(format!(
            "{what} number must not contain leading zeroes {text:?}"
        ));
    }
    text.parse::<u64>().map_err(|e| e.to_string())
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

impl Version {
    /// blang/semver's `ParseTolerant`: surrounding spaces, a `v` prefix, leading zeros
    /// and a missing minor or patch are accepted. Errors are blang's texts.
    pub fn parse_tolerant(text: &str) -> Result<Version, String> {
        let text = text.trim();
        let text = text.strip_prefix('v').unwrap_or(text);
        let mut parts: Vec<String> = text.splitn(3, '.').map(str::to_string).collect();
        for part in &mut parts {
            if part.len() > 1 {
                let trimmed = part.trim_start_matches('0');
                *part = if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                    trimmed.to_string()
                } else {
                    format!("0{trimmed}")
                };
            }
        }
        if parts.len() < 3 {
            if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
                return Err("Short version cannot contain PreRelease/Build meta data".into());
            }
            parts.resize(3, "0".into());
        }
        Version::parse(&parts.join("."))
    }

    /// blang/semver's strict `Parse`.
    fn parse(text: &str) -> Result<Version, String> {
        if text.is_empty() {
            return Err("Version string empty".into());
        }
        let parts: Vec<&str> = text.splitn(3, '.').collect();
        let [major, minor, rest] = parts.as_slice() else {
            return Err("No Major.Minor.Patch elements found".into());
        };
        let major = number(major, "major")?;
        let minor = number(minor, "minor")?;
        let (rest, build) = match rest.split_once('+') {
            Some((rest, build)) => (rest, Some(build)),
            None => (*rest, None),
        };
        let (patch, pre) = match rest.split_once('-') {
            Some((patch, pre)) => (patch, Some(pre)),
            None => (rest, None),
        };
        let patch = number(patch, "patch")?;
        let mut version = Version {
            major,
            minor,
            patch,
            pre: Vec::new(),
            build: Vec::new(),
        };
        if let Some(pre) = pre {
            for id in pre.split('.') {
                if id.is_empty() {
                    return Err("Prerelease is empty".into());
                }
                if only_digits(id) {
                    if id.len() > 1 && id.starts_with('0') {
                        return Err(format!(
                            "Numeric PreRelease version must not contain leading zeroes {id:?}"
                        ));
                    }
                    let n = id.parse::<u64>().map_err(|e| e.to_string())?;
                    version.pre.push(Pre::Number(n));
                } else if identifier_chars(id) {
                    version.pre.push(Pre::Text(id.to_string()));
                } else {
                    return Err(format!("Invalid character(s) found in prerelease {id:?}"));
                }
            }
        }
        if let Some(build) = build {
            for id in build.split('.') {
                if id.is_empty() {
                    return Err(format!("Build meta data can not be empty {id:?}"));
                }
                if !identifier_chars(id) {
                    return Err(format!(
                        "Invalid character(s) found in build meta data {id:?}"
                    ));
                }
                version.build.push(id.to_string());
            }
        }
        Ok(version)
    }

    /// Semantic-version precedence: build metadata ignored.
    pub fn precedence(&self, other: &Version) -> Ordering {
        let core =
            (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        if core != Ordering::Equal {
            return core;
        }
        match (self.pre.is_empty(), other.pre.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => {
                for (a, b) in self.pre.iter().zip(&other.pre) {
                    let c = a.cmp(b);
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                self.pre.len().cmp(&other.pre.len())
            }
        }
    }

    /// Cluster API's comparison with build tags: precedence first, then build
    /// identifiers left to right (numbers numerically and below words; two different
    /// words cannot be ordered), the longer list winning a tie.
    pub fn compare(&self, other: &Version) -> Order {
        match self.precedence(other) {
            Ordering::Less => return Order::Less,
            Ordering::Greater => return Order::Greater,
            Ordering::Equal => {}
        }
        for (a, b) in self.build.iter().zip(&other.build) {
            let order = match (only_digits(a), only_digits(b)) {
                (true, true) => {
                    // Digits only, so the parse fails on overflow alone; compare the
                    // texts by length then lexically, which orders any size.
                    let (a, b) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
                    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
                }
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                (false, false) if a == b => Ordering::Equal,
                (false, false) => return Order::Different,
            };
            match order {
                Ordering::Less => return Order::Less,
                Ordering::Greater => return Order::Greater,
                Ordering::Equal => {}
            }
        }
        match self.build.len().cmp(&other.build.len()) {
            Ordering::Less => Order::Less,
            Ordering::Equal => Order::Equal,
            Ordering::Greater => Order::Greater,
        }
    }

    /// The version with a `v` prefix, as Cluster API prints a parsed version
    /// (`fmt.Sprintf("v%s", v)`).
    pub fn tagged(&self) -> String {
        format!("v{self}")
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            let pre: Vec<String> = self.pre.iter().map(ToString::to_string).collect();
            write!(f, "-{}", pre.join("."))?;
        }
        if !self.build.is_empty() {
            write!(f, "+{}", self.build.join("."))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse_tolerant(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn tolerant_parsing() {
        // (input, printed)
        for (input, printed) in [
            ("v1.30.1", "1.30.1"),
            ("1.30", "1.30.0"),
            (" v1.030.01 ", "1.30.1"),
            ("v1.31.1+foo.2-bar.1", "1.31.1+foo.2-bar.1"),
            ("v1.30.1-rc.1+build.5", "1.30.1-rc.1+build.5"),
        ] {
            assert_eq!(v(input).to_string(), printed, "{input}");
        }
        // (input, error)
        for (input, error) in [
            ("foo", "Invalid character(s) found in major number \"0foo\""),
            (
                "v1.2-rc",
                "Short version cannot contain PreRelease/Build meta data",
            ),
            ("v1.2.3-", "Prerelease is empty"),
            (
                "v1.2.3-01",
                "Numeric PreRelease version must not contain leading zeroes \"01\"",
            ),
            ("v1.2.3+", "Build meta data can not be empty \"\""),
            ("v1.2.x", "Invalid character(s) found in patch number \"x\""),
        ] {
            assert_eq!(
                Version::parse_tolerant(input),
                Err(error.to_string()),
                "{input}"
            );
        }
    }

    #[test]
    fn comparison_with_build_tags() {
        // (a, b, a compared to b)
        for (a, b, want) in [
            ("v1.30.0", "v1.30.0", Order::Equal),
            ("v1.30.0", "v1.31.0", Order::Less),
            ("v1.31.0", "v1.30.9", Order::Greater),
            ("v1.30.0-rc.1", "v1.30.0", Order::Less),
            ("v1.30.0-alpha.1", "v1.30.0-alpha.0", Order::Greater),
            ("v1.30.0-alpha", "v1.30.0-1", Order::Greater),
            ("v1.30.0+1", "v1.30.0+2", Order::Less),
            ("v1.30.0+10", "v1.30.0+9", Order::Greater),
            ("v1.30.0+a", "v1.30.0+1", Order::Greater),
            ("v1.30.0+a", "v1.30.0+b", Order::Different),
            ("v1.30.0+a.1", "v1.30.0+a", Order::Greater),
            ("v1.30.0", "v1.30.0+a", Order::Less),
            (
                "v1.31.1+foo.1-bar.1",
                "v1.31.1+foo.2-bar.1",
                Order::Different,
            ),
        ] {
            assert_eq!(v(a).compare(&v(b)), want, "{a} vs {b}");
        }
    }
}
