//! The schema a value is checked against: the subset of `JSONSchemaProps` that
//! ClusterClass variables (and CRDs) can use, after conversion to the form the
//! Kubernetes validator works on (literals decoded, integers kept as integers).

use std::collections::BTreeMap;

use crate::value::Val;

/// One `x-kubernetes-validations` entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rule {
    /// The CEL expression.
    pub rule: String,
    /// Fixed message.
    pub message: String,
    /// CEL expression computing the message.
    pub message_expression: String,
    /// `FieldValueInvalid`, `FieldValueForbidden`, ... (empty: invalid).
    pub reason: Option<String>,
    /// Where the error is reported, relative to the schema's value.
    pub field_path: String,
}

/// `additionalProperties`: CAPI's dialect only has the schema form.
#[derive(Clone, Debug, PartialEq)]
pub enum Additional {
    /// `true` / `false`.
    Allows(bool),
    /// A schema for every other key.
    Schema(Box<Schema>),
}

/// A schema node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schema {
    /// `type` as written (empty when left open).
    pub type_: String,
    /// `x-kubernetes-int-or-string`.
    pub int_or_string: bool,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub preserve_unknown: bool,
    /// `x-kubernetes-embedded-resource: true` (CRD schemas only): the node is a whole
    /// object, whose `apiVersion`, `kind` and `metadata` pruning leaves alone.
    pub embedded_resource: bool,
    /// `nullable` (CRD schemas only).
    pub nullable: bool,
    /// `format` as written.
    pub format: String,
    /// `properties`.
    pub properties: BTreeMap<String, Schema>,
    /// `additionalProperties`.
    pub additional: Option<Additional>,
    /// `patternProperties` (CRD schemas only).
    pub pattern_properties: BTreeMap<String, Schema>,
    /// `required`.
    pub required: Vec<String>,
    /// `maxProperties`.
    pub max_properties: Option<i64>,
    /// `minProperties`.
    pub min_properties: Option<i64>,
    /// `items`.
    pub items: Option<Box<Schema>>,
    /// `maxItems`.
    pub max_items: Option<i64>,
    /// `minItems`.
    pub min_items: Option<i64>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `maxLength`.
    pub max_length: Option<i64>,
    /// `minLength`.
    pub min_length: Option<i64>,
    /// `pattern`.
    pub pattern: String,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: bool,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: bool,
    /// `multipleOf` (CRD schemas only).
    pub multiple_of: Option<f64>,
    /// `enum` (null entries dropped in CAPI's dialect).
    pub enum_: Vec<Val>,
    /// `default`.
    pub default: Option<Val>,
    /// `example` (kept by the variable dialect only: a class's examples are checked).
    pub example: Option<Val>,
    /// `allOf`.
    pub all_of: Vec<Schema>,
    /// `oneOf`.
    pub one_of: Vec<Schema>,
    /// `anyOf`.
    pub any_of: Vec<Schema>,
    /// `not`.
    pub not: Option<Box<Schema>>,
    /// `x-kubernetes-validations` (`None` when absent).
    pub rules: Option<Vec<Rule>>,
    /// `$ref` (CRD schemas only; never supported).
    pub reference: Option<String>,
}

impl Schema {
    /// The OpenAPI type list the validator sees: int-or-string means both.
    pub fn types(&self) -> Vec<&str> {
        if self.int_or_string {
            vec!["integer", "string"]
        } else if self.type_.is_empty() {
            Vec::new()
        } else {
            vec![self.type_.as_str()]
        }
    }

    /// The schema of additional properties, if any.
    pub fn additional_schema(&self) -> Option<&Schema> {
        match &self.additional {
            Some(Additional::Schema(s)) => Some(s),
            _ => None,
        }
    }

    /// Whether any node has CEL rules.
    pub fn has_rules(&self) -> bool {
        self.rules.as_ref().is_some_and(|r| !r.is_empty())
            || self.properties.values().any(Schema::has_rules)
            || self.additional_schema().is_some_and(Schema::has_rules)
            || self.items.as_deref().is_some_and(Schema::has_rules)
    }
}
