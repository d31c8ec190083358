//! The template lexer: turns template text into items on demand, as Go's
//! `text/template/parse` lexer does, with the same item boundaries, positions,
//! line numbers, trim-marker handling (`{{-`, `-}}`) and error texts.
//!
//! The parser pulls items one at a time; a lexing error becomes an error item and
//! the stream then ends, so which error wins (lexer or parser) matches Go.

use topograph_gocompat::strconv::{is_print, quote};

/// Kinds of items.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ItemType {
    Error,
    Bool,
    Char,
    CharConstant,
    Comment,
    Complex,
    Assign,
    Declare,
    Eof,
    Field,
    Identifier,
    LeftDelim,
    LeftParen,
    Number,
    Pipe,
    RawString,
    RightDelim,
    RightParen,
    Space,
    String,
    Text,
    Variable,
    // Keywords come after everything else.
    Keyword,
    Block,
    Break,
    Continue,
    Dot,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

/// One lexed item.
#[derive(Clone, Debug)]
pub(crate) struct Item {
    pub typ: ItemType,
    /// Byte offset in the input.
    pub pos: usize,
    pub val: String,
    /// 1-based line of the item's start.
    pub line: usize,
}

impl std::fmt::Display for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.typ {
            ItemType::Eof => f.write_str("EOF"),
            ItemType::Error => f.write_str(&self.val),
            t if t > ItemType::Keyword => write!(f, "<{}>", self.val),
            _ => {
                if self.val.chars().count() > 10 {
                    let short: String = self.val.chars().take(10).collect();
                    write!(f, "{}...", quote(&short))
                } else {
                    f.write_str(&quote(&self.val))
                }
            }
        }
    }
}

const LEFT_DELIM: &str = "{{";
const RIGHT_DELIM: &str = "}}";
const LEFT_COMMENT: &str = "/*";
const RIGHT_COMMENT: &str = "*/";
const TRIM_MARKER_LEN: usize = 2;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Text,
    LeftDelim,
    Comment,
    RightDelim,
    InsideAction,
    Space,
    Identifier,
    Field,
    Variable,
    Char,
    Number,
    Quote,
    RawQuote,
}

pub(crate) struct Lexer<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    line: usize,
    start_line: usize,
    inside_action: bool,
    paren_depth: i64,
    done: bool,
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

pub(crate) fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

fn has_left_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(b[1] as char)
}

fn has_right_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && is_space(b[0] as char) && b[1] == b'-'
}

fn keyword(word: &str) -> Option<ItemType> {
    Some(match word {
        "." => ItemType::Dot,
        "block" => ItemType::Block,
        "break" => ItemType::Break,
        "continue" => ItemType::Continue,
        "define" => ItemType::Define,
        "else" => ItemType::Else,
        "end" => ItemType::End,
        "if" => ItemType::If,
        "range" => ItemType::Range,
        "nil" => ItemType::Nil,
        "template" => ItemType::Template,
        "with" => ItemType::With,
        _ => return None,
    })
}

/// `%#U` of a character, as Go prints it.
fn char_u(c: Option<char>) -> String {
    match c {
        None => "U+FFFFFFFF".to_string(),
        Some(c) => {
            let u = c as u32;
            if is_print(c) {
                format!("U+{u:04X} '{c}'")
            } else {
                format!("U+{u:04X}")
            }
        }
    }
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(input: &'a str) -> Self {
        Lexer {
            input,
            pos: 0,
            start: 0,
            line: 1,
            start_line: 1,
            inside_action: false,
            paren_depth: 0,
            done: false,
        }
    }

    fn rest(&self) -> &'a str {
        self.input.get(self.pos..).unwrap_or("")
    }

    fn next(&mut self) -> Option<char> {
        let c = self.rest().chars().next()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn backup_char(&mut self, c: Option<char>) {
        if let Some(c) = c {
            self.pos -= c.len_utf8();
            if c == '\n' {
                self.line -= 1;
            }
        }
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn this_item(&mut self, typ: ItemType) -> Item {
        let item = Item {
            typ,
            pos: self.start,
            val: self
                .input
                .get(self.start..self.pos)
                .unwrap_or("")
                .to_string(),
            line: self.start_line,
        };
        self.start = self.pos;
        self.start_line = self.line;
        item
    }

    fn ignore(&mut self) {
        self.line += self
            .input
            .get(self.start..self.pos)
            .unwrap_or("")
            .matches('\n')
            .count();
        self.start = self.pos;
        self.start_line = self.line;
    }

    fn error(&mut self, msg: String) -> Item {
        self.done = true;
        Item {
            typ: ItemType::Error,
            pos: self.start,
            val: msg,
            line: self.start_line,
        }
    }

    fn accept(&mut self, valid: &str) -> bool {
        match self.peek() {
            Some(c) if valid.contains(c) => {
                self.next();
                true
            }
            _ => false,
        }
    }

    fn accept_run(&mut self, valid: &str) {
        while self.accept(valid) {}
    }

    fn at_right_delim(&self) -> (bool, bool) {
        let r = self.rest();
        if has_right_trim_marker(r)
            && r.get(TRIM_MARKER_LEN..)
                .is_some_and(|s| s.starts_with(RIGHT_DELIM))
        {
            return (true, true);
        }
        (r.starts_with(RIGHT_DELIM), false)
    }

    fn at_terminator(&self) -> bool {
        match self.peek() {
            None => true,
            Some(c) if is_space(c) => true,
            Some('.' | ',' | '|' | ':' | ')' | '(') => true,
            _ => self.rest().starts_with(RIGHT_DELIM),
        }
    }

    /// The next item; after an error or EOF, EOF forever.
    pub(crate) fn next_item(&mut self) -> Item {
        if self.done {
            return Item {
                typ: ItemType::Eof,
                pos: self.pos,
                val: "EOF".into(),
                line: self.start_line,
            };
        }
        let mut state = if self.inside_action {
            State::InsideAction
        } else {
            State::Text
        };
        loop {
            let r = match state {
                State::Text => self.lex_text(),
                State::LeftDelim => self.lex_left_delim(),
                State::Comment => self.lex_comment(),
                State::RightDelim => self.lex_right_delim(),
                State::InsideAction => self.lex_inside_action(),
                State::Space => self.lex_space(),
                State::Identifier => self.lex_identifier(),
                State::Field => self.lex_field_or_variable(ItemType::Field),
                State::Variable => {
                    if self.at_terminator() {
                        Ok(self.this_item(ItemType::Variable))
                    } else {
                        self.lex_field_or_variable(ItemType::Variable)
                    }
                }
                State::Char => self.lex_char(),
                State::Number => self.lex_number(),
                State::Quote => self.lex_quote(),
                State::RawQuote => self.lex_raw_quote(),
            };
            match r {
                Ok(item) => {
                    if item.typ == ItemType::Eof {
                        self.done = true;
                    }
                    return item;
                }
                Err(next) => state = next,
            }
        }
    }

    fn lex_text(&mut self) -> Result<Item, State> {
        if let Some(x) = self.rest().find(LEFT_DELIM) {
            if x > 0 {
                self.pos += x;
                let mut trim = 0;
                let delim_end = self.pos + LEFT_DELIM.len();
                if has_left_trim_marker(self.input.get(delim_end..).unwrap_or("")) {
                    let t = self.input.get(self.start..self.pos).unwrap_or("");
                    trim = t.len() - t.trim_end_matches(is_space).len();
                }
                self.pos -= trim;
                self.line += self
                    .input
                    .get(self.start..self.pos)
                    .unwrap_or("")
                    .matches('\n')
                    .count();
                let item = self.this_item(ItemType::Text);
                self.pos += trim;
                self.ignore();
                if !item.val.is_empty() {
                    return Ok(item);
                }
            }
            return Err(State::LeftDelim);
        }
        self.pos = self.input.len();
        if self.pos > self.start {
            self.line += self
                .input
                .get(self.start..self.pos)
                .unwrap_or("")
                .matches('\n')
                .count();
            return Ok(self.this_item(ItemType::Text));
        }
        Ok(self.this_item(ItemType::Eof))
    }

    fn lex_left_delim(&mut self) -> Result<Item, State> {
        self.pos += LEFT_DELIM.len();
        let trim = has_left_trim_marker(self.rest());
        let after = if trim { TRIM_MARKER_LEN } else { 0 };
        if self
            .input
            .get(self.pos + after..)
            .is_some_and(|s| s.starts_with(LEFT_COMMENT))
        {
            self.pos += after;
            self.ignore();
            return Err(State::Comment);
        }
        let item = self.this_item(ItemType::LeftDelim);
        self.inside_action = true;
        self.pos += after;
        self.ignore();
        self.paren_depth = 0;
        Ok(item)
    }

    fn lex_comment(&mut self) -> Result<Item, State> {
        self.pos += LEFT_COMMENT.len();
        let Some(x) = self.rest().find(RIGHT_COMMENT) else {
            return Ok(self.error("unclosed comment".into()));
        };
        self.pos += x + RIGHT_COMMENT.len();
        let (delim, trim) = self.at_right_delim();
        if !delim {
            return Ok(self.error("comment ends before closing delimiter".into()));
        }
        self.line += self
            .input
            .get(self.start..self.pos)
            .unwrap_or("")
            .matches('\n')
            .count();
        let _comment = self.this_item(ItemType::Comment);
        if trim {
            self.pos += TRIM_MARKER_LEN;
        }
        self.pos += RIGHT_DELIM.len();
        if trim {
            let r = self.rest();
            self.pos += r.len() - r.trim_start_matches(is_space).len();
        }
        self.ignore();
        Err(State::Text)
    }

    fn lex_right_delim(&mut self) -> Result<Item, State> {
        let (_, trim) = self.at_right_delim();
        if trim {
            self.pos += TRIM_MARKER_LEN;
            self.ignore();
        }
        self.pos += RIGHT_DELIM.len();
        let item = self.this_item(ItemType::RightDelim);
        if trim {
            let r = self.rest();
            self.pos += r.len() - r.trim_start_matches(is_space).len();
            self.ignore();
        }
        self.inside_action = false;
        Ok(item)
    }

    fn lex_inside_action(&mut self) -> Result<Item, State> {
        let (delim, _) = self.at_right_delim();
        if delim {
            if self.paren_depth == 0 {
                return Err(State::RightDelim);
            }
            return Ok(self.error("unclosed left paren".into()));
        }
        let r = self.next();
        match r {
            None => Ok(self.error("unclosed action".into())),
            Some(c) if is_space(c) => {
                self.backup_char(r);
                Err(State::Space)
            }
            Some('=') => Ok(self.this_item(ItemType::Assign)),
            Some(':') => {
                if self.next() != Some('=') {
                    return Ok(self.error("expected :=".into()));
                }
                Ok(self.this_item(ItemType::Declare))
            }
            Some('|') => Ok(self.this_item(ItemType::Pipe)),
            Some('"') => Err(State::Quote),
            Some('`') => Err(State::RawQuote),
            Some('$') => Err(State::Variable),
            Some('\'') => Err(State::Char),
            Some('.') => {
                if let Some(b) = self.rest().bytes().next()
                    && !b.is_ascii_digit()
                {
                    return Err(State::Field);
                }
                self.backup_char(r);
                Err(State::Number)
            }
            Some(c) if c == '+' || c == '-' || c.is_ascii_digit() => {
                self.backup_char(r);
                Err(State::Number)
            }
            Some(c) if is_alphanumeric(c) => {
                self.backup_char(r);
                Err(State::Identifier)
            }
            Some('(') => {
                self.paren_depth += 1;
                Ok(self.this_item(ItemType::LeftParen))
            }
            Some(')') => {
                self.paren_depth -= 1;
                if self.paren_depth < 0 {
                    return Ok(self.error("unexpected right paren".into()));
                }
                Ok(self.this_item(ItemType::RightParen))
            }
            Some(c) if c.is_ascii() && is_print(c) => Ok(self.this_item(ItemType::Char)),
            Some(c) => Ok(self.error(format!(
                "unrecognized character in action: {}",
                char_u(Some(c))
            ))),
        }
    }

    fn lex_space(&mut self) -> Result<Item, State> {
        let mut n = 0;
        while let Some(c) = self.peek() {
            if !is_space(c) {
                break;
            }
            self.next();
            n += 1;
        }
        let before = self.input.get(self.pos - 1..).unwrap_or("");
        if has_right_trim_marker(before)
            && before
                .get(TRIM_MARKER_LEN..)
                .is_some_and(|s| s.starts_with(RIGHT_DELIM))
        {
            let c = self
                .input
                .get(self.pos - 1..)
                .and_then(|s| s.chars().next());
            self.backup_char(c);
            if n == 1 {
                return Err(State::RightDelim);
            }
        }
        Ok(self.this_item(ItemType::Space))
    }

    fn lex_identifier(&mut self) -> Result<Item, State> {
        loop {
            let r = self.next();
            match r {
                Some(c) if is_alphanumeric(c) => {}
                _ => {
                    self.backup_char(r);
                    let word = self.input.get(self.start..self.pos).unwrap_or("");
                    if !self.at_terminator() {
                        return Ok(self.error(format!("bad character {}", char_u(r))));
                    }
                    let typ = match keyword(word) {
                        Some(k) => k,
                        None if word.starts_with('.') => ItemType::Field,
                        None if word == "true" || word == "false" => ItemType::Bool,
                        None => ItemType::Identifier,
                    };
                    return Ok(self.this_item(typ));
                }
            }
        }
    }

    fn lex_field_or_variable(&mut self, typ: ItemType) -> Result<Item, State> {
        if self.at_terminator() {
            return Ok(self.this_item(if typ == ItemType::Variable {
                ItemType::Variable
            } else {
                ItemType::Dot
            }));
        }
        let mut r;
        loop {
            r = self.next();
            match r {
                Some(c) if is_alphanumeric(c) => {}
                _ => {
                    self.backup_char(r);
                    break;
                }
            }
        }
        if !self.at_terminator() {
            return Ok(self.error(format!("bad character {}", char_u(r))));
        }
        Ok(self.this_item(typ))
    }

    fn lex_char(&mut self) -> Result<Item, State> {
        loop {
            match self.next() {
                Some('\\') => {
                    let r = self.next();
                    if r.is_none() || r == Some('\n') {
                        return Ok(self.error("unterminated character constant".into()));
                    }
                }
                None | Some('\n') => {
                    return Ok(self.error("unterminated character constant".into()));
                }
                Some('\'') => break,
                _ => {}
            }
        }
        Ok(self.this_item(ItemType::CharConstant))
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if self.peek().is_some_and(is_alphanumeric) {
            self.next();
            return false;
        }
        true
    }

    fn lex_number(&mut self) -> Result<Item, State> {
        if !self.scan_number() {
            let t = self
                .input
                .get(self.start..self.pos)
                .unwrap_or("")
                .to_string();
            return Ok(self.error(format!("bad number syntax: {}", quote(&t))));
        }
        if let Some('+' | '-') = self.peek() {
            if !self.scan_number() || !self.input.get(..self.pos).is_some_and(|s| s.ends_with('i'))
            {
                let t = self
                    .input
                    .get(self.start..self.pos)
                    .unwrap_or("")
                    .to_string();
                return Ok(self.error(format!("bad number syntax: {}", quote(&t))));
            }
            return Ok(self.this_item(ItemType::Complex));
        }
        Ok(self.this_item(ItemType::Number))
    }

    fn lex_quote(&mut self) -> Result<Item, State> {
        loop {
            match self.next() {
                Some('\\') => {
                    let r = self.next();
                    if r.is_none() || r == Some('\n') {
                        return Ok(self.error("unterminated quoted string".into()));
                    }
                }
                None | Some('\n') => return Ok(self.error("unterminated quoted string".into())),
                Some('"') => break,
                _ => {}
            }
        }
        Ok(self.this_item(ItemType::String))
    }

    fn lex_raw_quote(&mut self) -> Result<Item, State> {
        loop {
            match self.next() {
                None => return Ok(self.error("unterminated raw quoted string".into())),
                Some('`') => break,
                _ => {}
            }
        }
        Ok(self.this_item(ItemType::RawString))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(s: &str) -> Vec<ItemType> {
        let mut l = Lexer::new(s);
        let mut out = Vec::new();
        loop {
            let i = l.next_item();
            out.push(i.typ);
            if matches!(i.typ, ItemType::Eof | ItemType::Error) {
                return out;
            }
        }
    }

    #[test]
    fn lexes_an_action() {
        use ItemType::*;
        assert_eq!(
            types("a{{ .x | f 1 }}b"),
            vec![
                Text, LeftDelim, Space, Field, Space, Pipe, Space, Identifier, Space, Number,
                Space, RightDelim, Text, Eof
            ]
        );
    }

    #[test]
    fn trims_space() {
        let mut l = Lexer::new("a  {{- 1 -}}  b");
        assert_eq!(l.next_item().val, "a");
    }

    #[test]
    fn reports_unclosed_action() {
        let mut l = Lexer::new("{{ .x");
        let mut last = l.next_item();
        while !matches!(last.typ, ItemType::Error | ItemType::Eof) {
            last = l.next_item();
        }
        assert_eq!(last.val, "unclosed action");
    }
}
