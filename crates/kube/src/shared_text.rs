//! Stored text that many objects have alike, kept once. A managed-fields entry is
//! mostly the same text on every object one manager writes from one template (the
//! field set names fields, not values); only its `time` differs. At 1,000 quick-start
//! Clusters managed fields were 22 MB of the 52 MB of stored text, and the entries
//! without their times 2.4 MB of distinct text.
//!
//! [`split`] writes an object as `serde_json` does, byte for byte, but leaves each
//! managed-fields entry's text before its `time` out, as a shared piece to put back at
//! an offset. Pieces are interned in one table for the process; a piece no object
//! holds any more is dropped when the table next grows past twice what it kept.

use serde_json::Value;
use std::collections::HashSet;
use std::sync::{Arc, LazyLock, Mutex};
use topograph_api::json::{write, write_object, write_str};

/// A shared piece and where it goes in the text it was cut from.
pub(crate) type Piece = (usize, Arc<[u8]>);

/// The object's JSON text with its shared pieces cut out, and the pieces (in order).
pub(crate) fn split(object: &Value) -> (Vec<u8>, Vec<Piece>) {
    let mut out = Vec::new();
    let mut pieces = Vec::new();
    let has_entries = object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .is_some_and(|entries| !entries.is_empty());
    match object {
        Value::Object(map) if has_entries => {
            write_object(map, &mut out, |key, value, out| match value {
                Value::Object(metadata) if key == "metadata" => {
                    write_object(metadata, out, |key, value, out| match value {
                        Value::Array(entries) if key == "managedFields" => {
                            write_entries(out, &mut pieces, entries)
                        }
                        _ => write(value, out),
                    })
                }
                _ => write(value, out),
            })
        }
        _ => write(object, &mut out),
    }
    (out, pieces)
}

/// The text `split` cut, whole again.
pub(crate) fn join(text: &[u8], pieces: &[Piece], out: &mut Vec<u8>) {
    let mut at = 0;
    for (offset, piece) in pieces {
        out.extend_from_slice(&text[at..*offset]);
        out.extend_from_slice(piece);
        at = *offset;
    }
    out.extend_from_slice(&text[at..]);
}

/// Managed-fields entries, each one's members before `time` as a shared piece.
fn write_entries(out: &mut Vec<u8>, pieces: &mut Vec<Piece>, entries: &[Value]) {
    out.push(b'[');
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let Value::Object(members) = entry else {
            write(entry, out);
            continue;
        };
        let mut head = vec![b'{'];
        let mut rest = members.iter().enumerate().peekable();
        while let Some((j, (key, value))) = rest.next_if(|(_, (key, _))| key.as_str() != "time") {
            if j > 0 {
                head.push(b',');
            }
            write_str(key, &mut head);
            head.push(b':');
            write(value, &mut head);
        }
        let shared_all = rest.peek().is_none();
        if shared_all {
            head.push(b'}');
        }
        pieces.push((out.len(), intern(&head)));
        for (j, (key, value)) in rest {
            if j > 0 {
                out.push(b',');
            }
            write_str(key, out);
            out.push(b':');
            write(value, out);
        }
        if !shared_all {
            out.push(b'}');
        }
    }
    out.push(b']');
}

struct Table {
    pieces: HashSet<Arc<[u8]>>,
    /// When the table holds this many, pieces no object holds are dropped first.
    prune_at: usize,
}

/// Below this many pieces the table is never pruned.
const PRUNE_FLOOR: usize = 4096;

static TABLE: LazyLock<Mutex<Table>> = LazyLock::new(|| {
    Mutex::new(Table {
        pieces: HashSet::new(),
        prune_at: PRUNE_FLOOR,
    })
});

/// The one shared copy of `text`.
fn intern(text: &[u8]) -> Arc<[u8]> {
    // A panic elsewhere while holding the lock leaves the set consistent (inserts
    // are whole), so a poisoned lock is still usable.
    let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(piece) = table.pieces.get(text) {
        return piece.clone();
    }
    if table.pieces.len() >= table.prune_at {
        table.pieces.retain(|piece| Arc::strong_count(piece) > 1);
        table.prune_at = (table.pieces.len() * 2).max(PRUNE_FLOOR);
    }
    let piece: Arc<[u8]> = Arc::from(text);
    table.pieces.insert(piece.clone());
    piece
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn whole(object: &Value) -> (Vec<u8>, Vec<Piece>) {
        let (text, pieces) = split(object);
        let mut out = Vec::new();
        join(&text, &pieces, &mut out);
        assert_eq!(
            out,
            serde_json::to_vec(object).unwrap(),
            "{object} comes back byte for byte"
        );
        (text, pieces)
    }

    #[test]
    fn objects_come_back_byte_for_byte_and_entries_but_their_times_are_shared() {
        let entry = |manager: &str, time: Option<&str>| {
            let mut e = json!({"apiVersion": "v1", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {"f:a\"b": {}}}},
                "manager": manager, "operation": "Apply"});
            if let Some(time) = time {
                e["time"] = json!(time);
                e["zz-after-time"] = json!(1);
            }
            e
        };
        let object = |name: &str, time: &str| {
            json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v\n\u{e9}"},
                "metadata": {"name": name, "annotations": {"x": "y"},
                    "managedFields": [entry("a", Some(time)), entry("b", None), "odd", {}],
                    "uid": "u"}})
        };
        let (text_one, pieces_one) = whole(&object("one", "2026-01-01T00:00:00Z"));
        let (text_two, pieces_two) = whole(&object("two", "2026-01-01T00:00:01Z"));
        assert_eq!(pieces_one.len(), 3, "one piece per entry that is a map");
        for ((_, a), (_, b)) in pieces_one.iter().zip(&pieces_two) {
            assert!(Arc::ptr_eq(a, b), "the same entry text is kept once");
        }
        let kept = |text: &[u8]| String::from_utf8(text.to_vec()).unwrap();
        assert!(kept(&text_one).contains("2026-01-01T00:00:00Z"));
        assert!(!kept(&text_two).contains("fieldsV1"));
        for plain in [
            json!({"metadata": {"name": "x"}}),
            json!({"metadata": {"managedFields": []}}),
            json!({"metadata": {"managedFields": {"not": "a list"}}}),
            json!({"metadata": "odd"}),
            json!([1, 2]),
            json!("text"),
        ] {
            let (_, pieces) = whole(&plain);
            assert!(pieces.is_empty(), "{plain}");
        }
    }

    #[test]
    fn pieces_no_object_holds_are_dropped_as_the_table_grows() {
        let unique =
            |i: usize| json!({"metadata": {"managedFields": [{"manager": format!("gone-{i}")}]}});
        let held = split(&json!({"metadata": {"managedFields": [{"manager": "held"}]}}));
        for i in 0..10_000 {
            drop(split(&unique(i)));
        }
        let table = TABLE.lock().unwrap();
        assert!(
            table.pieces.len() < 10_000,
            "dropped pieces were pruned: {}",
            table.pieces.len()
        );
        assert!(table.pieces.contains(held.1[0].1.as_ref()));
    }
}
