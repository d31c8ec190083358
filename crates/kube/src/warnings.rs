//! The warnings a request earns, answered as kube-apiserver answers them: one
//! `Warning: 299 - "<text>"` header each (RFC 7234's warn-code, no agent, the text
//! quoted as Go's `strconv.Quote` does). Store writes run synchronously inside the
//! request's dispatch, so the warnings they raise are gathered on the dispatching
//! thread rather than threaded through every store call.

use axum::http::{HeaderMap, HeaderValue, header};
use std::cell::RefCell;

thread_local! {
    /// The warnings of the request this thread is dispatching, if it is dispatching one.
    static PENDING: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Runs `dispatch`, answering its result and the warnings raised while it ran.
pub(crate) fn collect<T>(dispatch: impl FnOnce() -> T) -> (T, Vec<String>) {
    let outer = PENDING.with(|p| p.replace(Some(Vec::new())));
    let result = dispatch();
    let warnings = PENDING.with(|p| p.replace(outer)).unwrap_or_default();
    (result, warnings)
}

/// Records a warning for the request being dispatched; a write the server makes on its
/// own (seeding, simulated providers) has no one to tell, so the warning goes to the log.
pub(crate) fn warn(text: String) {
    let unheard = PENDING.with(|p| match p.borrow_mut().as_mut() {
        Some(pending) => {
            pending.push(text);
            None
        }
        None => Some(text),
    });
    if let Some(text) = unheard {
        tracing::warn!(warning = %text, "write outside a request");
    }
}

/// Adds one `Warning` header per warning, in the order they were raised.
pub(crate) fn attach(headers: &mut HeaderMap, warnings: &[String]) {
    for text in warnings {
        let value = format!("299 - {}", topograph_gocompat::strconv::quote(text));
        if let Ok(value) = HeaderValue::from_bytes(value.as_bytes()) {
            headers.append(header::WARNING, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_reach_the_request_that_raised_them() {
        let ((), outer) = collect(|| {
            warn("first".into());
            let ((), inner) = collect(|| warn("unknown field \"spec.x\"".into()));
            assert_eq!(inner, ["unknown field \"spec.x\""]);
        });
        assert_eq!(outer, ["first"]);
        let mut headers = HeaderMap::new();
        attach(&mut headers, &["unknown field \"spec.x\"".to_string()]);
        assert_eq!(
            headers[header::WARNING],
            r#"299 - "unknown field \"spec.x\"""#
        );
    }
}
