//! Go standard-library behaviour that Cluster API's texts depend on, in one place.
//!
//! Error messages, `%q` output and template results are compared letter for letter with
//! what Cluster API (a Go program) prints, so the crates that reproduce them share one
//! implementation of each Go rule instead of keeping their own copies in step:
//! [`strconv`] (quoting, `IsPrint`, `Atoi`), [`regexp`] (RE2 syntax errors and the
//! translation to the `regex` crate), [`json`] (`encoding/json` string escaping and
//! syntax-error texts), [`float`] (how Go prints a `float64`), [`time`] (how
//! `metav1.Time` writes a time) and [`yaml`] (`sigs.k8s.io/yaml` reading YAML as
//! go-yaml v2 does).

pub mod float;
pub mod json;
pub mod regexp;
pub mod strconv;
pub mod time;
pub mod yaml;
