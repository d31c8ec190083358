//! Go's `encoding/json` decoder state, as far as its type errors show it: the two
//! schema readers ([`crate::dialect`] for Cluster API's `capiSchema`, [`crate::crd`] for
//! `JSONSchemaProps`) decode different Go types but must word a type mismatch the
//! same way, so both keep their error context here.

use std::marker::PhantomData;

use crate::json::Json;

/// Go's decoder state for error messages: the innermost struct type and the JSON
/// names of the struct fields on the way there (map keys and indices are not named).
///
/// `D` only tells the readers apart, so that each can give its decoder its own field
/// readers under the same names (`string`, `flag`, ...) with the signatures its Go
/// type needs.
pub(crate) struct Decoder<D> {
    pub(crate) stack: Vec<&'static str>,
    pub(crate) strct: &'static str,
    /// Go stops at the first type error; later ones are not reported.
    pub(crate) err: Option<String>,
    reader: PhantomData<D>,
}

// Not derived: a derive would ask `D: Default` of the marker types for nothing.
impl<D> Default for Decoder<D> {
    fn default() -> Self {
        Decoder {
            stack: Vec::new(),
            strct: "",
            err: None,
            reader: PhantomData,
        }
    }
}

/// The JSON kind Go names in an `UnmarshalTypeError`.
fn kind(j: &Json) -> &'static str {
    match j {
        Json::Null => "null",
        Json::Bool(_) => "bool",
        Json::Num(_) => "number",
        Json::Str(_) => "string",
        Json::Arr(_) => "array",
        Json::Obj(_) => "object",
    }
}

impl<D> Decoder<D> {
    /// Records Go's type error for `what` (a JSON kind, or `number <literal>`) met
    /// where `go_type` was wanted, unless an earlier one was recorded.
    pub(crate) fn fail_what(&mut self, what: String, go_type: &str) {
        if self.err.is_some() {
            return;
        }
        self.err = Some(if self.stack.is_empty() {
            format!("json: cannot unmarshal {what} into Go value of type {go_type}")
        } else {
            format!(
                "json: cannot unmarshal {what} into Go struct field {}.{} of type {go_type}",
                self.strct,
                self.stack.join(".")
            )
        });
    }

    /// Records Go's type error for the value `j` met where `go_type` was wanted.
    pub(crate) fn fail(&mut self, j: &Json, go_type: &str) {
        self.fail_what(kind(j).to_string(), go_type);
    }
}
