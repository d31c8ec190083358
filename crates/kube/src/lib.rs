//! An in-memory server speaking enough of the Kubernetes API for kube-rs and kubectl.
