//! [`dynamic_resource!`]: what kube-rs' watcher needs of a type objects of any kind are
//! read into, as `DynamicObject` is one. The class cache's watches and the appliers'
//! watchers read objects into types of their own (the whole object, or the little an
//! index needs); each names its kind through the `Api` it is watched with.

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
