//! The JSONPath of a CRD's `additionalPrinterColumns`, read and evaluated as
//! client-go's `util/jsonpath` does for kube-apiserver's custom resource tables (with
//! missing keys allowed): fields (`.a.b`, `['a.b']`, `\.` inside a name), array
//! indices (negative from the end), `*` wildcards and filters
//! (`[?(@.type=="Ready")]`, `[?(@.x)]`). Ranges, unions and recursive descent are not
//! read: a column using them is unrecognized, which kube-apiserver reports for syntax
//! it cannot read.

use serde_json::Value;
use std::cmp::Ordering;

/// A parsed path.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Index(i64),
    Wildcard,
    Filter {
        left: Vec<Step>,
        test: Option<(Op, Value)>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl JsonPath {
    /// Reads a path such as `.status.conditions[?(@.type=="Ready")].status`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut parser = Parser {
            chars: text.chars().collect(),
            at: 0,
        };
        let steps = parser.steps(false)?;
        if parser.at < parser.chars.len() {
            return Err(format!("unrecognized character in {text:?}"));
        }
        Ok(JsonPath { steps })
    }

    /// Every value the path reaches, in document order; none when a key is missing.
    pub fn find<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        walk(&self.steps, vec![root])
    }
}

fn walk<'a>(steps: &[Step], mut current: Vec<&'a Value>) -> Vec<&'a Value> {
    for step in steps {
        let mut next = Vec::new();
        for value in current {
            match (step, value) {
                (Step::Field(name), Value::Object(map)) => next.extend(map.get(name)),
                (Step::Index(i), Value::Array(items)) => {
                    let len = items.len() as i64;
                    let i = if *i < 0 { len + i } else { *i };
                    if (0..len).contains(&i) {
                        next.extend(items.get(i as usize));
                    }
                }
                (Step::Wildcard, Value::Array(items)) => next.extend(items.iter()),
                // Go ranges over a map's keys; sorted here so a column is stable.
                (Step::Wildcard, Value::Object(map)) => {
                    let mut keys: Vec<&String> = map.keys().collect();
                    keys.sort();
                    next.extend(keys.into_iter().filter_map(|k| map.get(k)));
                }
                (Step::Filter { left, test }, Value::Array(items)) => {
                    next.extend(items.iter().filter(|item| {
                        let found = walk(left, vec![item]);
                        match test {
                            None => !found.is_empty(),
                            Some((op, right)) => found.iter().any(|l| compare(l, *op, right)),
                        }
                    }))
                }
                _ => {}
            }
        }
        current = next;
    }
    current
}

fn compare(left: &Value, op: Op, right: &Value) -> bool {
    let order = match (left, right) {
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        (Value::Number(a), Value::Number(b)) => a
            .as_f64()
            .zip(b.as_f64())
            .and_then(|(a, b)| a.partial_cmp(&b)),
        (Value::Bool(a), Value::Bool(b)) if matches!(op, Op::Eq | Op::Ne) => Some(a.cmp(b)),
        _ => None,
    };
    match (order, op) {
        (Some(o), Op::Eq) => o == Ordering::Equal,
        (Some(o), Op::Ne) => o != Ordering::Equal,
        (Some(o), Op::Lt) => o == Ordering::Less,
        (Some(o), Op::Le) => o != Ordering::Greater,
        (Some(o), Op::Gt) => o == Ordering::Greater,
        (Some(o), Op::Ge) => o != Ordering::Less,
        (None, _) => false,
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn eat(&mut self, s: &str) -> bool {
        let n = s.chars().count();
        let matches = self
            .chars
            .get(self.at..self.at + n)
            .is_some_and(|w| w.iter().copied().eq(s.chars()));
        if matches {
            self.at += n;
        }
        matches
    }

    /// Steps until the end, or (inside a filter) until an operator or `)`.
    fn steps(&mut self, in_filter: bool) -> Result<Vec<Step>, String> {
        let mut steps = Vec::new();
        while let Some(c) = self.peek() {
            match c {
                '.' => {
                    self.at += 1;
                    if self.peek() == Some('.') {
                        return Err("recursive descent is not supported".into());
                    }
                    if self.eat("*") {
                        steps.push(Step::Wildcard);
                        continue;
                    }
                    let name = self.name();
                    // `.` alone is the object itself.
                    if !name.is_empty() {
                        steps.push(Step::Field(name));
                    }
                }
                '[' => {
                    self.at += 1;
                    steps.push(self.bracket()?);
                }
                _ if in_filter => break,
                _ => return Err(format!("unexpected {c:?}")),
            }
        }
        Ok(steps)
    }

    fn name(&mut self) -> String {
        let mut name = String::new();
        while let Some(c) = self.peek() {
            match c {
                '\\' if self.chars.get(self.at + 1) == Some(&'.') => {
                    name.push('.');
                    self.at += 2;
                }
                '.' | '[' | ' ' | '=' | '!' | '<' | '>' | ')' => break,
                _ => {
                    name.push(c);
                    self.at += 1;
                }
            }
        }
        name
    }

    /// After `[`: an index, `*`, a quoted name or a filter, through the closing `]`.
    fn bracket(&mut self) -> Result<Step, String> {
        let step = if self.eat("*") {
            Step::Wildcard
        } else if self.eat("?(") {
            self.skip_spaces();
            if !self.eat("@") {
                return Err("a filter must start with @".into());
            }
            let left = self.steps(true)?;
            self.skip_spaces();
            let op = [
                ("==", Op::Eq),
                ("!=", Op::Ne),
                ("<=", Op::Le),
                (">=", Op::Ge),
                ("<", Op::Lt),
                (">", Op::Gt),
            ]
            .into_iter()
            .find(|(s, _)| self.eat(s))
            .map(|(_, op)| op);
            let test = match op {
                Some(op) => {
                    self.skip_spaces();
                    Some((op, self.literal()?))
                }
                None => None,
            };
            self.skip_spaces();
            if !self.eat(")") {
                return Err("unterminated filter".into());
            }
            Step::Filter { left, test }
        } else if matches!(self.peek(), Some('\'' | '"')) {
            match self.literal()? {
                Value::String(s) => Step::Field(s),
                _ => return Err("bad quoted name".into()),
            }
        } else {
            let start = self.at;
            if self.peek() == Some('-') {
                self.at += 1;
            }
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.at += 1;
            }
            let text: String = self.chars[start..self.at].iter().collect();
            Step::Index(
                text.parse()
                    .map_err(|_| format!("unsupported subscript {text:?}"))?,
            )
        };
        if !self.eat("]") {
            return Err("unterminated [".into());
        }
        Ok(step)
    }

    fn skip_spaces(&mut self) {
        while self.peek() == Some(' ') {
            self.at += 1;
        }
    }

    /// A quoted string, a number or a boolean.
    fn literal(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some(q @ ('\'' | '"')) => {
                self.at += 1;
                let mut s = String::new();
                loop {
                    match self.peek() {
                        None => return Err("unterminated string".into()),
                        Some('\\') => {
                            self.at += 1;
                            s.extend(self.peek());
                            self.at += 1;
                        }
                        Some(c) if c == q => {
                            self.at += 1;
                            return Ok(Value::String(s));
                        }
                        Some(c) => {
                            s.push(c);
                            self.at += 1;
                        }
                    }
                }
            }
            _ if self.eat("true") => Ok(Value::Bool(true)),
            _ if self.eat("false") => Ok(Value::Bool(false)),
            _ => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e'))
                {
                    self.at += 1;
                }
                let text: String = self.chars[start..self.at].iter().collect();
                serde_json::from_str::<serde_json::Number>(&text)
                    .map(Value::Number)
                    .map_err(|_| format!("unrecognized literal {text:?}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn first(path: &str, doc: &Value) -> Option<Value> {
        JsonPath::parse(path)
            .unwrap()
            .find(doc)
            .first()
            .map(|v| (*v).clone())
    }

    #[test]
    fn printer_column_paths() {
        let doc = json!({
            "metadata": {"name": "a", "labels": {"app.kubernetes.io/name": "web"}},
            "spec": {"replicas": 3, "items": ["x", "y", "z"]},
            "status": {"conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "Available", "status": "False", "reason": "Scaling"},
            ]},
        });
        assert_eq!(first(".spec.replicas", &doc), Some(json!(3)));
        assert_eq!(first(".spec.missing.deeper", &doc), None);
        assert_eq!(first(".spec.items[1]", &doc), Some(json!("y")));
        assert_eq!(first(".spec.items[-1]", &doc), Some(json!("z")));
        assert_eq!(first(".spec.items[3]", &doc), None);
        assert_eq!(
            first(r".metadata.labels.app\.kubernetes\.io/name", &doc),
            Some(json!("web"))
        );
        assert_eq!(
            first(".metadata.labels['app.kubernetes.io/name']", &doc),
            Some(json!("web"))
        );
        assert_eq!(
            first(r#".status.conditions[?(@.type=="Available")].status"#, &doc),
            Some(json!("False"))
        );
        assert_eq!(
            first(".status.conditions[?(@.reason)].type", &doc),
            Some(json!("Available"))
        );
        assert_eq!(
            first(".status.conditions[*].type", &doc),
            Some(json!("Ready"))
        );
        assert_eq!(first(".", &doc), Some(doc.clone()));
        assert!(JsonPath::parse("..name").is_err());
        assert!(JsonPath::parse(".items[1:2]").is_err());
        assert!(JsonPath::parse(".a[?(@.b==\"x\"]").is_err());
    }
}
