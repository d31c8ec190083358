//! Schema patterns and CEL `matches()` compile with Go's `regexp` rules and error
//! texts (`topograph_gocompat::regexp`), as Kubernetes validates them.

use regex::Regex;

/// Go puts no bound on a compiled pattern; this one keeps a ClusterClass's pattern from
/// compiling into an arbitrarily large program.
const SIZE_LIMIT: usize = 1 << 22;

/// Compiles a pattern as Go's `regexp.Compile` would; the error is Go's text.
pub fn compile(pattern: &str) -> Result<Regex, String> {
    topograph_gocompat::regexp::compile(pattern, SIZE_LIMIT)
}
