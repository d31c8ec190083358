//! Variable schemas read once per thread: a class's schemas are the same admission
//! after admission, and reading one (decoding it as Cluster API's schema type and
//! converting its literals) costs more than checking a value against it. A small
//! most-recently-used list is enough; reading is a function of the schema alone, so a
//! kept reading and a fresh one are the same.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value;

use crate::{dialect, json};

/// How many schemas a thread keeps.
const CAPACITY: usize = 64;

thread_local! {
    static READ: RefCell<Vec<(Value, Rc<dialect::Read>)>> = const { RefCell::new(Vec::new()) };
}

/// `schema` as [`dialect::read`] reads it, from this thread's list when there.
pub(crate) fn read(schema: &Value) -> Rc<dialect::Read> {
    let kept = READ.with(|list| {
        let mut list = list.borrow_mut();
        let at = list.iter().rposition(|(kept, _)| kept == schema)?;
        let entry = list.remove(at);
        let read = Rc::clone(&entry.1);
        list.push(entry);
        Some(read)
    });
    if let Some(read) = kept {
        return read;
    }
    let read = Rc::new(dialect::read(Some(&json::from_serde(schema))));
    READ.with(|list| {
        let mut list = list.borrow_mut();
        if list.len() >= CAPACITY {
            list.remove(0);
        }
        list.push((schema.clone(), Rc::clone(&read)));
    });
    read
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kept_and_fresh_readings_agree() {
        let schemas = [
            json!({"openAPIV3Schema": {"type": "string", "default": "x"}}),
            json!({"openAPIV3Schema": {"type": "integer", "maximum": 1.5}}),
            json!({"openAPIV3Schema": {"type": "object", "properties": {"a": {"type": "string"}}}}),
            json!([]),
        ];
        for _ in 0..2 {
            for schema in &schemas {
                let fresh = dialect::read(Some(&json::from_serde(schema)));
                assert_eq!(*read(schema), fresh, "{schema}");
            }
        }
    }
}
