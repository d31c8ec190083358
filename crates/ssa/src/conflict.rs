//! Apply conflicts, and the 409 `Status` kube-apiserver answers them with.
//!
//! The texts are kube-apiserver's: one conflict reads `Apply failed with 1 conflict:
//! conflict with "m" using v1: .spec.replicas`; several are grouped by manager, the
//! managers in the order of their identifiers. An `Update` owner is printed with
//! `using <apiVersion>`, and a subresource owner with `with subresource "status"`.
//! kube-apiserver's printer would add ` at <time>` for an entry with a time, but the
//! manager identifiers it prints from never carry one, so the time is never shown.

use std::fmt;

use serde_json::{Value, json};
use topograph_gocompat::strconv;

use crate::fieldset::Path;
use crate::managed::{Identity, Operation};

/// A field the applier set that another manager owns with another value.
#[derive(Clone, Debug, PartialEq)]
pub struct Conflict {
    /// The owner.
    pub owner: Identity,
    /// The field.
    pub path: Path,
}

impl Conflict {
    /// How kube-apiserver names the owner: `"m"`, `"m" using v1`,
    /// `"m" with subresource "status" using v1`.
    pub fn owner_text(&self) -> String {
        let mut s = strconv::quote(&self.owner.manager);
        if !self.owner.subresource.is_empty() {
            s.push_str(" with subresource ");
            s.push_str(&strconv::quote(&self.owner.subresource));
        }
        if self.owner.operation == Operation::Update {
            s.push_str(" using ");
            s.push_str(&self.owner.api_version);
        }
        s
    }
}

/// One `details.causes` item of the conflict status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusCause {
    /// Always `FieldManagerConflict`.
    pub kind: String,
    /// `conflict with "<manager>"…`.
    pub message: String,
    /// The field, e.g. `.spec.replicas`.
    pub field: String,
}

impl StatusCause {
    /// The cause as JSON: metav1.StatusCause names its type `reason` on the wire.
    pub fn to_value(&self) -> Value {
        json!({"reason": self.kind, "message": self.message, "field": self.field})
    }
}

/// The conflicts that stopped an apply, ordered by owner identifier and then by path.
#[derive(Clone, Debug, PartialEq)]
pub struct Conflicts(pub Vec<Conflict>);

impl Conflicts {
    /// The HTTP status code: 409.
    pub const CODE: u16 = 409;
    /// The status reason: `Conflict`.
    pub const REASON: &'static str = "Conflict";

    /// kube-apiserver's status message.
    pub fn message(&self) -> String {
        format!(
            "Apply failed with {}: {}",
            self.count_text(),
            self.listing()
        )
    }

    /// `1 conflict`, `3 conflicts`.
    pub fn count_text(&self) -> String {
        match self.0.len() {
            1 => "1 conflict".to_string(),
            n => format!("{n} conflicts"),
        }
    }

    /// The conflicts as kube-apiserver lists them after its count: `conflict with
    /// "m" using v1: .spec.replicas` for one, owners with their fields for several.
    pub fn listing(&self) -> String {
        if let [only] = self.0.as_slice() {
            return format!("conflict with {}: {}", only.owner_text(), only.path);
        }
        let mut lines = Vec::new();
        let mut last: Option<&Identity> = None;
        for c in &self.0 {
            if last != Some(&c.owner) {
                lines.push(format!("conflicts with {}:", c.owner_text()));
                last = Some(&c.owner);
            }
            lines.push(format!("- {}", c.path));
        }
        lines.join("\n")
    }

    /// No conflicts.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// One cause per conflict.
    pub fn causes(&self) -> Vec<StatusCause> {
        self.0
            .iter()
            .map(|c| StatusCause {
                kind: "FieldManagerConflict".to_string(),
                message: format!("conflict with {}", c.owner_text()),
                field: c.path.to_string(),
            })
            .collect()
    }

    /// The whole `Status` object kube-apiserver answers with.
    pub fn to_status(&self) -> Value {
        let causes: Vec<Value> = self.causes().iter().map(StatusCause::to_value).collect();
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message(),
            "reason": Self::REASON,
            "details": {"causes": causes},
            "code": Self::CODE,
        })
    }
}

impl fmt::Display for Conflicts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for Conflicts {}
