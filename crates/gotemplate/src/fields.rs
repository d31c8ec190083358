//! What of its data a template can read.
//!
//! A template that reaches its data only through field chains (`.a.b`, `$.a`) sees
//! nothing but the values at the ends of its chains: the maps on the way are only
//! looked into. It evaluates the same over data holding just those paths, so it gets
//! only them converted: converting a large variable set (the builtin variables above
//! all) into template values is most of the cost of running a small template. A
//! template that may see the data as a whole (`.` or `$` as a value: printed, passed
//! to a function or another template, ranged over) gets all of it.

use std::collections::BTreeMap;

use crate::ast::{Arg, BranchKind, Node, Pipe};
use crate::parse::TreeSet;

/// What a template reads of a map: per key, the whole value or some of its fields.
pub(crate) type Fields = BTreeMap<String, Reads>;

/// What a template reads of one value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reads {
    /// The value as a whole (the end of a chain).
    Whole,
    /// Only these fields, were the value a map (a chain goes on through it).
    Fields(Fields),
}

/// What the template reads of its data; `None` when it may see the data as a whole.
pub(crate) fn root_fields(trees: &TreeSet) -> Option<Fields> {
    let mut fields = Fields::new();
    // Only the root tree starts with the data as dot. A defined template gets the data
    // only from a `template` call passing `.` or `$`, which sees it as a whole.
    let (root, defined) = trees.parts();
    nodes(root, true, &mut fields)?;
    for list in defined {
        nodes(list, false, &mut fields)?;
    }
    Some(fields)
}

/// Adds the chain `path` (the first name under the data first).
fn add(fields: &mut Fields, path: &[String]) -> Option<()> {
    let (first, rest) = path.split_first()?;
    let reads = fields
        .entry(first.clone())
        .or_insert_with(|| Reads::Fields(Fields::new()));
    if rest.is_empty() {
        *reads = Reads::Whole;
        return Some(());
    }
    match reads {
        // Read whole elsewhere: its fields come with it.
        Reads::Whole => Some(()),
        Reads::Fields(fields) => add(fields, rest),
    }
}

/// Walks `list`; `dot_is_data` says whether dot is the data there.
fn nodes(list: &[Node], dot_is_data: bool, fields: &mut Fields) -> Option<()> {
    for node in list {
        match node {
            Node::Text { .. } | Node::Break { .. } | Node::Continue { .. } => {}
            Node::Action { pipe, .. } => pipeline(pipe, dot_is_data, fields)?,
            Node::Template { pipe, .. } => {
                if let Some(pipe) = pipe {
                    pipeline(pipe, dot_is_data, fields)?;
                }
            }
            Node::Branch {
                kind,
                pipe,
                list,
                else_list,
                ..
            } => {
                pipeline(pipe, dot_is_data, fields)?;
                // `range` and `with` set dot to what their pipeline gives in the body
                // (never the data itself: that would take `.` or `$` as a value); the
                // `else` branch keeps the outer dot.
                let body_dot_is_data = dot_is_data && *kind == BranchKind::If;
                nodes(list, body_dot_is_data, fields)?;
                if let Some(else_list) = else_list {
                    nodes(else_list, dot_is_data, fields)?;
                }
            }
        }
    }
    Some(())
}

fn pipeline(pipe: &Pipe, dot_is_data: bool, fields: &mut Fields) -> Option<()> {
    for command in &pipe.cmds {
        for arg in &command.args {
            argument(arg, dot_is_data, fields)?;
        }
    }
    Some(())
}

fn argument(arg: &Arg, dot_is_data: bool, fields: &mut Fields) -> Option<()> {
    match arg {
        Arg::Dot { .. } if dot_is_data => return None,
        Arg::Field { idents, .. } if dot_is_data => add(fields, idents)?,
        // `$` is the data unless a template call or an assignment rebound it; its
        // chains are kept either way, which keeps too much at worst.
        Arg::Variable { idents, .. } if idents.first().is_some_and(|v| v == "$") => {
            add(fields, idents.get(1..)?)?
        }
        Arg::Chain { node, .. } => argument(node, dot_is_data, fields)?,
        Arg::Pipe(pipe) => pipeline(pipe, dot_is_data, fields)?,
        _ => {}
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Options, Template};

    /// The chains read, as dotted paths (`*` after a value read whole).
    fn paths(fields: &Fields, prefix: &str, out: &mut Vec<String>) {
        for (name, reads) in fields {
            let path = format!("{prefix}.{name}");
            match reads {
                Reads::Whole => out.push(format!("{path}*")),
                Reads::Fields(fields) => paths(fields, &path, out),
            }
        }
    }

    fn read_by(text: &str) -> Option<Vec<String>> {
        let template = Template::parse("tpl", text, &Options::patch()).ok()?;
        let fields = root_fields(&template.trees)?;
        let mut out = Vec::new();
        paths(&fields, "", &mut out);
        Some(out)
    }

    fn some(paths: &[&str]) -> Option<Vec<String>> {
        Some(paths.iter().map(|p| p.to_string()).collect())
    }

    #[test]
    fn chains_read_are_found() {
        assert_eq!(read_by("plain"), some(&[]));
        assert_eq!(
            read_by("{{ .b.x.y }}{{ if .a }}{{ $.c.d }}{{ .b.z }}{{ end }}"),
            some(&[".a*", ".b.x.y*", ".b.z*", ".c.d*"])
        );
        // A value read whole anywhere is read whole.
        assert_eq!(read_by("{{ .b.x }}{{ .b }}{{ .b.y }}"), some(&[".b*"]));
        // In `range` and `with` bodies dot is no longer the data; `$` still is.
        assert_eq!(
            read_by("{{ range .l }}{{ . }}{{ .x }}{{ $.d }}{{ else }}{{ .e }}{{ end }}"),
            some(&[".d*", ".e*", ".l*"])
        );
        assert_eq!(
            read_by("{{ define \"t\" }}{{ . }}{{ end }}{{ template \"t\" (.a.b) }}"),
            some(&[".a.b*"])
        );
    }

    #[test]
    fn the_data_as_a_value_needs_all_of_it() {
        for text in [
            "{{ . }}",
            "{{ $ }}",
            "{{ len . }}",
            "{{ template \"t\" . }}",
            "{{ range . }}{{ end }}",
            "{{ with .a }}{{ else }}{{ . }}{{ end }}",
            "{{ (.).a }}",
        ] {
            assert_eq!(read_by(text), None, "{text}");
        }
    }
}
