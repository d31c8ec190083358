//! The evaluator: walks a tree with Go's semantics for fields, variables,
//! pipelines, calls and control structures, and reports errors the way Go does
//! (`template: tpl:1:3: executing "tpl" at <semver .v>: error calling semver: ...`).
//!
//! Go tracks the node it is "at" and uses it for the error location and context;
//! we update [`Exec::node`] at exactly the same points so the texts line up.
//! Values that Go holds as `interface{}` (map entries and slice elements of decoded
//! JSON) are marked `boxed`, because several messages name `interface {}` for them.

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use topograph_gocompat::strconv::quote;

use crate::ast::{self, Arg, BranchKind, Command, Node, Number, Pipe};
use crate::fmt::sprint_value;
use crate::funcs::{Ctx, FnError, Func, FuncDef, Param, Special};
use crate::parse::TreeSet;
use crate::value::{ListKind, MapKind, Str, Value};
use crate::{Error, ErrorKind, MissingKey, Options};

/// A value during evaluation, with whether Go sees it through `interface{}`.
#[derive(Clone, Debug)]
pub(crate) struct Rv {
    pub v: Value,
    pub boxed: bool,
}

impl Rv {
    fn plain(v: Value) -> Rv {
        Rv { v, boxed: false }
    }

    fn invalid() -> Rv {
        Rv::plain(Value::Invalid)
    }

    /// The static Go type of the value (`interface {}` when boxed).
    fn static_type(&self) -> &'static str {
        if self.boxed {
            "interface {}"
        } else {
            self.v.type_name()
        }
    }

    /// Go's unwrapping of `interface{}` results after each pipeline stage.
    fn unboxed(self) -> Rv {
        match self.v {
            Value::Nil => Rv::invalid(),
            v => Rv::plain(v),
        }
    }
}

/// `receiver.name` when the receiver is a map holding `name`: what [`Exec::eval_field`]
/// gives for a field without arguments in that case, which is most field steps, without
/// its checks for the others.
fn map_entry(receiver: &Rv, name: &str) -> Option<Rv> {
    match &receiver.v {
        Value::Map(m, kind) => Value::map_get(m, name).map(|v| Rv {
            v,
            boxed: *kind == MapKind::Iface,
        }),
        _ => None,
    }
}

/// The node evaluation is at, for error locations.
#[derive(Clone, Copy)]
enum At<'t> {
    None,
    Node(&'t Node),
    Pipe(&'t Pipe),
    Cmd(&'t Command),
    Arg(&'t Arg),
}

impl At<'_> {
    fn pos(&self) -> usize {
        match self {
            At::None => 0,
            At::Node(n) => n.pos(),
            At::Pipe(p) => p.pos,
            At::Cmd(c) => c.pos,
            At::Arg(a) => a.pos(),
        }
    }

    fn context(&self) -> String {
        match self {
            At::None => String::new(),
            At::Node(n) => n.to_string(),
            At::Pipe(p) => p.to_string(),
            At::Cmd(c) => c.to_string(),
            At::Arg(a) => a.to_string(),
        }
    }
}

/// Why a walk stopped early.
enum Stop {
    Fail(Error),
    Break,
    Continue,
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Fail(e)
    }
}

type R<T> = Result<T, Stop>;

/// Byte cost charged for one element of a slice or map built by a function.
const ELEM_COST: u128 = 16;

thread_local! {
    /// The argument stack of the last run on this thread, emptied, so the next run
    /// starts with room for its arguments.
    static SPARE_ARGS: Cell<Vec<Value>> = const { Cell::new(Vec::new()) };
}

/// An argument stack borrowed from [`SPARE_ARGS`] and given back when the run ends.
struct ArgStack(Vec<Value>);

impl ArgStack {
    /// A stack that kept more than this many arguments is not kept for the next run.
    const KEEP: usize = 64;

    fn take() -> ArgStack {
        ArgStack(SPARE_ARGS.take())
    }
}

impl Drop for ArgStack {
    fn drop(&mut self) {
        let mut v = std::mem::take(&mut self.0);
        if v.capacity() <= Self::KEEP {
            v.clear();
            SPARE_ARGS.set(v);
        }
    }
}

impl Deref for ArgStack {
    type Target = Vec<Value>;

    fn deref(&self) -> &Vec<Value> {
        &self.0
    }
}

impl DerefMut for ArgStack {
    fn deref_mut(&mut self) -> &mut Vec<Value> {
        &mut self.0
    }
}

pub(crate) struct Exec<'t> {
    trees: &'t TreeSet,
    text: &'t str,
    parse_name: &'t str,
    tmpl_name: &'t str,
    node: At<'t>,
    /// `$` of the template being run, kept out of `vars` so that starting a run or a
    /// `{{template}}` call allocates no variable stack.
    root: Rv,
    /// Variables declared since `$`, innermost last.
    vars: Vec<(&'t str, Rv)>,
    /// Arguments of the calls being evaluated, innermost last: one stack for the
    /// run rather than a vector per call.
    args: ArgStack,
    out: String,
    steps: u64,
    depth: usize,
    nesting: usize,
    allocated: u128,
    opts: &'t Options,
    ctx: Ctx,
}

impl<'t> Exec<'t> {
    pub(crate) fn new(
        trees: &'t TreeSet,
        text: &'t str,
        parse_name: &'t str,
        opts: &'t Options,
    ) -> Self {
        Exec {
            trees,
            text,
            parse_name,
            tmpl_name: parse_name,
            node: At::None,
            root: Rv::invalid(),
            vars: Vec::new(),
            args: ArgStack::take(),
            // The text's size is a fair guess at the output's for the short templates
            // patches use, and saves growing the buffer a few times.
            out: String::with_capacity(text.len().min(opts.limits.max_output_bytes)),
            steps: 0,
            depth: 0,
            nesting: 0,
            allocated: 0,
            opts,
            ctx: Ctx {
                limits: opts.limits,
            },
        }
    }

    /// Runs the template `name` with `data` as dot and `$`.
    pub(crate) fn run(mut self, name: &'t str, data: Value) -> Result<String, Error> {
        let Some(root) = self.trees.get(name) else {
            return Err(Error {
                kind: ErrorKind::Execute,
                message: format!(
                    "template: {}: {} is an incomplete or empty template",
                    name,
                    quote(name)
                ),
            });
        };
        self.tmpl_name = name;
        let dot = Rv::plain(data);
        self.root = dot.clone();
        match self.walk_list(&dot, root) {
            Ok(()) => Ok(self.out),
            Err(Stop::Fail(e)) => Err(e),
            Err(Stop::Break | Stop::Continue) => Ok(self.out),
        }
    }

    fn at(&mut self, at: At<'t>) {
        self.node = at;
    }

    fn error_text(&self, msg: &str) -> String {
        match self.node {
            At::None => format!("template: {}: {}", self.tmpl_name, msg),
            at => {
                let (line, col) = ast::location(self.text, at.pos());
                format!(
                    "template: {}:{}:{}: executing {} at <{}>: {}",
                    self.parse_name,
                    line,
                    col,
                    quote(self.tmpl_name),
                    at.context(),
                    msg
                )
            }
        }
    }

    fn errorf(&self, msg: impl AsRef<str>) -> Stop {
        Stop::Fail(Error {
            kind: ErrorKind::Execute,
            message: self.error_text(msg.as_ref()),
        })
    }

    fn limit(&self, msg: impl AsRef<str>) -> Stop {
        Stop::Fail(Error {
            kind: ErrorKind::Limit,
            message: self.error_text(msg.as_ref()),
        })
    }

    fn step(&mut self) -> R<()> {
        self.steps += 1;
        if self.steps > self.opts.limits.max_steps {
            return Err(self.limit(format!(
                "evaluation exceeded {} steps",
                self.opts.limits.max_steps
            )));
        }
        Ok(())
    }

    fn write(&mut self, s: &str) -> R<()> {
        if self.out.len() + s.len() > self.opts.limits.max_output_bytes {
            return Err(self.limit(format!(
                "output exceeds {} bytes",
                self.opts.limits.max_output_bytes
            )));
        }
        self.out.push_str(s);
        Ok(())
    }

    fn charge(&mut self, v: &Value) -> R<()> {
        let cost = match v {
            Value::Str(s) => s.len() as u128,
            Value::List(l, _) => l.len() as u128 * ELEM_COST,
            Value::Map(m, _) => Value::map_len(m) as u128 * ELEM_COST * 2,
            _ => 0,
        };
        self.allocated += cost;
        let budget = (self.opts.limits.max_output_bytes as u128
            + self.opts.limits.max_steps as u128)
            .saturating_mul(32);
        if self.allocated > budget {
            return Err(self.limit("values built by functions exceed the evaluation limit"));
        }
        Ok(())
    }

    fn walk_list(&mut self, dot: &Rv, list: &'t [Node]) -> R<()> {
        // Blocks nested inside templates called from blocks add up; bound the total
        // so evaluation cannot run out of stack.
        self.nesting += 1;
        if self.nesting > 2 * self.opts.limits.max_depth.max(1) + 2 {
            self.nesting -= 1;
            return Err(self.limit(format!(
                "exceeded maximum nesting depth ({})",
                2 * self.opts.limits.max_depth.max(1)
            )));
        }
        let mut r = Ok(());
        for n in list {
            r = self.walk(dot, n);
            if r.is_err() {
                break;
            }
        }
        self.nesting -= 1;
        r
    }

    fn walk(&mut self, dot: &Rv, node: &'t Node) -> R<()> {
        self.at(At::Node(node));
        self.step()?;
        match node {
            Node::Text { text, .. } => self.write(text),
            Node::Action { pipe, .. } => {
                let val = self.eval_pipeline(dot, pipe)?;
                if pipe.decl.is_empty() {
                    self.at(At::Node(node));
                    match &val.v {
                        Value::Invalid => self.write("<no value>")?,
                        // A string prints as itself: no need for a formatted copy.
                        Value::Str(s) => self.write(s)?,
                        v => {
                            let s = sprint_value(v);
                            self.write(&s)?;
                        }
                    }
                }
                Ok(())
            }
            Node::Branch {
                kind: BranchKind::Range,
                pipe,
                list,
                else_list,
                ..
            } => self.walk_range(dot, node, pipe, list, else_list.as_deref()),
            Node::Branch {
                kind,
                pipe,
                list,
                else_list,
                ..
            } => {
                let mark = self.vars.len();
                let r = self.walk_if_or_with(*kind, dot, pipe, list, else_list.as_deref());
                self.vars.truncate(mark);
                r
            }
            Node::Template { name, pipe, .. } => self.walk_template(dot, node, name, pipe.as_ref()),
            Node::Break { .. } => Err(Stop::Break),
            Node::Continue { .. } => Err(Stop::Continue),
        }
    }

    fn walk_if_or_with(
        &mut self,
        kind: BranchKind,
        dot: &Rv,
        pipe: &'t Pipe,
        list: &'t [Node],
        else_list: Option<&'t [Node]>,
    ) -> R<()> {
        let val = self.eval_pipeline(dot, pipe)?;
        if val.v.truth() {
            if kind == BranchKind::With {
                self.walk_list(&val, list)
            } else {
                self.walk_list(dot, list)
            }
        } else if let Some(e) = else_list {
            self.walk_list(dot, e)
        } else {
            Ok(())
        }
    }

    fn set_var(&mut self, name: &str, value: Rv) -> R<()> {
        for (n, v) in self.vars.iter_mut().rev() {
            if *n == name {
                *v = value;
                return Ok(());
            }
        }
        if name == "$" {
            self.root = value;
            return Ok(());
        }
        Err(self.errorf(format!("undefined variable: {name}")))
    }

    fn set_top_var(&mut self, n: usize, value: Rv) {
        let len = self.vars.len();
        if let Some(slot) = len.checked_sub(n).and_then(|i| self.vars.get_mut(i)) {
            slot.1 = value;
        }
    }

    fn var_value(&self, name: &str) -> R<Rv> {
        for (n, v) in self.vars.iter().rev() {
            if *n == name {
                return Ok(v.clone());
            }
        }
        if name == "$" {
            return Ok(self.root.clone());
        }
        Err(self.errorf(format!("undefined variable: {name}")))
    }

    /// One range iteration; `Ok(false)` means `break`.
    fn range_iteration(
        &mut self,
        pipe: &'t Pipe,
        list: &'t [Node],
        mark: usize,
        index: Rv,
        elem: Rv,
    ) -> R<bool> {
        self.step()?;
        let first = pipe.decl.first().and_then(|d| d.idents.first());
        let second = pipe.decl.get(1).and_then(|d| d.idents.first());
        if let Some(first) = first {
            if pipe.is_assign {
                if let Some(second) = second {
                    self.set_var(first, index.clone())?;
                    self.set_var(second, elem.clone())?;
                } else {
                    self.set_var(first, elem.clone())?;
                }
            } else {
                self.set_top_var(1, elem.clone());
                if second.is_some() {
                    self.set_top_var(2, index);
                }
            }
        }
        let r = self.walk_list(&elem, list);
        self.vars.truncate(mark);
        match r {
            Ok(()) | Err(Stop::Continue) => Ok(true),
            Err(Stop::Break) => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn walk_range(
        &mut self,
        dot: &Rv,
        node: &'t Node,
        pipe: &'t Pipe,
        list: &'t [Node],
        else_list: Option<&'t [Node]>,
    ) -> R<()> {
        self.at(At::Node(node));
        let outer = self.vars.len();
        let r = self.walk_range_inner(dot, pipe, list, else_list);
        self.vars.truncate(outer);
        r
    }

    fn walk_range_inner(
        &mut self,
        dot: &Rv,
        pipe: &'t Pipe,
        list: &'t [Node],
        else_list: Option<&'t [Node]>,
    ) -> R<()> {
        let val = self.eval_pipeline(dot, pipe)?;
        let mark = self.vars.len();
        let ran = match &val.v {
            Value::List(items, kind) => {
                let boxed = *kind == ListKind::Iface;
                for (i, item) in items.iter().enumerate() {
                    let elem = Rv {
                        v: item.clone(),
                        boxed,
                    };
                    if !self.range_iteration(
                        pipe,
                        list,
                        mark,
                        Rv::plain(Value::Int(i as i64)),
                        elem,
                    )? {
                        break;
                    }
                }
                !items.is_empty()
            }
            Value::Map(m, kind) => {
                let boxed = *kind == MapKind::Iface;
                // A sorted snapshot, as Go ranges over; the keys are made values once.
                let entries: Vec<(Value, Value)> = m
                    .try_borrow()
                    .map(|b| {
                        b.iter()
                            .map(|(k, v)| (Value::str(k.as_str()), v.clone()))
                            .collect()
                    })
                    .unwrap_or_default();
                let ran = !entries.is_empty();
                for (k, item) in entries {
                    let elem = Rv { v: item, boxed };
                    if !self.range_iteration(pipe, list, mark, Rv::plain(k), elem)? {
                        break;
                    }
                }
                ran
            }
            v @ (Value::Int(_) | Value::Int64(_) | Value::Uint8(_) | Value::Uint64(_)) => {
                if pipe.decl.len() > 1 {
                    return Err(self.errorf(format!(
                        "can't use {} to iterate over more than one variable",
                        sprint_value(v)
                    )));
                }
                let n: i128 = match v {
                    Value::Int(i) | Value::Int64(i) => *i as i128,
                    Value::Uint8(b) => *b as i128,
                    Value::Uint64(u) => *u as i128,
                    _ => 0,
                };
                let mut i: i128 = 0;
                while i < n {
                    let e = match v {
                        Value::Int(_) => Value::Int(i as i64),
                        Value::Int64(_) => Value::Int64(i as i64),
                        Value::Uint8(_) => Value::Uint8(i as u8),
                        _ => Value::Uint64(i as u64),
                    };
                    if !self.range_iteration(pipe, list, mark, Rv::invalid(), Rv::plain(e))? {
                        break;
                    }
                    i += 1;
                }
                n > 0
            }
            Value::Invalid | Value::Nil => false,
            v => {
                return Err(self.errorf(format!("range can't iterate over {}", sprint_value(v))));
            }
        };
        if ran {
            return Ok(());
        }
        if let Some(e) = else_list {
            self.walk_list(dot, e)?;
        }
        Ok(())
    }

    fn walk_template(
        &mut self,
        dot: &Rv,
        node: &'t Node,
        name: &'t str,
        pipe: Option<&'t Pipe>,
    ) -> R<()> {
        self.at(At::Node(node));
        let Some(tree) = self.trees.get(name) else {
            return Err(self.errorf(format!("template {} not defined", quote(name))));
        };
        if self.depth >= self.opts.limits.max_depth {
            return Err(self.limit(format!(
                "exceeded maximum template depth ({})",
                self.opts.limits.max_depth
            )));
        }
        let new_dot = match pipe {
            Some(p) => self.eval_pipeline(dot, p)?,
            None => Rv::invalid(),
        };
        let saved_vars = std::mem::take(&mut self.vars);
        let saved_root = std::mem::replace(&mut self.root, new_dot.clone());
        let saved_name = std::mem::replace(&mut self.tmpl_name, name);
        self.depth += 1;
        let r = self.walk_list(&new_dot, tree);
        self.depth -= 1;
        self.tmpl_name = saved_name;
        self.root = saved_root;
        self.vars = saved_vars;
        match r {
            Err(Stop::Break | Stop::Continue) => Ok(()),
            other => other,
        }
    }

    fn eval_pipeline(&mut self, dot: &Rv, pipe: &'t Pipe) -> R<Rv> {
        self.at(At::Pipe(pipe));
        let mut value: Option<Rv> = None;
        for cmd in &pipe.cmds {
            let v = self.eval_command(dot, cmd, value.take())?;
            value = Some(v.unboxed());
        }
        let value = value.unwrap_or_else(Rv::invalid);
        for d in &pipe.decl {
            let name = d.idents.first().map_or("", String::as_str);
            if pipe.is_assign {
                self.set_var(name, value.clone())?;
            } else {
                self.vars.push((name, value.clone()));
            }
        }
        Ok(value)
    }

    fn not_a_function(&self, args: &[Arg], final_: &Option<Rv>) -> R<()> {
        if args.len() > 1 || final_.is_some() {
            let first = args.first().map(|a| a.to_string()).unwrap_or_default();
            return Err(self.errorf(format!("can't give argument to non-function {first}")));
        }
        Ok(())
    }

    fn eval_command(&mut self, dot: &Rv, cmd: &'t Command, final_: Option<Rv>) -> R<Rv> {
        self.step()?;
        let Some(first) = cmd.args.first() else {
            return Err(self.errorf("empty command"));
        };
        match first {
            Arg::Field { idents, .. } => {
                return self.eval_field_node(dot, first, idents, &cmd.args, final_);
            }
            Arg::Chain { node, fields, .. } => {
                return self.eval_chain_node(dot, first, node, fields, &cmd.args, final_);
            }
            Arg::Identifier { name, func, .. } => {
                return self.eval_function(
                    dot,
                    first,
                    name,
                    *func,
                    At::Cmd(cmd),
                    Some(&cmd.args),
                    final_,
                );
            }
            Arg::Pipe(p) => {
                self.not_a_function(&cmd.args, &final_)?;
                return self.eval_pipeline(dot, p);
            }
            Arg::Variable { idents, .. } => {
                return self.eval_variable_node(dot, first, idents, &cmd.args, final_);
            }
            _ => {}
        }
        self.at(At::Arg(first));
        self.not_a_function(&cmd.args, &final_)?;
        match first {
            Arg::Bool { val, .. } => Ok(Rv::plain(Value::Bool(*val))),
            Arg::Dot { .. } => Ok(dot.clone()),
            Arg::Nil { .. } => Err(self.errorf("nil is not a command")),
            Arg::Number { num, .. } => self.ideal_constant(first, num).map(Rv::plain),
            Arg::String { text, .. } => Ok(Rv::plain(Value::Str(Str::Literal(Arc::clone(text))))),
            _ => Err(self.errorf(format!(
                "can't evaluate command {}",
                quote(&first.to_string())
            ))),
        }
    }

    fn ideal_constant(&mut self, node: &'t Arg, n: &Number) -> R<Value> {
        self.at(At::Arg(node));
        let t = n.text.as_str();
        let is_hex_int = t.len() > 2
            && t.starts_with('0')
            && matches!(t.as_bytes().get(1), Some(b'x' | b'X'))
            && !t.contains(['p', 'P']);
        let is_rune = t.starts_with('\'');
        if n.is_complex {
            return Ok(Value::Complex(n.complex.0, n.complex.1));
        }
        if n.is_float && !is_hex_int && !is_rune && t.contains(['.', 'e', 'E', 'p', 'P']) {
            return Ok(Value::Float64(n.float));
        }
        if n.is_int {
            return Ok(Value::Int(n.int));
        }
        if n.is_uint {
            return Err(self.errorf(format!("{t} overflows int")));
        }
        Ok(Value::Invalid)
    }

    fn eval_field_node(
        &mut self,
        dot: &Rv,
        node: &'t Arg,
        idents: &'t [String],
        args: &'t [Arg],
        final_: Option<Rv>,
    ) -> R<Rv> {
        self.at(At::Arg(node));
        self.eval_field_chain(dot, dot.clone(), node, idents, args, final_)
    }

    fn eval_chain_node(
        &mut self,
        dot: &Rv,
        chain: &'t Arg,
        inner: &'t Arg,
        fields: &'t [String],
        args: &'t [Arg],
        final_: Option<Rv>,
    ) -> R<Rv> {
        self.at(At::Arg(chain));
        if fields.is_empty() {
            return Err(self.errorf("internal error: no fields in evalChainNode"));
        }
        if let Arg::Nil { .. } = inner {
            return Err(self.errorf(format!("indirection through explicit nil in {chain}")));
        }
        let pipe = self.eval_arg_rv(dot, None, inner)?;
        self.eval_field_chain(dot, pipe, chain, fields, args, final_)
    }

    fn eval_variable_node(
        &mut self,
        dot: &Rv,
        node: &'t Arg,
        idents: &'t [String],
        args: &'t [Arg],
        final_: Option<Rv>,
    ) -> R<Rv> {
        self.at(At::Arg(node));
        let name = idents.first().map_or("", String::as_str);
        let value = self.var_value(name)?;
        if idents.len() == 1 {
            self.not_a_function(args, &final_)?;
            return Ok(value);
        }
        self.eval_field_chain(
            dot,
            value,
            node,
            idents.get(1..).unwrap_or(&[]),
            args,
            final_,
        )
    }

    fn eval_field_chain(
        &mut self,
        dot: &Rv,
        mut receiver: Rv,
        node: &'t Arg,
        idents: &'t [String],
        args: &'t [Arg],
        final_: Option<Rv>,
    ) -> R<Rv> {
        let Some((last, init)) = idents.split_last() else {
            return Ok(receiver);
        };
        for id in init {
            receiver = match map_entry(&receiver, id) {
                Some(entry) => entry,
                None => self.eval_field(dot, id, node, &[], None, receiver)?,
            };
        }
        if args.len() <= 1
            && final_.is_none()
            && let Some(entry) = map_entry(&receiver, last)
        {
            return Ok(entry);
        }
        self.eval_field(dot, last, node, args, final_, receiver)
    }

    fn eval_field(
        &mut self,
        dot: &Rv,
        name: &'t str,
        node: &'t Arg,
        args: &'t [Arg],
        final_: Option<Rv>,
        receiver: Rv,
    ) -> R<Rv> {
        let typ = receiver.static_type();
        match &receiver.v {
            Value::Invalid => {
                if self.opts.missing_key == MissingKey::Error {
                    return Err(self.errorf(format!("nil data; no entry for key {}", quote(name))));
                }
                return Ok(Rv::invalid());
            }
            Value::Nil => {
                return Err(self.errorf(format!("nil pointer evaluating {typ}.{name}")));
            }
            _ => {}
        }
        if let Value::Version(_) = &receiver.v
            && let Some(m) = crate::semver::method(name)
        {
            return self.eval_call(
                dot,
                m,
                Special::None,
                At::Arg(node),
                name,
                Some(args),
                final_,
                Some(receiver.v),
            );
        }
        let has_args = args.len() > 1 || final_.is_some();
        match &receiver.v {
            Value::Map(m, kind) => {
                if has_args {
                    return Err(self.errorf(format!("{name} is not a method but has arguments")));
                }
                match Value::map_get(m, name) {
                    Some(v) => Ok(Rv {
                        v,
                        boxed: *kind == MapKind::Iface,
                    }),
                    None => match self.opts.missing_key {
                        MissingKey::Zero => Ok(Rv::invalid()),
                        MissingKey::Error => {
                            Err(self.errorf(format!("map has no entry for key {}", quote(name))))
                        }
                    },
                }
            }
            Value::Version(_)
                if matches!(
                    name,
                    "major" | "minor" | "patch" | "pre" | "metadata" | "original"
                ) =>
            {
                Err(self.errorf(format!(
                    "{name} is an unexported field of struct type {typ}"
                )))
            }
            _ => Err(self.errorf(format!("can't evaluate field {name} in type {typ}"))),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_function(
        &mut self,
        dot: &Rv,
        ident: &'t Arg,
        name: &'t str,
        func: Func,
        node: At<'t>,
        args: Option<&'t [Arg]>,
        final_: Option<Rv>,
    ) -> R<Rv> {
        self.at(At::Arg(ident));
        self.eval_call(dot, func.def, func.special, node, name, args, final_, None)
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_call(
        &mut self,
        dot: &Rv,
        f: &FuncDef,
        special: Special,
        node: At<'t>,
        name: &str,
        args: Option<&'t [Arg]>,
        final_: Option<Rv>,
        receiver: Option<Value>,
    ) -> R<Rv> {
        let args: &'t [Arg] = args.and_then(|a| a.get(1..)).unwrap_or(&[]);
        let num_in = args.len() + usize::from(final_.is_some());
        let mut num_fixed = args.len();
        if f.variadic.is_some() {
            num_fixed = f.params.len();
            if num_in < num_fixed {
                return Err(self.errorf(format!(
                    "wrong number of args for {name}: want at least {} got {}",
                    f.params.len(),
                    args.len()
                )));
            }
        } else if num_in != f.params.len() {
            return Err(self.errorf(format!(
                "wrong number of args for {name}: want {} got {}",
                f.params.len(),
                num_in
            )));
        }
        if let Special::And | Special::Or = special {
            let want = special == Special::Or;
            let mut v = Value::Invalid;
            for a in args {
                v = self.eval_arg(dot, Some(Param::Reflect), a)?;
                if v.truth() == want {
                    return Ok(Rv::plain(v));
                }
            }
            if let Some(fv) = final_ {
                v = self.validate_type(fv, Some(Param::Reflect))?;
            }
            return Ok(Rv::plain(v));
        }
        // `call` names its final argument in its error; keep it only then.
        let callee_value = match (special, &final_) {
            (Special::Call, Some(fv)) if args.is_empty() => Some(fv.v.clone()),
            _ => None,
        };
        let base = self.args.len();
        if let Err(e) = self.push_args(dot, f, receiver, args, final_, num_in, num_fixed) {
            self.args.truncate(base);
            return Err(e);
        }
        if special == Special::Call {
            let first = self.args.get(base).cloned();
            self.args.truncate(base);
            let callee = match callee_value {
                Some(v) => v.as_str().unwrap_or("").to_string(),
                None => args.first().map(|a| a.to_string()).unwrap_or_default(),
            };
            return Err(self.call_error(node, name, first.as_ref(), &callee));
        }
        let result = (f.call)(&mut self.ctx, self.args.get(base..).unwrap_or(&[]));
        self.args.truncate(base);
        match result {
            Ok(v) => {
                self.charge(&v)?;
                Ok(Rv::plain(v))
            }
            Err(FnError::Go(msg)) => {
                self.at(node);
                Err(self.errorf(format!("error calling {name}: {msg}")))
            }
            Err(FnError::Limit(msg)) => {
                self.at(node);
                Err(self.limit(format!("error calling {name}: {msg}")))
            }
        }
    }

    /// Evaluates a call's arguments onto the argument stack, checking each against
    /// its parameter's type.
    #[allow(clippy::too_many_arguments)]
    fn push_args(
        &mut self,
        dot: &Rv,
        f: &FuncDef,
        receiver: Option<Value>,
        args: &'t [Arg],
        final_: Option<Rv>,
        num_in: usize,
        num_fixed: usize,
    ) -> R<()> {
        if let Some(r) = receiver {
            self.args.push(r);
        }
        let mut i = 0;
        while i < num_fixed && i < args.len() {
            let t = f.params.get(i).copied();
            let v = self.eval_arg(dot, t, &args[i])?;
            self.args.push(v);
            i += 1;
        }
        if let Some(vt) = f.variadic {
            while i < args.len() {
                let v = self.eval_arg(dot, Some(vt), &args[i])?;
                self.args.push(v);
                i += 1;
            }
        }
        if let Some(fv) = final_ {
            let t = match f.variadic {
                Some(vt) if num_in > num_fixed => vt,
                _ => f.params.get(num_in - 1).copied().unwrap_or(Param::Any),
            };
            let v = self.validate_type(fv, Some(t))?;
            self.args.push(v);
        }
        Ok(())
    }

    /// `call` on a value that is not a function (there are no function values here).
    fn call_error(
        &mut self,
        node: At<'t>,
        name: &str,
        first: Option<&Value>,
        callee: &str,
    ) -> Stop {
        let msg = match first {
            None | Some(Value::Invalid) | Some(Value::Nil) => "call of nil".to_string(),
            Some(v) => format!("non-function {callee} of type {}", v.type_name()),
        };
        self.at(node);
        self.errorf(format!("error calling {name}: {msg}"))
    }

    fn validate_type(&self, rv: Rv, typ: Option<Param>) -> R<Value> {
        let Some(typ) = typ else {
            return Ok(rv.v);
        };
        if let Value::Invalid = rv.v {
            if typ.can_be_nil() {
                return Ok(match typ {
                    Param::Reflect => Value::Invalid,
                    Param::MapIface => Value::map(Default::default()),
                    Param::ListIface => Value::list(Vec::new()),
                    _ => Value::Nil,
                });
            }
            return Err(self.errorf(format!("invalid value; expected {}", typ.go_type())));
        }
        match typ {
            Param::Any | Param::Reflect => return Ok(rv.v),
            _ => {}
        }
        // Go accepts the value when its own type is the parameter's, whether or not
        // it comes boxed in an interface (nil has no type to match).
        if typ.is_type_of(&rv.v) {
            return Ok(rv.v);
        }
        let want = typ.go_type();
        let got = if rv.boxed && matches!(rv.v, Value::Nil) {
            "interface {}"
        } else {
            rv.v.type_name()
        };
        Err(self.errorf(format!("wrong type for value; expected {want}; got {got}")))
    }

    fn eval_arg_rv(&mut self, dot: &Rv, typ: Option<Param>, n: &'t Arg) -> R<Rv> {
        self.eval_arg(dot, typ, n).map(Rv::plain)
    }

    fn eval_arg(&mut self, dot: &Rv, typ: Option<Param>, n: &'t Arg) -> R<Value> {
        self.at(At::Arg(n));
        match n {
            Arg::Dot { .. } => return self.validate_type(dot.clone(), typ),
            Arg::Nil { .. } => {
                return match typ {
                    Some(t) if t.can_be_nil() => self.validate_type(Rv::invalid(), typ),
                    Some(t) => Err(self.errorf(format!("cannot assign nil to {}", t.go_type()))),
                    None => Ok(Value::Invalid),
                };
            }
            Arg::Field { idents, .. } => {
                let v = self.eval_field_node(dot, n, idents, std::slice::from_ref(n), None)?;
                return self.validate_type(v, typ);
            }
            Arg::Variable { idents, .. } => {
                let v = self.eval_variable_node(dot, n, idents, &[], None)?;
                return self.validate_type(v, typ);
            }
            Arg::Pipe(p) => {
                let v = self.eval_pipeline(dot, p)?;
                return self.validate_type(v, typ);
            }
            Arg::Identifier { name, func, .. } => {
                let v = self.eval_function(dot, n, name, *func, At::Arg(n), None, None)?;
                return self.validate_type(v, typ);
            }
            Arg::Chain { node, fields, .. } => {
                let v = self.eval_chain_node(dot, n, node, fields, &[], None)?;
                return self.validate_type(v, typ);
            }
            _ => {}
        }
        let Some(typ) = typ else {
            return Err(self.errorf(format!("can't handle {n} for arg of type <nil>")));
        };
        match typ {
            Param::Bool => match n {
                Arg::Bool { val, .. } => Ok(Value::Bool(*val)),
                _ => Err(self.errorf(format!("expected bool; found {n}"))),
            },
            Param::Float64 => match n {
                Arg::Number { num, .. } if num.is_float => Ok(Value::Float64(num.float)),
                _ => Err(self.errorf(format!("expected float; found {n}"))),
            },
            Param::Int => match n {
                Arg::Number { num, .. } if num.is_int => Ok(Value::Int(num.int)),
                _ => Err(self.errorf(format!("expected integer; found {n}"))),
            },
            Param::Uint32 => match n {
                Arg::Number { num, .. } if num.is_uint && num.uint <= u32::MAX as u64 => {
                    Ok(Value::Uint64(num.uint))
                }
                Arg::Number { num, .. } if num.is_uint => {
                    Err(self.errorf(format!("{} overflows uint32", num.text)))
                }
                _ => Err(self.errorf(format!("expected unsigned integer; found {n}"))),
            },
            Param::Str => match n {
                Arg::String { text, .. } => Ok(Value::Str(Str::Literal(Arc::clone(text)))),
                _ => Err(self.errorf(format!("expected string; found {n}"))),
            },
            Param::Any | Param::Reflect => self.eval_empty_interface(n),
            _ => Err(self.errorf(format!(
                "can't handle {n} for arg of type {}",
                typ.go_type()
            ))),
        }
    }

    fn eval_empty_interface(&mut self, n: &'t Arg) -> R<Value> {
        self.at(At::Arg(n));
        match n {
            Arg::Bool { val, .. } => Ok(Value::Bool(*val)),
            Arg::Number { num, .. } => self.ideal_constant(n, num),
            Arg::String { text, .. } => Ok(Value::Str(Str::Literal(Arc::clone(text)))),
            _ => Err(self.errorf(format!(
                "can't handle assignment of {n} to empty interface argument"
            ))),
        }
    }
}
