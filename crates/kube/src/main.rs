//! `topograph-kube`: the in-memory Kubernetes API server.

fn main() {}
