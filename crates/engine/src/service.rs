//! The engine as the rest of topograph calls it: one [`Engine`] trait — admit a class,
//! admit a Cluster, render, plan — with the engine linked into the process ([`Local`])
//! as one implementation and the render service over gRPC (in `topograph_proto`) as the
//! other. Every door (the CLI, the gateway, the applier's reconcile) goes through it,
//! so the embedded mode and the fleet give the same verdicts and the same objects.
//!
//! Inputs are the objects as an API server stores them (JSON), so a remote engine can
//! carry them as they are; a render also takes them decoded, which the local engine
//! uses instead of reading them again.
//!
//! A render may carry runtime extensions ([`RenderExtensions`]): the local engine calls
//! them through the synchronous [`Extensions`] trait, a remote engine sends what the
//! render service needs to call them itself (the discovered ExtensionConfigs and the
//! labels of the namespaces involved).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;
use topograph_api::model::{Cluster, ClusterClass};
use topograph_api::object::ObjectExt;

use crate::Extensions;
use crate::admission::{self, Verdict};
use crate::desired::DesiredState;
use crate::store::ObjectStore;

/// A boxed future, so engines can be chosen at run time.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The engine could not give an answer (a remote engine unreachable or answering
/// something unreadable); this says nothing about the inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unavailable {}

/// Why a render gave no desired state: the inputs were refused (the messages a
/// Cluster's condition reports), or the engine could not answer at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RenderFailure {
    /// Admission or the render refused the inputs.
    Refused(Vec<String>),
    /// No verdict: a remote engine unreachable or answering something unreadable.
    Unavailable(Unavailable),
}

impl RenderFailure {
    /// One message per problem.
    pub fn messages(&self) -> Vec<String> {
        match self {
            RenderFailure::Refused(messages) => messages.clone(),
            RenderFailure::Unavailable(e) => vec![e.0.clone()],
        }
    }
}

/// The runtime extensions a render may call (GeneratePatches for external patches,
/// ValidateTopology, DiscoverVariables), in the two forms the engines need.
#[derive(Clone)]
pub struct RenderExtensions {
    /// The extensions as the engine in this process calls them. Their registry must
    /// already know the labels of [`RenderExtensions::namespaces`].
    pub extensions: Arc<dyn Extensions>,
    /// The same extensions as a remote engine rebuilds them: the ExtensionConfig objects
    /// (JSON) with the handlers discovery recorded in their `status.handlers`.
    pub configs: Arc<Vec<Value>>,
    /// Labels of the namespaces extensions are called for (the Cluster's, its class's),
    /// by namespace: what the ExtensionConfigs' `namespaceSelector`s match.
    pub namespaces: BTreeMap<String, BTreeMap<String, String>>,
}

impl std::fmt::Debug for RenderExtensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderExtensions")
            .field("configs", &self.configs.len())
            .field("namespaces", &self.namespaces)
            .finish_non_exhaustive()
    }
}

/// What a desired state is computed from: the Cluster (decoded; its document is the
/// object as stored), its class (decoded, and as stored), the templates and current
/// objects read for it, and the runtime extensions its external patches call.
#[derive(Clone, Copy, Debug)]
pub struct RenderInputs<'a> {
    /// The Cluster.
    pub cluster: &'a Cluster,
    /// Its class.
    pub class: &'a ClusterClass,
    /// The class object.
    pub class_object: &'a Value,
    /// Templates and current objects.
    pub objects: &'a [Value],
    /// Runtime extensions; `None` with Runtime SDK off (a class with external patches is
    /// then refused, as Cluster API refuses it without its RuntimeSDK feature).
    pub extensions: Option<&'a RenderExtensions>,
}

impl RenderInputs<'_> {
    /// `namespace/name` of the class, as spans and metrics name it.
    pub fn class_key(&self) -> String {
        format!(
            "{}/{}",
            self.class_object.namespace(),
            self.class_object.name()
        )
    }
}

/// What it takes to go from current objects to desired ones, every object named.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// Desired objects that do not exist.
    pub created: Vec<Value>,
    /// Existing objects to change, each with the RFC 6902 operations that change it.
    pub modified: Vec<(ObjectName, Value)>,
    /// Owned objects to delete.
    pub deleted: Vec<ObjectName>,
}

/// Which object: apiVersion, kind, namespace, name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectName {
    /// `apiVersion` as the object has it.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
}

impl ObjectName {
    /// The name of `object`.
    pub fn of(object: &Value) -> Self {
        ObjectName {
            api_version: object.api_version().to_string(),
            kind: object.kind().to_string(),
            namespace: object.namespace().to_string(),
            name: object.name().to_string(),
        }
    }
}

/// Admission, rendering and planning, local or remote.
pub trait Engine: Send + Sync {
    /// Admits a ClusterClass; `old` is the stored version on update, `clusters` the
    /// Clusters using it.
    fn admit_class<'a>(
        &'a self,
        class: &'a Value,
        old: Option<&'a Value>,
        clusters: &'a [Value],
    ) -> BoxFuture<'a, Result<Verdict, Unavailable>>;

    /// Admits (defaults and validates) a Cluster; `old` is the stored version on
    /// update, `classes` the ClusterClasses it may refer to.
    fn admit_cluster<'a>(
        &'a self,
        cluster: &'a Value,
        old: Option<&'a Value>,
        classes: &'a [Value],
    ) -> BoxFuture<'a, Result<Verdict, Unavailable>>;

    /// Admits the class and the Cluster, then renders the desired state.
    fn render<'a>(
        &'a self,
        inputs: RenderInputs<'a>,
    ) -> BoxFuture<'a, Result<DesiredState, RenderFailure>>;

    /// The way from `current` objects to `desired` ones.
    fn plan<'a>(
        &'a self,
        desired: &'a [Value],
        current: &'a [Value],
    ) -> BoxFuture<'a, Result<Plan, Unavailable>>;
}

/// The engine linked into this process.
#[derive(Clone, Copy, Debug, Default)]
pub struct Local;

/// [`Engine::plan`], computed here.
pub fn plan(desired: &[Value], current: &[Value]) -> Plan {
    let p = crate::plan::plan(desired, current);
    Plan {
        created: p.created.into_iter().cloned().collect(),
        modified: p
            .modified
            .into_iter()
            .map(|(object, patch)| (ObjectName::of(object), patch))
            .collect(),
        deleted: p.deleted.into_iter().map(ObjectName::of).collect(),
    }
}

impl Engine for Local {
    fn admit_class<'a>(
        &'a self,
        class: &'a Value,
        old: Option<&'a Value>,
        clusters: &'a [Value],
    ) -> BoxFuture<'a, Result<Verdict, Unavailable>> {
        Box::pin(async move { Ok(admission::admit_class_object(class, old, clusters)) })
    }

    fn admit_cluster<'a>(
        &'a self,
        cluster: &'a Value,
        old: Option<&'a Value>,
        classes: &'a [Value],
    ) -> BoxFuture<'a, Result<Verdict, Unavailable>> {
        Box::pin(async move { Ok(admission::admit_cluster_object(cluster, old, classes)) })
    }

    fn render<'a>(
        &'a self,
        inputs: RenderInputs<'a>,
    ) -> BoxFuture<'a, Result<DesiredState, RenderFailure>> {
        Box::pin(async move {
            let store = ObjectStore::new(inputs.objects.iter().cloned());
            // With extensions the engine waits on network calls here; the blocking client
            // moves such waits off an async worker itself (`BlockingClient::block_on`).
            let rendered = match inputs.extensions {
                None => crate::admit_and_render(inputs.cluster, inputs.class, &store),
                Some(extensions) => crate::admit_and_render_with(
                    inputs.cluster,
                    inputs.class,
                    &store,
                    extensions.extensions.as_ref(),
                ),
            };
            rendered
                .map(|rendered| rendered.desired)
                .map_err(|refusal| RenderFailure::Refused(refusal.messages()))
        })
    }

    fn plan<'a>(
        &'a self,
        desired: &'a [Value],
        current: &'a [Value],
    ) -> BoxFuture<'a, Result<Plan, Unavailable>> {
        Box::pin(async move { Ok(plan(desired, current)) })
    }
}
