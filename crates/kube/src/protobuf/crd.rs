//! `apiextensions.k8s.io/v1` CustomResourceDefinition between its JSON and protobuf
//! forms, schemas included: `JSONSchemaProps` with its either-or fields
//! (`additionalProperties` a bool or a schema, `items` a schema or a list,
//! `dependencies` a schema or property names) and the raw JSON of `default`, `enum` and
//! `example`.

use super::core::{metadata_from_json, metadata_to_json};
use super::gojson::{Nested, Reader, Result, Writer, error, raw_value};
use k8s_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
    CustomResourceDefinitionCondition, CustomResourceDefinitionNames, CustomResourceDefinitionSpec,
    CustomResourceDefinitionStatus, CustomResourceDefinitionVersion,
    CustomResourceSubresourceScale, CustomResourceSubresourceStatus, CustomResourceSubresources,
    CustomResourceValidation, ExternalDocumentation, Json, JsonSchemaProps, JsonSchemaPropsOrArray,
    JsonSchemaPropsOrBool, JsonSchemaPropsOrStringArray, SelectableField, ServiceReference,
    ValidationRule, WebhookClientConfig, WebhookConversion,
};
use serde_json::Value;
use std::collections::BTreeMap;

pub fn crd_from_json(r: &Reader) -> Result<CustomResourceDefinition> {
    let spec = match r.object("spec")? {
        Some(s) => spec_from_json(&s.reader()?)?,
        None => CustomResourceDefinitionSpec::default(),
    };
    let status = match r.object("status")? {
        Some(s) => status_from_json(&s.reader()?)?,
        None => CustomResourceDefinitionStatus::default(),
    };
    Ok(CustomResourceDefinition {
        metadata: metadata_from_json(r)?,
        spec: Some(spec),
        status: Some(status),
    })
}

pub fn crd_to_json(c: CustomResourceDefinition) -> Result<Value> {
    let mut w = Writer::new();
    metadata_to_json(&mut w, c.metadata)?;
    w.object("spec", spec_to_json(c.spec.unwrap_or_default())?);
    w.object("status", status_to_json(c.status.unwrap_or_default())?);
    Ok(w.done())
}

fn each<T>(items: Vec<Nested>, read: impl Fn(&Reader) -> Result<T>) -> Result<Vec<T>> {
    items.iter().map(|i| read(&i.reader()?)).collect()
}

fn spec_from_json(r: &Reader) -> Result<CustomResourceDefinitionSpec> {
    let names = match r.object("names")? {
        Some(n) => names_from_json(&n.reader()?)?,
        None => CustomResourceDefinitionNames::default(),
    };
    let conversion = match r.object("conversion")? {
        Some(c) => Some(conversion_from_json(&c.reader()?)?),
        None => None,
    };
    Ok(CustomResourceDefinitionSpec {
        group: r.string("group")?,
        names: Some(names),
        scope: r.string("scope")?,
        versions: each(r.items("versions")?, version_from_json)?,
        conversion,
        preserve_unknown_fields: r.boolean("preserveUnknownFields")?,
    })
}

fn spec_to_json(s: CustomResourceDefinitionSpec) -> Result<Value> {
    let mut w = Writer::new();
    w.str_always("group", s.group)
        .object("names", names_to_json(s.names.unwrap_or_default()))
        .str_always("scope", s.scope)
        .list_always(
            "versions",
            s.versions
                .into_iter()
                .map(version_to_json)
                .collect::<Result<Vec<_>>>()?,
        )
        .object_ptr("conversion", s.conversion.map(conversion_to_json))
        .bool("preserveUnknownFields", s.preserve_unknown_fields);
    Ok(w.done())
}

fn names_from_json(r: &Reader) -> Result<CustomResourceDefinitionNames> {
    Ok(CustomResourceDefinitionNames {
        plural: r.string("plural")?,
        singular: r.string("singular")?,
        short_names: r.strings("shortNames")?,
        kind: r.string("kind")?,
        list_kind: r.string("listKind")?,
        categories: r.strings("categories")?,
    })
}

fn names_to_json(n: CustomResourceDefinitionNames) -> Value {
    let mut w = Writer::new();
    w.str_always("plural", n.plural)
        .str("singular", n.singular)
        .strings("shortNames", n.short_names)
        .str_always("kind", n.kind)
        .str("listKind", n.list_kind)
        .strings("categories", n.categories);
    w.done()
}

fn conversion_from_json(r: &Reader) -> Result<CustomResourceConversion> {
    let webhook = match r.object("webhook")? {
        None => None,
        Some(h) => {
            let h = h.reader()?;
            let client_config = match h.object("clientConfig")? {
                None => None,
                Some(c) => {
                    let c = c.reader()?;
                    let service = match c.object("service")? {
                        None => None,
                        Some(s) => {
                            let s = s.reader()?;
                            Some(ServiceReference {
                                namespace: s.string("namespace")?,
                                name: s.string("name")?,
                                path: s.string("path")?,
                                port: s.int32("port")?,
                            })
                        }
                    };
                    Some(WebhookClientConfig {
                        url: c.string("url")?,
                        service,
                        ca_bundle: c.bytes("caBundle")?,
                    })
                }
            };
            Some(WebhookConversion {
                client_config,
                conversion_review_versions: h.strings("conversionReviewVersions")?,
            })
        }
    };
    Ok(CustomResourceConversion {
        strategy: r.string("strategy")?,
        webhook,
    })
}

fn conversion_to_json(c: CustomResourceConversion) -> Value {
    let webhook = c.webhook.map(|h| {
        let client_config = h.client_config.map(|cc| {
            let service = cc.service.map(|s| {
                let mut sw = Writer::new();
                sw.str_always("namespace", s.namespace)
                    .str_always("name", s.name)
                    .str_ptr("path", s.path)
                    .int_ptr("port", s.port);
                sw.done()
            });
            let mut cw = Writer::new();
            cw.str_ptr("url", cc.url)
                .object_ptr("service", service)
                .bytes("caBundle", cc.ca_bundle);
            cw.done()
        });
        let mut hw = Writer::new();
        hw.object_ptr("clientConfig", client_config)
            .strings_always("conversionReviewVersions", h.conversion_review_versions);
        hw.done()
    });
    let mut w = Writer::new();
    w.str_always("strategy", c.strategy)
        .object_ptr("webhook", webhook);
    w.done()
}

fn version_from_json(r: &Reader) -> Result<CustomResourceDefinitionVersion> {
    let schema = match r.object("schema")? {
        None => None,
        Some(s) => {
            let s = s.reader()?;
            let props = match s.object("openAPIV3Schema")? {
                Some(p) => Some(schema_from_json(&p.reader()?)?),
                None => None,
            };
            Some(CustomResourceValidation {
                open_apiv3_schema: props,
            })
        }
    };
    let subresources = match r.object("subresources")? {
        None => None,
        Some(s) => {
            let s = s.reader()?;
            let status = s
                .object("status")?
                .map(|_| CustomResourceSubresourceStatus {});
            let scale = match s.object("scale")? {
                None => None,
                Some(sc) => {
                    let sc = sc.reader()?;
                    Some(CustomResourceSubresourceScale {
                        spec_replicas_path: sc.string("specReplicasPath")?,
                        status_replicas_path: sc.string("statusReplicasPath")?,
                        label_selector_path: sc.string("labelSelectorPath")?,
                    })
                }
            };
            Some(CustomResourceSubresources { status, scale })
        }
    };
    Ok(CustomResourceDefinitionVersion {
        name: r.string("name")?,
        served: r.boolean("served")?,
        storage: r.boolean("storage")?,
        deprecated: r.boolean("deprecated")?,
        deprecation_warning: r.string("deprecationWarning")?,
        schema,
        subresources,
        additional_printer_columns: each(r.items("additionalPrinterColumns")?, |c| {
            Ok(CustomResourceColumnDefinition {
                name: c.string("name")?,
                r#type: c.string("type")?,
                format: c.string("format")?,
                description: c.string("description")?,
                priority: c.int32("priority")?,
                json_path: c.string("jsonPath")?,
            })
        })?,
        selectable_fields: each(r.items("selectableFields")?, |f| {
            Ok(SelectableField {
                json_path: f.string("jsonPath")?,
            })
        })?,
    })
}

fn version_to_json(v: CustomResourceDefinitionVersion) -> Result<Value> {
    let schema = match v.schema {
        None => None,
        Some(s) => {
            let mut sw = Writer::new();
            sw.object_ptr(
                "openAPIV3Schema",
                s.open_apiv3_schema.map(schema_to_json).transpose()?,
            );
            Some(sw.done())
        }
    };
    let subresources = v.subresources.map(|s| {
        let scale = s.scale.map(|sc| {
            let mut w = Writer::new();
            w.str_always("specReplicasPath", sc.spec_replicas_path)
                .str_always("statusReplicasPath", sc.status_replicas_path)
                .str_ptr("labelSelectorPath", sc.label_selector_path);
            w.done()
        });
        let mut w = Writer::new();
        w.object_ptr(
            "status",
            s.status.map(|_| Value::Object(Default::default())),
        )
        .object_ptr("scale", scale);
        w.done()
    });
    let columns = v
        .additional_printer_columns
        .into_iter()
        .map(|c| {
            let mut w = Writer::new();
            w.str_always("name", c.name)
                .str_always("type", c.r#type)
                .str("format", c.format)
                .str("description", c.description)
                .int("priority", c.priority)
                .str_always("jsonPath", c.json_path);
            w.done()
        })
        .collect();
    let selectable = v
        .selectable_fields
        .into_iter()
        .map(|f| {
            let mut w = Writer::new();
            w.str_always("jsonPath", f.json_path);
            w.done()
        })
        .collect();
    let mut w = Writer::new();
    w.str_always("name", v.name)
        .bool_always("served", v.served)
        .bool_always("storage", v.storage)
        .bool("deprecated", v.deprecated)
        .str_ptr("deprecationWarning", v.deprecation_warning)
        .object_ptr("schema", schema)
        .object_ptr("subresources", subresources)
        .list("additionalPrinterColumns", columns)
        .list("selectableFields", selectable);
    Ok(w.done())
}

fn status_from_json(r: &Reader) -> Result<CustomResourceDefinitionStatus> {
    let accepted = match r.object("acceptedNames")? {
        Some(n) => names_from_json(&n.reader()?)?,
        None => CustomResourceDefinitionNames::default(),
    };
    Ok(CustomResourceDefinitionStatus {
        conditions: each(r.items("conditions")?, |c| {
            Ok(CustomResourceDefinitionCondition {
                r#type: c.string("type")?,
                status: c.string("status")?,
                last_transition_time: c.time("lastTransitionTime")?,
                reason: c.string("reason")?,
                message: c.string("message")?,
                observed_generation: c.int64("observedGeneration")?,
            })
        })?,
        accepted_names: Some(accepted),
        stored_versions: r.strings("storedVersions")?,
        observed_generation: r.int64("observedGeneration")?,
    })
}

fn status_to_json(s: CustomResourceDefinitionStatus) -> Result<Value> {
    let conditions = s
        .conditions
        .into_iter()
        .map(|c| {
            let mut w = Writer::new();
            w.str_always("type", c.r#type)
                .str_always("status", c.status);
            w.time("lastTransitionTime", c.last_transition_time)?
                .str("reason", c.reason)
                .str("message", c.message)
                .int("observedGeneration", c.observed_generation);
            Ok(w.done())
        })
        .collect::<Result<Vec<_>>>()?;
    let mut w = Writer::new();
    w.list("conditions", conditions)
        .object(
            "acceptedNames",
            names_to_json(s.accepted_names.unwrap_or_default()),
        )
        .strings_always("storedVersions", s.stored_versions)
        .int("observedGeneration", s.observed_generation);
    Ok(w.done())
}

fn json_of(n: &Nested) -> Result<Json> {
    serde_json::to_vec(n.value())
        .map(|raw| Json { raw: Some(raw) })
        .map_err(|e| error(n.path(), e.to_string()))
}

fn schemas(items: Vec<Nested>) -> Result<Vec<JsonSchemaProps>> {
    each(items, schema_from_json)
}

fn schema_map(entries: Vec<(String, Nested)>) -> Result<BTreeMap<String, JsonSchemaProps>> {
    entries
        .into_iter()
        .map(|(k, n)| Ok((k, schema_from_json(&n.reader()?)?)))
        .collect()
}

/// `additionalProperties` / `additionalItems`: `true`, `false` or a schema.
fn schema_or_bool(r: &Reader, key: &str) -> Result<Option<Box<JsonSchemaPropsOrBool>>> {
    match r.get(key) {
        None => Ok(None),
        Some(Value::Bool(allows)) => Ok(Some(Box::new(JsonSchemaPropsOrBool {
            allows: Some(*allows),
            schema: None,
        }))),
        Some(_) => {
            let nested = r
                .object(key)
                .map_err(|e| error(&e.path, "boolean or JSON schema expected"))?;
            let Some(nested) = nested else {
                return Ok(None);
            };
            Ok(Some(Box::new(JsonSchemaPropsOrBool {
                allows: Some(true),
                schema: Some(Box::new(schema_from_json(&nested.reader()?)?)),
            })))
        }
    }
}

fn schema_or_bool_to_json(v: JsonSchemaPropsOrBool) -> Result<Value> {
    match v.schema {
        Some(s) => schema_to_json(*s),
        None => Ok(Value::Bool(v.allows.unwrap_or(false))),
    }
}

pub fn schema_from_json(r: &Reader) -> Result<JsonSchemaProps> {
    let items = match r.get("items") {
        None => None,
        Some(Value::Array(_)) => Some(Box::new(JsonSchemaPropsOrArray {
            schema: None,
            j_son_schemas: schemas(r.items("items")?)?,
        })),
        Some(_) => match r.object("items")? {
            Some(n) => Some(Box::new(JsonSchemaPropsOrArray {
                schema: Some(Box::new(schema_from_json(&n.reader()?)?)),
                j_son_schemas: Vec::new(),
            })),
            None => None,
        },
    };
    let not = match r.object("not")? {
        Some(n) => Some(Box::new(schema_from_json(&n.reader()?)?)),
        None => None,
    };
    let dependencies = r
        .entries("dependencies")?
        .into_iter()
        .map(|(k, n)| {
            let value = match n.value() {
                // Property names the key requires.
                Value::Array(names) => JsonSchemaPropsOrStringArray {
                    schema: None,
                    property: names
                        .iter()
                        .enumerate()
                        .map(|(i, v)| {
                            v.as_str().map(str::to_string).ok_or_else(|| {
                                error(&format!("{}[{i}]", n.path()), "expected a string")
                            })
                        })
                        .collect::<Result<Vec<_>>>()?,
                },
                _ => JsonSchemaPropsOrStringArray {
                    schema: Some(schema_from_json(&n.reader()?)?),
                    property: Vec::new(),
                },
            };
            Ok((k, value))
        })
        .collect::<Result<BTreeMap<_, _>>>()?;
    let external_docs = match r.object("externalDocs")? {
        None => None,
        Some(d) => {
            let d = d.reader()?;
            Some(ExternalDocumentation {
                description: d.string("description")?,
                url: d.string("url")?,
            })
        }
    };
    let enums = r
        .items("enum")?
        .iter()
        .map(json_of)
        .collect::<Result<Vec<_>>>()?;
    Ok(JsonSchemaProps {
        id: r.string("id")?,
        schema: r.string("$schema")?,
        r#ref: r.string("$ref")?,
        description: r.string("description")?,
        r#type: r.string("type")?,
        format: r.string("format")?,
        title: r.string("title")?,
        default: r.raw("default")?.map(|raw| Json { raw: Some(raw) }),
        maximum: r.float("maximum")?,
        exclusive_maximum: r.boolean("exclusiveMaximum")?,
        minimum: r.float("minimum")?,
        exclusive_minimum: r.boolean("exclusiveMinimum")?,
        max_length: r.int64("maxLength")?,
        min_length: r.int64("minLength")?,
        pattern: r.string("pattern")?,
        max_items: r.int64("maxItems")?,
        min_items: r.int64("minItems")?,
        unique_items: r.boolean("uniqueItems")?,
        multiple_of: r.float("multipleOf")?,
        r#enum: enums,
        max_properties: r.int64("maxProperties")?,
        min_properties: r.int64("minProperties")?,
        required: r.strings("required")?,
        items,
        all_of: schemas(r.items("allOf")?)?,
        one_of: schemas(r.items("oneOf")?)?,
        any_of: schemas(r.items("anyOf")?)?,
        not,
        properties: schema_map(r.entries("properties")?)?,
        additional_properties: schema_or_bool(r, "additionalProperties")?,
        pattern_properties: schema_map(r.entries("patternProperties")?)?,
        dependencies,
        additional_items: schema_or_bool(r, "additionalItems")?,
        definitions: schema_map(r.entries("definitions")?)?,
        external_docs,
        example: r.raw("example")?.map(|raw| Json { raw: Some(raw) }),
        nullable: r.boolean("nullable")?,
        x_kubernetes_preserve_unknown_fields: r.boolean("x-kubernetes-preserve-unknown-fields")?,
        x_kubernetes_embedded_resource: r.boolean("x-kubernetes-embedded-resource")?,
        x_kubernetes_int_or_string: r.boolean("x-kubernetes-int-or-string")?,
        x_kubernetes_list_map_keys: r.strings("x-kubernetes-list-map-keys")?,
        x_kubernetes_list_type: r.string("x-kubernetes-list-type")?,
        x_kubernetes_map_type: r.string("x-kubernetes-map-type")?,
        x_kubernetes_validations: each(r.items("x-kubernetes-validations")?, |v| {
            Ok(ValidationRule {
                rule: v.string("rule")?,
                message: v.string("message")?,
                message_expression: v.string("messageExpression")?,
                reason: v.string("reason")?,
                field_path: v.string("fieldPath")?,
                optional_old_self: v.boolean("optionalOldSelf")?,
            })
        })?,
    })
}

fn schema_map_to_json(m: BTreeMap<String, JsonSchemaProps>) -> Result<Vec<(String, Value)>> {
    m.into_iter()
        .map(|(k, s)| Ok((k, schema_to_json(s)?)))
        .collect()
}

fn schema_list_to_json(v: Vec<JsonSchemaProps>) -> Result<Vec<Value>> {
    v.into_iter().map(schema_to_json).collect()
}

fn raw_of(j: Json, path: &str) -> Result<Value> {
    raw_value(&j.raw.unwrap_or_default(), path)
}

pub fn schema_to_json(s: JsonSchemaProps) -> Result<Value> {
    let items = match s.items {
        None => None,
        Some(i) => {
            let i = *i;
            Some(if !i.j_son_schemas.is_empty() {
                Value::Array(schema_list_to_json(i.j_son_schemas)?)
            } else {
                match i.schema {
                    Some(one) => schema_to_json(*one)?,
                    None => Value::Null,
                }
            })
        }
    };
    let dependencies = s
        .dependencies
        .into_iter()
        .map(|(k, d)| {
            let v = if !d.property.is_empty() {
                Value::Array(d.property.into_iter().map(Value::String).collect())
            } else {
                match d.schema {
                    Some(one) => schema_to_json(one)?,
                    None => Value::Null,
                }
            };
            Ok((k, v))
        })
        .collect::<Result<Vec<_>>>()?;
    let external_docs = s.external_docs.map(|d| {
        let mut w = Writer::new();
        w.str("description", d.description).str("url", d.url);
        w.done()
    });
    let validations = s
        .x_kubernetes_validations
        .into_iter()
        .map(|v| {
            let mut w = Writer::new();
            w.str_always("rule", v.rule)
                .str("message", v.message)
                .str("messageExpression", v.message_expression)
                .str_ptr("reason", v.reason)
                .str("fieldPath", v.field_path)
                .bool_ptr("optionalOldSelf", v.optional_old_self);
            w.done()
        })
        .collect();
    let enums = s
        .r#enum
        .into_iter()
        .map(|j| raw_of(j, "enum"))
        .collect::<Result<Vec<_>>>()?;
    let mut w = Writer::new();
    w.str("id", s.id)
        .str("$schema", s.schema)
        .str_ptr("$ref", s.r#ref)
        .str("description", s.description)
        .str("type", s.r#type)
        .str("format", s.format)
        .str("title", s.title)
        .object_ptr(
            "default",
            s.default.map(|j| raw_of(j, "default")).transpose()?,
        )
        .float_ptr("maximum", s.maximum)
        .bool("exclusiveMaximum", s.exclusive_maximum)
        .float_ptr("minimum", s.minimum)
        .bool("exclusiveMinimum", s.exclusive_minimum)
        .int_ptr("maxLength", s.max_length)
        .int_ptr("minLength", s.min_length)
        .str("pattern", s.pattern)
        .int_ptr("maxItems", s.max_items)
        .int_ptr("minItems", s.min_items)
        .bool("uniqueItems", s.unique_items)
        .float_ptr("multipleOf", s.multiple_of)
        .list("enum", enums)
        .int_ptr("maxProperties", s.max_properties)
        .int_ptr("minProperties", s.min_properties)
        .strings("required", s.required)
        .object_ptr("items", items)
        .list("allOf", schema_list_to_json(s.all_of)?)
        .list("oneOf", schema_list_to_json(s.one_of)?)
        .list("anyOf", schema_list_to_json(s.any_of)?)
        .object_ptr("not", s.not.map(|n| schema_to_json(*n)).transpose()?)
        .map("properties", schema_map_to_json(s.properties)?)
        .object_ptr(
            "additionalProperties",
            s.additional_properties
                .map(|a| schema_or_bool_to_json(*a))
                .transpose()?,
        )
        .map(
            "patternProperties",
            schema_map_to_json(s.pattern_properties)?,
        )
        .map("dependencies", dependencies)
        .object_ptr(
            "additionalItems",
            s.additional_items
                .map(|a| schema_or_bool_to_json(*a))
                .transpose()?,
        )
        .map("definitions", schema_map_to_json(s.definitions)?)
        .object_ptr("externalDocs", external_docs)
        .object_ptr(
            "example",
            s.example.map(|j| raw_of(j, "example")).transpose()?,
        )
        .bool("nullable", s.nullable)
        .bool_ptr(
            "x-kubernetes-preserve-unknown-fields",
            s.x_kubernetes_preserve_unknown_fields,
        )
        .bool(
            "x-kubernetes-embedded-resource",
            s.x_kubernetes_embedded_resource,
        )
        .bool("x-kubernetes-int-or-string", s.x_kubernetes_int_or_string)
        .strings("x-kubernetes-list-map-keys", s.x_kubernetes_list_map_keys)
        .str_ptr("x-kubernetes-list-type", s.x_kubernetes_list_type)
        .str_ptr("x-kubernetes-map-type", s.x_kubernetes_map_type)
        .list("x-kubernetes-validations", validations);
    Ok(w.done())
}
