//! [`yaml_to_json`] for text that comes back again and again: a template's output is
//! the same text for every Cluster with the same variables, render after render, and
//! composing a document (a list of files with a literal block, say) costs far more
//! than copying the value it gave. Reading is a pure function of the text, so a
//! remembered answer and a fresh one are the same.
//!
//! Only text the composer reads is remembered (the one-word and simple-mapping
//! outputs are read faster than they would be looked up), per thread, the most
//! recently used few, each of bounded length.

use std::cell::RefCell;

use serde_json::Value;

use super::{read_json, simple_value, yaml_to_json};

/// How many answers a thread keeps.
const CAPACITY: usize = 32;
/// Longest text remembered: template output, not whole manifests.
const MAX_TEXT: usize = 16 * 1024;

thread_local! {
    static READ: RefCell<Vec<(String, Result<Value, String>)>> = const { RefCell::new(Vec::new()) };
}

/// [`yaml_to_json`], the composer's answers remembered by text.
pub fn yaml_to_json_remembered(text: &str) -> Result<Value, String> {
    if let Some(simple) = simple_value(text) {
        return simple;
    }
    if text.len() > MAX_TEXT {
        return yaml_to_json(text);
    }
    let hit = READ.with(|read| {
        let mut read = read.borrow_mut();
        let at = read.iter().position(|(seen, _)| seen == text)?;
        // Most recently used last, so the oldest is the one dropped.
        let entry = read.remove(at);
        let answer = entry.1.clone();
        read.push(entry);
        Some(answer)
    });
    if let Some(answer) = hit {
        return answer;
    }
    let answer = read_json(text);
    READ.with(|read| {
        let mut read = read.borrow_mut();
        if read.len() >= CAPACITY {
            // The least recently used answer goes.
            drop(read.remove(0));
        }
        read.push((text.to_string(), answer.clone()));
    });
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_answers_are_the_fresh_ones() {
        let texts = [
            "- content: |\n    a: b\n  path: /x\n",
            "a: [1, 2]\n",
            "a: b: c",
            "v1.30.0\n",
            "x: y\n",
            "",
        ];
        for _ in 0..2 {
            for text in texts {
                assert_eq!(
                    yaml_to_json_remembered(text),
                    yaml_to_json(text),
                    "{text:?}"
                );
            }
        }
        // More distinct texts than are kept: the oldest are read again, the same way.
        for i in 0..(CAPACITY * 2) {
            let text = format!("- {i}\n- [{i}]\n");
            assert_eq!(yaml_to_json_remembered(&text), yaml_to_json(&text));
        }
        assert_eq!(yaml_to_json_remembered(texts[0]), yaml_to_json(texts[0]));
    }
}
