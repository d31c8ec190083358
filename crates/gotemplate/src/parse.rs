//! The parser: items to trees, one per template name (`define` and `block` add
//! more), following Go's grammar, look-ahead and error texts (`template: tpl:1:
//! unexpected "}" in operand`, `function "now" not defined`, ...).

use std::collections::HashMap;

use topograph_gocompat::strconv::quote;

use crate::ast::{Arg, BranchKind, Command, Decl, Node, Pipe};
use crate::funcs::Func;
use crate::lex::{Item, ItemType, Lexer};
use crate::literal;

/// A parse failure: Go's text, and whether it came from our nesting bound.
#[derive(Debug)]
pub(crate) struct ParseError {
    pub message: String,
    pub limit: bool,
}

type PResult<T> = Result<T, ParseError>;

/// What `textOrAction` can return: a node, or the `{{end}}`/`{{else}}` that closes a list.
enum Parsed {
    Node(Node),
    End,
    Else,
}

impl Parsed {
    fn describe(&self) -> &'static str {
        match self {
            Parsed::End => "{{end}}",
            Parsed::Else => "{{else}}",
            Parsed::Node(_) => "",
        }
    }
}

/// Trees of one parse, by template name.
#[derive(Debug)]
pub(crate) struct TreeSet {
    /// The name the text was parsed as.
    root_name: String,
    /// Its tree, kept apart so running the template does not hash its name.
    root: Vec<Node>,
    /// The templates the text defines, other than the root.
    defined: HashMap<String, Vec<Node>>,
}

impl TreeSet {
    pub(crate) fn get(&self, name: &str) -> Option<&[Node]> {
        if name == self.root_name {
            return Some(&self.root);
        }
        self.defined.get(name).map(Vec::as_slice)
    }

    /// The root tree and every defined one.
    pub(crate) fn parts(&self) -> (&[Node], impl Iterator<Item = &[Node]>) {
        (&self.root, self.defined.values().map(Vec::as_slice))
    }
}

struct Parser<'a, 'f> {
    lex: Lexer<'a>,
    token: [Option<Item>; 3],
    peek_count: usize,
    parse_name: &'a str,
    vars: Vec<String>,
    action_line: usize,
    range_depth: usize,
    depth: usize,
    max_depth: usize,
    resolve: &'f dyn Fn(&str) -> Option<Func>,
    trees: HashMap<String, Vec<Node>>,
}

/// Parses `text` as the template `name` and every template it defines.
pub(crate) fn parse(
    name: &str,
    text: &str,
    resolve: &dyn Fn(&str) -> Option<Func>,
    max_depth: usize,
) -> Result<TreeSet, ParseError> {
    let mut p = Parser {
        lex: Lexer::new(text),
        token: [None, None, None],
        peek_count: 0,
        parse_name: name,
        vars: vec!["$".to_string()],
        action_line: 0,
        range_depth: 0,
        depth: 0,
        max_depth,
        resolve,
        trees: HashMap::new(),
    };
    let root = p.parse_root()?;
    p.add(name, root)?;
    let mut defined = p.trees;
    // `add` always leaves a tree under the parse name (the text's, or a non-empty
    // `define` of the same name).
    let root = defined.remove(name).unwrap_or_default();
    Ok(TreeSet {
        root_name: name.to_string(),
        root,
        defined,
    })
}

fn eof_item() -> Item {
    Item {
        typ: ItemType::Eof,
        pos: 0,
        val: String::new(),
        line: 1,
    }
}

impl<'a, 'f> Parser<'a, 'f> {
    fn errorf(&self, msg: impl std::fmt::Display) -> ParseError {
        let line = self.token[0].as_ref().map_or(1, |t| t.line);
        ParseError {
            message: format!("template: {}:{}: {}", self.parse_name, line, msg),
            limit: false,
        }
    }

    fn next(&mut self) -> Item {
        if self.peek_count > 0 {
            self.peek_count -= 1;
        } else {
            self.token[0] = Some(self.lex.next_item());
        }
        self.token[self.peek_count].clone().unwrap_or_else(eof_item)
    }

    fn backup(&mut self) {
        self.peek_count += 1;
    }

    fn backup2(&mut self, t1: Item) {
        self.token[1] = Some(t1);
        self.peek_count = 2;
    }

    fn backup3(&mut self, t2: Item, t1: Item) {
        self.token[1] = Some(t1);
        self.token[2] = Some(t2);
        self.peek_count = 3;
    }

    fn peek(&mut self) -> Item {
        if self.peek_count > 0 {
            return self.token[self.peek_count - 1]
                .clone()
                .unwrap_or_else(eof_item);
        }
        self.peek_count = 1;
        let item = self.lex.next_item();
        self.token[0] = Some(item.clone());
        item
    }

    fn next_non_space(&mut self) -> Item {
        loop {
            let t = self.next();
            if t.typ != ItemType::Space {
                return t;
            }
        }
    }

    fn peek_non_space(&mut self) -> Item {
        let t = self.next_non_space();
        self.backup();
        t
    }

    fn expect(&mut self, typ: ItemType, context: &str) -> PResult<Item> {
        let t = self.next_non_space();
        if t.typ != typ {
            return Err(self.unexpected(&t, context));
        }
        Ok(t)
    }

    fn unexpected(&self, token: &Item, context: &str) -> ParseError {
        if token.typ == ItemType::Error {
            let mut extra = String::new();
            if self.action_line != 0 && self.action_line != token.line {
                extra = format!(
                    " in action started at {}:{}",
                    self.parse_name, self.action_line
                );
                if token.val.ends_with(" action") {
                    extra = extra[" in action".len()..].to_string();
                }
            }
            return self.errorf(format!("{token}{extra}"));
        }
        self.errorf(format!("unexpected {token} in {context}"))
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > self.max_depth {
            let mut e = self.errorf("max expression depth exceeded");
            e.limit = true;
            return Err(e);
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn add(&mut self, name: &str, root: Vec<Node>) -> PResult<()> {
        let existing_empty = self.trees.get(name).is_none_or(|t| is_empty_tree(t));
        if existing_empty {
            self.trees.insert(name.to_string(), root);
            return Ok(());
        }
        if !is_empty_tree(&root) {
            return Err(self.errorf(format!(
                "template: multiple definition of template {}",
                quote(name)
            )));
        }
        Ok(())
    }

    fn parse_root(&mut self) -> PResult<Vec<Node>> {
        let mut root = Vec::new();
        while self.peek().typ != ItemType::Eof {
            if self.peek().typ == ItemType::LeftDelim {
                let delim = self.next();
                if self.next_non_space().typ == ItemType::Define {
                    self.parse_definition()?;
                    continue;
                }
                self.backup2(delim);
            }
            match self.text_or_action()? {
                Parsed::Node(n) => root.push(n),
                other => return Err(self.errorf(format!("unexpected {}", other.describe()))),
            }
        }
        Ok(root)
    }

    fn parse_definition(&mut self) -> PResult<()> {
        let context = "define clause";
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$".to_string()]);
        let saved_range = std::mem::replace(&mut self.range_depth, 0);
        let token = self.next_non_space();
        if !matches!(token.typ, ItemType::String | ItemType::RawString) {
            return Err(self.unexpected(&token, context));
        }
        let name = literal::unquote(&token.val).map_err(|e| self.errorf(e))?;
        self.expect(ItemType::RightDelim, context)?;
        let (list, end) = self.item_list()?;
        if !matches!(end, Parsed::End) {
            return Err(self.errorf(format!("unexpected {} in {}", end.describe(), context)));
        }
        self.add(&name, list)?;
        self.vars = saved_vars;
        self.range_depth = saved_range;
        Ok(())
    }

    fn item_list(&mut self) -> PResult<(Vec<Node>, Parsed)> {
        let mut list = Vec::new();
        while self.peek_non_space().typ != ItemType::Eof {
            match self.text_or_action()? {
                Parsed::Node(n) => list.push(n),
                end => return Ok((list, end)),
            }
        }
        Err(self.errorf("unexpected EOF"))
    }

    fn text_or_action(&mut self) -> PResult<Parsed> {
        let token = self.next_non_space();
        match token.typ {
            ItemType::Text => Ok(Parsed::Node(Node::Text {
                pos: token.pos,
                text: token.val,
            })),
            ItemType::LeftDelim => {
                self.action_line = token.line;
                let r = self.action();
                self.action_line = 0;
                r
            }
            _ => Err(self.unexpected(&token, "input")),
        }
    }

    fn action(&mut self) -> PResult<Parsed> {
        let token = self.next_non_space();
        match token.typ {
            ItemType::Block => return self.block_control().map(Parsed::Node),
            ItemType::Break => return self.break_control(token.pos, "{{break}}", true),
            ItemType::Continue => return self.break_control(token.pos, "{{continue}}", false),
            ItemType::Else => return self.else_control(),
            ItemType::End => {
                self.expect(ItemType::RightDelim, "end")?;
                return Ok(Parsed::End);
            }
            ItemType::If => return self.branch(BranchKind::If).map(Parsed::Node),
            ItemType::Range => return self.branch(BranchKind::Range).map(Parsed::Node),
            ItemType::Template => return self.template_control().map(Parsed::Node),
            ItemType::With => return self.branch(BranchKind::With).map(Parsed::Node),
            _ => {}
        }
        self.backup();
        let token = self.peek();
        let pipe = self.pipeline("command", ItemType::RightDelim)?;
        Ok(Parsed::Node(Node::Action {
            pos: token.pos,
            pipe,
        }))
    }

    fn break_control(&mut self, pos: usize, context: &str, is_break: bool) -> PResult<Parsed> {
        let token = self.next_non_space();
        if token.typ != ItemType::RightDelim {
            return Err(self.unexpected(&token, context));
        }
        if self.range_depth == 0 {
            return Err(self.errorf(format!("{context} outside {{{{range}}}}")));
        }
        Ok(Parsed::Node(if is_break {
            Node::Break { pos }
        } else {
            Node::Continue { pos }
        }))
    }

    fn else_control(&mut self) -> PResult<Parsed> {
        let peek = self.peek_non_space();
        if matches!(peek.typ, ItemType::If | ItemType::With) {
            return Ok(Parsed::Else);
        }
        self.expect(ItemType::RightDelim, "else")?;
        Ok(Parsed::Else)
    }

    fn branch(&mut self, kind: BranchKind) -> PResult<Node> {
        self.enter()?;
        let r = self.parse_control(kind);
        self.leave();
        r
    }

    fn parse_control(&mut self, kind: BranchKind) -> PResult<Node> {
        let context = match kind {
            BranchKind::If => "if",
            BranchKind::Range => "range",
            BranchKind::With => "with",
        };
        let nvars = self.vars.len();
        let pipe = self.pipeline(context, ItemType::RightDelim)?;
        if kind == BranchKind::Range {
            self.range_depth += 1;
        }
        let (list, next) = self.item_list()?;
        if kind == BranchKind::Range {
            self.range_depth -= 1;
        }
        let mut else_list = None;
        if let Parsed::Else = next {
            let pk = self.peek().typ;
            if kind == BranchKind::If && pk == ItemType::If {
                self.next();
                else_list = Some(vec![self.branch(BranchKind::If)?]);
            } else if kind == BranchKind::With && pk == ItemType::With {
                self.next();
                else_list = Some(vec![self.branch(BranchKind::With)?]);
            } else {
                let (l, n) = self.item_list()?;
                if !matches!(n, Parsed::End) {
                    return Err(self.errorf(format!("expected end; found {}", n.describe())));
                }
                else_list = Some(l);
            }
        }
        self.vars.truncate(nvars);
        Ok(Node::Branch {
            kind,
            pos: pipe.pos,
            pipe,
            list,
            else_list,
        })
    }

    fn template_name(&mut self, token: &Item, context: &str) -> PResult<String> {
        match token.typ {
            ItemType::String | ItemType::RawString => {
                literal::unquote(&token.val).map_err(|e| self.errorf(e))
            }
            _ => Err(self.unexpected(token, context)),
        }
    }

    fn block_control(&mut self) -> PResult<Node> {
        let context = "block clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, context)?;
        let pipe = self.pipeline(context, ItemType::RightDelim)?;
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$".to_string()]);
        let saved_range = std::mem::replace(&mut self.range_depth, 0);
        self.enter()?;
        let (list, end) = self.item_list()?;
        self.leave();
        if !matches!(end, Parsed::End) {
            return Err(self.errorf(format!("unexpected {} in {}", end.describe(), context)));
        }
        self.add(&name, list)?;
        self.vars = saved_vars;
        self.range_depth = saved_range;
        Ok(Node::Template {
            pos: token.pos,
            name,
            pipe: Some(pipe),
        })
    }

    fn template_control(&mut self) -> PResult<Node> {
        let context = "template clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, context)?;
        let mut pipe = None;
        if self.next_non_space().typ != ItemType::RightDelim {
            self.backup();
            pipe = Some(self.pipeline(context, ItemType::RightDelim)?);
        }
        Ok(Node::Template {
            pos: token.pos,
            name,
            pipe,
        })
    }

    fn pipeline(&mut self, context: &str, end: ItemType) -> PResult<Pipe> {
        let token = self.peek_non_space();
        let mut pipe = Pipe {
            pos: token.pos,
            is_assign: false,
            decl: Vec::new(),
            cmds: Vec::new(),
        };
        loop {
            let v = self.peek_non_space();
            if v.typ != ItemType::Variable {
                break;
            }
            self.next();
            let after = self.peek();
            let next = self.peek_non_space();
            if matches!(next.typ, ItemType::Assign | ItemType::Declare) {
                pipe.is_assign = next.typ == ItemType::Assign;
                self.next_non_space();
                pipe.decl.push(Decl {
                    idents: v.val.split('.').map(str::to_string).collect(),
                });
                self.vars.push(v.val);
                break;
            } else if next.typ == ItemType::Char && next.val == "," {
                self.next_non_space();
                pipe.decl.push(Decl {
                    idents: v.val.split('.').map(str::to_string).collect(),
                });
                self.vars.push(v.val);
                if context == "range" && pipe.decl.len() < 2 {
                    match self.peek_non_space().typ {
                        ItemType::Variable | ItemType::RightDelim | ItemType::RightParen => {
                            continue;
                        }
                        _ => return Err(self.errorf("range can only initialize variables")),
                    }
                }
                return Err(self.errorf(format!("too many declarations in {context}")));
            } else if after.typ == ItemType::Space {
                self.backup3(v, after);
                break;
            } else {
                self.backup2(v);
                break;
            }
        }
        loop {
            let token = self.next_non_space();
            match token.typ {
                t if t == end => {
                    self.check_pipeline(&pipe, context)?;
                    return Ok(pipe);
                }
                ItemType::Bool
                | ItemType::CharConstant
                | ItemType::Complex
                | ItemType::Dot
                | ItemType::Field
                | ItemType::Identifier
                | ItemType::Number
                | ItemType::Nil
                | ItemType::RawString
                | ItemType::String
                | ItemType::Variable
                | ItemType::LeftParen => {
                    self.backup();
                    let cmd = self.command()?;
                    pipe.cmds.push(cmd);
                }
                _ => return Err(self.unexpected(&token, context)),
            }
        }
    }

    fn check_pipeline(&self, pipe: &Pipe, context: &str) -> PResult<()> {
        if pipe.cmds.is_empty() {
            return Err(self.errorf(format!("missing value for {context}")));
        }
        for (i, c) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(
                c.args.first(),
                Some(
                    Arg::Bool { .. }
                        | Arg::Dot { .. }
                        | Arg::Nil { .. }
                        | Arg::Number { .. }
                        | Arg::String { .. }
                )
            ) {
                return Err(self.errorf(format!(
                    "non executable command in pipeline stage {}",
                    i + 1
                )));
            }
        }
        Ok(())
    }

    fn command(&mut self) -> PResult<Command> {
        let pos = self.peek_non_space().pos;
        let mut cmd = Command {
            pos,
            args: Vec::new(),
        };
        loop {
            self.peek_non_space();
            if let Some(op) = self.operand()? {
                cmd.args.push(op);
            }
            let token = self.next();
            match token.typ {
                ItemType::Space => continue,
                ItemType::RightDelim | ItemType::RightParen => self.backup(),
                ItemType::Pipe => {}
                _ => return Err(self.unexpected(&token, "operand")),
            }
            break;
        }
        if cmd.args.is_empty() {
            return Err(self.errorf("empty command"));
        }
        Ok(cmd)
    }

    fn operand(&mut self) -> PResult<Option<Arg>> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek().typ != ItemType::Field {
            return Ok(Some(node));
        }
        let chain_pos = self.peek().pos;
        let mut fields = Vec::new();
        while self.peek().typ == ItemType::Field {
            let f = self.next().val;
            fields.push(f.get(1..).unwrap_or("").to_string());
        }
        Ok(Some(match node {
            Arg::Field { mut idents, .. } => {
                idents.extend(fields);
                Arg::Field {
                    pos: chain_pos,
                    idents,
                }
            }
            Arg::Variable { mut idents, .. } => {
                idents.extend(fields);
                Arg::Variable {
                    pos: chain_pos,
                    idents,
                }
            }
            n @ (Arg::Bool { .. }
            | Arg::String { .. }
            | Arg::Number { .. }
            | Arg::Nil { .. }
            | Arg::Dot { .. }) => {
                return Err(
                    self.errorf(format!("unexpected . after term {}", quote(&n.to_string())))
                );
            }
            n => Arg::Chain {
                pos: chain_pos,
                node: Box::new(n),
                fields,
            },
        }))
    }

    fn term(&mut self) -> PResult<Option<Arg>> {
        let token = self.next_non_space();
        let pos = token.pos;
        Ok(Some(match token.typ {
            ItemType::Identifier => {
                let Some(func) = (self.resolve)(&token.val) else {
                    return Err(self.errorf(format!("function {} not defined", quote(&token.val))));
                };
                Arg::Identifier {
                    pos,
                    name: token.val,
                    func,
                }
            }
            ItemType::Dot => Arg::Dot { pos },
            ItemType::Nil => Arg::Nil { pos },
            ItemType::Variable => {
                let idents: Vec<String> = token.val.split('.').map(str::to_string).collect();
                let first = idents.first().cloned().unwrap_or_default();
                if !self.vars.contains(&first) {
                    return Err(self.errorf(format!("undefined variable {}", quote(&first))));
                }
                Arg::Variable { pos, idents }
            }
            ItemType::Field => Arg::Field {
                pos,
                idents: token
                    .val
                    .get(1..)
                    .unwrap_or("")
                    .split('.')
                    .map(str::to_string)
                    .collect(),
            },
            ItemType::Bool => Arg::Bool {
                pos,
                val: token.val == "true",
            },
            ItemType::CharConstant | ItemType::Complex | ItemType::Number => {
                let num = literal::number(&token.val, token.typ).map_err(|e| self.errorf(e))?;
                Arg::Number {
                    pos,
                    num: Box::new(num),
                }
            }
            ItemType::LeftParen => {
                self.enter()?;
                let p = self.pipeline("parenthesized pipeline", ItemType::RightParen);
                self.leave();
                Arg::Pipe(Box::new(p?))
            }
            ItemType::String | ItemType::RawString => {
                let text = literal::unquote(&token.val).map_err(|e| self.errorf(e))?;
                Arg::String {
                    pos,
                    quoted: token.val,
                    text: text.into(),
                }
            }
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }
}

/// Go's `IsEmptyTree`: only whitespace text (and nothing else) counts as empty.
fn is_empty_tree(list: &[Node]) -> bool {
    list.iter().all(|n| match n {
        Node::Text { text, .. } => text.trim().is_empty(),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only `f` is defined (as Go's `print`).
    fn only_f(name: &str) -> Option<Func> {
        match name {
            "f" => crate::funcs::lookup("print", crate::Functions::Builtins),
            _ => None,
        }
    }

    fn p(s: &str) -> Result<TreeSet, String> {
        parse("tpl", s, &only_f, 100).map_err(|e| e.message)
    }

    #[test]
    fn parses_and_reports_like_go() {
        assert!(p("a {{ .x | f }} b").is_ok());
        assert_eq!(
            p("{{ .x").err().as_deref(),
            Some("template: tpl:1: unclosed action")
        );
        assert_eq!(
            p("{{ g }}").err().as_deref(),
            Some("template: tpl:1: function \"g\" not defined")
        );
        assert_eq!(
            p("{{ end }}").err().as_deref(),
            Some("template: tpl:1: unexpected {{end}}")
        );
        assert_eq!(
            p("{{ break }}").err().as_deref(),
            Some("template: tpl:1: {{break}} outside {{range}}")
        );
    }

    #[test]
    fn defines_templates() {
        let t = p("{{ define \"x\" }}X{{ end }}{{ template \"x\" }}");
        assert!(t.is_ok_and(|t| t.get("x").is_some() && t.get("tpl").is_some()));
    }

    #[test]
    fn nesting_is_bounded() {
        assert!(parse("tpl", "{{ (1) }}", &|_| None, 3).is_ok());
        let e = parse(
            "tpl",
            &format!("{{{{ {}1{} }}}}", "(".repeat(5), ")".repeat(5)),
            &|_| None,
            3,
        );
        assert!(e.is_err_and(|e| e.limit));
    }
}
