//! Rules about a ClusterClass's templates: the references to them and the naming
//! templates for the objects made from them.

use topograph_api::field::FieldError;
use topograph_api::model::{ClusterClass, ObjectRef};
use topograph_api::object::GroupVersion;

use super::super::common;
use super::super::names::Names;
use super::Worker;
use crate::names::{NameData, render_template};

/// Every template reference must be valid (see [`reference()`]): the infrastructure
/// cluster's, the control plane's and its machines', then each worker class's bootstrap
/// and infrastructure templates.
pub(super) fn references(
    class: &ClusterClass,
    workers: &[Worker<'_>],
    errors: &mut Vec<FieldError>,
) {
    let ns = class.namespace.as_str();
    if let Some(infra) = &class.infrastructure {
        reference(&infra.template, ns, "spec.infrastructure", errors);
    }
    let cp = &class.control_plane;
    reference(&cp.template, ns, "spec.controlPlane", errors);
    if let Some(machine) = &cp.machine_infrastructure {
        reference(
            machine,
            ns,
            "spec.controlPlane.machineInfrastructure",
            errors,
        );
    }
    for worker in workers {
        let base = format!("{}.template", worker.indexed());
        reference(worker.bootstrap, ns, &format!("{base}.bootstrap"), errors);
        reference(
            worker.infrastructure,
            ns,
            &format!("{base}.infrastructure"),
            errors,
        );
    }
}

/// A template reference of the class: `<path>.ref.{name,namespace,kind,apiVersion}`.
/// The template must be named, in the class's namespace, of a `<name>Template` kind and
/// of a valid apiVersion.
fn reference(r: &ObjectRef, namespace: &str, path: &str, errors: &mut Vec<FieldError>) {
    if r.name.is_empty() {
        errors.push(FieldError::required(
            format!("{path}.ref.name"),
            "template name must be defined",
        ));
    }
    if !r.namespace.is_empty() && r.namespace != namespace {
        errors.push(FieldError::invalid(
            format!("{path}.ref.namespace"),
            &r.namespace,
            format!("template must be in the same namespace as the ClusterClass ({namespace})"),
        ));
    }
    if r.kind.len() <= "Template".len() || !r.kind.ends_with("Template") {
        errors.push(FieldError::invalid(
            format!("{path}.ref.kind"),
            &r.kind,
            "template kind must be of form \"<name>Template\"",
        ));
    }
    match GroupVersion::parse(&r.api_version) {
        Err(e) => errors.push(FieldError::invalid(
            format!("{path}.ref.apiVersion"),
            &r.api_version,
            format!("template apiVersion must be a valid Kubernetes apiVersion: {e}"),
        )),
        Ok(gv) if gv.group.is_empty() && gv.version.is_empty() => {
            errors.push(FieldError::required(
                format!("{path}.ref.apiVersion"),
                "template apiVersion must be defined",
            ))
        }
        Ok(_) => {}
    }
}

/// Every naming template must render (with sample data) to a valid name: the
/// infrastructure cluster's, the control plane's, then each worker class's.
pub(super) fn naming_templates(
    class: &ClusterClass,
    workers: &[Worker<'_>],
    names: &Names,
    errors: &mut Vec<FieldError>,
) {
    let sample = || NameData::new("cluster", "xxxxx");
    if let Some(template) = class
        .infrastructure
        .as_ref()
        .and_then(|i| i.naming.as_deref())
    {
        naming(
            template,
            "InfraCluster",
            sample(),
            names.infrastructure_naming_template,
            errors,
        );
    }
    if let Some(template) = class.control_plane.naming.as_deref() {
        naming(
            template,
            "ControlPlane",
            sample(),
            &format!("spec.controlPlane.{}", names.naming_template),
            errors,
        );
    }
    for worker in workers {
        if let Some(template) = worker.naming {
            let (field, value) = worker.kind.sample_topology_name();
            naming(
                template,
                worker.kind.name(),
                sample().with(field, value),
                &format!("{}.{}", worker.named(), names.naming_template),
                errors,
            );
        }
    }
}

/// A naming template, rendered with sample data; the result must be a DNS subdomain.
fn naming(template: &str, what: &str, data: NameData, path: &str, errors: &mut Vec<FieldError>) {
    match render_template(template, &data, || "xxxxx".to_string()) {
        Err(e) => errors.push(FieldError::invalid(
            path,
            template,
            format!("invalid {what} name template: {e}"),
        )),
        Ok(name) => {
            for problem in common::dns1123_subdomain(&name) {
                errors.push(FieldError::invalid(path, template, problem));
            }
        }
    }
}
