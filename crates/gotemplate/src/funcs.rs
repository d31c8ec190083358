//! The function table: Go builtins and Sprig's hermetic set, each with its Go
//! signature so that argument checks and their error texts match Go
//! (`wrong number of args for X: want 2 got 1`, `expected integer; found "a"`).

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::value::{ListKind, MapKind, Value};
use crate::{Functions, Limits};

/// The Go type of a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Param {
    /// `interface{}`
    Any,
    /// `reflect.Value`: the raw value, missing values included (builtins).
    Reflect,
    Str,
    Int,
    Float64,
    Bool,
    /// `map[string]interface {}`
    MapIface,
    /// `[]interface {}`
    ListIface,
    /// `*semver.Version`
    Version,
    /// `uint32`
    Uint32,
    /// `sprig.certificate`: a struct no template value can be.
    Cert,
    /// `time.Time`
    Time,
}

impl Param {
    pub(crate) fn go_type(self) -> &'static str {
        match self {
            Param::Any => "interface {}",
            Param::Reflect => "reflect.Value",
            Param::Str => "string",
            Param::Int => "int",
            Param::Float64 => "float64",
            Param::Bool => "bool",
            Param::MapIface => "map[string]interface {}",
            Param::ListIface => "[]interface {}",
            Param::Version => "*semver.Version",
            Param::Uint32 => "uint32",
            Param::Cert => "sprig.certificate",
            Param::Time => "time.Time",
        }
    }

    /// Whether `v`'s Go type is this one, i.e. `v.type_name() == self.go_type()`. It is
    /// asked for every argument of every call, so it matches variants, not names.
    pub(crate) fn is_type_of(self, v: &Value) -> bool {
        matches!(
            (self, v),
            (Param::Str, Value::Str(_))
                | (Param::Int, Value::Int(_))
                | (Param::Float64, Value::Float64(_))
                | (Param::Bool, Value::Bool(_))
                | (Param::MapIface, Value::Map(_, MapKind::Iface))
                | (Param::ListIface, Value::List(_, ListKind::Iface))
                | (Param::Version, Value::Version(_))
        )
    }

    /// Whether Go's `nil` converts to this type.
    pub(crate) fn can_be_nil(self) -> bool {
        matches!(
            self,
            Param::Any | Param::Reflect | Param::MapIface | Param::ListIface | Param::Version
        )
    }
}

/// Why a function failed.
#[derive(Debug)]
pub(crate) enum FnError {
    /// A Go error (or recovered panic) text.
    Go(String),
    /// An evaluation bound was hit.
    Limit(String),
}

impl From<String> for FnError {
    fn from(s: String) -> Self {
        FnError::Go(s)
    }
}

impl From<&str> for FnError {
    fn from(s: &str) -> Self {
        FnError::Go(s.to_string())
    }
}

pub(crate) type FnResult = Result<Value, FnError>;

/// What a function may consult while it runs.
pub(crate) struct Ctx {
    pub limits: Limits,
}

impl Ctx {
    /// Whether a result of `n` bytes or elements is within the bounds.
    pub(crate) fn fits(&self, n: u128) -> bool {
        n <= (self.limits.max_output_bytes as u128).max(self.limits.max_steps as u128)
    }

    /// Fails when a result of `n` bytes or elements would go over the bounds.
    pub(crate) fn check_size(&self, n: u128) -> Result<(), FnError> {
        if !self.fits(n) {
            return Err(FnError::Limit(format!(
                "result of {n} bytes or elements exceeds the evaluation limit"
            )));
        }
        Ok(())
    }
}

pub(crate) type Native = fn(&mut Ctx, &[Value]) -> FnResult;

/// A callable with its Go signature.
pub(crate) struct FuncDef {
    pub params: &'static [Param],
    pub variadic: Option<Param>,
    pub call: Native,
}

pub(crate) type Table = HashMap<&'static str, FuncDef>;

pub(crate) fn def(
    t: &mut Table,
    name: &'static str,
    params: &'static [Param],
    variadic: Option<Param>,
    call: Native,
) {
    t.insert(
        name,
        FuncDef {
            params,
            variadic,
            call,
        },
    );
}

static BUILTINS: LazyLock<Table> = LazyLock::new(|| {
    let mut t = Table::new();
    crate::builtins::register(&mut t);
    t
});

static SPRIG: LazyLock<Table> = LazyLock::new(|| {
    let mut t = Table::new();
    crate::sprig::register(&mut t);
    t
});

/// The builtins the evaluator handles itself rather than by calling them: `and` and
/// `or` evaluate their arguments lazily, `call` has no function values to call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Special {
    None,
    And,
    Or,
    Call,
}

/// A function name resolved when the template is parsed, so evaluation does not look
/// names up (the set is fixed by the template's options).
#[derive(Clone, Copy)]
pub(crate) struct Func {
    pub def: &'static FuncDef,
    pub special: Special,
}

impl std::fmt::Debug for Func {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Func")
            .field("params", &self.def.params)
            .field("variadic", &self.def.variadic)
            .field("special", &self.special)
            .finish()
    }
}

/// Finds a function; Sprig's names shadow builtins (its `slice`), as Go's
/// template function map does.
pub(crate) fn lookup(name: &str, functions: Functions) -> Option<Func> {
    if functions == Functions::HermeticSprig
        && let Some(def) = SPRIG.get(name)
    {
        return Some(Func {
            def,
            special: Special::None,
        });
    }
    let def = BUILTINS.get(name)?;
    let special = match name {
        "and" => Special::And,
        "or" => Special::Or,
        "call" => Special::Call,
        _ => Special::None,
    };
    Some(Func { def, special })
}

/// Every function name of a set (for tests and docs).
pub(crate) fn names(functions: Functions) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = BUILTINS.keys().copied().collect();
    if functions == Functions::HermeticSprig {
        v.extend(SPRIG.keys().copied());
    }
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_checks_agree_with_go_type_names() {
        use crate::value::ListKind::{Int as LInt, Lists, Str as LStr};
        let values = [
            Value::Invalid,
            Value::Nil,
            Value::Bool(true),
            Value::Int(1),
            Value::Int64(1),
            Value::Uint8(1),
            Value::Uint64(1),
            Value::Float64(1.0),
            Value::Complex(1.0, 0.0),
            Value::str("s"),
            Value::list(Vec::new()),
            Value::nil_list(LStr),
            Value::nil_list(LInt),
            Value::nil_list(Lists),
            Value::map(Default::default()),
            Value::Map(Default::default(), MapKind::Str),
            Value::Version(std::rc::Rc::new(crate::semver::Version {
                major: 1,
                minor: 2,
                patch: 3,
                pre: String::new(),
                metadata: String::new(),
                original: "1.2.3".into(),
            })),
        ];
        let params = [
            Param::Any,
            Param::Reflect,
            Param::Str,
            Param::Int,
            Param::Float64,
            Param::Bool,
            Param::MapIface,
            Param::ListIface,
            Param::Version,
            Param::Uint32,
            Param::Cert,
            Param::Time,
        ];
        for p in params {
            for v in &values {
                assert_eq!(
                    p.is_type_of(v),
                    v.type_name() == p.go_type(),
                    "{p:?} {}",
                    v.type_name()
                );
            }
        }
    }
}
