//! What the simulation remembers of its last look at each object that changed
//! nothing: the object's stored text, whether its delay was over, and what else the
//! look read (referenced objects, a Cluster's uid). A look at the same text, as due,
//! with the same inputs would make the same decisions and change nothing again, so it
//! is skipped without parsing anything: a worker is looked at on every change of its
//! Cluster, and a Cluster on every change of what it references, mostly for nothing.

use crate::store::Store;
use crate::stored::Stored;
use crate::types::ResourceType;
use std::collections::HashMap;
use std::sync::Arc;

use super::Key;

/// What a look read of another object.
enum Seen {
    /// The object, as stored then (None: not there).
    Object(Option<Arc<Stored>>),
    /// Only its uid (None: not there).
    Uid(Option<String>),
}

struct Input {
    rt: Arc<ResourceType>,
    ns: String,
    name: String,
    seen: Seen,
}

impl Input {
    fn holds(&self, store: &Store) -> bool {
        let now = store.get_stored(&self.rt, &self.ns, &self.name).ok();
        match (&self.seen, now) {
            (Seen::Object(Some(then)), Some(now)) => Arc::ptr_eq(then, &now),
            (Seen::Uid(Some(then)), Some(now)) => *then == now.uid(),
            (Seen::Object(None) | Seen::Uid(None), None) => true,
            _ => false,
        }
    }
}

struct Look {
    object: Arc<Stored>,
    /// Whether its delay was over (None: its generation not seen yet).
    due: Option<bool>,
    inputs: Vec<Input>,
}

#[derive(Default)]
pub(super) struct Looks {
    last: HashMap<Key, Look>,
    /// What the look in progress read so far.
    reading: Vec<Input>,
}

impl Looks {
    /// Whether a look at `object` (as `due`) would repeat the last one, which changed
    /// nothing.
    pub fn repeats(
        &self,
        key: &Key,
        object: &Arc<Stored>,
        due: Option<bool>,
        store: &Store,
    ) -> bool {
        self.last.get(key).is_some_and(|look| {
            Arc::ptr_eq(&look.object, object)
                && look.due == due
                && look.inputs.iter().all(|input| input.holds(store))
        })
    }

    /// A look starts: nothing read yet.
    pub fn start(&mut self) {
        self.reading.clear();
    }

    /// The look read another object whole.
    pub fn read_object(
        &mut self,
        rt: &Arc<ResourceType>,
        ns: &str,
        name: &str,
        seen: Option<Arc<Stored>>,
    ) {
        self.read(rt, ns, name, Seen::Object(seen));
    }

    /// The look read another object's uid.
    pub fn read_uid(&mut self, rt: &Arc<ResourceType>, ns: &str, name: &str, uid: Option<String>) {
        self.read(rt, ns, name, Seen::Uid(uid));
    }

    fn read(&mut self, rt: &Arc<ResourceType>, ns: &str, name: &str, seen: Seen) {
        self.reading.push(Input {
            rt: rt.clone(),
            ns: ns.to_string(),
            name: name.to_string(),
            seen,
        });
    }

    /// The look is over: remembered when the object is still as it was read (nothing
    /// was written to it), forgotten otherwise.
    pub fn finish(
        &mut self,
        key: &Key,
        rt: &ResourceType,
        object: Arc<Stored>,
        due: Option<bool>,
        store: &Store,
    ) {
        let inputs = std::mem::take(&mut self.reading);
        let unchanged = store
            .get_stored(rt, key.ns(), key.name())
            .is_ok_and(|now| Arc::ptr_eq(&now, &object));
        if unchanged {
            self.last.insert(
                key.clone(),
                Look {
                    object,
                    due,
                    inputs,
                },
            );
        } else {
            self.last.remove(key);
        }
    }

    /// A look that ended early (the object could not be read as the simulation reads
    /// it): nothing to remember.
    pub fn abandon(&mut self, key: &Key) {
        self.reading.clear();
        self.last.remove(key);
    }

    pub fn forget(&mut self, key: &Key) {
        self.last.remove(key);
    }

    pub fn clear(&mut self) {
        self.last.clear();
        self.reading.clear();
    }
}
