//! Conversion between the served versions of a kind, as kube-apiserver does it for
//! custom resources: with strategy `None` only `apiVersion` differs between versions;
//! with strategy `Webhook` the object is converted (kube-apiserver posts a
//! ConversionReview to the CRD's webhook; here a [`Converter`] given to the server plays
//! that webhook, as Cluster API's conversion webhook does for its kinds).
//!
//! Objects are stored in their CRD's storage version. A write in another version is
//! converted to it before it is stored, and every read, watch event and write response
//! is converted to the version the request named.

use std::sync::Arc;

use serde_json::Value;

use crate::status::ApiError;
use crate::types::ResourceType;

/// The `apiVersion` the server serves a group and kind in (its storage version), for
/// conversions that must name a version a reference leaves out.
pub type ApiVersionOf<'a> = &'a dyn Fn(&str, &str) -> Option<String>;

/// The function behind a conversion webhook: an object to the given `apiVersion`
/// (group/version), its identity kept; the error is the webhook's answer.
pub type ConvertFn = dyn Fn(&Value, &str, ApiVersionOf<'_>) -> Result<Value, String> + Send + Sync;

/// Plays the conversion webhook of every kind whose CRD asks for one.
#[derive(Clone)]
pub struct Converter(Arc<ConvertFn>);

impl Converter {
    /// A converter calling `f`.
    pub fn new(
        f: impl Fn(&Value, &str, ApiVersionOf<'_>) -> Result<Value, String> + Send + Sync + 'static,
    ) -> Self {
        Converter(Arc::new(f))
    }

    /// Cluster API's conversion webhook: its kinds between `cluster.x-k8s.io/v1beta1`
    /// and `v1beta2` ([`topograph_api::convert`]). As Cluster API's, only the v1beta1
    /// form carries the `conversion-data` annotation (what v1beta2, the hub, holds and
    /// v1beta1 cannot); the stored v1beta2 object never does, so what is stored does
    /// not change with each v1beta1 read-modify-write.
    pub fn cluster_api() -> Self {
        Converter::new(|object, to, api_version_of| {
            use topograph_api::convert::{self, Options, Version};
            let target =
                Version::of_api_version(to).ok_or_else(|| format!("cannot convert to {to}"))?;
            let options = Options {
                conversion_data: target == Version::V1Beta1,
                api_version_of,
            };
            convert::convert(object, target, &options).map_err(|e| e.to_string())
        })
    }
}

impl std::fmt::Debug for Converter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Converter")
    }
}

/// `object` in `api_version`, a version `rt` serves.
pub(crate) fn convert(
    converter: Option<&Converter>,
    rt: &ResourceType,
    mut object: Value,
    api_version: &str,
    api_version_of: ApiVersionOf<'_>,
) -> Result<Value, ApiError> {
    if object.get("apiVersion").and_then(Value::as_str) == Some(api_version) {
        return Ok(object);
    }
    if !rt.webhook_conversion {
        if let Some(map) = object.as_object_mut() {
            map.insert("apiVersion".into(), Value::String(api_version.to_string()));
        }
        return Ok(object);
    }
    webhook(converter, rt, &object, api_version, api_version_of)
}

/// [`convert`] of an object the caller keeps: a webhook reads it where it is, so only
/// the other conversions (a new `apiVersion`, or none) copy it.
pub(crate) fn convert_ref(
    converter: Option<&Converter>,
    rt: &ResourceType,
    object: &Value,
    api_version: &str,
    api_version_of: ApiVersionOf<'_>,
) -> Result<Value, ApiError> {
    if !rt.webhook_conversion
        || object.get("apiVersion").and_then(Value::as_str) == Some(api_version)
    {
        return convert(converter, rt, object.clone(), api_version, api_version_of);
    }
    webhook(converter, rt, object, api_version, api_version_of)
}

/// What the kind's conversion webhook answers for `object`, checked as kube-apiserver
/// checks it.
fn webhook(
    converter: Option<&Converter>,
    rt: &ResourceType,
    object: &Value,
    api_version: &str,
    api_version_of: ApiVersionOf<'_>,
) -> Result<Value, ApiError> {
    // kube-apiserver's words when a conversion webhook fails.
    let failed = |why: &str| {
        ApiError::internal(format!(
            "conversion webhook for {api_version}, Kind={} failed: {why}",
            rt.kind
        ))
    };
    let Some(converter) = converter else {
        return Err(failed("no conversion webhook is served for this kind"));
    };
    let converted = (converter.0)(object, api_version, api_version_of).map_err(|e| failed(&e))?;
    if converted.get("apiVersion").and_then(Value::as_str) != Some(api_version) {
        return Err(failed(&format!(
            "the webhook answered with apiVersion {:?}, not {api_version:?}",
            converted
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
        )));
    }
    // The webhook may change anything but identity: kube-apiserver refuses a converted
    // object whose metadata differs outside labels and annotations.
    for field in ["name", "namespace", "uid", "resourceVersion"] {
        if metadata_field(object, field) != metadata_field(&converted, field) {
            return Err(failed(&format!(
                "the webhook changed metadata.{field}, which conversion must keep"
            )));
        }
    }
    Ok(converted)
}

/// `metadata.<field>` of `object`.
fn metadata_field<'a>(object: &'a Value, field: &str) -> Option<&'a Value> {
    object.get("metadata").and_then(|m| m.get(field))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rt(webhook: bool) -> ResourceType {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "foos.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "foos", "kind": "Foo"},
                "conversion": {"strategy": if webhook { "Webhook" } else { "None" }},
                "versions": [
                    {"name": "v1", "served": true, "storage": false},
                    {"name": "v2", "served": true, "storage": true}]}});
        ResourceType::from_crd(&crd).unwrap()
    }

    fn rename() -> Converter {
        Converter::new(|o: &Value, to: &str, _: ApiVersionOf<'_>| {
            let mut o = o.clone();
            let spec = o["spec"].as_object_mut().ok_or("no spec")?;
            let (from, into) = if to.ends_with("/v2") {
                ("a", "b")
            } else {
                ("b", "a")
            };
            if let Some(v) = spec.remove(from) {
                spec.insert(into.into(), v);
            }
            o["apiVersion"] = Value::String(to.into());
            Ok(o)
        })
    }

    fn none(_: &str, _: &str) -> Option<String> {
        None
    }

    #[test]
    fn strategies() {
        let obj = json!({"apiVersion": "example.com/v1", "kind": "Foo",
                         "metadata": {"name": "f"}, "spec": {"a": 1}});
        assert_eq!(rt(true).storage_version, "v2");
        let plain = convert(
            Some(&rename()),
            &rt(false),
            obj.clone(),
            "example.com/v2",
            &none,
        )
        .unwrap();
        assert_eq!(plain["spec"], json!({"a": 1}), "None: apiVersion only");
        assert_eq!(plain["apiVersion"], "example.com/v2");
        let hook = convert(
            Some(&rename()),
            &rt(true),
            obj.clone(),
            "example.com/v2",
            &none,
        )
        .unwrap();
        assert_eq!(hook["spec"], json!({"b": 1}));
        let back = convert(Some(&rename()), &rt(true), hook, "example.com/v1", &none).unwrap();
        assert_eq!(back, obj);
        let missing = convert(None, &rt(true), obj.clone(), "example.com/v2", &none).unwrap_err();
        assert!(
            missing
                .to_status()
                .to_string()
                .contains("conversion webhook for example.com/v2, Kind=Foo failed"),
            "{}",
            missing.to_status()
        );
        let renaming = Converter::new(|o: &Value, to: &str, _: ApiVersionOf<'_>| {
            let mut o = o.clone();
            o["apiVersion"] = Value::String(to.into());
            o["metadata"]["name"] = Value::String("other".into());
            Ok(o)
        });
        assert!(convert(Some(&renaming), &rt(true), obj, "example.com/v2", &none).is_err());
    }
}
