//! [`dynamic_resource!`]: what kube-rs' watcher needs of a type objects of any kind are
//! read into, as `DynamicObject` is one. The caches' watches and the appliers'
//! watchers read objects into types of their own (the whole object, its text, or the
//! little an index needs); each names its kind through the `Api` it is watched with.
//! [`follow`] feeds a cache's store from such a watch.

use std::fmt::Debug;
use std::sync::Weak;

use futures::StreamExt;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use serde::de::DeserializeOwned;

/// A store a watch feeds: its events, and its failures (after which the store is not
/// believed until the watch delivers again).
pub(crate) trait Fed<K> {
    fn event(&self, event: Event<K>);
    fn failed(&self);
}

/// Starts feeding `store` from a watch of `kind` (across namespaces), the task kept in
/// `tasks`; false when the kind is not served or discovery failed (the caller forgets
/// the store, so a later read tries again).
pub(crate) async fn start<K, S>(
    api: &crate::ManagementCluster,
    api_version: &str,
    kind: &str,
    config: watcher::Config,
    store: &std::sync::Arc<S>,
    tasks: &std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
) -> bool
where
    K: kube::Resource<DynamicType = kube::api::ApiResource>
        + Clone
        + Debug
        + DeserializeOwned
        + Send
        + 'static,
    S: Fed<K> + Send + Sync + 'static,
{
    let Ok(Some(resource)) = api.api_all::<K>(api_version, kind).await else {
        return false;
    };
    let task = tokio::spawn(follow(
        resource,
        config,
        std::sync::Arc::downgrade(store),
        format!("{kind}.{api_version}"),
    ));
    if let Ok(mut tasks) = tasks.lock() {
        tasks.push(task);
    }
    true
}

/// Feeds `store` from a watch of `api`'s kind until the store is dropped; `what` names
/// the watch in the log.
async fn follow<K, S>(api: kube::Api<K>, config: watcher::Config, store: Weak<S>, what: String)
where
    K: kube::Resource + Clone + Debug + DeserializeOwned + Send + 'static,
    S: Fed<K>,
{
    let mut stream = watcher::watcher(api, config).default_backoff().boxed();
    while let Some(event) = stream.next().await {
        let Some(store) = store.upgrade() else {
            return;
        };
        match event {
            Ok(event) => store.event(event),
            Err(e) => {
                tracing::info!(watch = %what, error = %e, "cache watch error; reading live until it recovers");
                store.failed();
            }
        }
    }
}

/// Implements `kube::Resource` for `$type`, a struct with a `metadata: ObjectMeta`
/// field (the watcher reads and writes only its resourceVersion), whose kind comes with
/// the `Api` (`DynamicType = ApiResource`).
#[macro_export]
macro_rules! dynamic_resource {
    ($type:ty) => {
        impl ::kube::Resource for $type {
            type DynamicType = ::kube::api::ApiResource;
            type Scope = ::kube::core::DynamicResourceScope;

            fn kind(resource: &Self::DynamicType) -> ::std::borrow::Cow<'_, str> {
                resource.kind.as_str().into()
            }

            fn group(resource: &Self::DynamicType) -> ::std::borrow::Cow<'_, str> {
                resource.group.as_str().into()
            }

            fn version(resource: &Self::DynamicType) -> ::std::borrow::Cow<'_, str> {
                resource.version.as_str().into()
            }

            fn api_version(resource: &Self::DynamicType) -> ::std::borrow::Cow<'_, str> {
                resource.api_version.as_str().into()
            }

            fn plural(resource: &Self::DynamicType) -> ::std::borrow::Cow<'_, str> {
                resource.plural.as_str().into()
            }

            fn meta(&self) -> &::kube::api::ObjectMeta {
                &self.metadata
            }

            fn meta_mut(&mut self) -> &mut ::kube::api::ObjectMeta {
                &mut self.metadata
            }
        }
    };
}
