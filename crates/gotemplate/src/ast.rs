//! The parse tree. Every node keeps its byte position and prints back the way Go's
//! nodes do, because both appear in execution errors (`tpl:1:5: executing "tpl" at
//! <.x.y>: ...`).

use std::fmt::{self, Display, Formatter, Write};
use std::sync::Arc;

use topograph_gocompat::strconv::quote;

use crate::funcs::Func;

/// A parsed number literal, held in every form it fits (Go's "ideal constant").
#[derive(Clone, Debug, Default)]
pub(crate) struct Number {
    pub text: String,
    pub is_int: bool,
    pub is_uint: bool,
    pub is_float: bool,
    pub is_complex: bool,
    pub int: i64,
    pub uint: u64,
    pub float: f64,
    pub complex: (f64, f64),
}

/// An operand of a command.
#[derive(Clone, Debug)]
pub(crate) enum Arg {
    Identifier {
        pos: usize,
        name: String,
        func: Func,
    },
    Dot {
        pos: usize,
    },
    Nil {
        pos: usize,
    },
    Bool {
        pos: usize,
        val: bool,
    },
    Number {
        pos: usize,
        num: Box<Number>,
    },
    String {
        pos: usize,
        quoted: String,
        /// The unquoted text, shared with every value evaluation makes of it.
        text: Arc<str>,
    },
    /// `.a.b`: idents without dots.
    Field {
        pos: usize,
        idents: Vec<String>,
    },
    /// `$x.a.b`: first ident is the variable name with `$`.
    Variable {
        pos: usize,
        idents: Vec<String>,
    },
    /// `(pipe).a.b` or `fn.a` (evaluated at run time).
    Chain {
        pos: usize,
        node: Box<Arg>,
        fields: Vec<String>,
    },
    Pipe(Box<Pipe>),
}

impl Arg {
    pub(crate) fn pos(&self) -> usize {
        match self {
            Arg::Identifier { pos, .. }
            | Arg::Dot { pos }
            | Arg::Nil { pos }
            | Arg::Bool { pos, .. }
            | Arg::Number { pos, .. }
            | Arg::String { pos, .. }
            | Arg::Field { pos, .. }
            | Arg::Variable { pos, .. }
            | Arg::Chain { pos, .. } => *pos,
            Arg::Pipe(p) => p.pos,
        }
    }
}

impl Display for Arg {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Identifier { name, .. } => f.write_str(name),
            Arg::Dot { .. } => f.write_char('.'),
            Arg::Nil { .. } => f.write_str("nil"),
            Arg::Bool { val, .. } => write!(f, "{val}"),
            Arg::Number { num, .. } => f.write_str(&num.text),
            Arg::String { quoted, .. } => f.write_str(quoted),
            Arg::Field { idents, .. } => {
                for i in idents {
                    write!(f, ".{i}")?;
                }
                Ok(())
            }
            Arg::Variable { idents, .. } => f.write_str(&idents.join(".")),
            Arg::Chain { node, fields, .. } => {
                if let Arg::Pipe(p) = node.as_ref() {
                    write!(f, "({p})")?;
                } else {
                    write!(f, "{node}")?;
                }
                for x in fields {
                    write!(f, ".{x}")?;
                }
                Ok(())
            }
            Arg::Pipe(p) => write!(f, "{p}"),
        }
    }
}

/// A command: a function or value with its arguments.
#[derive(Clone, Debug)]
pub(crate) struct Command {
    pub pos: usize,
    pub args: Vec<Arg>,
}

impl Display for Command {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_char(' ')?;
            }
            if let Arg::Pipe(p) = a {
                write!(f, "({p})")?;
            } else {
                write!(f, "{a}")?;
            }
        }
        Ok(())
    }
}

/// A variable declared or assigned by a pipeline.
#[derive(Clone, Debug)]
pub(crate) struct Decl {
    pub idents: Vec<String>,
}

/// A pipeline with optional declarations.
#[derive(Clone, Debug)]
pub(crate) struct Pipe {
    pub pos: usize,
    pub is_assign: bool,
    pub decl: Vec<Decl>,
    pub cmds: Vec<Command>,
}

impl Display for Pipe {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if !self.decl.is_empty() {
            for (i, d) in self.decl.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                f.write_str(&d.idents.join("."))?;
            }
            f.write_str(if self.is_assign { " = " } else { " := " })?;
        }
        for (i, c) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BranchKind {
    If,
    Range,
    With,
}

impl BranchKind {
    fn name(self) -> &'static str {
        match self {
            BranchKind::If => "if",
            BranchKind::Range => "range",
            BranchKind::With => "with",
        }
    }
}

/// A node of a template body.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    Text {
        pos: usize,
        text: String,
    },
    Action {
        pos: usize,
        pipe: Pipe,
    },
    Branch {
        kind: BranchKind,
        pos: usize,
        pipe: Pipe,
        list: Vec<Node>,
        else_list: Option<Vec<Node>>,
    },
    Template {
        pos: usize,
        name: String,
        pipe: Option<Pipe>,
    },
    Break {
        pos: usize,
    },
    Continue {
        pos: usize,
    },
}

impl Node {
    pub(crate) fn pos(&self) -> usize {
        match self {
            Node::Text { pos, .. }
            | Node::Action { pos, .. }
            | Node::Branch { pos, .. }
            | Node::Template { pos, .. }
            | Node::Break { pos }
            | Node::Continue { pos } => *pos,
        }
    }
}

fn write_list(f: &mut Formatter<'_>, list: &[Node]) -> fmt::Result {
    for n in list {
        write!(f, "{n}")?;
    }
    Ok(())
}

impl Display for Node {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Node::Text { text, .. } => f.write_str(text),
            Node::Action { pipe, .. } => write!(f, "{{{{{pipe}}}}}"),
            Node::Branch {
                kind,
                pipe,
                list,
                else_list,
                ..
            } => {
                write!(f, "{{{{{} {pipe}}}}}", kind.name())?;
                write_list(f, list)?;
                if let Some(e) = else_list {
                    f.write_str("{{else}}")?;
                    write_list(f, e)?;
                }
                f.write_str("{{end}}")
            }
            Node::Template { name, pipe, .. } => {
                write!(f, "{{{{template {}", quote(name))?;
                if let Some(p) = pipe {
                    write!(f, " {p}")?;
                }
                f.write_str("}}")
            }
            Node::Break { .. } => f.write_str("{{break}}"),
            Node::Continue { .. } => f.write_str("{{continue}}"),
        }
    }
}

/// Line (1-based) and Go's column (0-based byte offset in the line) of `pos` in `text`.
pub(crate) fn location(text: &str, pos: usize) -> (usize, usize) {
    let before = text.get(..pos.min(text.len())).unwrap_or(text);
    let line = 1 + before.matches('\n').count();
    let col = match before.rfind('\n') {
        Some(i) => pos - (i + 1),
        None => pos,
    };
    (line, col)
}
