//! Structural schemas of Cluster API's own kinds, compiled from the compact notation of
//! the YAML files beside this module (one per kind and version, plus the types each
//! version shares and the Kubernetes types they embed) into the `openAPIV3Schema`
//! controller-gen would write, without descriptions. Decision 0023 says why the schemas
//! are kept this way rather than as Cluster API's generated CRDs.
//!
//! The notation: a YAML mapping is an object whose keys are its properties; a key
//! ending in `!` is required. Keys starting with `$` say something of the node itself:
//! `$items: T` makes it an array of `T` (`$list: map:k1,k2 | set | atomic` is its
//! `x-kubernetes-list-type`), `$values: T` a map (`additionalProperties`) of `T`,
//! `$atomic: true` a map that server-side apply replaces whole, `$preserve: true` an
//! object that keeps unknown fields. A string is a type: `string`, `boolean`, `int32`,
//! `int64`, `date-time`, `int-or-string`, `any` (any JSON, kept as sent, as
//! controller-gen writes `apiextensionsv1.JSON`), `enum:A,B`, `[T]` (array), `{T}`
//! (map), `#Name` (a type from the version's `common.yaml` or from `core.yaml`),
//! followed by modifiers: `list=map:k1,k2`, `list=set`, `list=atomic`, `default=V` (a
//! string default).
//!
//! A kind's file may also list `$printerColumns`: the version's
//! `additionalPrinterColumns`, written as the CRD writes them (`name`, `type`,
//! `jsonPath`, `description`, `priority`, `format`) and in Cluster API's order, so that
//! `kubectl get` against a server holding these CRDs prints Cluster API's columns.

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

/// `(kind, version, file)` of every schema this module knows.
const KINDS: &[(&str, &str, &str)] = &[
    ("Cluster", "v1beta2", include_str!("v1beta2/cluster.yaml")),
    (
        "ClusterClass",
        "v1beta2",
        include_str!("v1beta2/clusterclass.yaml"),
    ),
    (
        "MachineDeployment",
        "v1beta2",
        include_str!("v1beta2/machinedeployment.yaml"),
    ),
    (
        "MachineHealthCheck",
        "v1beta2",
        include_str!("v1beta2/machinehealthcheck.yaml"),
    ),
    (
        "MachinePool",
        "v1beta2",
        include_str!("v1beta2/machinepool.yaml"),
    ),
    ("Cluster", "v1beta1", include_str!("v1beta1/cluster.yaml")),
    (
        "ClusterClass",
        "v1beta1",
        include_str!("v1beta1/clusterclass.yaml"),
    ),
    (
        "MachineDeployment",
        "v1beta1",
        include_str!("v1beta1/machinedeployment.yaml"),
    ),
    (
        "MachineHealthCheck",
        "v1beta1",
        include_str!("v1beta1/machinehealthcheck.yaml"),
    ),
    (
        "MachinePool",
        "v1beta1",
        include_str!("v1beta1/machinepool.yaml"),
    ),
    (
        "MachineSet",
        "v1beta1",
        include_str!("v1beta1/machineset.yaml"),
    ),
    ("Machine", "v1beta1", include_str!("v1beta1/machine.yaml")),
];

const CORE: &str = include_str!("core.yaml");
const COMMON_V1BETA2: &str = include_str!("v1beta2/common.yaml");
const COMMON_V1BETA1: &str = include_str!("v1beta1/common.yaml");

/// How deep `#Name` references may nest: far more than any schema here needs, and a
/// bound on a reference cycle.
const MAX_DEPTH: usize = 32;

/// A kind's file, compiled.
struct Compiled {
    kind: &'static str,
    version: &'static str,
    schema: Value,
    printer_columns: Vec<Value>,
}

fn compiled(kind: &str, version: &str) -> Option<&'static Compiled> {
    static COMPILED: OnceLock<Vec<Compiled>> = OnceLock::new();
    let compiled = COMPILED.get_or_init(|| {
        KINDS
            .iter()
            .map(|(kind, version, source)| {
                // The sources are part of this crate, and `every_schema_compiles`
                // checks each one, so a failure here is a bug in a file beside this one.
                let fail = |e: String| -> ! { panic!("the {kind} {version} file: {e}") };
                Compiled {
                    kind,
                    version,
                    schema: compile(source, version).unwrap_or_else(|e| fail(e)),
                    printer_columns: printer_columns_of(source).unwrap_or_else(|e| fail(e)),
                }
            })
            .collect()
    });
    compiled
        .iter()
        .find(|c| c.kind == kind && c.version == version)
}

/// The `openAPIV3Schema` of `kind` in `version`, if this module has one.
pub fn open_api_v3_schema(kind: &str, version: &str) -> Option<&'static Value> {
    compiled(kind, version).map(|c| &c.schema)
}

/// The `additionalPrinterColumns` of `kind` in `version`: empty when this module has
/// no file for it.
pub fn printer_columns(kind: &str, version: &str) -> &'static [Value] {
    compiled(kind, version).map_or(&[], |c| &c.printer_columns)
}

/// Compiles one kind's file in `version`'s vocabulary into the resource's schema.
pub fn compile(source: &str, version: &str) -> Result<Value, String> {
    let common = match version {
        "v1beta2" => COMMON_V1BETA2,
        "v1beta1" => COMMON_V1BETA1,
        other => return Err(format!("no shared types for version {other}")),
    };
    let defs = Defs {
        tables: vec![parse(common, "common.yaml")?, parse(CORE, "core.yaml")?],
    };
    let top = parse(source, "the kind's file")?;
    let Value::Object(top) = top else {
        return Err("a kind's file is a mapping of spec and status".into());
    };
    let mut properties = Map::new();
    properties.insert("apiVersion".into(), json!({"type": "string"}));
    properties.insert("kind".into(), json!({"type": "string"}));
    properties.insert("metadata".into(), json!({"type": "object"}));
    let mut required = Vec::new();
    for (key, node) in &top {
        if key == PRINTER_COLUMNS {
            continue;
        }
        if key.starts_with('$') {
            return Err(format!("unknown directive {key} at the resource's root"));
        }
        let (name, is_required) = field_name(key);
        properties.insert(
            name.to_string(),
            defs.node(node, 0).map_err(|e| at(name, e))?,
        );
        if is_required {
            required.push(Value::String(name.to_string()));
        }
    }
    let mut root = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        root["required"] = Value::Array(required);
    }
    Ok(root)
}

/// The key of a kind's file that lists its printer columns.
const PRINTER_COLUMNS: &str = "$printerColumns";

/// The fields of a column, and the types and formats kube-apiserver accepts in
/// `additionalPrinterColumns`.
const COLUMN_FIELDS: &[&str] = &[
    "name",
    "type",
    "jsonPath",
    "description",
    "priority",
    "format",
];
const COLUMN_TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];
const COLUMN_FORMATS: &[&str] = &[
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "date",
    "date-time",
    "password",
];

/// The `$printerColumns` of one kind's file, checked as kube-apiserver checks a CRD's
/// columns (a name, a known type and format, a path that starts at the object's root), so
/// a mistyped entry fails here rather than as a CRD a server refuses.
pub fn printer_columns_of(source: &str) -> Result<Vec<Value>, String> {
    let top = parse(source, "the kind's file")?;
    let Some(columns) = top.get(PRINTER_COLUMNS) else {
        return Ok(Vec::new());
    };
    let columns = columns
        .as_array()
        .ok_or_else(|| format!("{PRINTER_COLUMNS} is a list"))?;
    columns
        .iter()
        .enumerate()
        .map(|(i, column)| {
            printer_column(column).map_err(|e| format!("{PRINTER_COLUMNS}[{i}]: {e}"))
        })
        .collect()
}

fn printer_column(column: &Value) -> Result<Value, String> {
    let fields = column
        .as_object()
        .ok_or_else(|| "a column is a mapping".to_string())?;
    let text = |key: &str| fields.get(key).and_then(Value::as_str).unwrap_or("");
    if let Some(key) = fields.keys().find(|k| !COLUMN_FIELDS.contains(&k.as_str())) {
        return Err(format!("unknown column field {key}"));
    }
    if text("name").is_empty() {
        return Err("a column needs a name".into());
    }
    if !COLUMN_TYPES.contains(&text("type")) {
        return Err(format!("{}: unknown type {:?}", text("name"), text("type")));
    }
    if fields.contains_key("format") && !COLUMN_FORMATS.contains(&text("format")) {
        return Err(format!(
            "{}: unknown format {:?}",
            text("name"),
            text("format")
        ));
    }
    if !text("jsonPath").starts_with('.') {
        return Err(format!("{}: jsonPath starts with '.'", text("name")));
    }
    if let Some(priority) = fields.get("priority")
        && priority.as_u64().is_none_or(|p| p > i32::MAX as u64)
    {
        return Err(format!(
            "{}: priority is a non-negative int32",
            text("name")
        ));
    }
    Ok(column.clone())
}

fn parse(source: &str, what: &str) -> Result<Value, String> {
    serde_saphyr::from_str::<Value>(source).map_err(|e| format!("{what}: {e}"))
}

fn at(field: &str, e: String) -> String {
    format!("{field}: {e}")
}

/// A property name without its `!`, and whether it had one.
fn field_name(key: &str) -> (&str, bool) {
    match key.strip_suffix('!') {
        Some(name) => (name, true),
        None => (key, false),
    }
}

/// The named types a kind's file may use, looked up in order.
struct Defs {
    tables: Vec<Value>,
}

impl Defs {
    fn lookup(&self, name: &str) -> Option<&Value> {
        self.tables.iter().find_map(|t| t.get(name))
    }

    fn node(&self, node: &Value, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err("types nest too deeply (a reference cycle?)".into());
        }
        match node {
            Value::String(s) => self.expression(s, depth),
            Value::Object(m) => self.mapping(m, depth),
            other => Err(format!("a type is a string or a mapping, not {other}")),
        }
    }

    fn mapping(&self, m: &Map<String, Value>, depth: usize) -> Result<Value, String> {
        if let Some(items) = m.get("$items") {
            let mut out = json!({"type": "array", "items": self.node(items, depth + 1)?});
            if let Some(list) = m.get("$list") {
                let list = list
                    .as_str()
                    .ok_or_else(|| "$list is a string".to_string())?;
                list_type(&mut out, list)?;
            }
            return Ok(out);
        }
        if let Some(values) = m.get("$values") {
            return Ok(json!({
                "type": "object",
                "additionalProperties": self.node(values, depth + 1)?
            }));
        }
        let mut properties = Map::new();
        let mut required = Vec::new();
        let mut out = Map::new();
        for (key, value) in m {
            match key.as_str() {
                "$atomic" if value == &Value::Bool(true) => {
                    out.insert("x-kubernetes-map-type".into(), json!("atomic"));
                }
                "$preserve" if value == &Value::Bool(true) => {
                    out.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
                }
                k if k.starts_with('$') => return Err(format!("unknown directive {k}")),
                _ => {
                    let (name, is_required) = field_name(key);
                    let schema = self.node(value, depth + 1).map_err(|e| at(name, e))?;
                    properties.insert(name.to_string(), schema);
                    if is_required {
                        required.push(Value::String(name.to_string()));
                    }
                }
            }
        }
        out.insert("type".into(), json!("object"));
        if !properties.is_empty() {
            out.insert("properties".into(), Value::Object(properties));
        }
        if !required.is_empty() {
            out.insert("required".into(), Value::Array(required));
        }
        Ok(Value::Object(out))
    }

    fn expression(&self, text: &str, depth: usize) -> Result<Value, String> {
        let mut words = text.split_whitespace();
        let base = words.next().ok_or_else(|| "an empty type".to_string())?;
        let mut out = self.base(base, depth)?;
        for modifier in words {
            if let Some(list) = modifier.strip_prefix("list=") {
                list_type(&mut out, list)?;
            } else if let Some(default) = modifier.strip_prefix("default=") {
                out["default"] = Value::String(default.to_string());
            } else {
                return Err(format!("unknown modifier {modifier:?}"));
            }
        }
        Ok(out)
    }

    fn base(&self, base: &str, depth: usize) -> Result<Value, String> {
        Ok(match base {
            "string" => json!({"type": "string"}),
            "boolean" => json!({"type": "boolean"}),
            "int32" => json!({"type": "integer", "format": "int32"}),
            "int64" => json!({"type": "integer", "format": "int64"}),
            "date-time" => json!({"type": "string", "format": "date-time"}),
            "int-or-string" => json!({
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": true
            }),
            "any" => json!({"x-kubernetes-preserve-unknown-fields": true}),
            _ => {
                if let Some(values) = base.strip_prefix("enum:") {
                    let values: Vec<Value> = values
                        .split(',')
                        .map(|v| Value::String(v.to_string()))
                        .collect();
                    json!({"type": "string", "enum": values})
                } else if let Some(inner) = base.strip_prefix('[').and_then(|b| b.strip_suffix(']'))
                {
                    json!({"type": "array", "items": self.expression(inner, depth + 1)?})
                } else if let Some(inner) = base.strip_prefix('{').and_then(|b| b.strip_suffix('}'))
                {
                    json!({"type": "object", "additionalProperties": self.expression(inner, depth + 1)?})
                } else if let Some(name) = base.strip_prefix('#') {
                    let def = self
                        .lookup(name)
                        .ok_or_else(|| format!("no type named {name}"))?;
                    self.node(def, depth + 1).map_err(|e| at(name, e))?
                } else {
                    return Err(format!("unknown type {base:?}"));
                }
            }
        })
    }
}

/// Sets `x-kubernetes-list-type` (and the map keys) on an array schema.
fn list_type(schema: &mut Value, list: &str) -> Result<(), String> {
    if schema.get("type").and_then(Value::as_str) != Some("array") {
        return Err(format!("list={list} on a type that is not an array"));
    }
    match list.split_once(':') {
        Some(("map", keys)) => {
            schema["x-kubernetes-list-type"] = json!("map");
            schema["x-kubernetes-list-map-keys"] = Value::Array(
                keys.split(',')
                    .map(|k| Value::String(k.to_string()))
                    .collect(),
            );
        }
        None if list == "set" || list == "atomic" => {
            schema["x-kubernetes-list-type"] = json!(list);
        }
        _ => return Err(format!("unknown list type {list:?}")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_compiles_and_is_read_as_kube_apiserver_reads_it() {
        for (kind, version, source) in KINDS {
            let schema =
                compile(source, version).unwrap_or_else(|e| panic!("{kind} {version}: {e}"));
            assert_eq!(schema["type"], "object", "{kind} {version}");
            assert!(
                schema.pointer("/properties/spec/type").is_some(),
                "{kind} {version} has a spec"
            );
            assert!(
                topograph_ssa::Schema::from_crd_schema(&schema).is_ok(),
                "{kind} {version} is a schema server-side apply can merge by"
            );
            let columns =
                printer_columns_of(source).unwrap_or_else(|e| panic!("{kind} {version}: {e}"));
            assert!(!columns.is_empty(), "{kind} {version} has printer columns");
        }
    }

    #[test]
    fn printer_columns_are_kept_out_of_the_schema_and_checked() {
        let source = "spec: {replicas: int32}\n$printerColumns:\n  - {name: Desired, type: integer, jsonPath: .spec.replicas, description: d, priority: 10}\n";
        let schema = compile(source, "v1beta2").unwrap();
        assert!(schema.pointer("/properties/$printerColumns").is_none());
        assert_eq!(
            printer_columns_of(source).unwrap(),
            [
                json!({"name": "Desired", "type": "integer", "jsonPath": ".spec.replicas", "description": "d", "priority": 10})
            ]
        );
        for bad in [
            "{type: string, jsonPath: .a}",
            "{name: A, type: text, jsonPath: .a}",
            "{name: A, type: string, jsonPath: a}",
            "{name: A, type: string, jsonPath: .a, format: uuid}",
            "{name: A, type: string, jsonPath: .a, priority: -1}",
            "{name: A, type: string, jsonPath: .a, JSONPath: .a}",
        ] {
            let source = format!("$printerColumns:\n  - {bad}\n");
            assert!(printer_columns_of(&source).is_err(), "{bad}");
        }
        assert!(compile("$columns: []\n", "v1beta2").is_err());
    }

    #[test]
    fn notation_compiles_to_controller_gen_shapes() {
        let schema = compile(
            "spec!:\n  replicas: int32\n  maxSurge: int-or-string\n  gates: \"#ReadinessGates\"\n  taints:\n    $list: map:key\n    $items: {key!: string}\n  raw: any\n",
            "v1beta2",
        )
        .unwrap();
        assert_eq!(schema["required"], json!(["spec"]));
        let spec = &schema["properties"]["spec"]["properties"];
        assert_eq!(
            spec["replicas"],
            json!({"type": "integer", "format": "int32"})
        );
        assert_eq!(spec["maxSurge"]["x-kubernetes-int-or-string"], true);
        assert_eq!(
            spec["gates"]["x-kubernetes-list-map-keys"],
            json!(["conditionType"])
        );
        assert_eq!(
            spec["gates"]["items"]["properties"]["polarity"]["enum"],
            json!(["Positive", "Negative"])
        );
        assert_eq!(spec["taints"]["items"]["required"], json!(["key"]));
        assert_eq!(
            spec["raw"],
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        assert!(compile("spec: \"#Nowhere\"\n", "v1beta2").is_err());
        assert!(compile("spec: \"string list=set\"\n", "v1beta2").is_err());
    }
}
