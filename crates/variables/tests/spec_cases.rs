//! Every concrete error string of spec sections 5.3 and 5.4 (the texts Cluster API's
//! own tests expect), produced through the public entry points.

use serde_json::{Value, json};
use topograph_api::model::{Variable, VariableDefinition};
use topograph_variables::check::{self, Subject, Verdict};
use topograph_variables::json as cjson;
use topograph_variables::{Scope, default_variables, validate_value, validate_variables};

fn def(name: &str, required: bool, schema: Value) -> VariableDefinition {
    VariableDefinition {
        name: name.to_string(),
        required,
        schema,
        ..VariableDefinition::default()
    }
}

fn var(name: &str, value: Value) -> Variable {
    Variable {
        name: name.to_string(),
        definition_from: None,
        value,
    }
}

fn strings(errors: &[topograph_api::field::FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

/// One value against one schema at `spec.topology.variables[<name>]`.
fn one(name: &str, schema: Value, value: Value) -> Vec<String> {
    let path = format!("spec.topology.variables[{name}]");
    strings(&validate_value(&schema, name, &value, None, &path))
}

/// One value given as raw text (the bad value is printed as sent).
fn one_raw(name: &str, schema: Value, raw: &str) -> Vec<String> {
    let schema = cjson::from_serde(&schema);
    let value = cjson::parse(raw).expect("test value is JSON");
    let subject = Subject::new("spec.topology.variables", name);
    match check::variable(Some(&schema), &subject, Some(&value), raw, None) {
        Verdict::Invalid(_, errors) => strings(&errors),
        other => panic!("expected errors, got {other:?}"),
    }
}

#[test]
fn cluster_level_rules() {
    // 5.4 (1): required variables, top level only.
    let defs = [def("cpu", true, json!({"type": "integer"}))];
    assert_eq!(
        strings(&validate_variables(&[], None, &defs, Scope::Cluster)),
        ["spec.topology.variables: Required value: required variable \"cpu\" must be set"]
    );
    assert!(validate_variables(&[], None, &defs, Scope::ControlPlane).is_empty());

    // 5.4 (2) and 5.3: a value without definition.
    let values = [var("location", json!("us-east-1"))];
    let expected = "spec.topology.variables[location]: Invalid value: \"\\\"us-east-1\\\"\": variable is not defined";
    assert_eq!(
        strings(&validate_variables(&values, None, &[], Scope::Cluster)),
        [expected]
    );
    assert_eq!(
        strings(&default_variables(&values, &[], Scope::Cluster).unwrap_err()),
        [expected]
    );

    // 5.4 (3) and 5.3: set twice.
    let values = [var("cpu", json!(1)), var("cpu", json!(2))];
    let expected = "spec.topology.variables[cpu]: Invalid value: \"2\": variable \"cpu\" is set more than once";
    assert_eq!(
        strings(&validate_variables(&values, None, &defs, Scope::Cluster)),
        [expected]
    );
    assert_eq!(
        strings(&default_variables(&values, &defs, Scope::Cluster).unwrap_err()),
        [expected]
    );

    // 4.6 / 5.3: conflicting definitions.
    let defs = [
        def("a", false, json!({"type": "string"})),
        def("b", false, json!({"type": "string"})),
        def("a", true, json!({"type": "string"})),
    ];
    let expected = "spec.topology.variables: Invalid value: \"[Name: a,Name: b]\": variable definitions in the ClusterClass not valid: variable \"a\" has conflicting definitions";
    assert_eq!(
        strings(&default_variables(&[], &defs, Scope::Cluster).unwrap_err()),
        [expected]
    );
    assert_eq!(
        strings(&validate_variables(&[], None, &defs, Scope::Cluster)),
        [expected]
    );

    // The builtin name is skipped on Clusters.
    let values = [var("builtin", json!({"cluster": {"name": "x"}}))];
    assert!(validate_variables(&values, None, &[], Scope::Cluster).is_empty());
}

#[test]
fn defaulting_rules() {
    // 5.3: a missing variable is created from a top-level default and defaulted further.
    let defs = [
        def(
            "httpProxy",
            false,
            json!({"type": "object", "default": {"url": "test-url"},
                   "properties": {"enabled": {"type": "boolean", "default": false}, "url": {"type": "string"}}}),
        ),
        def(
            "nested",
            false,
            json!({"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}),
        ),
    ];
    let out = default_variables(&[], &defs, Scope::Cluster).unwrap();
    assert_eq!(out.len(), 1, "only a top-level default creates a variable");
    assert_eq!(out[0].name, "httpProxy");
    assert_eq!(
        serde_json::to_string(&out[0].value).unwrap(),
        r#"{"enabled":false,"url":"test-url"}"#
    );
    // Overrides are never created, existing ones are defaulted.
    assert!(
        default_variables(&[], &defs, Scope::ControlPlane)
            .unwrap()
            .is_empty()
    );
    let values = [var("nested", json!({}))];
    let out = default_variables(&values, &defs, Scope::MachineDeployment("md")).unwrap();
    assert_eq!(out[0].value, json!({"a": "x"}));
    // Existing values keep their order and come first.
    let values = [var("nested", json!({"a": "y"}))];
    let out = default_variables(&values, &defs, Scope::Cluster).unwrap();
    let names: Vec<&str> = out.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["nested", "httpProxy"]);
}

#[test]
fn value_errors() {
    let cases: Vec<(&str, Value, Value, &str)> = vec![
        // (4)
        (
            "cpu",
            json!({"type": "string"}),
            json!(1),
            "spec.topology.variables[cpu].value: Invalid value: \"1\": must be of type string: \"integer\"",
        ),
        // (5)
        (
            "cpu",
            json!({"type": "integer", "maximum": 10}),
            json!(99),
            "spec.topology.variables[cpu].value: Invalid value: \"99\": should be less than or equal to 10",
        ),
        // (6)
        (
            "location",
            json!({"type": "string", "pattern": "^[0-9]+$"}),
            json!("000000a"),
            "spec.topology.variables[location].value: Invalid value: \"\\\"000000a\\\"\": should match '^[0-9]+$'",
        ),
        // (7)
        (
            "location",
            json!({"type": "string", "enum": ["us-east-1", "us-east-2"]}),
            json!("us-east-invalid"),
            "spec.topology.variables[location].value: Unsupported value: \"\\\"us-east-invalid\\\"\": supported values: \"us-east-1\", \"us-east-2\"",
        ),
        // (8)
        (
            "httpProxy",
            json!({"type": "object", "properties": {"enabled": {"type": "boolean"}}}),
            json!({"enabled": "not-a-bool"}),
            "spec.topology.variables[httpProxy].value.enabled: Invalid value: \"{\\\"enabled\\\":\\\"not-a-bool\\\"}\": enabled in body must be of type boolean: \"string\"",
        ),
        // (9)
        (
            "httpProxy",
            json!({"type": "object", "required": ["url"], "properties": {"url": {"type": "string"}, "enabled": {"type": "boolean"}}}),
            json!({"enabled": true}),
            "spec.topology.variables[httpProxy].value.url: Required value",
        ),
        // (10)
        (
            "testArray",
            json!({"type": "array", "maxItems": 3, "items": {"type": "string"}}),
            json!(["value1", "value2", "value3", "value4"]),
            "spec.topology.variables[testArray].value: Too many: \"[\\\"value1\\\",\\\"value2\\\",\\\"value3\\\",\\\"value4\\\"]\": must have at most 3 items",
        ),
        (
            "testArray",
            json!({"type": "array", "minItems": 3, "items": {"type": "string"}}),
            json!(["value1", "value2"]),
            "spec.topology.variables[testArray].value: Invalid value: \"[\\\"value1\\\",\\\"value2\\\"]\": should have at least 3 items",
        ),
        (
            "testArray",
            json!({"type": "array", "uniqueItems": true, "items": {"type": "string"}}),
            json!(["a", "a"]),
            "spec.topology.variables[testArray].value: Invalid value: \"[\\\"a\\\",\\\"a\\\"]\": shouldn't contain duplicates",
        ),
        (
            "testArray",
            json!({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}),
            json!(["a", "c"]),
            "spec.topology.variables[testArray].value.[1]: Unsupported value: \"[\\\"a\\\",\\\"c\\\"]\": supported values: \"a\", \"b\"",
        ),
        // (11)
        (
            "testObject",
            json!({"type": "object", "properties": {"knownProperty": {"type": "boolean"}}}),
            json!({"knownProperty": false, "unknownProperty": true}),
            "spec.topology.variables[testObject]: Invalid value: \"{\\\"knownProperty\\\":false,\\\"unknownProperty\\\":true}\": failed validation: \"unknownProperty\" field(s) are not specified in the variable schema of variable \"testObject\"",
        ),
        (
            "testObject",
            json!({"type": "object", "properties": {"test": {"type": "object", "properties": {"knownProperty": {"type": "boolean"}}}}}),
            json!({"test": {"knownProperty": false, "unknownProperty": true}}),
            "spec.topology.variables[testObject]: Invalid value: \"{\\\"test\\\":{\\\"knownProperty\\\":false,\\\"unknownProperty\\\":true}}\": failed validation: \"test.unknownProperty\" field(s) are not specified in the variable schema of variable \"testObject\"",
        ),
        (
            "testObject",
            json!({"type": "object", "properties": {"knownProperty": {"type": "boolean"}}}),
            json!({"KnownProperty": false}),
            "spec.topology.variables[testObject]: Invalid value: \"{\\\"KnownProperty\\\":false}\": failed validation: \"KnownProperty\" field(s) are not specified in the variable schema of variable \"testObject\"",
        ),
        // (12)
        (
            "cpu",
            json!({"type": "integer", "x-kubernetes-validations": [{"rule": "self <= 1"}]}),
            json!(99),
            "spec.topology.variables[cpu].value: Invalid value: \"99\": failed rule: self <= 1",
        ),
        (
            "cpu",
            json!({"type": "integer", "x-kubernetes-validations": [{"rule": "self >= 1", "message": "new value must be greater than or equal to 1"}]}),
            json!(0),
            "spec.topology.variables[cpu].value: Invalid value: \"0\": new value must be greater than or equal to 1",
        ),
        (
            "cpu",
            json!({"type": "integer", "x-kubernetes-validations": [{"rule": "self >= 1", "messageExpression": "'new value must be greater than or equal to 1, but got %d'.format([self])"}]}),
            json!(0),
            "spec.topology.variables[cpu].value: Invalid value: \"0\": new value must be greater than or equal to 1, but got 0",
        ),
        (
            "cpu",
            json!({"type": "object", "properties": {"objectField": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= 1"}]}}}),
            json!({"objectField": 0}),
            "spec.topology.variables[cpu].value.objectField: Invalid value: \"{\\\"objectField\\\":0}\": failed rule: self >= 1",
        ),
        // (14)
        (
            "v",
            json!({"type": "string", "format": "uri"}),
            json!("not a URI"),
            "spec.topology.variables[v].value: Invalid value: \"\\\"not a URI\\\"\": must be of type uri: \"not a URI\"",
        ),
        // (15)
        (
            "v",
            json!({"type": "object", "maxProperties": 2, "additionalProperties": {"type": "string"}}),
            json!({"a": "1", "b": "2", "c": "3"}),
            "spec.topology.variables[v].value: Too many: \"{\\\"a\\\":\\\"1\\\",\\\"b\\\":\\\"2\\\",\\\"c\\\":\\\"3\\\"}\": must have at most 2 items",
        ),
    ];
    for (name, schema, value, expected) in cases {
        assert_eq!(one(name, schema, value), [expected]);
    }
}

#[test]
fn one_of_prints_the_value_as_sent() {
    // (13): the raw value keeps the writer's spacing.
    assert_eq!(
        one_raw(
            "v",
            json!({"type": "object", "properties": {"propertyA": {"type": "boolean"}, "propertyB": {"type": "boolean"}},
                   "oneOf": [{"required": ["propertyA"]}, {"required": ["propertyB"]}]}),
            r#"{"propertyA":true, "propertyB":true}"#
        ),
        [
            "spec.topology.variables[v].value: Invalid value: \"{\\\"propertyA\\\":true, \\\"propertyB\\\":true}\": \"\" must validate one and only one schema (oneOf). Found 2 valid alternatives"
        ]
    );
}

#[test]
fn override_paths_and_transition_rules() {
    let defs = [def(
        "cpu",
        false,
        json!({"type": "integer", "x-kubernetes-validations": [{"rule": "self >= oldSelf", "message": "cannot decrease"}]}),
    )];
    let values = [var("cpu", json!(1))];
    let old = [var("cpu", json!(2))];
    assert_eq!(
        strings(&validate_variables(
            &values,
            Some(&old),
            &defs,
            Scope::MachineDeployment("md-0")
        )),
        [
            "spec.topology.workers.machineDeployments[md-0].variables.overrides[cpu].value: Invalid value: \"1\": cannot decrease"
        ]
    );
    assert!(validate_variables(&values, None, &defs, Scope::Cluster).is_empty());
}

#[test]
fn crd_mode_keeps_kube_openapi_details() {
    let errors = topograph_variables::validate_crd(
        &json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        &json!({"n": "x"}),
        "spec",
    )
    .unwrap();
    assert_eq!(
        strings(&errors),
        ["spec.n: Invalid value: \"string\": n in body must be of type integer: \"string\""]
    );
}
