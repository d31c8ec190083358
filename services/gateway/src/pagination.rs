//! Page tokens for the List methods: keyset pagination over `(namespace, name)`.
//!
//! A token names the last item of the page it ends and a fingerprint of the query
//! (management cluster, filters). The next page starts after that item, so Clusters
//! created or deleted between pages never shift the others into duplicates or gaps,
//! and the token is useless with other filters. It is opaque to clients (hex), not
//! secret: it holds nothing the caller could not list.

use sha2::{Digest, Sha256};
use tonic::Status;

use topograph_api::Violation;
use topograph_proto::violations::invalid;

/// Page size when the request gives none.
pub const DEFAULT_PAGE_SIZE: usize = 100;
/// The largest page.
pub const MAX_PAGE_SIZE: usize = 1000;

const VERSION: &str = "p1";

/// Where a page starts and how long it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    /// Items in the page at most.
    pub size: usize,
    /// The page starts after this `(namespace, name)`.
    pub after: Option<(String, String)>,
}

/// A fingerprint of the query a token belongs to.
pub fn fingerprint(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.len().to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex(&hasher.finalize()[..8])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// The token of the page after `(namespace, name)`.
pub fn token(query: &str, namespace: &str, name: &str) -> String {
    hex(format!("{VERSION}\n{query}\n{namespace}\n{name}").as_bytes())
}

/// Reads the page a request asks for.
pub fn page(page_size: i32, page_token: &str, query: &str) -> Result<Page, Status> {
    let size = match page_size {
        0 => DEFAULT_PAGE_SIZE,
        n if n < 0 => {
            return Err(invalid(vec![Violation::new(
                "page_size",
                "Invalid value: must not be negative",
            )]));
        }
        n => usize::try_from(n)
            .unwrap_or(MAX_PAGE_SIZE)
            .min(MAX_PAGE_SIZE),
    };
    if page_token.is_empty() {
        return Ok(Page { size, after: None });
    }
    let bad = |why: &str| {
        invalid(vec![Violation::new(
            "page_token",
            format!("Invalid value: {why}"),
        )])
    };
    let text = unhex(page_token)
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| bad("not a page token"))?;
    let parts: Vec<&str> = text.split('\n').collect();
    let [version, q, namespace, name] = parts.as_slice() else {
        return Err(bad("not a page token"));
    };
    if *version != VERSION {
        return Err(bad("not a page token"));
    }
    if *q != query {
        return Err(bad("the token belongs to a query with other parameters"));
    }
    Ok(Page {
        size,
        after: Some((namespace.to_string(), name.to_string())),
    })
}

/// One page of `items` (sorted by their `(namespace, name)` key) and the token of the
/// next page, empty when this is the last.
pub fn paginate<T>(
    mut items: Vec<((String, String), T)>,
    page: &Page,
    query: &str,
) -> (Vec<T>, String) {
    items.sort_by(|a, b| a.0.cmp(&b.0));
    let start = match &page.after {
        Some(after) => items.partition_point(|(key, _)| key <= after),
        None => 0,
    };
    let mut rest = items.split_off(start);
    let more = rest.len() > page.size;
    rest.truncate(page.size);
    let next = match (more, rest.last()) {
        (true, Some(((namespace, name), _))) => token(query, namespace, name),
        _ => String::new(),
    };
    (rest.into_iter().map(|(_, item)| item).collect(), next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(names: &[(&str, &str)]) -> Vec<((String, String), String)> {
        names
            .iter()
            .map(|(ns, n)| ((ns.to_string(), n.to_string()), format!("{ns}/{n}")))
            .collect()
    }

    #[test]
    fn pages_cover_everything_once_in_order() {
        let all = items(&[
            ("b", "1"),
            ("a", "2"),
            ("a", "1"),
            ("c", "0"),
            ("b", "0"),
            ("a", "3"),
            ("c", "9"),
        ]);
        let query = fingerprint(&["mgmt", ""]);
        let mut seen = Vec::new();
        let mut token_text = String::new();
        let mut pages = 0;
        loop {
            let p = page(3, &token_text, &query).unwrap();
            let (items, next) = paginate(all.clone(), &p, &query);
            assert!(items.len() <= 3);
            seen.extend(items);
            pages += 1;
            if next.is_empty() {
                break;
            }
            token_text = next;
        }
        assert_eq!(pages, 3);
        assert_eq!(seen, ["a/1", "a/2", "a/3", "b/0", "b/1", "c/0", "c/9"]);
    }

    #[test]
    fn items_appearing_between_pages_shift_nothing() {
        let query = fingerprint(&["q"]);
        let first = paginate(
            items(&[("a", "1"), ("a", "2"), ("a", "3")]),
            &page(2, "", &query).unwrap(),
            &query,
        );
        assert_eq!(first.0, ["a/1", "a/2"]);
        // a/1 deleted and a/0 created before the next page is asked for.
        let second = paginate(
            items(&[("a", "0"), ("a", "2"), ("a", "3")]),
            &page(2, &first.1, &query).unwrap(),
            &query,
        );
        assert_eq!(second.0, ["a/3"]);
        assert_eq!(second.1, "");
    }

    #[test]
    fn a_full_last_page_has_no_next_token() {
        let query = fingerprint(&["q"]);
        let (got, next) = paginate(
            items(&[("a", "1"), ("a", "2")]),
            &page(2, "", &query).unwrap(),
            &query,
        );
        assert_eq!(got.len(), 2);
        assert_eq!(next, "");
    }

    #[test]
    fn bad_tokens_and_sizes_are_invalid_arguments() {
        let query = fingerprint(&["q"]);
        let other = fingerprint(&["other"]);
        let t = token(&query, "a", "b");
        assert_eq!(page(0, "", &query).unwrap().size, DEFAULT_PAGE_SIZE);
        assert_eq!(page(5000, "", &query).unwrap().size, MAX_PAGE_SIZE);
        for (size, tok, q) in [
            (-1, "", &query),
            (1, "zz", &query),
            (1, "abcd", &query),
            (1, t.as_str(), &other),
        ] {
            let status = page(size, tok, q).unwrap_err();
            assert_eq!(status.code(), tonic::Code::InvalidArgument, "{size} {tok}");
        }
        assert_eq!(
            page(1, &t, &query).unwrap().after,
            Some(("a".to_string(), "b".to_string()))
        );
        // Fingerprints separate their parts.
        assert_ne!(fingerprint(&["ab", "c"]), fingerprint(&["a", "bc"]));
    }
}
