//! YAML read the way Kubernetes' Go programs read it: `sigs.k8s.io/yaml.Unmarshal`,
//! which Cluster API uses on rendered template output and kubectl and the API server on
//! every manifest and YAML request body. That is go-yaml v2
//! (YAML 1.1) decoding the first document into Go values, which are then made JSON. So
//! `y`, `no`, `on` and their kin are booleans, also as keys (which become "true" and
//! "false"); a number a `float64` cannot hold stays text (`1e400`); `<<` merges maps;
//! map keys that are numbers become their Go spelling and keys JSON cannot have are
//! refused; refusals carry go-yaml's and `encoding/json`'s texts.
//!
//! The YAML syntax is granit-parser's (a libyaml-style parser). This module composes
//! the first document from its events and adds the syntax rules of libyaml it is laxer
//! about (directive names, anchor names, escapes of surrogates, text after the first
//! document; tabs in [`tabs`]), with go-yaml's texts and line numbers for its errors.
//! [`decode`] does what go-yaml does with the nodes (tags, scalar resolution, merges,
//! aliases), [`json`] what `sigs.k8s.io/yaml` and `encoding/json` do with the values.

use std::collections::HashMap;

use granit_parser::{
    Event, Marker, Parser, ScalarStyle, ScanError, Scanner, StrInput, StructureStyle, TokenType,
};
use serde_json::Value;

use decode::{Decoder, Go};
use tabs::{Cover, misplaced_tab};

mod decode;
mod json;
mod remembered;
mod simple;
mod tabs;

pub use remembered::yaml_to_json_remembered;

/// Prefix of every error `sigs.k8s.io/yaml` returns from reading YAML.
const CONVERTING: &str = "error converting YAML to JSON: ";

/// Nesting of decoded values (collections and alias expansions) we follow before
/// refusing: far beyond any real template output, and it keeps the recursion shallow.
pub(super) const MAX_DEPTH: usize = 1000;

/// Reads rendered output as Kubernetes' YAML reader does: empty output is `null`; the
/// error is the text `sigs.k8s.io/yaml` gives.
pub fn yaml_to_json(text: &str) -> Result<Value, String> {
    simple_value(text).unwrap_or_else(|| read_json(text))
}

/// The value of `text` when it is simple enough to read without composing a
/// document, else `None`.
fn simple_value(text: &str) -> Option<Result<Value, String>> {
    // Most template output is one plain word (a version, an image, a number), often
    // with the line break a block scalar in the class leaves after it: its value is
    // the scalar's resolution alone, with no document to compose. Line breaks after a
    // plain scalar only end it.
    let word = text.trim_end_matches('\n');
    if is_simple_plain_scalar(word) {
        let go = decode::plain_scalar(word);
        return Some(json::to_json(&go).map_err(|e| format!("{CONVERTING}{e}")));
    }
    let go = simple::block_mapping(text)?;
    Some(json::to_json(&go).map_err(|e| format!("{CONVERTING}{e}")))
}

/// [`yaml_to_json`] by composing the document.
fn read_json(text: &str) -> Result<Value, String> {
    let read = || -> Result<Value, String> {
        let doc = read_document(text)?;
        let go = match doc.root {
            Some(root) => Decoder::new(&doc).decode(root, 0)?,
            None => Go::Nil,
        };
        json::to_json(&go)
    };
    read().map_err(|e| format!("{CONVERTING}{e}"))
}

/// Whether `text` is a document holding one plain scalar and nothing else, in the
/// narrowest sense that needs no parser to see: ASCII letters, digits and `._/+=~@,-`,
/// with `:` only inside a word; no spaces, no line breaks, no indicator that could
/// start anything else (`-` and `+` only before a digit or `.`).
fn is_simple_plain_scalar(text: &str) -> bool {
    let b = text.as_bytes();
    let Some(&first) = b.first() else {
        return false;
    };
    // `...` ends a document: what follows it is no scalar.
    if text.starts_with("...") {
        return false;
    }
    let starts_well = first.is_ascii_alphanumeric()
        || matches!(first, b'.' | b'/' | b'~')
        || (matches!(first, b'-' | b'+')
            && b.get(1).is_some_and(|c| c.is_ascii_digit() || *c == b'.'));
    starts_well
        && b.iter().enumerate().all(|(i, c)| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    b'.' | b'_' | b'/' | b'+' | b'=' | b'~' | b'@' | b',' | b'-'
                )
                || (*c == b':' && b.get(i + 1).is_some_and(|n| n.is_ascii_alphanumeric()))
        })
}

// ---------------------------------------------------------------------------------
// Composing the first document into nodes.

#[derive(Debug)]
pub(super) enum Node {
    Scalar {
        value: String,
        /// The tag as go-yaml sees it: core tags in long form, `""` for none.
        tag: String,
        /// A plain scalar without a tag (or with the non-specific `!`): its type is
        /// resolved from its text.
        implicit: bool,
    },
    Seq(Vec<usize>),
    Map(Vec<(usize, usize)>),
    Alias {
        name: String,
        target: usize,
    },
}

pub(super) struct Doc {
    pub(super) nodes: Vec<Node>,
    root: Option<usize>,
    /// Where go-yaml stops reading: the first document ends at the token after it.
    read_to: usize,
}

/// A collection being composed, with a mapping's key waiting for its value.
struct Open {
    node: usize,
    key: Option<usize>,
    /// Where a flow collection starts (`[` or `{`); `None` for a block one.
    flow_start: Option<usize>,
    /// A block collection's column.
    column: usize,
}

/// A refusal and where in the text go-yaml meets it (the first one met wins).
pub(super) struct Failure {
    at: usize,
    message: String,
    /// The parser refused a tab (and may have placed it elsewhere).
    tab: bool,
}

impl Failure {
    pub(super) fn new(at: usize, message: impl Into<String>) -> Self {
        Failure {
            at,
            message: message.into(),
            tab: false,
        }
    }
}

/// The first document's nodes, or the syntax error go-yaml reports first.
fn read_document(text: &str) -> Result<Doc, String> {
    if let Err(e) = prologue(text) {
        return Err(e.message);
    }
    let mut covers = Vec::new();
    let composed = compose(text, &mut covers);
    let limit = match &composed {
        Ok(doc) => doc.read_to,
        Err(e) if e.tab => text.len(),
        Err(e) => e.at + 1,
    };
    let tab = if text.contains('\t') {
        misplaced_tab(text, &mut covers, limit)
    } else {
        None
    };
    match (composed, tab) {
        (Err(e), Some(t)) if e.at < t.at && !e.tab => Err(e.message),
        (_, Some(t)) => Err(t.message),
        (Ok(doc), None) => Ok(doc),
        (Err(e), None) => Err(e.message),
    }
}

/// Byte offset of a parser position in `text`.
fn byte_at(text: &str, m: &Marker) -> usize {
    let at = m.byte_offset().unwrap_or_else(|| {
        text.char_indices()
            .nth(m.index())
            .map_or(text.len(), |(i, _)| i)
    });
    at.min(text.len())
}

/// The 0-based line of a byte offset.
pub(super) fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()
        .get(..at.min(text.len()))
        .map_or(0, |b| b.iter().filter(|c| **c == b'\n').count())
}

/// go-yaml's text for a scanner problem on 0-based line `line`: lines are named from
/// the second one on, counted from 1.
pub(super) fn scanner_error(line: usize, problem: &str) -> String {
    if line == 0 {
        format!("yaml: {problem}")
    } else {
        format!("yaml: line {}: {problem}", line + 1)
    }
}

/// go-yaml's text for a parser problem: its line is counted from 0.
fn parser_error(line: usize, problem: &str) -> String {
    if line == 0 {
        format!("yaml: {problem}")
    } else {
        format!("yaml: line {line}: {problem}")
    }
}

/// What go-yaml's scanner meets before the first document: directives, whose names it
/// checks (granit-parser passes unknown ones over), and a `...` with no document.
fn prologue(text: &str) -> Result<(), Failure> {
    let mut offset = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        let body = content.trim_start_matches(' ');
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        if let Some(rest) = content.strip_prefix('%') {
            let name_len = rest
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
                .count();
            let problem = if name_len == 0 {
                Some("could not find expected directive name")
            } else if !matches!(
                rest.as_bytes().get(name_len),
                None | Some(b' ' | b'\t' | b'\r')
            ) {
                Some("found unexpected non-alphabetical character")
            } else if !matches!(&rest[..name_len], "YAML" | "TAG") {
                Some("found unknown directive name")
            } else {
                None
            };
            if let Some(p) = problem {
                return Err(Failure::new(start, scanner_error(n, p)));
            }
            continue;
        }
        if let Some(after) = content.strip_prefix("...")
            && (after.is_empty() || after.starts_with([' ', '\t']))
        {
            return Err(Failure::new(
                start,
                parser_error(n, "did not find expected node content"),
            ));
        }
        break;
    }
    Ok(())
}

/// Composes the first document; `covers` gets the text the parser read as scalars and
/// flow collections, also when it fails.
fn compose(text: &str, covers: &mut Vec<Cover>) -> Result<Doc, Failure> {
    let mut options = granit_parser::Options::default();
    options.emit_unresolved_aliases = true;
    options.emit_anchor_events = true;
    options.emit_comments = false;
    let mut parser = Parser::new_from_str_with_options(text, options);
    let mut nodes: Vec<Node> = Vec::new();
    let mut anchors: HashMap<usize, usize> = HashMap::new();
    let mut names: HashMap<usize, String> = HashMap::new();
    let mut open: Vec<Open> = Vec::new();
    let mut root = None;
    let mut root_end = 0;
    let mut read_to = text.len();
    while let Some(next) = parser.next_event() {
        let (event, span) = match next {
            Ok(e) => e,
            Err(e) => {
                let at = byte_at(text, e.marker());
                if root.is_some() {
                    // go-yaml stops after the first document, reading only the token
                    // after it: what this parser finds wrong further on, it never sees.
                    return match first_token_error(text, root_end) {
                        Some(f) => Err(f),
                        None => Ok(Doc {
                            nodes,
                            root,
                            read_to: at,
                        }),
                    };
                }
                use granit_parser::ErrorKind as K;
                match e.kind() {
                    K::InvalidTrailingSingleQuotedScalar | K::InvalidTrailingDoubleQuotedScalar => {
                        return trailing_after_quoted(text, at, &open, &nodes);
                    }
                    // The parser's own rules on tabs, placed where it noticed them: the
                    // walk over the text finds the tab go-yaml refuses, and its place.
                    K::TabInPlainScalar
                    | K::TabInIndentation
                    | K::TabNotAllowed
                    | K::TabInBlockIndentation
                    | K::TabAtBlockScalarStart => {
                        let mut f = Failure::new(at, syntax_error(text, &e));
                        f.tab = true;
                        return Err(f);
                    }
                    _ => return Err(Failure::new(at, syntax_error(text, &e))),
                }
            }
        };
        let at = byte_at(text, &span.start);
        let finished = match event {
            Event::StreamEnd => break,
            Event::DocumentStart(_, Some(v)) if (v.major, v.minor) != (1, 1) => {
                // Reported where the `%YAML` directive is.
                let directive = text[..at].rfind("%YAML").unwrap_or(0);
                return Err(Failure::new(
                    directive,
                    parser_error(line_of(text, directive), "found incompatible YAML document"),
                ));
            }
            // go-yaml reads the first document only.
            Event::DocumentEnd => {
                read_to = at;
                break;
            }
            Event::Anchor(id, name) => {
                check_name(text, at, &name)?;
                names.insert(id, name.into_owned());
                None
            }
            Event::UnresolvedAlias(name) => {
                check_name(text, at, &name)?;
                return Err(Failure::new(
                    at,
                    format!("yaml: unknown anchor '{name}' referenced"),
                ));
            }
            Event::Alias(id) => {
                covers.push(Cover {
                    start: at,
                    end: byte_at(text, &span.end),
                    plain_indent: None,
                });
                let target = anchors.get(&id).copied().unwrap_or(0);
                let name = names.get(&id).cloned().unwrap_or_default();
                nodes.push(Node::Alias { name, target });
                Some(nodes.len() - 1)
            }
            Event::Scalar(value, style, anchor, tag) => {
                let end = byte_at(text, &span.end);
                if style == ScalarStyle::DoubleQuoted {
                    check_escapes(text, at, end)?;
                }
                let in_flow = open.iter().any(|o| o.flow_start.is_some());
                let plain_indent = (style == ScalarStyle::Plain && !in_flow)
                    .then(|| open.last().map_or(0, |o| o.column + 1));
                covers.push(Cover {
                    start: at,
                    end,
                    plain_indent,
                });
                let tag = tag.map(|t| format!("{}{}", t.handle(), t.suffix()));
                let implicit = match tag.as_deref() {
                    None => style == ScalarStyle::Plain,
                    Some(t) => t == "!",
                };
                nodes.push(Node::Scalar {
                    value: value.into_owned(),
                    tag: tag.unwrap_or_default(),
                    implicit,
                });
                let node = nodes.len() - 1;
                if anchor != 0 {
                    anchors.insert(anchor, node);
                }
                Some(node)
            }
            Event::SequenceStart(style, anchor, _) | Event::MappingStart(style, anchor, _) => {
                let is_seq = matches!(event, Event::SequenceStart(..));
                let flow_start = (style == StructureStyle::Flow).then_some(at);
                nodes.push(if is_seq {
                    Node::Seq(Vec::new())
                } else {
                    Node::Map(Vec::new())
                });
                let node = nodes.len() - 1;
                // An alias inside the collection may name it: go-yaml knows the anchor
                // from the collection's start (and finds the cycle when decoding).
                if anchor != 0 {
                    anchors.insert(anchor, node);
                }
                open.push(Open {
                    node,
                    key: None,
                    flow_start,
                    column: span.start.col(),
                });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => open.pop().map(|o| {
                if let Some(start) = o.flow_start {
                    covers.push(Cover {
                        start,
                        end: byte_at(text, &span.end),
                        plain_indent: None,
                    });
                }
                o.node
            }),
            _ => None,
        };
        let Some(done) = finished else {
            continue;
        };
        match open.last_mut() {
            None => {
                root = Some(done);
                root_end = byte_at(text, &span.end);
            }
            Some(parent) => match &mut nodes[parent.node] {
                Node::Seq(items) => items.push(done),
                Node::Map(pairs) => match parent.key.take() {
                    None => parent.key = Some(done),
                    Some(key) => pairs.push((key, done)),
                },
                _ => {}
            },
        }
    }
    Ok(Doc {
        nodes,
        root,
        read_to,
    })
}

/// More after a quoted scalar on its line, which this parser refuses. At the top,
/// go-yaml takes the scalar as the document if the token after it scans; in a
/// collection, that token is not what the collection may hold next.
fn trailing_after_quoted(
    text: &str,
    at: usize,
    open: &[Open],
    nodes: &[Node],
) -> Result<Doc, Failure> {
    if let Some(o) = open.last() {
        let problem = match (nodes.get(o.node), o.flow_start) {
            (Some(Node::Seq(_)), Some(_)) => "did not find expected ',' or ']'",
            (Some(Node::Map(_)), Some(_)) => "did not find expected ',' or '}'",
            (Some(Node::Seq(_)), None) => "did not find expected '-' indicator",
            _ => "did not find expected key",
        };
        return Err(Failure::new(at, parser_error(line_of(text, at), problem)));
    }
    let head = text.get(..at).unwrap_or(text);
    let doc = compose(head, &mut Vec::new())?;
    if let Some(f) = first_token_error(text, at) {
        return Err(f);
    }
    Ok(Doc { read_to: at, ..doc })
}

/// The scanner's problem with the first token from `from` on, if any (trailing
/// content after a quoted scalar is this parser's own rule, not go-yaml's).
fn first_token_error(text: &str, from: usize) -> Option<Failure> {
    let rest = text.get(from..)?;
    let scanner = Scanner::new(StrInput::new(rest));
    for token in scanner {
        match token {
            Ok(t) if matches!(t.token_type(), TokenType::StreamStart) => {}
            Ok(_) => return None,
            Err(e) => {
                if matches!(
                    e.kind(),
                    granit_parser::ErrorKind::InvalidTrailingSingleQuotedScalar
                        | granit_parser::ErrorKind::InvalidTrailingDoubleQuotedScalar
                ) {
                    return None;
                }
                let at = from + byte_at(rest, e.marker());
                let mut message = syntax_error(rest, &e);
                let base = line_of(text, from);
                if base > 0 {
                    message = relined(&message, base);
                }
                return Some(Failure::new(at, message));
            }
        }
    }
    None
}

/// Moves a `yaml: line N:` text (or one without a line) `by` lines down.
fn relined(message: &str, by: usize) -> String {
    let body = message.strip_prefix("yaml: ").unwrap_or(message);
    if let Some(rest) = body.strip_prefix("line ")
        && let Some((n, problem)) = rest.split_once(": ")
        && let Ok(n) = n.parse::<usize>()
    {
        return format!("yaml: line {}: {problem}", n + by);
    }
    format!("yaml: line {}: {body}", by + 1)
}

/// go-yaml's anchor and alias names: letters, digits, `_` and `-`.
fn check_name(text: &str, at: usize, name: &str) -> Result<(), Failure> {
    if !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Ok(());
    }
    Err(Failure::new(
        at,
        scanner_error(
            line_of(text, at),
            "did not find expected alphabetic or numeric character",
        ),
    ))
}

/// go-yaml refuses `\u` and `\U` escapes of UTF-16 surrogates (it has no pairs) and of
/// numbers past Unicode.
fn check_escapes(text: &str, from: usize, to: usize) -> Result<(), Failure> {
    let Some(src) = text.get(from..to.max(from)) else {
        return Ok(());
    };
    let b = src.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        let width = match b.get(i + 1) {
            Some(b'u') => 4,
            Some(b'U') => 8,
            _ => {
                i += 2;
                continue;
            }
        };
        let digits = src.get(i + 2..i + 2 + width).unwrap_or("");
        if let Ok(code) = u32::from_str_radix(digits, 16)
            && ((0xD800..=0xDFFF).contains(&code) || code > 0x10FFFF)
        {
            let at = from + i;
            return Err(Failure::new(
                at,
                scanner_error(
                    line_of(text, at),
                    "found invalid Unicode character escape code",
                ),
            ));
        }
        i += 2 + width;
    }
    Ok(())
}

/// A syntax error in go-yaml's words where the parser's problem has a libyaml name.
fn syntax_error(text: &str, e: &ScanError) -> String {
    use granit_parser::ErrorKind as K;
    let (problem, scanner) = match e.kind() {
        K::MappingValueNotAllowed => ("mapping values are not allowed in this context", true),
        K::UnexpectedCharacter { .. } | K::TabInIndentation | K::TabNotAllowed => {
            ("found character that cannot start any token", true)
        }
        K::TabInPlainScalar => ("found a tab character that violates indentation", true),
        K::MissingDirectiveName => ("could not find expected directive name", true),
        K::MissingAnchorOrAliasName => (
            "did not find expected alphabetic or numeric character",
            true,
        ),
        K::InvalidBlockScalarHeader => ("did not find expected comment or line break", true),
        K::UnknownQuotedScalarEscape => ("found unknown escape character", true),
        K::InvalidUnicodeEscape
        | K::InvalidLowSurrogate
        | K::MissingLowSurrogate
        | K::UnpairedLowSurrogate
        | K::InvalidLowSurrogateHexEscape => ("found invalid Unicode character escape code", true),
        K::UnclosedQuotedScalar => ("found unexpected end of stream", true),
        K::SimpleKeyExpected => ("could not find expected ':'", true),
        K::ExpectedFlowSequenceSeparator
        | K::UnexpectedEofFlowSequence
        | K::UnclosedFlowCollection { open: '[' } => ("did not find expected ',' or ']'", false),
        K::ExpectedFlowMappingSeparator
        | K::UnexpectedEofFlowMapping
        | K::UnclosedFlowCollection { open: '{' } => ("did not find expected ',' or '}'", false),
        K::ExpectedBlockMappingKey => ("did not find expected key", false),
        K::ExpectedBlockSequenceEntry => ("did not find expected '-' indicator", false),
        K::ExpectedNodeContent => ("did not find expected node content", false),
        other => return format!("yaml: {other}"),
    };
    let line = match e.kind() {
        // A collection left open is found at the end of the text, where libyaml's
        // scanner has moved to a new line first.
        K::UnclosedFlowCollection { .. }
        | K::UnexpectedEofFlowSequence
        | K::UnexpectedEofFlowMapping => {
            line_of(text, text.len()) + usize::from(!text.is_empty() && !text.ends_with('\n'))
        }
        K::UnclosedQuotedScalar => line_of(text, text.len()),
        _ => line_of(text, byte_at(text, e.marker())),
    };
    if scanner {
        scanner_error(line, problem)
    } else {
        parser_error(line, problem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_yaml_1_1_like_go() {
        assert_eq!(yaml_to_json("y: n"), Ok(json!({"true": false})));
        assert_eq!(yaml_to_json("1e400"), Ok(json!("1e400")));
        assert_eq!(yaml_to_json("a: |-\n  x\n"), Ok(json!({"a": "x"})));
        assert_eq!(
            yaml_to_json("null: 1"),
            Err(
                "error converting YAML to JSON: unsupported map key of type: %!s(<nil>), key: <nil>, value: 1"
                    .into()
            )
        );
    }

    #[test]
    fn simple_scalars_read_as_the_document_reader_reads_them() {
        for text in [
            "kindest/node:v1.30.0",
            "v1.30.0",
            "1",
            "-1",
            "+1",
            "0x1F",
            "017",
            "1_000",
            "1e3",
            "1e400",
            ".5",
            "-.5",
            ".inf",
            "-.Inf",
            ".nan",
            "~",
            "y",
            "No",
            "on",
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "a,b",
            "a=b",
            "a@b",
            "a:b",
            "0b101",
            "-0b1",
            "abc~",
            "9223372036854775808",
            "...",
            "a_b",
            "/x/y",
        ] {
            assert_eq!(yaml_to_json(text), read_json(text), "{text:?}");
            for breaks in ["\n", "\n\n"] {
                let text = format!("{text}{breaks}");
                assert_eq!(yaml_to_json(&text), read_json(&text), "{text:?}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn the_fast_path_agrees_with_the_document_reader(
            text in "[-+.~/a-zA-Z0-9_:=@,]{1,12}\n{0,2}"
        ) {
            proptest::prop_assert_eq!(yaml_to_json(&text), read_json(&text));
        }
    }
}
