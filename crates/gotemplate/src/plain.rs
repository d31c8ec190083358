//! Templates that are only text and field chains (`{{ .cluster.name }}-{{ .random }}`,
//! as naming templates and many patch values are), run straight over the JSON data.
//!
//! Converting the data into template values was half of running such a template. When
//! every chain ends at a string, Go prints each string as it is, so the output is the
//! text and the strings in order, and nothing needs converting. Anything else (a chain
//! that ends at a number, a map or nothing, data that is not a map on the way, output
//! over the limit) is left to the evaluator, which prints it or fails as Go does.

use serde_json::Value;

use crate::ast::{Arg, Node};
use crate::parse::TreeSet;

/// One piece of a plain template's output.
#[derive(Debug)]
pub(crate) enum Piece {
    Text(String),
    /// A field chain from the data (`.a.b`: `["a", "b"]`).
    Field(Vec<String>),
}

/// The pieces of `trees` when it is a plain template: one tree of text and actions
/// that each print one field chain of the data (no pipes, variables or functions).
pub(crate) fn pieces(trees: &TreeSet, max_steps: u64) -> Option<Vec<Piece>> {
    let (root, mut defined) = trees.parts();
    if defined.next().is_some() {
        return None;
    }
    let mut pieces = Vec::with_capacity(root.len());
    for node in root {
        match node {
            Node::Text { text, .. } => pieces.push(Piece::Text(text.clone())),
            Node::Action { pipe, .. } if pipe.decl.is_empty() => match pipe.cmds.as_slice() {
                [command] => match command.args.as_slice() {
                    [Arg::Field { idents, .. }] if !idents.is_empty() => {
                        pieces.push(Piece::Field(idents.clone()))
                    }
                    _ => return None,
                },
                _ => return None,
            },
            _ => return None,
        }
    }
    // Each action is a step the evaluator counts: a template over the bound is its to
    // refuse.
    let actions = pieces
        .iter()
        .filter(|p| matches!(p, Piece::Field(_)))
        .count();
    (u64::try_from(actions).ok()? <= max_steps).then_some(pieces)
}

/// The output of `pieces` over the data (`at` gives the value at a chain), when every
/// chain ends at a string and the output stays within `max_output_bytes`; `None`
/// leaves it to the evaluator.
pub(crate) fn run<'d>(
    pieces: &[Piece],
    at: impl Fn(&[String]) -> Option<&'d Value>,
    max_output_bytes: usize,
) -> Option<String> {
    let mut out = String::new();
    for piece in pieces {
        let text = match piece {
            Piece::Text(text) => text.as_str(),
            Piece::Field(path) => at(path)?.as_str()?,
        };
        if out.len() + text.len() > max_output_bytes {
            return None;
        }
        out.push_str(text);
    }
    Some(out)
}

/// The value at the field chain `path` of `data` (`None` when the chain meets a
/// non-map).
pub(crate) fn at<'d>(data: &'d Value, path: &[String]) -> Option<&'d Value> {
    path.iter()
        .try_fold(data, |value, key| value.as_object()?.get(key))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use crate::{MissingKey, Options, Template, value};

    fn both(
        text: &str,
        options: &Options,
        data: &serde_json::Value,
    ) -> (Result<String, String>, Result<String, String>) {
        let t = Template::parse("t", text, options).unwrap();
        let fast = t.execute(data).map_err(|e| e.message);
        let full = t.run(value::Value::from_json(data)).map_err(|e| e.message);
        (fast, full)
    }

    #[test]
    fn plain_templates_print_what_the_evaluator_prints() {
        let data = json!({
            "cluster": {"name": "c1"}, "random": "ab12x", "n": 3, "m": {"k": "v"},
            "e": "", "nil": null, "s": "x"
        });
        for options in [Options::name_generator(), Options::patch()] {
            for text in [
                "{{ .cluster.name }}-{{ .random }}",
                "plain text",
                "",
                "{{.e}}{{.s}}",
                "{{ .n }}",
                "{{ .m }}",
                "{{ .nil }}",
                "{{ .missing }}",
                "{{ .cluster.missing }}",
                "{{ .s.deeper }}",
                "{{ .cluster.name | printf \"%s\" }}",
                "{{ $x := .s }}{{ $x }}",
                "{{ if .s }}{{ .s }}{{ end }}",
                "{{ . }}",
            ] {
                let (fast, full) = both(text, &options, &data);
                assert_eq!(fast, full, "{text} with {:?}", options.missing_key);
            }
        }
        // Only chains that end at strings are printed without the evaluator.
        let t = Template::parse(
            "t",
            "{{ .cluster.name }}-{{ .random }}",
            &Options::name_generator(),
        )
        .unwrap();
        assert_eq!(t.execute(&data).unwrap(), "c1-ab12x");
        assert!(t.plain.is_some());
        let piped = Template::parse("t", "{{ .s | print }}", &Options::name_generator()).unwrap();
        assert!(piped.plain.is_none());
    }

    #[test]
    fn output_over_the_limit_is_the_evaluators_to_refuse() {
        let mut options = Options::name_generator();
        options.limits.max_output_bytes = 4;
        let data = json!({"a": "abc", "b": "de"});
        let (fast, full) = both("{{.a}}{{.b}}", &options, &data);
        assert_eq!(fast, full);
        assert!(fast.is_err());
        let (fast, full) = both("{{.a}}", &options, &data);
        assert_eq!(fast, Ok("abc".to_string()));
        assert_eq!(fast, full);
    }

    fn data() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            "[a-c<>&\"é]{0,4}".prop_map(serde_json::Value::from),
            any::<i32>().prop_map(serde_json::Value::from),
            any::<bool>().prop_map(serde_json::Value::from),
            Just(serde_json::Value::Null),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop::collection::btree_map("[abc]", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect()))
        })
    }

    proptest! {
        #[test]
        fn plain_templates_agree_with_the_evaluator(
            data in data(),
            parts in prop::collection::vec(
                prop_oneof![
                    "[a-c -]{0,3}",
                    prop::collection::vec("[abc]", 1..4).prop_map(|p| format!("{{{{ .{} }}}}", p.join("."))),
                ],
                0..5,
            ),
            error in any::<bool>(),
        ) {
            let options = Options {
                missing_key: if error { MissingKey::Error } else { MissingKey::Zero },
                ..Options::patch()
            };
            let text = parts.concat();
            let (fast, full) = both(&text, &options, &data);
            prop_assert_eq!(fast, full, "{}", text);
        }
    }
}
