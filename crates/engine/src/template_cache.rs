//! Parsed Go templates, kept per thread: a class's templates (patch values, `enabledIf`,
//! naming) are the same texts render after render, and parsing costs more than
//! evaluating. A small most-recently-used list is enough; parsing is deterministic, so
//! a cached template and a fresh one behave the same.

use std::cell::RefCell;

use topograph_gotemplate::{Error, Options, Template};

/// How many templates a thread keeps.
const CAPACITY: usize = 256;

thread_local! {
    static PARSED: RefCell<Vec<(String, String, Options, Template)>> =
        const { RefCell::new(Vec::new()) };
}

/// `text` parsed as the template `name` with `options`, from the cache when possible.
pub fn parse(name: &str, text: &str, options: &Options) -> Result<Template, Error> {
    let cached = PARSED.with(|cache| {
        let mut cache = cache.borrow_mut();
        let position = cache
            .iter()
            .position(|(n, t, o, _)| n == name && t == text && o == options)?;
        let entry = cache.remove(position);
        let template = entry.3.clone();
        cache.push(entry);
        Some(template)
    });
    if let Some(template) = cached {
        return Ok(template);
    }
    let template = Template::parse(name, text, options)?;
    PARSED.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= CAPACITY {
            cache.remove(0);
        }
        cache.push((
            name.to_string(),
            text.to_string(),
            options.clone(),
            template.clone(),
        ));
    });
    Ok(template)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cached_and_fresh_templates_agree() {
        let options = Options::patch();
        for _ in 0..2 {
            let t = parse("tpl", "{{ .a | upper }}", &options).map_err(|e| e.to_string());
            assert_eq!(
                t.and_then(|t| t.execute(&json!({"a": "x"})).map_err(|e| e.to_string())),
                Ok("X".to_string())
            );
        }
        // Same text, other name or options: a different template.
        let named = parse("other", "{{ .a", &options).map_err(|e| e.message);
        assert_eq!(
            named.err().as_deref(),
            Some("template: other:1: unclosed action")
        );
        let strict = parse("tpl", "{{ .b }}", &Options::name_generator())
            .and_then(|t| t.execute(&json!({})))
            .map_err(|e| e.kind);
        assert_eq!(strict, Err(topograph_gotemplate::ErrorKind::Execute));
    }
}
