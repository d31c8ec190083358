//! ClusterClass-side validation of variable definitions (spec 5.2 and the CC-side
//! examples of 5.4): every case asserts the full text of every error, in order.
//!
//! Texts come from Cluster API's `clusterclass_variable_validation.go` and its test,
//! and from the Kubernetes sources those call; a case whose text had to be inferred
//! says so next to it.

use std::collections::BTreeMap;

use topograph_api::model::{Metadata, VariableDefinition};
use topograph_variables::definitions::{RawDefinition, validate};
use topograph_variables::json::{self, Json};
use topograph_variables::validate_definitions;

/// A string `"@raw:<text>"` in a schema stands for a literal whose raw text is
/// `<text>` (possibly not JSON), as Go tests build `apiextensionsv1.JSON{Raw: ...}`.
fn raw_literals(j: Json) -> Json {
    match j {
        Json::Str(s) if s.starts_with("@raw:") => Json::Num(s["@raw:".len()..].to_string()),
        Json::Arr(a) => Json::Arr(a.into_iter().map(raw_literals).collect()),
        Json::Obj(m) => Json::Obj(m.into_iter().map(|(k, v)| (k, raw_literals(v))).collect()),
        other => other,
    }
}

fn def(name: &str, schema: &str) -> RawDefinition {
    RawDefinition {
        name: name.to_string(),
        schema: raw_literals(json::parse(schema).expect("test schema is JSON")),
        metadata: Metadata::default(),
    }
}

fn with_metadata(
    mut d: RawDefinition,
    labels: &[(&str, &str)],
    annotations: &[(&str, &str)],
) -> RawDefinition {
    let map = |l: &[(&str, &str)]| -> BTreeMap<String, String> {
        l.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    d.metadata = Metadata {
        labels: map(labels),
        annotations: map(annotations),
    };
    d
}

struct Case {
    name: String,
    defs: Vec<RawDefinition>,
    old: Option<Vec<RawDefinition>>,
    want: Vec<String>,
}

fn case(name: &str, defs: Vec<RawDefinition>, want: &[&str]) -> Case {
    Case {
        name: name.to_string(),
        defs,
        old: None,
        want: want.iter().map(|s| s.to_string()).collect(),
    }
}

fn update(name: &str, old: Vec<RawDefinition>, defs: Vec<RawDefinition>, want: &[&str]) -> Case {
    Case {
        name: name.to_string(),
        defs,
        old: Some(old),
        want: want.iter().map(|s| s.to_string()).collect(),
    }
}

const QNAME: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const TYPES: &str =
    r#"supported values: "array", "boolean", "integer", "number", "object", "string""#;
const COST_HINT: &str = "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)";

fn rule(r: &str) -> String {
    format!(
        "apiextensions.ValidationRule{{Rule:{r:?}, Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}}"
    )
}

/// Cases asked once of `default` and once of `example`: both literals are checked
/// against their schema alike, so one template serves both and they cannot drift
/// apart. `KW` stands for the keyword in the name, the schema and the error.
fn literal_cases() -> Vec<Case> {
    // (name, variable, schema, error)
    let templates = [
        (
            "KW too long",
            "var",
            r#"{"type":"string","maxLength":6,"KW":"veryLongValueIsInvalid"}"#,
            "spec.variables[var].schema.openAPIV3Schema.KW: Too long: may not be more than 6 bytes",
        ),
        (
            "top-level KW below minimum",
            "var",
            r#"{"type":"object","KW":{"spec":{"replicas":-100}},"properties":{"spec":{"type":"object","properties":{"replicas":{"type":"integer","minimum":1}}}}}"#,
            "spec.variables[var].schema.openAPIV3Schema.KW.spec.replicas: Invalid value: -100: spec.replicas in body should be greater than or equal to 1",
        ),
        (
            "KW fails a rule",
            "cpu",
            r#"{"type":"integer","KW":0,"x-kubernetes-validations":[{"rule":"self >= 1"}]}"#,
            "spec.variables[cpu].schema.openAPIV3Schema.KW: Invalid value: 0: failed rule: self >= 1",
        ),
        (
            "nested KW fails a rule",
            "cpu",
            r#"{"type":"object","properties":{"nestedField":{"type":"integer","KW":0,"x-kubernetes-validations":[{"rule":"self >= 1"}]}}}"#,
            "spec.variables[cpu].schema.openAPIV3Schema.properties[nestedField].KW: Invalid value: 0: failed rule: self >= 1",
        ),
    ];
    ["default", "example"]
        .into_iter()
        .flat_map(|kw| {
            templates.iter().map(move |(name, var, schema, want)| {
                case(
                    &name.replace("KW", kw),
                    vec![def(var, &schema.replace("KW", kw))],
                    &[&want.replace("KW", kw)],
                )
            })
        })
        .collect()
}

fn cases() -> Vec<Case> {
    let mut all = vec![
        // Names.
        case(
            "valid definitions",
            vec![
                def("cpu", r#"{"type":"integer","minimum":1}"#),
                def("validNumber", r#"{"type":"number","maximum":1}"#),
                def("location", r#"{"type":"string","minLength":1}"#),
            ],
            &[],
        ),
        case(
            "duplicate names",
            vec![
                def("cpu", r#"{"type":"integer","minimum":1}"#),
                def("cpu", r#"{"type":"integer","minimum":1}"#),
            ],
            &[
                r#"spec.variables[cpu].name: Invalid value: "cpu": variable name must be unique. Variable with name "cpu" is defined more than once"#,
            ],
        ),
        case(
            "empty name",
            vec![def("", r#"{"type":"string"}"#)],
            &["spec.variables[].name: Required value: variable name must be defined"],
        ),
        case(
            "builtin name",
            vec![def("builtin", r#"{"type":"string"}"#)],
            &[
                r#"spec.variables[builtin].name: Invalid value: "builtin": "builtin" is a reserved variable name"#,
            ],
        ),
        case(
            "dotted name",
            vec![def("path.tovariable", r#"{"type":"string"}"#)],
            &[
                r#"spec.variables[path.tovariable].name: Invalid value: "path.tovariable": variable name cannot contain ".""#,
            ],
        ),
        // Metadata.
        case(
            "metadata label key",
            vec![with_metadata(
                def("variable", r#"{"type":"string"}"#),
                &[(".label-key", "label-value")],
                &[],
            )],
            &[&format!(
                r#"spec.variables[variable].metadata.labels: Invalid value: ".label-key": name part {QNAME}"#
            )],
        ),
        case(
            "metadata annotation key",
            vec![with_metadata(
                def("variable", r#"{"type":"string"}"#),
                &[],
                &[(".annotation-key", "v")],
            )],
            &[&format!(
                r#"spec.variables[variable].metadata.annotations: Invalid value: ".annotation-key": name part {QNAME}"#
            )],
        ),
        case(
            "metadata valid",
            vec![with_metadata(
                def("v", r#"{"type":"string"}"#),
                &[("example.com/label-key", "label-value")],
                &[("Annotation-Key", "any value at all")],
            )],
            &[],
        ),
        // Inferred: the texts of apimachinery's IsValidLabelValue (not in Cluster API's tests).
        case(
            "metadata label value",
            vec![with_metadata(
                def("v", r#"{"type":"string"}"#),
                &[("key", "-bad")],
                &[],
            )],
            &[
                r#"spec.variables[v].metadata.labels: Invalid value: "-bad": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"#,
            ],
        ),
        // Inferred: the prefix texts of apimachinery's IsQualifiedName.
        case(
            "metadata label prefix",
            vec![with_metadata(
                def("v", r#"{"type":"string"}"#),
                &[("Example.com/key", "x")],
                &[],
            )],
            &[
                r#"spec.variables[v].metadata.labels: Invalid value: "Example.com/key": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
            ],
        ),
        case(
            "x-metadata label key",
            vec![def(
                "variable",
                r#"{"type":"string","x-metadata":{"labels":{".label-key":"label-value"}}}"#,
            )],
            &[&format!(
                r#"spec.variables[variable].schema.openAPIV3Schema.x-metadata.labels: Invalid value: ".label-key": name part {QNAME}"#
            )],
        ),
        case(
            "x-metadata annotation key in map",
            vec![def(
                "variable",
                r#"{"type":"object","additionalProperties":{"type":"string","x-metadata":{"annotations":{".annotation-key":"v"}}}}"#,
            )],
            &[&format!(
                r#"spec.variables[variable].schema.openAPIV3Schema.additionalProperties.x-metadata.annotations: Invalid value: ".annotation-key": name part {QNAME}"#
            )],
        ),
        case(
            "x-metadata label key in object",
            vec![def(
                "variable",
                r#"{"type":"object","properties":{"enabled":{"type":"string","x-metadata":{"labels":{".label-key":"v"}}}}}"#,
            )],
            &[&format!(
                r#"spec.variables[variable].schema.openAPIV3Schema.properties[enabled].x-metadata.labels: Invalid value: ".label-key": name part {QNAME}"#
            )],
        ),
        case(
            "x-metadata annotation key in array",
            vec![def(
                "variable",
                r#"{"type":"array","items":{"type":"string","x-metadata":{"annotations":{".annotation-key":"v"}}}}"#,
            )],
            &[&format!(
                r#"spec.variables[variable].schema.openAPIV3Schema.items.x-metadata.annotations: Invalid value: ".annotation-key": name part {QNAME}"#
            )],
        ),
        // Conversion of literals.
        case(
            "default not JSON",
            vec![def(
                "arrayVariable",
                r#"{"type":"array","items":{"type":"string","default":"@raw:invalidString"}}"#,
            )],
            &[
                r#"spec.variables[arrayVariable].schema.openAPIV3Schema.items.default: Invalid value: "invalidString": failed to convert schema definition for variable "arrayVariable"; ClusterClass should be checked: default is not valid JSON: invalid character 'i' looking for beginning of value"#,
            ],
        ),
        case(
            "default not JSON after value",
            vec![def(
                "var",
                r#"{"type":"object","default":"@raw:\"defaultValue\": \"value\""}"#,
            )],
            &[
                r#"spec.variables[var].schema.openAPIV3Schema.default: Invalid value: "\"defaultValue\": \"value\"": failed to convert schema definition for variable "var"; ClusterClass should be checked: default is not valid JSON: invalid character ':' after top-level value"#,
            ],
        ),
        case(
            "example out of range",
            vec![def("var", r#"{"type":"number","example":1e400}"#)],
            &[
                r#"spec.variables[var].schema.openAPIV3Schema.example: Invalid value: "1e400": failed to convert schema definition for variable "var"; ClusterClass should be checked: example is not valid JSON: json: cannot unmarshal number 1e400 into Go value of type float64"#,
            ],
        ),
        case(
            "enum value not JSON (nested)",
            vec![def(
                "var",
                r#"{"type":"array","items":{"type":"object","enum":[{"enumValue":"value"},"@raw:\"enumValue\": \"value\""]}}"#,
            )],
            &[
                r#"spec.variables[var].schema.openAPIV3Schema.items.enum[1]: Invalid value: "\"enumValue\": \"value\"": failed to convert schema definition for variable "var"; ClusterClass should be checked: enum value is not valid JSON: invalid character ':' after top-level value"#,
            ],
        ),
        // Types.
        case(
            "type null",
            vec![def("var", r#"{"type":"null"}"#)],
            &[&format!(
                r#"spec.variables[var].schema.openAPIV3Schema.type: Unsupported value: "null": {TYPES}"#
            )],
        ),
        case(
            "type invalid",
            vec![def("var", r#"{"type":"invalidVariableType"}"#)],
            &[&format!(
                r#"spec.variables[var].schema.openAPIV3Schema.type: Unsupported value: "invalidVariableType": {TYPES}"#
            )],
        ),
        case(
            "nested type invalid",
            vec![def(
                "httpProxy",
                r#"{"type":"object","additionalProperties":{"type":"object","properties":{"enabled":{"type":"boolean","default":false},"noProxy":{"type":"invalidType"}}}}"#,
            )],
            &[&format!(
                r#"spec.variables[httpProxy].schema.openAPIV3Schema.additionalProperties.properties[noProxy].type: Unsupported value: "invalidType": {TYPES}"#
            )],
        ),
        case(
            "type empty",
            vec![def("var", r#"{}"#)],
            &[
                "spec.variables[var].schema.openAPIV3Schema.type: Required value: must not be empty for specified object fields",
            ],
        ),
        case(
            "type empty (array items)",
            vec![def("var", r#"{"type":"array","items":{}}"#)],
            &[
                "spec.variables[var].schema.openAPIV3Schema.items.type: Required value: must not be empty for specified array items",
            ],
        ),
        case(
            "type empty (map)",
            vec![def("var", r#"{"type":"object","additionalProperties":{}}"#)],
            &[
                "spec.variables[var].schema.openAPIV3Schema.additionalProperties.type: Required value: must not be empty for specified object fields",
            ],
        ),
        // A node may go without a type where Kubernetes' structural rules allow it
        // (spec 5.2): int-or-string, or keeping unknown fields.
        case(
            "int-or-string without type",
            vec![def("var", r#"{"x-kubernetes-int-or-string":true}"#)],
            &[],
        ),
        case(
            "int-or-string without type, nested, with anyOf, a default and a rule",
            vec![def(
                "var",
                r#"{"type":"object","properties":{"q":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}],"default":"50%","x-kubernetes-validations":[{"rule":"type(self) == string"}]}}}"#,
            )],
            &[],
        ),
        case(
            "preserve-unknown-fields without type",
            vec![def(
                "var",
                r#"{"x-kubernetes-preserve-unknown-fields":true}"#,
            )],
            &[],
        ),
        case(
            "preserve-unknown-fields without type, nested, with a default",
            vec![def(
                "var",
                r#"{"type":"object","properties":{"p":{"x-kubernetes-preserve-unknown-fields":true,"default":{"a":[1]}}}}"#,
            )],
            &[],
        ),
        case(
            "preserve-unknown-fields false without type",
            vec![def(
                "var",
                r#"{"x-kubernetes-preserve-unknown-fields":false}"#,
            )],
            &[
                "spec.variables[var].schema.openAPIV3Schema.type: Required value: must not be empty for specified object fields",
            ],
        ),
        // Inferred from the Kubernetes sources: the CRD machinery derives no CEL type
        // for an untyped node that keeps unknown fields, so its rules cannot compile.
        case(
            "rule on preserve-unknown-fields without type",
            vec![def(
                "var",
                r#"{"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-validations":[{"rule":"has(self.a)"}]}"#,
            )],
            &[
                "spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations: Internal error: internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations",
            ],
        ),
        case(
            "array without items",
            vec![def("var", r#"{"type":"array"}"#)],
            &[
                "spec.variables[var].schema.openAPIV3Schema.items: Required value: must be specified",
            ],
        ),
        case(
            "properties and additionalProperties",
            vec![def(
                "httpProxy",
                r#"{"type":"object","additionalProperties":{"type":"object","properties":{"enabled":{"type":"boolean","default":false}}},"properties":{"enabled":{"type":"boolean","default":false}}}"#,
            )],
            &[
                "spec.variables[httpProxy].schema.openAPIV3Schema: Forbidden: additionalProperties and properties are mutually exclusive",
            ],
        ),
        // Structural schema.
        case(
            "rules under allOf/anyOf/oneOf/not",
            vec![def(
                "variableA",
                r#"{"type":"number","not":{"x-kubernetes-validations":[{"rule":"should be forbidden"}]},"anyOf":[{"x-kubernetes-validations":[{"rule":"should be forbidden"}]}],"allOf":[{"x-kubernetes-validations":[{"rule":"should be forbidden"}]}],"oneOf":[{"x-kubernetes-validations":[{"rule":"should be forbidden"}]}]}"#,
            )],
            &[
                "spec.variables[variableA].schema.openAPIV3Schema.allOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural",
                "spec.variables[variableA].schema.openAPIV3Schema.anyOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural",
                "spec.variables[variableA].schema.openAPIV3Schema.not.x-kubernetes-validations: Forbidden: must be empty to be structural",
                "spec.variables[variableA].schema.openAPIV3Schema.oneOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural",
            ],
        ),
        case(
            "defaults under allOf/anyOf/oneOf/not",
            vec![def(
                "variableA",
                r#"{"type":"number","not":{"default":42.0},"anyOf":[{"default":42.0}],"allOf":[{"default":42.0}],"oneOf":[{"default":42.0}]}"#,
            )],
            &[
                "spec.variables[variableA].schema.openAPIV3Schema.allOf[0].default: Forbidden: must be undefined to be structural",
                "spec.variables[variableA].schema.openAPIV3Schema.anyOf[0].default: Forbidden: must be undefined to be structural",
                "spec.variables[variableA].schema.openAPIV3Schema.not.default: Forbidden: must be undefined to be structural",
                "spec.variables[variableA].schema.openAPIV3Schema.oneOf[0].default: Forbidden: must be undefined to be structural",
            ],
        ),
        case(
            "types under allOf/anyOf/oneOf/not",
            vec![def(
                "variableA",
                r#"{"type":"number","not":{"properties":{"testField":{"type":"number"}}},"anyOf":[{"properties":{"testField":{"type":"number"}}}],"allOf":[{"properties":{"testField":{"type":"number"}}}],"oneOf":[{"properties":{"testField":{"type":"number"}}}]}"#,
            )],
            &[
                "spec.variables[variableA].schema.openAPIV3Schema.allOf[0].properties[testField].type: Forbidden: must be empty to be structural",
                "spec.variables[variableA].schema.openAPIV3Schema.anyOf[0].properties[testField].type: Forbidden: must be empty to be structural",
                "spec.variables[variableA].schema.openAPIV3Schema.not.properties[testField].type: Forbidden: must be empty to be structural",
                "spec.variables[variableA].schema.openAPIV3Schema.oneOf[0].properties[testField].type: Forbidden: must be empty to be structural",
            ],
        ),
        case(
            "valid compositions",
            vec![def(
                "variableA",
                r#"{"type":"string","not":{"format":"email"},"anyOf":[{"format":"ipv4"},{"format":"ipv6"}],"allOf":[{"format":"ipv4"},{"format":"ipv6"}],"oneOf":[{"format":"ipv4"},{"format":"ipv6"}]}"#,
            )],
            &[],
        ),
        case(
            "int-or-string in compositions",
            vec![def(
                "variableA",
                r#"{"type":"object","properties":{
                "anyOfExampleField":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
                "allOfExampleFieldWithAnyOf":{"x-kubernetes-int-or-string":true,"allOf":[{"anyOf":[{"type":"integer"},{"type":"string"}]}]},
                "allOfExampleField":{"allOf":[{"type":"integer"},{"type":"string"}]},
                "oneOfExampleField":{"oneOf":[{"type":"integer"},{"type":"string"}]}}}"#,
            )],
            &[
                "spec.variables[variableA].schema.openAPIV3Schema.properties[allOfExampleField].allOf[0].type: Forbidden: must be empty to be structural",
                "spec.variables[variableA].schema.openAPIV3Schema.properties[allOfExampleField].allOf[1].type: Forbidden: must be empty to be structural",
                "spec.variables[variableA].schema.openAPIV3Schema.properties[allOfExampleField].type: Required value: must not be empty for specified object fields",
                "spec.variables[variableA].schema.openAPIV3Schema.properties[oneOfExampleField].oneOf[0].type: Forbidden: must be empty to be structural",
                "spec.variables[variableA].schema.openAPIV3Schema.properties[oneOfExampleField].oneOf[1].type: Forbidden: must be empty to be structural",
                "spec.variables[variableA].schema.openAPIV3Schema.properties[oneOfExampleField].type: Required value: must not be empty for specified object fields",
            ],
        ),
        // Texts read from Kubernetes' structural-schema validation; not covered by Cluster API's tests.
        case(
            "nested additionalProperties, extensions and metadata",
            vec![def(
                "v",
                r#"{"type":"object","properties":{"a":{"type":"string"}},"anyOf":[{"additionalProperties":{"type":"string"},"x-kubernetes-preserve-unknown-fields":true,"properties":{"metadata":{}}}]}"#,
            )],
            &[
                "spec.variables[v].schema.openAPIV3Schema.anyOf[0].additionalProperties: Forbidden: must be undefined to be structural",
                "spec.variables[v].schema.openAPIV3Schema.anyOf[0].properties[metadata]: Forbidden: must not be specified in a nested context",
                "spec.variables[v].schema.openAPIV3Schema.anyOf[0].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural",
            ],
        ),
        // The pattern check's text is Kubernetes'; the regexp error is this crate's rendition of
        // Go's (not in Cluster API's tests).
        case(
            "invalid pattern",
            vec![def("v", r#"{"type":"string","pattern":"[a"}"#)],
            &[
                "spec.variables[v].schema.openAPIV3Schema.pattern: Invalid value: \"[a\": must be a valid regular expression, but isn't: error parsing regexp: missing closing ]: `[a`",
            ],
        ),
        // Defaults. OpenAPI details are the CRD machinery's (`<name> in body ...`, an empty
        // name at the node itself), as the oracle corpus shows them; Cluster API's test
        // only matches their tail.
        case(
            "default too long (nested)",
            vec![def(
                "var",
                r#"{"type":"array","items":{"type":"string","maxLength":6,"default":"veryLongValueIsInvalid"}}"#,
            )],
            &[
                "spec.variables[var].schema.openAPIV3Schema.items.default: Too long: may not be more than 6 bytes",
            ],
        ),
        case(
            "nested default below minimum",
            vec![def(
                "var",
                r#"{"type":"object","properties":{"spec":{"type":"object","properties":{"replicas":{"type":"integer","default":-100,"minimum":1}}}}}"#,
            )],
            &[
                "spec.variables[var].schema.openAPIV3Schema.properties[spec].properties[replicas].default: Invalid value: -100:  in body should be greater than or equal to 1",
            ],
        ),
        case(
            "default misses a required field",
            vec![def(
                "var",
                r#"{"type":"object","properties":{"spec":{"type":"object","required":["replicas"],"default":{"value":100},"properties":{"replicas":{"type":"integer","default":100,"minimum":1},"value":{"type":"integer","default":100,"minimum":1}}}}}"#,
            )],
            &[
                "spec.variables[var].schema.openAPIV3Schema.properties[spec].default.replicas: Required value",
            ],
        ),
        // Inferred: the bad value of "must not have unknown fields" printed as JSON.
        case(
            "default with unknown field",
            vec![def(
                "var",
                r#"{"type":"object","default":{"a":1,"b":2},"properties":{"a":{"type":"integer"}}}"#,
            )],
            &[
                r#"spec.variables[var].schema.openAPIV3Schema.default: Invalid value: {"a":1,"b":2}: must not have unknown fields"#,
            ],
        ),
        case(
            "default fails a rule (messageExpression)",
            vec![def(
                "cpu",
                r#"{"type":"integer","default":0,"x-kubernetes-validations":[{"rule":"self >= 1","messageExpression":"'Expected integer greater or equal to 1, got %d'.format([self])"}]}"#,
            )],
            &[
                "spec.variables[cpu].schema.openAPIV3Schema.default: Invalid value: 0: Expected integer greater or equal to 1, got 0",
            ],
        ),
        case(
            "default fails a transition rule",
            vec![def(
                "cpu",
                r#"{"type":"integer","default":0,"x-kubernetes-validations":[{"rule":"self > oldSelf"}]}"#,
            )],
            &[
                "spec.variables[cpu].schema.openAPIV3Schema.default: Invalid value: 0: failed rule: self > oldSelf",
            ],
        ),
        case(
            "default passes a transition rule",
            vec![def(
                "cpu",
                r#"{"type":"integer","default":0,"x-kubernetes-validations":[{"rule":"self == oldSelf"}]}"#,
            )],
            &[],
        ),
        // Examples and enums.
        case(
            "nested example below minimum",
            vec![def(
                "var",
                r#"{"type":"object","properties":{"spec":{"type":"object","properties":{"replicas":{"type":"integer","minimum":0,"example":-100}}}}}"#,
            )],
            &[
                "spec.variables[var].schema.openAPIV3Schema.properties[spec].properties[replicas].example: Invalid value: -100:  in body should be greater than or equal to 0",
            ],
        ),
        case(
            "enum value too long",
            vec![def(
                "var",
                r#"{"type":"string","maxLength":6,"enum":["veryLongValueIsInvalid","short"]}"#,
            )],
            &[
                "spec.variables[var].schema.openAPIV3Schema.enum[0]: Too long: may not be more than 6 bytes",
            ],
        ),
        case(
            "top-level enum value below minimum",
            vec![def(
                "var",
                r#"{"type":"object","enum":[{"spec":{"replicas":100}},{"spec":{"replicas":-100}}],"properties":{"spec":{"type":"object","properties":{"replicas":{"type":"integer","minimum":1}}}}}"#,
            )],
            &[
                "spec.variables[var].schema.openAPIV3Schema.enum[1].spec.replicas: Invalid value: -100: spec.replicas in body should be greater than or equal to 1",
            ],
        ),
        case(
            "enum value fails a rule",
            vec![def(
                "cpu",
                r#"{"type":"integer","enum":[0,1],"x-kubernetes-validations":[{"rule":"self >= 1"}]}"#,
            )],
            &[
                "spec.variables[cpu].schema.openAPIV3Schema.enum[0]: Invalid value: 0: failed rule: self >= 1",
            ],
        ),
        case(
            "nested enum value fails a rule",
            vec![def(
                "cpu",
                r#"{"type":"object","properties":{"nestedField":{"type":"integer","enum":[1,0],"x-kubernetes-validations":[{"rule":"self >= 1"}]}}}"#,
            )],
            &[
                "spec.variables[cpu].schema.openAPIV3Schema.properties[nestedField].enum[1]: Invalid value: 0: failed rule: self >= 1",
            ],
        ),
        // CEL rules.
        case(
            "valid rule and messageExpression",
            vec![def(
                "cpu",
                r#"{"type":"integer","x-kubernetes-validations":[{"rule":"self >= 1","messageExpression":"'Expected integer greater or equal to 1, got %d'.format([self])"}]}"#,
            )],
            &[],
        ),
        case(
            "rule does not compile",
            vec![def(
                "cpu",
                r#"{"type":"integer","x-kubernetes-validations":[{"rule":"this does not compile"}]}"#,
            )],
            &[&format!(
                "spec.variables[cpu].schema.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:6: Syntax error: mismatched input 'does' expecting <EOF>\n | this does not compile\n | .....^",
                rule("this does not compile")
            )],
        ),
        case(
            "new rule uses a library newer than the compatibility version",
            vec![def(
                "someIP",
                r#"{"type":"string","x-kubernetes-validations":[{"rule":"ip(self).family() == 6"}]}"#,
            )],
            &[&format!(
                "spec.variables[someIP].schema.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:3: undeclared reference to 'ip' (in container '')\n | ip(self).family() == 6\n | ..^",
                rule("ip(self).family() == 6")
            )],
        ),
        update(
            "rule kept from the old class compiles with the newest environment",
            vec![def(
                "someIP",
                r#"{"type":"string","x-kubernetes-validations":[{"rule":"ip(self).family() == 6"}]}"#,
            )],
            vec![def(
                "someIP",
                r#"{"type":"string","x-kubernetes-validations":[{"rule":"ip(self).family() == 6"}]}"#,
            )],
            &[],
        ),
        update(
            "rule of another variable of the old class is new here",
            vec![def(
                "someOtherIP",
                r#"{"type":"string","x-kubernetes-validations":[{"rule":"ip(self).family() == 6"}]}"#,
            )],
            vec![def(
                "someIP",
                r#"{"type":"string","x-kubernetes-validations":[{"rule":"ip(self).family() == 6"}]}"#,
            )],
            &[&format!(
                "spec.variables[someIP].schema.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: {}: compilation failed: ERROR: <input>:1:3: undeclared reference to 'ip' (in container '')\n | ip(self).family() == 6\n | ..^",
                rule("ip(self).family() == 6")
            )],
        ),
        update(
            "messageExpression kept from the old class",
            vec![def(
                "someIP",
                r#"{"type":"string","x-kubernetes-validations":[{"rule":"true","messageExpression":"'IP family %d'.format([ip(self).family()])"}]}"#,
            )],
            vec![def(
                "someIP",
                r#"{"type":"string","x-kubernetes-validations":[{"rule":"true","messageExpression":"'IP family %d'.format([ip(self).family()])"}]}"#,
            )],
            &[],
        ),
        case(
            "new messageExpression uses a newer library",
            vec![def(
                "someIP",
                r#"{"type":"string","x-kubernetes-validations":[{"rule":"true","messageExpression":"'IP family %d'.format([ip(self).family()])"}]}"#,
            )],
            &[
                "spec.variables[someIP].schema.openAPIV3Schema.x-kubernetes-validations[0].messageExpression: Invalid value: apiextensions.ValidationRule{Rule:\"true\", Message:\"\", MessageExpression:\"'IP family %d'.format([ip(self).family()])\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: messageExpression compilation failed: ERROR: <input>:1:26: undeclared reference to 'ip' (in container '')\n | 'IP family %d'.format([ip(self).family()])\n | .........................^",
            ],
        ),
        case(
            "messageExpression does not compile",
            vec![def(
                "cpu",
                r#"{"type":"integer","x-kubernetes-validations":[{"rule":"self >= 1","messageExpression":"'Expected integer greater or equal to 1, got ' + this does not compile"}]}"#,
            )],
            &[
                "spec.variables[cpu].schema.openAPIV3Schema.x-kubernetes-validations[0].messageExpression: Invalid value: apiextensions.ValidationRule{Rule:\"self >= 1\", Message:\"\", MessageExpression:\"'Expected integer greater or equal to 1, got ' + this does not compile\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: messageExpression compilation failed: ERROR: <input>:1:55: Syntax error: mismatched input 'does' expecting <EOF>\n | 'Expected integer greater or equal to 1, got ' + this does not compile\n | ......................................................^",
            ],
        ),
        case(
            "rule not specified",
            vec![def(
                "var",
                r#"{"type":"object","x-kubernetes-validations":[{"rule":" "}],"properties":{"a":{"type":"number"}}}"#,
            )],
            &[
                "spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[0].rule: Required value: rule is not specified",
            ],
        ),
        case(
            "oldSelf on list items",
            vec![def(
                "cpu",
                r#"{"type":"array","maxItems":20,"items":{"type":"string","x-kubernetes-validations":[{"rule":"oldSelf.contains('keyword')"}]}}"#,
            )],
            &[
                r#"spec.variables[cpu].schema.openAPIV3Schema.items.x-kubernetes-validations[0].rule: Invalid value: "oldSelf.contains('keyword')": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.variables[cpu].schema.openAPIV3Schema.items"#,
            ],
        ),
        case(
            "oldSelf on nested list items",
            vec![def(
                "cpu",
                r#"{"type":"array","maxItems":10,"items":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":1024,"x-kubernetes-validations":[{"rule":"oldSelf.contains('keyword')"}]}}}"#,
            )],
            &[
                r#"spec.variables[cpu].schema.openAPIV3Schema.items.items.x-kubernetes-validations[0].rule: Invalid value: "oldSelf.contains('keyword')": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.variables[cpu].schema.openAPIV3Schema.items"#,
            ],
        ),
        case(
            "invalid reason",
            vec![def(
                "var",
                r#"{"type":"object","x-kubernetes-validations":[{"rule":"self.a > 0","reason":"InternalError","fieldPath":".a"}],"properties":{"a":{"type":"number","x-kubernetes-validations":[{"rule":"true","reason":"FieldValueRequired"},{"rule":"true","reason":"FieldValueInvalid"},{"rule":"true","reason":"FieldValueDuplicate"},{"rule":"true","reason":"FieldValueForbidden"}]}}}"#,
            )],
            &[
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[0].reason: Unsupported value: "InternalError": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired""#,
            ],
        ),
        case(
            "field paths (1)",
            vec![def(
                "var",
                r#"{"type":"object","x-kubernetes-validations":[
                {"rule":"true","fieldPath":".foo['b.c']['c\\a']"},{"rule":"true","fieldPath":"['a.c']"},
                {"rule":"true","fieldPath":"['special.character.34$']"},{"rule":"true","fieldPath":".list"},
                {"rule":"true","fieldPath":".a.c"},{"rule":"true","fieldPath":".list[0]"},{"rule":"true","fieldPath":"   "},
                {"rule":"true","fieldPath":"."},{"rule":"true","fieldPath":".."}],
              "properties":{"a.c":{"type":"number"},"special.character.34$":{"type":"number"},
                "foo":{"type":"object","properties":{"b.c":{"type":"object","properties":{"c\u0007":{"type":"number"}}}}},
                "list":{"type":"array","items":{"type":"object","properties":{"a":{"type":"number"}}}}}}"#,
            )],
            &[
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[4].fieldPath: Invalid value: ".a.c": fieldPath must be a valid path: does not refer to a valid field"#,
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[5].fieldPath: Invalid value: ".list[0]": fieldPath must be a valid path: expected single quoted string but got 0"#,
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[6].fieldPath: Invalid value: "   ": fieldPath must be non-empty if specified"#,
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[6].fieldPath: Invalid value: "   ": fieldPath must be a valid path: expected [ or . but got:    "#,
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[7].fieldPath: Invalid value: ".": fieldPath must be a valid path: unexpected end of JSON path"#,
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[8].fieldPath: Invalid value: "..": fieldPath must be a valid path: does not refer to a valid field"#,
            ],
        ),
        case(
            "field paths (2)",
            vec![def(
                "var",
                r#"{"type":"object","x-kubernetes-validations":[
                {"rule":"self.a.b.c > 0.0","fieldPath":".list[0].b"},{"rule":"self.a.b.c > 0.0","fieldPath":".list[0.b"},
                {"rule":"self.a.b.c > 0.0","fieldPath":".list0].b"},{"rule":"self.a.b.c > 0.0","fieldPath":".a.c"},
                {"rule":"self.a.b.c > 0.0","fieldPath":".a.b.d"},{"rule":"self.a.b.c > 0.0","fieldPath":".a\n"}],
              "properties":{"a":{"type":"object","properties":{"b":{"type":"object","properties":{"c":{"type":"number"}}}}},
                "list":{"type":"array","items":{"type":"object","properties":{"a":{"type":"number"}}}}}}"#,
            )],
            &[
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[0].fieldPath: Invalid value: ".list[0].b": fieldPath must be a valid path: expected single quoted string but got 0"#,
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[1].fieldPath: Invalid value: ".list[0.b": fieldPath must be a valid path: expected single quoted string but got 0"#,
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[2].fieldPath: Invalid value: ".list0].b": fieldPath must be a valid path: does not refer to a valid field"#,
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[3].fieldPath: Invalid value: ".a.c": fieldPath must be a valid path: does not refer to a valid field"#,
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[4].fieldPath: Invalid value: ".a.b.d": fieldPath must be a valid path: does not refer to a valid field"#,
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[5].fieldPath: Invalid value: ".a\n": fieldPath must not contain line breaks"#,
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[5].fieldPath: Invalid value: ".a\n": fieldPath must be a valid path: does not refer to a valid field"#,
            ],
        ),
        case(
            "messages",
            vec![def(
                "var",
                &format!(
                    r#"{{"type":"object","x-kubernetes-validations":[
                {{"rule":"self.a > 0","message":"valid message"}},{{"rule":"self.a > 0","message":" "}},
                {{"rule":"self.a > 0","message":"{}"}},{{"rule":"self.a > 0","message":"message with \n line break"}},
                {{"rule":"self.a \n > 0","message":""}}],"properties":{{"a":{{"type":"number"}}}}}}"#,
                    "a".repeat(2049)
                ),
            )],
            &[
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[1].message: Invalid value: " ": message must be non-empty if specified"#,
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[2].message: Invalid value: "aaaaaaaaaa...": message must have a maximum length of 2048 characters"#,
                r#"spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[3].message: Invalid value: "message with \n line break": message must not contain line breaks"#,
                "spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[4].message: Required value: message must be specified if rule contains line breaks",
            ],
        ),
        case(
            "blank messageExpression",
            vec![def(
                "var",
                r#"{"type":"object","x-kubernetes-validations":[{"rule":"self.a > 0","messageExpression":" "}],"properties":{"a":{"type":"number"}}}"#,
            )],
            &[
                "spec.variables[var].schema.openAPIV3Schema.x-kubernetes-validations[0].messageExpression: Required value: messageExpression must be non-empty if specified",
            ],
        ),
        // Cost.
        case(
            "rule cost over the budget; total over the limit",
            vec![def(
                "cpu",
                r#"{"type":"object","properties":{
                "array":{"type":"array","items":{"type":"string","maxLength":500000,"x-kubernetes-validations":[{"rule":"self.contains('keyword')"}]}},
                "map":{"type":"object","maxProperties":10000,"additionalProperties":{"type":"string","maxLength":2048,"x-kubernetes-validations":[{"rule":"self.contains('keyword')"}]}},
                "field":{"type":"integer","x-kubernetes-validations":[{"rule":"self > 50 && self < 100"}]}}}"#,
            )],
            &[
                &format!(
                    "spec.variables[cpu].schema.openAPIV3Schema.properties[array].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x {COST_HINT}"
                ),
                "spec.variables[cpu].schema.openAPIV3Schema.properties[array].items.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema",
                "spec.variables[cpu].schema.openAPIV3Schema.properties[map].additionalProperties.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema",
                &format!(
                    "spec.variables[cpu].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x {COST_HINT}"
                ),
            ],
        ),
        case(
            "messageExpression cost over the budget",
            vec![def(
                "cpu",
                r#"{"type":"object","properties":{
                "array":{"type":"array","items":{"type":"string","maxLength":500000,"x-kubernetes-validations":[{"rule":"true","messageExpression":"'contains: ' + string(self.contains('keyword'))"}]}},
                "field":{"type":"integer","x-kubernetes-validations":[{"rule":"self > 50 && self < 100","messageExpression":"'Expected integer to be between 50 and 100, got %d'.format([self])"}]}}}"#,
            )],
            &[
                &format!(
                    "spec.variables[cpu].schema.openAPIV3Schema.properties[array].items.x-kubernetes-validations[0].messageExpression: Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x {COST_HINT}"
                ),
                "spec.variables[cpu].schema.openAPIV3Schema.properties[array].items.x-kubernetes-validations[0].messageExpression: Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema",
                &format!(
                    "spec.variables[cpu].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x {COST_HINT}"
                ),
            ],
        ),
        case(
            "bounded list rule within budget",
            vec![def(
                "names",
                r#"{"type":"array","maxItems":10,"items":{"type":"string","maxLength":63},"x-kubernetes-validations":[{"rule":"self.all(x, x.startsWith('a'))"}]}"#,
            )],
            &[],
        ),
        // Inferred: the cost model is an approximation (see cel/cost.rs); an unbounded list
        // of unbounded strings compared pairwise is far beyond the budget either way.
        case(
            "unbounded list of strings over the budget",
            vec![def(
                "names",
                r#"{"type":"array","items":{"type":"string"},"x-kubernetes-validations":[{"rule":"self.all(x, self.exists(y, x == y))"}]}"#,
            )],
            &[
                &format!(
                    "spec.variables[names].schema.openAPIV3Schema.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x {COST_HINT}"
                ),
                "spec.variables[names].schema.openAPIV3Schema.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema",
                &format!(
                    "spec.variables[names].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x {COST_HINT}"
                ),
            ],
        ),
        // Order: uniqueness first, then definitions in order, each name before schema.
        case(
            "order across definitions",
            vec![
                def("a.b", r#"{"type":"null"}"#),
                def(
                    "builtin",
                    r#"{"type":"string","maxLength":1,"default":"xx"}"#,
                ),
                def("a.b", r#"{"type":"string"}"#),
            ],
            &[
                r#"spec.variables[a.b].name: Invalid value: "a.b": variable name must be unique. Variable with name "a.b" is defined more than once"#,
                r#"spec.variables[a.b].name: Invalid value: "a.b": variable name cannot contain ".""#,
                &format!(
                    r#"spec.variables[a.b].schema.openAPIV3Schema.type: Unsupported value: "null": {TYPES}"#
                ),
                r#"spec.variables[builtin].name: Invalid value: "builtin": "builtin" is a reserved variable name"#,
                "spec.variables[builtin].schema.openAPIV3Schema.default: Too long: may not be more than 1 byte",
                r#"spec.variables[a.b].name: Invalid value: "a.b": variable name cannot contain ".""#,
            ],
        ),
    ];
    all.extend(literal_cases());
    all
}

#[test]
fn definition_cases() {
    let mut failures = Vec::new();
    let all = cases();
    for c in &all {
        let got: Vec<String> = validate(&c.defs, c.old.as_deref())
            .iter()
            .map(ToString::to_string)
            .collect();
        if got != c.want {
            failures.push(format!(
                "case {:?}\n  got:  {:#?}\n  want: {:#?}",
                c.name, got, c.want
            ));
        }
    }
    assert!(all.len() >= 40, "only {} cases", all.len());
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn serde_entry_point_matches() {
    let defs = vec![VariableDefinition {
        name: "cpu".to_string(),
        required: true,
        schema: serde_json::json!({"type": "integer", "default": 0, "x-kubernetes-validations": [{"rule": "self >= 1"}]}),
        metadata: Metadata::default(),
    }];
    let got: Vec<String> = validate_definitions(&defs, None)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        got,
        [
            "spec.variables[cpu].schema.openAPIV3Schema.default: Invalid value: 0: failed rule: self >= 1"
        ]
    );
    assert!(validate_definitions(&defs[..0], Some(&defs)).is_empty());
}
