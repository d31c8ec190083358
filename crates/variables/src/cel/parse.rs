//! The CEL grammar: tokens and a precedence-climbing parser producing an AST whose
//! nodes remember where they start (for cel-go style error locations).

/// A literal.
#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(String),
    Bytes(Vec<u8>),
}

/// Comprehension macros.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Macro {
    All,
    Exists,
    ExistsOne,
    Map,
    Filter,
}

/// An expression; `pos` is the byte offset cel-go reports it at.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub pos: usize,
    pub expr: Expr,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Lit(Lit),
    Ident(String),
    /// `operand.field`; `test` for `has(operand.field)`.
    Select {
        operand: Box<Node>,
        field: String,
        test: bool,
    },
    /// A function or operator call (`_+_`, `_[_]`, `size`, ...), with its receiver.
    Call {
        target: Option<Box<Node>>,
        func: String,
        args: Vec<Node>,
    },
    List(Vec<Node>),
    Map(Vec<(Node, Node)>),
    /// `target.all(var, body)` and friends; `map` may have a filter before its transform.
    Comprehension {
        kind: Macro,
        target: Box<Node>,
        var: String,
        filter: Option<Box<Node>>,
        body: Box<Node>,
    },
}

/// A parse error at a byte offset.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub pos: usize,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(String),
    Bytes(Vec<u8>),
    Ident(String),
    Op(&'static str),
    Eof,
}

const OPS: &[&str] = &[
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "+", "-", "*", "/", "%", "!", "?", ":", ".", ",",
    "(", ")", "[", "]", "{", "}",
];

fn lex(src: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    let err = |pos, message: &str| ParseError {
        pos,
        message: message.to_string(),
    };
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        // String and bytes literals, with optional r/b prefixes.
        let mut raw = false;
        let mut bytes = false;
        let mut j = i;
        while j < b.len() && j < i + 2 && matches!(b[j], b'r' | b'R' | b'b' | b'B') {
            if matches!(b[j], b'r' | b'R') {
                raw = true;
            } else {
                bytes = true;
            }
            j += 1;
        }
        if j < b.len() && (b[j] == b'\'' || b[j] == b'"') && (j == i || raw || bytes) {
            let q = b[j];
            let triple = b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q);
            let mut k = if triple { j + 3 } else { j + 1 };
            let mut text: Vec<u8> = Vec::new();
            loop {
                if k >= b.len() {
                    return Err(err(start, "unterminated string literal"));
                }
                if triple {
                    if b[k] == q && b.get(k + 1) == Some(&q) && b.get(k + 2) == Some(&q) {
                        k += 3;
                        break;
                    }
                } else if b[k] == q {
                    k += 1;
                    break;
                } else if b[k] == b'\n' {
                    return Err(err(start, "unterminated string literal"));
                }
                if b[k] == b'\\' && !raw {
                    let e = *b.get(k + 1).ok_or_else(|| err(k, "invalid escape"))?;
                    k += 2;
                    match e {
                        b'n' => text.push(b'\n'),
                        b't' => text.push(b'\t'),
                        b'r' => text.push(b'\r'),
                        b'a' => text.push(7),
                        b'b' => text.push(8),
                        b'f' => text.push(12),
                        b'v' => text.push(11),
                        b'\\' | b'\'' | b'"' | b'`' | b'?' => text.push(e),
                        b'x' | b'X' | b'u' | b'U' => {
                            let n = match e {
                                b'x' | b'X' => 2,
                                b'u' => 4,
                                _ => 8,
                            };
                            let hex = src.get(k..k + n).ok_or_else(|| err(k, "invalid escape"))?;
                            let v = u32::from_str_radix(hex, 16)
                                .map_err(|_| err(k, "invalid escape"))?;
                            k += n;
                            if bytes && n == 2 {
                                text.push(v as u8);
                            } else {
                                let ch =
                                    char::from_u32(v).ok_or_else(|| err(k, "invalid escape"))?;
                                let mut buf = [0u8; 4];
                                text.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                            }
                        }
                        b'0'..=b'7' => {
                            let oct = src
                                .get(k - 1..k + 2)
                                .ok_or_else(|| err(k, "invalid escape"))?;
                            let v = u32::from_str_radix(oct, 8)
                                .map_err(|_| err(k, "invalid escape"))?;
                            k += 2;
                            text.push(v as u8);
                        }
                        _ => return Err(err(k, "invalid escape")),
                    }
                    continue;
                }
                text.push(b[k]);
                k += 1;
            }
            i = k;
            if bytes {
                out.push((Tok::Bytes(text), start));
            } else {
                out.push((Tok::Str(String::from_utf8_lossy(&text).into_owned()), start));
            }
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            if c == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X')) {
                let mut k = i + 2;
                while k < b.len() && b[k].is_ascii_hexdigit() {
                    k += 1;
                }
                let digits = &src[i + 2..k];
                if matches!(b.get(k), Some(b'u' | b'U')) {
                    let v = u64::from_str_radix(digits, 16)
                        .map_err(|_| err(start, "invalid uint literal"))?;
                    out.push((Tok::Uint(v), start));
                    k += 1;
                } else {
                    let v = i64::from_str_radix(digits, 16)
                        .map_err(|_| err(start, "invalid int literal"))?;
                    out.push((Tok::Int(v), start));
                }
                i = k;
                continue;
            }
            let mut k = i;
            while k < b.len() && b[k].is_ascii_digit() {
                k += 1;
            }
            let mut is_double = false;
            if b.get(k) == Some(&b'.') && b.get(k + 1).is_some_and(u8::is_ascii_digit) {
                is_double = true;
                k += 1;
                while k < b.len() && b[k].is_ascii_digit() {
                    k += 1;
                }
            }
            if matches!(b.get(k), Some(b'e' | b'E')) {
                let mut m = k + 1;
                if matches!(b.get(m), Some(b'+' | b'-')) {
                    m += 1;
                }
                if b.get(m).is_some_and(u8::is_ascii_digit) {
                    is_double = true;
                    k = m;
                    while k < b.len() && b[k].is_ascii_digit() {
                        k += 1;
                    }
                }
            }
            let text = &src[i..k];
            if is_double {
                let v: f64 = text
                    .parse()
                    .map_err(|_| err(start, "invalid double literal"))?;
                out.push((Tok::Double(v), start));
            } else if matches!(b.get(k), Some(b'u' | b'U')) {
                let v: u64 = text
                    .parse()
                    .map_err(|_| err(start, "invalid uint literal"))?;
                out.push((Tok::Uint(v), start));
                k += 1;
            } else {
                let v: i64 = text
                    .parse()
                    .map_err(|_| err(start, "invalid int literal"))?;
                out.push((Tok::Int(v), start));
            }
            i = k;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let mut k = i;
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                k += 1;
            }
            out.push((Tok::Ident(src[i..k].to_string()), start));
            i = k;
            continue;
        }
        let rest = &src[i..];
        if let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) {
            out.push((Tok::Op(op), start));
            i += op.len();
            continue;
        }
        let ch = rest.chars().next().unwrap_or('?');
        return Err(err(start, &format!("token recognition error at: '{ch}'")));
    }
    out.push((Tok::Eof, src.len()));
    Ok(out)
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    at: usize,
    depth: usize,
}

/// Parses a CEL expression.
pub fn parse(src: &str) -> Result<Node, ParseError> {
    let toks = lex(src)?;
    let mut p = Parser {
        toks,
        at: 0,
        depth: 0,
    };
    let e = p.expr()?;
    if p.peek() != &Tok::Eof {
        // A complete expression followed by more: ANTLR names what it wanted.
        let mut err = p.unexpected();
        err.message.push_str(" expecting <EOF>");
        return Err(err);
    }
    Ok(e)
}

impl Parser {
    fn peek(&self) -> &Tok {
        self.toks.get(self.at).map(|t| &t.0).unwrap_or(&Tok::Eof)
    }

    fn pos(&self) -> usize {
        self.toks.get(self.at).map(|t| t.1).unwrap_or(0)
    }

    fn bump(&mut self) -> (Tok, usize) {
        let t = self.toks.get(self.at).cloned().unwrap_or((Tok::Eof, 0));
        self.at += 1;
        t
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Tok::Op(o) if *o == op)
    }

    fn unexpected(&self) -> ParseError {
        let what = match self.peek() {
            Tok::Eof => "<EOF>".to_string(),
            Tok::Op(o) => format!("'{o}'"),
            Tok::Ident(s) => format!("'{s}'"),
            Tok::Int(i) => format!("'{i}'"),
            Tok::Uint(u) => format!("'{u}u'"),
            Tok::Double(d) => format!("'{d}'"),
            Tok::Str(s) => format!("'{s}'"),
            Tok::Bytes(_) => "bytes".to_string(),
        };
        ParseError {
            pos: self.pos(),
            message: format!("Syntax error: mismatched input {what}"),
        }
    }

    fn expect(&mut self, op: &str) -> Result<usize, ParseError> {
        if self.is_op(op) {
            Ok(self.bump().1)
        } else {
            Err(self.unexpected())
        }
    }

    fn expr(&mut self) -> Result<Node, ParseError> {
        self.depth += 1;
        if self.depth > 200 {
            return Err(ParseError {
                pos: self.pos(),
                message: "expression recursion limit exceeded".into(),
            });
        }
        let cond = self.or()?;
        let out = if self.is_op("?") {
            let pos = self.bump().1;
            let t = self.or()?;
            self.expect(":")?;
            let f = self.expr()?;
            Node {
                pos,
                expr: Expr::Call {
                    target: None,
                    func: "_?_:_".into(),
                    args: vec![cond, t, f],
                },
            }
        } else {
            cond
        };
        self.depth -= 1;
        Ok(out)
    }

    fn binary(
        &mut self,
        ops: &[(&str, &str)],
        next: fn(&mut Self) -> Result<Node, ParseError>,
    ) -> Result<Node, ParseError> {
        let mut left = next(self)?;
        while let Some((_, func)) = ops.iter().find(|(op, _)| self.is_op(op)) {
            let pos = self.bump().1;
            let right = next(self)?;
            left = Node {
                pos,
                expr: Expr::Call {
                    target: None,
                    func: (*func).to_string(),
                    args: vec![left, right],
                },
            };
        }
        Ok(left)
    }

    fn or(&mut self) -> Result<Node, ParseError> {
        self.binary(&[("||", "_||_")], Self::and)
    }

    fn and(&mut self) -> Result<Node, ParseError> {
        self.binary(&[("&&", "_&&_")], Self::relation)
    }

    fn relation(&mut self) -> Result<Node, ParseError> {
        let mut left = self.addition()?;
        loop {
            let func = match self.peek() {
                Tok::Op("==") => "_==_",
                Tok::Op("!=") => "_!=_",
                Tok::Op("<") => "_<_",
                Tok::Op("<=") => "_<=_",
                Tok::Op(">") => "_>_",
                Tok::Op(">=") => "_>=_",
                Tok::Ident(s) if s == "in" => "@in",
                _ => break,
            };
            let pos = self.bump().1;
            let right = self.addition()?;
            left = Node {
                pos,
                expr: Expr::Call {
                    target: None,
                    func: func.into(),
                    args: vec![left, right],
                },
            };
        }
        Ok(left)
    }

    fn addition(&mut self) -> Result<Node, ParseError> {
        self.binary(&[("+", "_+_"), ("-", "_-_")], Self::multiplication)
    }

    fn multiplication(&mut self) -> Result<Node, ParseError> {
        self.binary(&[("*", "_*_"), ("/", "_/_"), ("%", "_%_")], Self::unary)
    }

    fn unary(&mut self) -> Result<Node, ParseError> {
        if self.is_op("!") {
            let pos = self.bump().1;
            let e = self.unary()?;
            return Ok(Node {
                pos,
                expr: Expr::Call {
                    target: None,
                    func: "!_".into(),
                    args: vec![e],
                },
            });
        }
        if self.is_op("-") {
            let pos = self.bump().1;
            // Negative numeric literals are literals.
            match self.peek().clone() {
                Tok::Int(i) if !self.follows_member() => {
                    self.bump();
                    return self.member(Node {
                        pos,
                        expr: Expr::Lit(Lit::Int(i.wrapping_neg())),
                    });
                }
                Tok::Double(d) if !self.follows_member() => {
                    self.bump();
                    return self.member(Node {
                        pos,
                        expr: Expr::Lit(Lit::Double(-d)),
                    });
                }
                _ => {}
            }
            let e = self.unary()?;
            return Ok(Node {
                pos,
                expr: Expr::Call {
                    target: None,
                    func: "-_".into(),
                    args: vec![e],
                },
            });
        }
        let p = self.primary()?;
        self.member(p)
    }

    fn follows_member(&self) -> bool {
        matches!(
            self.toks.get(self.at + 1).map(|t| &t.0),
            Some(Tok::Op("." | "["))
        )
    }

    fn args(&mut self, close: &str) -> Result<Vec<Node>, ParseError> {
        let mut args = Vec::new();
        if self.is_op(close) {
            self.bump();
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.is_op(",") {
                self.bump();
                if self.is_op(close) {
                    self.bump();
                    return Ok(args);
                }
                continue;
            }
            self.expect(close)?;
            return Ok(args);
        }
    }

    fn member(&mut self, mut e: Node) -> Result<Node, ParseError> {
        loop {
            if self.is_op(".") {
                let dot = self.bump().1;
                let name = match self.bump().0 {
                    Tok::Ident(s) => s,
                    _ => {
                        self.at -= 1;
                        return Err(self.unexpected());
                    }
                };
                if self.is_op("(") {
                    let open = self.bump().1;
                    let args = self.args(")")?;
                    e = expand_member_call(e, name, args, open)?;
                } else {
                    e = Node {
                        pos: dot,
                        expr: Expr::Select {
                            operand: Box::new(e),
                            field: name,
                            test: false,
                        },
                    };
                }
            } else if self.is_op("[") {
                let open = self.bump().1;
                let index = self.expr()?;
                self.expect("]")?;
                e = Node {
                    pos: open,
                    expr: Expr::Call {
                        target: None,
                        func: "_[_]".into(),
                        args: vec![e, index],
                    },
                };
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> Result<Node, ParseError> {
        let (t, pos) = self.bump();
        let lit = |l| {
            Ok(Node {
                pos,
                expr: Expr::Lit(l),
            })
        };
        match t {
            Tok::Int(i) => lit(Lit::Int(i)),
            Tok::Uint(u) => lit(Lit::Uint(u)),
            Tok::Double(d) => lit(Lit::Double(d)),
            Tok::Str(s) => lit(Lit::Str(s)),
            Tok::Bytes(b) => lit(Lit::Bytes(b)),
            Tok::Ident(name) => match name.as_str() {
                "true" => lit(Lit::Bool(true)),
                "false" => lit(Lit::Bool(false)),
                "null" => lit(Lit::Null),
                _ => {
                    if self.is_op("(") {
                        let open = self.bump().1;
                        let args = self.args(")")?;
                        if name == "has" {
                            return match args.as_slice() {
                                [
                                    Node {
                                        expr: Expr::Select { operand, field, .. },
                                        ..
                                    },
                                ] => Ok(Node {
                                    pos: open,
                                    expr: Expr::Select {
                                        operand: operand.clone(),
                                        field: field.clone(),
                                        test: true,
                                    },
                                }),
                                _ => Err(ParseError {
                                    pos: open,
                                    message: "invalid argument to has() macro".into(),
                                }),
                            };
                        }
                        Ok(Node {
                            pos: open,
                            expr: Expr::Call {
                                target: None,
                                func: name,
                                args,
                            },
                        })
                    } else {
                        Ok(Node {
                            pos,
                            expr: Expr::Ident(name),
                        })
                    }
                }
            },
            Tok::Op("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Op("[") => {
                let items = self.args("]")?;
                Ok(Node {
                    pos,
                    expr: Expr::List(items),
                })
            }
            Tok::Op("{") => {
                let mut entries = Vec::new();
                if !self.is_op("}") {
                    loop {
                        let k = self.expr()?;
                        self.expect(":")?;
                        let v = self.expr()?;
                        entries.push((k, v));
                        if self.is_op(",") {
                            self.bump();
                            if self.is_op("}") {
                                break;
                            }
                            continue;
                        }
                        break;
                    }
                }
                self.expect("}")?;
                Ok(Node {
                    pos,
                    expr: Expr::Map(entries),
                })
            }
            _ => {
                self.at -= 1;
                Err(self.unexpected())
            }
        }
    }
}

fn expand_member_call(
    target: Node,
    name: String,
    args: Vec<Node>,
    open: usize,
) -> Result<Node, ParseError> {
    let kind = match name.as_str() {
        "all" => Some(Macro::All),
        "exists" => Some(Macro::Exists),
        "exists_one" => Some(Macro::ExistsOne),
        "map" => Some(Macro::Map),
        "filter" => Some(Macro::Filter),
        _ => None,
    };
    if let Some(kind) = kind {
        let n = args.len();
        let valid = n == 2 || (kind == Macro::Map && n == 3);
        if valid {
            let mut it = args.into_iter();
            let var_node = it.next();
            let Some(Node {
                expr: Expr::Ident(var),
                ..
            }) = var_node
            else {
                return Err(ParseError {
                    pos: open,
                    message: "argument must be a simple name".into(),
                });
            };
            let (filter, body) = if n == 3 {
                let f = it.next();
                (f.map(Box::new), it.next())
            } else {
                (None, it.next())
            };
            let Some(body) = body else {
                return Err(ParseError {
                    pos: open,
                    message: "missing macro body".into(),
                });
            };
            return Ok(Node {
                pos: open,
                expr: Expr::Comprehension {
                    kind,
                    target: Box::new(target),
                    var,
                    filter,
                    body: Box::new(body),
                },
            });
        }
    }
    Ok(Node {
        pos: open,
        expr: Expr::Call {
            target: Some(Box::new(target)),
            func: name,
            args,
        },
    })
}

/// cel-go's error display: `ERROR: <input>:L:C: msg` with the line and a caret.
pub fn format_error(src: &str, pos: usize, message: &str) -> String {
    let before = src.get(..pos).unwrap_or(src);
    let line_no = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let col = src
        .get(line_start..pos)
        .map(|s| s.chars().count())
        .unwrap_or(0)
        + 1;
    let line = src
        .get(line_start..)
        .unwrap_or("")
        .split('\n')
        .next()
        .unwrap_or("");
    format!(
        "ERROR: <input>:{line_no}:{col}: {message}\n | {line}\n | {}^",
        ".".repeat(col - 1)
    )
}
