//! An object's JSON text as the owned-object cache keeps it: each managed-fields entry,
//! but for its `time`, kept once for every object that has it alike.
//!
//! A quick-start Cluster's own objects are 33 KB of text as the API server sends them,
//! 15 KB of it managed fields; and one manager writing objects from one template writes
//! the same entry on each (a field set names fields, not values) but for the time. So
//! the text is kept with each entry cut down to its `time` value, and the rest of the
//! entry (the text before the time and after it) held in a [`Shared`] table, one copy
//! for the whole cache. The cut works on the text as sent, whatever order the server
//! writes an entry's members in, and gives it back byte for byte.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::value::RawValue;

/// Object text with its entries cut out, and the cut pieces in order.
#[derive(Clone, Debug)]
pub(crate) struct KeptText {
    text: Box<str>,
    pieces: Box<[Piece]>,
}

/// One entry cut out: its time's text sits at `at..at + time` in the kept text; the
/// entry's text without it is `shared`, the time going in at `cut`.
#[derive(Clone, Debug)]
struct Piece {
    at: u32,
    time: u32,
    cut: u32,
    shared: Arc<str>,
}

/// The interned entry texts of one cache. A text no object holds any more is dropped
/// when the table next grows past twice what it kept.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    texts: HashSet<Arc<str>>,
    kept_at_prune: usize,
}

/// Below this many texts the table is never pruned.
const PRUNE_FLOOR: usize = 1024;

impl Shared {
    fn intern(&self, text: &str) -> Arc<str> {
        // Inserts are whole, so a lock poisoned by a panic elsewhere is still consistent.
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(shared) = table.texts.get(text) {
            return shared.clone();
        }
        if table.texts.len() >= (2 * table.kept_at_prune).max(PRUNE_FLOOR) {
            table.texts.retain(|text| Arc::strong_count(text) > 1);
            table.kept_at_prune = table.texts.len();
        }
        let shared: Arc<str> = Arc::from(text);
        table.texts.insert(shared.clone());
        shared
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.table.lock().map(|t| t.texts.len()).unwrap_or_default()
    }
}

/// What is read of an object's text to find its entries.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    metadata: Option<Metadata<'a>>,
}

#[derive(Deserialize)]
struct Metadata<'a> {
    #[serde(borrow, default, rename = "managedFields")]
    managed_fields: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(borrow, default)]
    time: Option<&'a RawValue>,
}

/// Where `part` (a slice of `whole`) starts in it.
fn offset(whole: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize)
}

impl KeptText {
    /// `text` (one JSON object as sent) with its managed-fields entries interned in
    /// `shared`. Text whose entries cannot be read is kept whole.
    pub(crate) fn new(text: &str, shared: &Shared) -> KeptText {
        let whole = || KeptText {
            text: text.into(),
            pieces: Box::default(),
        };
        let entries = match serde_json::from_str::<Head>(text) {
            Ok(Head {
                metadata:
                    Some(Metadata {
                        managed_fields: Some(entries),
                    }),
            }) if !entries.is_empty() => entries,
            _ => return whole(),
        };
        let mut kept = String::with_capacity(text.len() / 2);
        let mut pieces = Vec::with_capacity(entries.len());
        let mut at = 0;
        for entry in entries {
            let entry = entry.get();
            let start = offset(text, entry);
            // An entry that is not a map (or whose time is not where its text says) is
            // kept as it is.
            let time = match serde_json::from_str::<Entry>(entry) {
                Ok(Entry { time: Some(time) }) => time.get(),
                Ok(Entry { time: None }) => &entry[entry.len()..],
                Err(_) => continue,
            };
            let cut = offset(entry, time);
            if cut + time.len() > entry.len() || start < at {
                return whole();
            }
            let mut rest = String::with_capacity(entry.len() - time.len());
            rest.push_str(&entry[..cut]);
            rest.push_str(&entry[cut + time.len()..]);
            kept.push_str(&text[at..start]);
            let (Ok(piece_at), Ok(time_len), Ok(cut)) = (
                u32::try_from(kept.len()),
                u32::try_from(time.len()),
                u32::try_from(cut),
            ) else {
                return whole();
            };
            kept.push_str(time);
            pieces.push(Piece {
                at: piece_at,
                time: time_len,
                cut,
                shared: shared.intern(&rest),
            });
            at = start + entry.len();
        }
        kept.push_str(&text[at..]);
        KeptText {
            text: kept.into(),
            pieces: pieces.into(),
        }
    }

    /// The text as it was sent.
    pub(crate) fn whole(&self) -> Cow<'_, str> {
        if self.pieces.is_empty() {
            return Cow::Borrowed(&self.text);
        }
        let size = self.text.len()
            + self
                .pieces
                .iter()
                .map(|piece| piece.shared.len())
                .sum::<usize>();
        let mut out = String::with_capacity(size);
        let mut at = 0;
        for piece in &self.pieces {
            let (start, cut) = (piece.at as usize, piece.cut as usize);
            let end = start + piece.time as usize;
            out.push_str(&self.text[at..start]);
            out.push_str(&piece.shared[..cut]);
            out.push_str(&self.text[start..end]);
            out.push_str(&piece.shared[cut..]);
            at = end;
        }
        out.push_str(&self.text[at..]);
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn object(name: &str, time: &str) -> String {
        // The member order a real API server writes (time before fieldsV1), a second
        // entry without a time, one that is not a map, and escapes in keys.
        format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","managedFields":[{{"manager":"a","operation":"Apply","apiVersion":"v1","time":"{time}","fieldsType":"FieldsV1","fieldsV1":{{"f:data":{{"f:k\"q":{{}}}}}}}},{{"manager":"b","operation":"Update","fieldsV1":{{}}}},"odd",{{}}],"uid":"u"}},"data":{{"k\"q":"v\n\u00e9"}}}}"#
        )
    }

    #[test]
    fn text_comes_back_byte_for_byte_and_entries_but_their_times_are_shared() {
        let shared = Shared::default();
        let one = object("one", "2026-01-01T00:00:00Z");
        let two = object("two", "2026-01-01T00:00:01Z");
        let (kept_one, kept_two) = (KeptText::new(&one, &shared), KeptText::new(&two, &shared));
        assert_eq!(kept_one.whole(), one);
        assert_eq!(kept_two.whole(), two);
        assert_eq!(kept_one.pieces.len(), 3, "every entry that is a map");
        for (a, b) in kept_one.pieces.iter().zip(&kept_two.pieces) {
            assert!(Arc::ptr_eq(&a.shared, &b.shared), "kept once");
        }
        assert!(kept_two.text.contains("2026-01-01T00:00:01Z"));
        assert!(!kept_two.text.contains("fieldsV1"));
        assert_eq!(shared.len(), 3);
    }

    #[test]
    fn text_without_entries_is_kept_whole() {
        let shared = Shared::default();
        for text in [
            r#"{"metadata":{"name":"x"}}"#,
            r#"{"metadata":{"managedFields":[]}}"#,
            r#"{"metadata":{"managedFields":{"not":"a list"}}}"#,
            r#"{"metadata":"odd"}"#,
            r#"{"metadata":{"managedFields":["only","odd",1]}}"#,
            "[1,2]",
        ] {
            let kept = KeptText::new(text, &shared);
            assert_eq!(kept.whole(), text);
            assert!(kept.pieces.is_empty(), "{text}");
        }
        assert_eq!(shared.len(), 0);
    }

    /// Any JSON value as `serde_json` writes it (strings with escapes, nesting).
    fn value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            "[a-z\"\\\n\u{e9}]{0,6}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map("[a-z:\"]{1,5}", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Whatever an object and its entries hold, in whatever member order, the text
        /// comes back byte for byte.
        #[test]
        fn any_object_comes_back_byte_for_byte(
            metadata in prop::collection::btree_map("[a-zA-Z]{1,8}", value(), 0..4),
            entries in prop::collection::vec(
                (prop::collection::vec(("[a-zA-Z]{1,6}", value()), 0..5),
                 prop::option::of((0usize..6, value()))), 0..4),
            odd in prop::option::of(value()),
            rest in value(),
        ) {
            let mut fields: Vec<serde_json::Value> = entries
                .into_iter()
                .map(|(mut members, time)| {
                    // A `time` anywhere among the members, holding anything.
                    if let Some((at, time)) = time {
                        members.insert(at.min(members.len()), ("time".into(), time));
                    }
                    let mut text = String::from("{");
                    for (i, (key, value)) in members.iter().enumerate() {
                        if i > 0 { text.push(','); }
                        text.push_str(&serde_json::to_string(key).unwrap());
                        text.push(':');
                        text.push_str(&serde_json::to_string(value).unwrap());
                    }
                    text.push('}');
                    serde_json::from_str(&text).unwrap()
                })
                .collect();
            fields.extend(odd);
            let mut metadata: serde_json::Map<_, _> = metadata.into_iter().collect();
            metadata.insert("managedFields".into(), fields.into());
            let object = serde_json::json!({"metadata": metadata, "spec": rest});
            let text = serde_json::to_string(&object).unwrap();
            let shared = Shared::default();
            let kept = KeptText::new(&text, &shared);
            prop_assert_eq!(kept.whole(), text.as_str());
        }
    }

    #[test]
    fn texts_no_object_holds_are_dropped_as_the_table_grows() {
        let shared = Shared::default();
        let held = KeptText::new(
            r#"{"metadata":{"managedFields":[{"manager":"held"}]}}"#,
            &shared,
        );
        for i in 0..10_000 {
            let text = format!(r#"{{"metadata":{{"managedFields":[{{"manager":"gone-{i}"}}]}}}}"#);
            drop(KeptText::new(&text, &shared));
        }
        assert!(shared.len() < 3000, "pruned: {}", shared.len());
        let table = shared.table.lock().unwrap();
        assert!(table.texts.contains(&held.pieces[0].shared));
    }
}
