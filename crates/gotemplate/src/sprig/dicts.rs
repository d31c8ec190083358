//! Sprig's dictionary functions. Go maps are references, so `set`, `unset`,
//! `merge` and `mergeOverwrite` change their first argument in place (mergo's
//! rules for which entries win), and `dict` builds a fresh one.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::{arg_str, empty, list_of, strval};
use crate::funcs::{FnError, FnResult, Param, Table, def};
use crate::value::{MapKind, MapRef, Value};

use Param::{Any, MapIface, Str};

fn map_arg(a: &[Value], i: usize) -> Result<MapRef, FnError> {
    match a.get(i) {
        Some(Value::Map(m, _)) => Ok(m.clone()),
        _ => Err("assignment to entry in nil map".into()),
    }
}

fn busy() -> FnError {
    FnError::Go("concurrent map access".into())
}

pub(crate) fn register(t: &mut Table) {
    def(t, "dict", &[], Some(Any), |_, a| {
        let mut m = BTreeMap::new();
        for pair in a.chunks(2) {
            let key = strval(&pair[0]);
            m.insert(key, pair.get(1).cloned().unwrap_or_else(|| Value::str("")));
        }
        Ok(Value::map(m))
    });
    def(t, "get", &[MapIface, Str], None, |_, a| {
        let m = map_arg(a, 0)?;
        Ok(Value::map_get(&m, arg_str(a, 1)).unwrap_or_else(|| Value::str("")))
    });
    def(t, "set", &[MapIface, Str, Any], None, |_, a| {
        let m = map_arg(a, 0)?;
        let v = a.get(2).cloned().unwrap_or(Value::Nil);
        m.try_borrow_mut()
            .map_err(|_| busy())?
            .insert(arg_str(a, 1).to_string(), v);
        Ok(Value::Map(m, MapKind::Iface))
    });
    def(t, "unset", &[MapIface, Str], None, |_, a| {
        let m = map_arg(a, 0)?;
        m.try_borrow_mut()
            .map_err(|_| busy())?
            .remove(arg_str(a, 1));
        Ok(Value::Map(m, MapKind::Iface))
    });
    def(t, "hasKey", &[MapIface, Str], None, |_, a| {
        let m = map_arg(a, 0)?;
        Ok(Value::Bool(Value::map_get(&m, arg_str(a, 1)).is_some()))
    });
    def(t, "pluck", &[Str], Some(MapIface), |_, a| {
        let key = arg_str(a, 0);
        let out = a
            .iter()
            .skip(1)
            .filter_map(|d| match d {
                Value::Map(m, _) => Value::map_get(m, key),
                _ => None,
            })
            .collect();
        Ok(list_of(out))
    });
    def(t, "keys", &[], Some(MapIface), |_, a| {
        let mut out = Vec::new();
        for d in a {
            if let Value::Map(m, _) = d {
                out.extend(Value::entries(m).into_iter().map(|(k, _)| k));
            }
        }
        Ok(Value::str_list(out))
    });
    def(t, "values", &[MapIface], None, |_, a| {
        let m = map_arg(a, 0)?;
        Ok(list_of(
            Value::entries(&m).into_iter().map(|(_, v)| v).collect(),
        ))
    });
    def(t, "pick", &[MapIface], Some(Str), |_, a| {
        let m = map_arg(a, 0)?;
        let mut out = BTreeMap::new();
        for k in a.iter().skip(1).filter_map(Value::as_str) {
            if let Some(v) = Value::map_get(&m, k) {
                out.insert(k.to_string(), v);
            }
        }
        Ok(Value::map(out))
    });
    def(t, "omit", &[MapIface], Some(Str), |_, a| {
        let m = map_arg(a, 0)?;
        let drop: Vec<&str> = a.iter().skip(1).filter_map(Value::as_str).collect();
        let out = Value::entries(&m)
            .into_iter()
            .filter(|(k, _)| !drop.contains(&k.as_str()))
            .collect();
        Ok(Value::map(out))
    });
    for (name, overwrite) in [
        ("merge", false),
        ("mustMerge", false),
        ("mergeOverwrite", true),
        ("mustMergeOverwrite", true),
    ] {
        let f: crate::funcs::Native = if overwrite {
            |_, a| merge_all(a, true)
        } else {
            |_, a| merge_all(a, false)
        };
        def(t, name, &[MapIface], Some(MapIface), f);
    }
    for name in ["deepCopy", "mustDeepCopy"] {
        def(t, name, &[Any], None, |_, a| match a.first() {
            None | Some(Value::Nil | Value::Invalid) => {
                Err("reflect: call of reflect.Value.Type on zero Value".into())
            }
            Some(v) => Ok(deep_copy(v, 0)),
        });
    }
    def(t, "dig", &[], Some(Any), |_, a| {
        if a.len() < 3 {
            return Err("dig needs at least three arguments".into());
        }
        let n = a.len();
        let mut dict = as_dict(&a[n - 1])?;
        let default = a[n - 2].clone();
        let keys = &a[..n - 2];
        for (i, k) in keys.iter().enumerate() {
            let k = match k {
                Value::Str(s) => s.clone(),
                other => {
                    return Err(FnError::Go(format!(
                        "interface conversion: interface {{}} is {}, not string",
                        iface_type(other)
                    )));
                }
            };
            let Some(step) = Value::map_get(&dict, &k) else {
                return Ok(default);
            };
            if i == keys.len() - 1 {
                return Ok(step);
            }
            dict = as_dict(&step)?;
        }
        Ok(default)
    });
}

fn iface_type(v: &Value) -> &'static str {
    match v {
        Value::Nil | Value::Invalid => "nil",
        other => other.type_name(),
    }
}

fn as_dict(v: &Value) -> Result<MapRef, FnError> {
    match v {
        Value::Map(m, MapKind::Iface) => Ok(m.clone()),
        other => Err(FnError::Go(format!(
            "interface conversion: interface {{}} is {}, not map[string]interface {{}}",
            iface_type(other)
        ))),
    }
}

fn merge_all(a: &[Value], overwrite: bool) -> FnResult {
    let dst = map_arg(a, 0)?;
    for src in a.iter().skip(1) {
        if let Value::Map(s, _) = src {
            merge_into(&dst, s, overwrite, 0)?;
        }
    }
    Ok(Value::Map(dst, MapKind::Iface))
}

/// mergo's map merge: nested maps merge recursively, and a destination entry is
/// replaced when it is missing or empty, or always when overwriting.
fn merge_into(dst: &MapRef, src: &MapRef, overwrite: bool, depth: usize) -> Result<(), FnError> {
    if depth > 100 || Rc::ptr_eq(dst, src) {
        return Ok(());
    }
    for (k, s) in Value::entries(src) {
        let d = Value::map_get(dst, &k);
        if s.is_nil() {
            if overwrite {
                dst.try_borrow_mut()
                    .map_err(|_| busy())?
                    .insert(k, Value::Nil);
            }
            continue;
        }
        if let (Value::Map(sm, _), Some(Value::Map(dm, _))) = (&s, &d) {
            merge_into(dm, sm, overwrite, depth + 1)?;
        }
        if let Some(dv) = &d
            && !empty(dv)
        {
            if matches!(s, Value::List(..)) {
                if overwrite {
                    dst.try_borrow_mut().map_err(|_| busy())?.insert(k, s);
                }
                continue;
            }
            if matches!((&s, dv), (Value::Map(..), Value::Map(..))) {
                continue;
            }
        }
        if overwrite || d.as_ref().is_none_or(empty) {
            dst.try_borrow_mut().map_err(|_| busy())?.insert(k, s);
        }
    }
    Ok(())
}

fn deep_copy(v: &Value, depth: usize) -> Value {
    if depth > 1000 {
        return Value::Nil;
    }
    match v {
        Value::List(items, k) => Value::List(
            Rc::new(items.iter().map(|x| deep_copy(x, depth + 1)).collect()),
            *k,
        ),
        Value::Map(m, k) => Value::Map(
            Rc::new(RefCell::new(
                Value::entries(m)
                    .into_iter()
                    .map(|(key, x)| (key, deep_copy(&x, depth + 1)))
                    .collect(),
            )),
            *k,
        ),
        Value::Version(ver) => Value::Version(Rc::new(ver.as_ref().clone())),
        other => other.clone(),
    }
}
