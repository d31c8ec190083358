//! Request counters by verb, so tests can assert how many reads and writes a client made
//! (for example: a converged reconcile makes zero writes). Only HTTP requests count;
//! writes made through the library or by the simulated providers do not.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};

/// The Kubernetes verb a request was counted under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    List,
    Watch,
    Create,
    Update,
    Patch,
    Delete,
    /// Discovery, version and OpenAPI documents.
    Discovery,
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCounts {
    pub get: u64,
    pub list: u64,
    pub watch: u64,
    pub create: u64,
    /// PUTs, including `/status`.
    pub update: u64,
    /// PATCHes, including `/status`.
    pub patch: u64,
    /// Single and collection deletes.
    pub delete: u64,
    pub discovery: u64,
}

impl RequestCounts {
    pub fn writes(&self) -> u64 {
        self.create + self.update + self.patch + self.delete
    }

    pub fn reads(&self) -> u64 {
        self.get + self.list + self.watch
    }
}

#[derive(Debug, Default)]
pub struct Counters([AtomicU64; 8]);

impl Counters {
    pub fn count(&self, verb: Verb) {
        self.0[verb as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> RequestCounts {
        let n = |v: Verb| self.0[v as usize].load(Ordering::Relaxed);
        RequestCounts {
            get: n(Verb::Get),
            list: n(Verb::List),
            watch: n(Verb::Watch),
            create: n(Verb::Create),
            update: n(Verb::Update),
            patch: n(Verb::Patch),
            delete: n(Verb::Delete),
            discovery: n(Verb::Discovery),
        }
    }

    pub fn reset(&self) {
        for c in &self.0 {
            c.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_resets_by_verb() {
        let c = Counters::default();
        c.count(Verb::Get);
        c.count(Verb::Patch);
        c.count(Verb::Patch);
        c.count(Verb::Delete);
        let s = c.snapshot();
        assert_eq!(
            (s.get, s.patch, s.delete, s.writes(), s.reads()),
            (1, 2, 1, 3, 1)
        );
        c.reset();
        assert_eq!(c.snapshot(), RequestCounts::default());
    }
}
