//! Go `text/template` with Sprig's hermetic function set, evaluated the way Cluster
//! API evaluates patch and name templates.
//!
//! Parse once with [`Template::parse`], then [`Template::execute`] many times. Output
//! and error texts match Go's byte for byte (checked against a corpus of answers from
//! Go itself, see `tests/corpus/`). Data is JSON, typed as Go's `encoding/json` types
//! it (every number is a `float64`). Every evaluation is bounded by [`Limits`].

use std::sync::Arc;

use serde_json::Value;

pub use data::Data;

mod ast;
mod builtins;
mod data;
mod exec;
mod fields;
mod fmt;
mod funcs;
mod lex;
mod literal;
mod parse;
mod plain;
mod semver;
mod sprig;
mod value;

/// What a missing map key evaluates to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissingKey {
    /// Go's default: `<no value>` when printed, false in conditions.
    #[default]
    Zero,
    /// `missingkey=error`: evaluation fails with `map has no entry for key "k"`.
    Error,
}

/// Which functions a template may call besides Go's builtins.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Functions {
    /// Go's builtin functions only.
    #[default]
    Builtins,
    /// Go's builtins plus `sprig.HermeticTxtFuncMap()`.
    HermeticSprig,
}

/// Bounds on one evaluation, so a hostile template cannot hang or bloat a render.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest output, in bytes.
    pub max_output_bytes: usize,
    /// Most evaluation steps (actions, pipeline commands, range iterations).
    pub max_steps: u64,
    /// Deepest nesting of template calls.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_output_bytes: 1 << 20,
            max_steps: 1_000_000,
            max_depth: 100,
        }
    }
}

/// How a template is parsed and evaluated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Missing-key behaviour.
    pub missing_key: MissingKey,
    /// The function set.
    pub functions: Functions,
    /// Evaluation bounds.
    pub limits: Limits,
}

impl Options {
    /// What Cluster API uses for `enabledIf` and `valueFrom.template`.
    pub fn patch() -> Self {
        Options {
            missing_key: MissingKey::Zero,
            functions: Functions::HermeticSprig,
            limits: Limits::default(),
        }
    }

    /// What Cluster API uses for name templates.
    pub fn name_generator() -> Self {
        Options {
            missing_key: MissingKey::Error,
            functions: Functions::Builtins,
            limits: Limits::default(),
        }
    }
}

/// The stage an error comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text is not a valid template.
    Parse,
    /// Evaluation failed.
    Execute,
    /// Evaluation went over a [`Limits`] bound.
    Limit,
}

/// A template error; its text is what Go prints (`template: tpl:1: unclosed action`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// The stage.
    pub kind: ErrorKind,
    /// Go's error text.
    pub message: String,
}

/// A parsed template: parse once, execute many times.
#[derive(Clone, Debug)]
pub struct Template {
    name: Arc<str>,
    text: Arc<str>,
    trees: Arc<parse::TreeSet>,
    options: Options,
    /// Whether the text may call a function that changes a map in place (`set`,
    /// `unset`, the `merge` family). Such a template gets its own copy of the data.
    mutates_data: bool,
    /// The top-level fields of the data the template can read, when it reads the data
    /// only through them ([`fields`]): the data it runs over holds just those.
    root_fields: Option<Arc<fields::Fields>>,
    /// The template's pieces when it is only text and field chains ([`plain`]).
    plain: Option<Arc<[plain::Piece]>>,
}

impl Template {
    /// Parses `text` as the template `name`.
    pub fn parse(name: &str, text: &str, options: &Options) -> Result<Template, Error> {
        let functions = options.functions;
        let resolve = move |f: &str| funcs::lookup(f, functions);
        let trees =
            parse::parse(name, text, &resolve, options.limits.max_depth).map_err(|e| Error {
                kind: if e.limit {
                    ErrorKind::Limit
                } else {
                    ErrorKind::Parse
                },
                message: e.message,
            })?;
        // A conservative test on the words of the text: a false positive (the word in
        // plain text) only costs a conversion.
        const MUTATORS: &[&str] = &[
            "set",
            "unset",
            "merge",
            "mergeOverwrite",
            "mustMerge",
            "mustMergeOverwrite",
        ];
        let mutates_data = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| MUTATORS.contains(&word));
        let root_fields = fields::root_fields(&trees).map(Arc::new);
        let plain = plain::pieces(&trees, options.limits.max_steps).map(Arc::from);
        Ok(Template {
            name: name.into(),
            text: text.into(),
            trees: Arc::new(trees),
            options: options.clone(),
            mutates_data,
            root_fields,
            plain,
        })
    }

    /// The template's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Evaluates the template with `data` (JSON numbers are Go float64s).
    pub fn execute(&self, data: &Value) -> Result<String, Error> {
        if let Some(out) = self.run_plain(|path| plain::at(data, path)) {
            return Ok(out);
        }
        self.run(value::Value::from_json(data))
    }

    /// The output of a plain template whose chains all end at strings ([`plain`]), with
    /// `at` giving the data at a chain.
    fn run_plain<'d>(&self, at: impl Fn(&[String]) -> Option<&'d Value>) -> Option<String> {
        plain::run(
            self.plain.as_deref()?,
            at,
            self.options.limits.max_output_bytes,
        )
    }

    /// Evaluates the template with data converted beforehand. Each execution sees the
    /// data as it was converted: a template that changes maps works on its own copy.
    pub fn execute_data(&self, data: &Data<'_>) -> Result<String, Error> {
        if let Some(out) = self.run_plain(|path| data.at(path)) {
            return Ok(out);
        }
        if self.mutates_data {
            return self.run(value::Value::from_json(data.json()));
        }
        // Data converted whole already costs less than picking fields out of it.
        if let Some(converted) = data.converted_already() {
            return self.run(converted.clone());
        }
        let only = self
            .root_fields
            .as_deref()
            .and_then(|fields| data.only(fields));
        match only {
            Some(only) => self.run(only),
            None => self.run(data.converted().clone()),
        }
    }

    fn run(&self, data: value::Value) -> Result<String, Error> {
        exec::Exec::new(&self.trees, &self.text, &self.name, &self.options).run(&self.name, data)
    }

    /// Every function name templates parsed with `functions` may call.
    pub fn function_names(functions: Functions) -> Vec<&'static str> {
        funcs::names(functions)
    }
}
