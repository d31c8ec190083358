//! Block mappings of plain words read without the parser: template output is often a
//! few `key: word` lines nested by indentation (`local:\n  imageTag: 3.5.12-0\n`),
//! and composing a document for it costs more than the rest of a small template. Only
//! the narrowest form is taken here: every line `key: word` or `key:`, spaces for
//! indentation, siblings at one indentation, a `key:` line followed by more indented
//! lines (its mapping) or by none (null), keys and words in the fast path's sense of a
//! plain scalar. Anything else goes to the parser, which reads these forms the same.

use super::decode::{Go, plain_scalar};
use super::is_simple_plain_scalar;

/// Deepest nesting taken here; deeper text goes to the parser (and its limits).
const MAX_NESTING: usize = 32;
/// Longest key taken here (YAML caps implicit keys at 1024 characters).
const MAX_KEY_LEN: usize = 128;

/// The mapping `text` holds, when it is a block mapping of the narrow form.
pub(super) fn block_mapping(text: &str) -> Option<Go> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if body.is_empty() {
        return None;
    }
    let lines: Vec<(usize, &str)> = body
        .split('\n')
        .map(|line| {
            let content = line.trim_start_matches(' ');
            (line.len() - content.len(), content)
        })
        .collect();
    if lines.first().is_none_or(|(indent, _)| *indent != 0) {
        return None;
    }
    let mut at = 0;
    let mapping = mapping(&lines, &mut at, 0, 0)?;
    (at == lines.len()).then_some(mapping)
}

/// The mapping whose entries start at line `at` with `indent` spaces; `at` ends after
/// its last line.
fn mapping(lines: &[(usize, &str)], at: &mut usize, indent: usize, depth: usize) -> Option<Go> {
    if depth > MAX_NESTING {
        return None;
    }
    let mut entries = Vec::new();
    while let Some(&(line_indent, line)) = lines.get(*at) {
        if line_indent < indent {
            break;
        }
        if line_indent > indent {
            return None;
        }
        let (key, rest) = line.split_once(':')?;
        if key.len() > MAX_KEY_LEN || !is_simple_plain_scalar(key) {
            return None;
        }
        *at += 1;
        let value = if rest.is_empty() {
            match lines.get(*at) {
                Some(&(next, _)) if next > indent => mapping(lines, at, next, depth + 1)?,
                _ => Go::Nil,
            }
        } else {
            let word = rest.strip_prefix(' ')?;
            if !is_simple_plain_scalar(word) {
                return None;
            }
            plain_scalar(word)
        };
        Go::set(&mut entries, plain_scalar(key), value);
    }
    Some(Go::Map(entries))
}

#[cfg(test)]
mod tests {
    use super::super::{read_json, yaml_to_json};

    #[test]
    fn simple_mappings_read_as_the_document_reader_reads_them() {
        for text in [
            "local:\n  imageTag: 3.5.12-0\n",
            "imageTag: v1.11.1\n",
            "imageTag: v1.11.1",
            "a: 1\nb:\n   c: y\n   d:\ne: 2001-12-14\n",
            "a:\n  b:\n    c: ~\n  d: .inf\n",
            "a:\nb: x\n",
            "y: n\non: off\n1: 2\n1.5: x\n",
            "a: 1\na: 2\n",
            "~: 1\n",
            "a: b:c\n",
            "a: x\n  b: y\n",
            "a:\n  b: 1\n c: 2\n",
            "a: 1\n\nb: 2\n",
            "  a: 1\n",
            "a:  1\n",
            "a: 1 \n",
            "a:1\n",
            "a\n",
            "a: -1\nb: +.5\nc: 0x1F\nd: 1e400\n",
        ] {
            assert_eq!(yaml_to_json(text), read_json(text), "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn the_mapping_fast_path_agrees_with_the_document_reader(
            lines in proptest::collection::vec(
                (0usize..4, "(a|b|y|on|1|1.5|~|null|2001-12-14|\\.inf|-1|x_y|a/b)", "(|: |:|: a|: 1|: y|: ~|: 0x1F|: 1e3|: a:b|: .5|: -1|: +1)"),
                1..8,
            ),
            end in "\n{0,1}",
        ) {
            let text = lines
                .iter()
                .map(|(indent, key, rest)| format!("{}{key}{rest}", " ".repeat(indent * 2)))
                .collect::<Vec<_>>()
                .join("\n")
                + &end;
            proptest::prop_assert_eq!(yaml_to_json(&text), read_json(&text));
        }
    }
}
