//! Sprig's list functions and integer sequences (`until`, `untilStep`, `seq`).
//! Non-`must` variants report failures the same way, because Go turns their
//! panics into call errors too.

use std::rc::Rc;

use super::{NIL_DEREF, arg_int, deep_equal, empty, list_items, list_of, to_int64};
use crate::funcs::{Ctx, FnError, Param, Table, def};
use crate::value::{ListKind, Value};

use Param::{Any, Int};

fn pair(a: &[Value]) -> (&Value, &Value) {
    match a {
        [x, y, ..] => (x, y),
        [x] => (x, x),
        [] => (&NIL, &NIL),
    }
}

const NIL: Value = Value::Nil;

fn first_arg(a: &[Value]) -> &Value {
    a.first().unwrap_or(&NIL)
}

pub(crate) fn register(t: &mut Table) {
    for name in ["list", "tuple"] {
        def(t, name, &[], Some(Any), |_, a| Ok(list_of(a.to_vec())));
    }
    for name in ["append", "push", "mustAppend", "mustPush"] {
        def(t, name, &[Any, Any], None, |_, a| {
            let (l, v) = pair(a);
            let items = list_items(l, |k| format!("Cannot push on type {k}"))?;
            let mut out = items.as_ref().clone();
            out.push(v.clone());
            Ok(list_of(out))
        });
    }
    for name in ["prepend", "mustPrepend"] {
        def(t, name, &[Any, Any], None, |_, a| {
            let (l, v) = pair(a);
            let items = list_items(l, |k| format!("Cannot prepend on type {k}"))?;
            let mut out = vec![v.clone()];
            out.extend(items.iter().cloned());
            Ok(list_of(out))
        });
    }
    for name in ["first", "mustFirst"] {
        def(t, name, &[Any], None, |_, a| {
            let items = list_items(first_arg(a), |k| format!("Cannot find first on type {k}"))?;
            Ok(items.first().cloned().unwrap_or(Value::Nil))
        });
    }
    for name in ["last", "mustLast"] {
        def(t, name, &[Any], None, |_, a| {
            let items = list_items(first_arg(a), |k| format!("Cannot find last on type {k}"))?;
            Ok(items.last().cloned().unwrap_or(Value::Nil))
        });
    }
    for name in ["rest", "mustRest"] {
        def(t, name, &[Any], None, |_, a| {
            let items = list_items(first_arg(a), |k| format!("Cannot find rest on type {k}"))?;
            if items.is_empty() {
                return Ok(Value::nil_list(ListKind::Iface));
            }
            Ok(list_of(items.iter().skip(1).cloned().collect()))
        });
    }
    for name in ["initial", "mustInitial"] {
        def(t, name, &[Any], None, |_, a| {
            let items = list_items(first_arg(a), |k| format!("Cannot find initial on type {k}"))?;
            if items.is_empty() {
                return Ok(Value::nil_list(ListKind::Iface));
            }
            let n = items.len() - 1;
            Ok(list_of(items.iter().take(n).cloned().collect()))
        });
    }
    for name in ["reverse", "mustReverse"] {
        def(t, name, &[Any], None, |_, a| {
            let items = list_items(first_arg(a), |k| format!("Cannot find reverse on type {k}"))?;
            Ok(list_of(items.iter().rev().cloned().collect()))
        });
    }
    for name in ["compact", "mustCompact"] {
        def(t, name, &[Any], None, |_, a| {
            let items = list_items(first_arg(a), |k| format!("Cannot compact on type {k}"))?;
            Ok(list_of(
                items.iter().filter(|v| !empty(v)).cloned().collect(),
            ))
        });
    }
    for name in ["uniq", "mustUniq"] {
        def(t, name, &[Any], None, |_, a| {
            let items = list_items(first_arg(a), |k| format!("Cannot find uniq on type {k}"))?;
            let mut out: Vec<Value> = Vec::new();
            for v in items.iter() {
                if !out.iter().any(|o| deep_equal(v, o)) {
                    out.push(v.clone());
                }
            }
            Ok(list_of(out))
        });
    }
    for name in ["without", "mustWithout"] {
        def(t, name, &[Any], Some(Any), |_, a| {
            let items = list_items(first_arg(a), |k| format!("Cannot find without on type {k}"))?;
            let omit = a.get(1..).unwrap_or(&[]);
            Ok(list_of(
                items
                    .iter()
                    .filter(|v| !omit.iter().any(|o| deep_equal(v, o)))
                    .cloned()
                    .collect(),
            ))
        });
    }
    for name in ["has", "mustHas"] {
        def(t, name, &[Any, Any], None, |_, a| {
            let (needle, hay) = pair(a);
            if hay.is_nil() {
                return Ok(Value::Bool(false));
            }
            let items = list_items(hay, |k| format!("Cannot find has on type {k}"))?;
            Ok(Value::Bool(items.iter().any(|v| deep_equal(needle, v))))
        });
    }
    for name in ["slice", "mustSlice"] {
        def(t, name, &[Any], Some(Any), |_, a| {
            let l = first_arg(a);
            let (items, kind) = match l {
                Value::List(items, kind) => (items.clone(), *kind),
                Value::Nil | Value::Invalid => return Err(NIL_DEREF.into()),
                other => {
                    return Err(FnError::Go(format!(
                        "list should be type of slice or array but {}",
                        other.kind_name()
                    )));
                }
            };
            if items.is_empty() {
                return Ok(Value::Nil);
            }
            let start = a.get(1).map_or(0, to_int64);
            let end = a.get(2).map_or(items.len() as i64, to_int64);
            if start < 0 || end < start || end > items.len() as i64 {
                return Err("reflect.Value.Slice: slice index out of bounds".into());
            }
            Ok(Value::List(
                Rc::new(items[start as usize..end as usize].to_vec()),
                kind,
            ))
        });
    }
    def(t, "concat", &[], Some(Any), |_, a| {
        let mut out = Vec::new();
        for l in a {
            match l {
                Value::List(items, _) => out.extend(items.iter().cloned()),
                Value::Nil | Value::Invalid => return Err(NIL_DEREF.into()),
                other => {
                    return Err(FnError::Go(format!(
                        "Cannot concat type {} as list",
                        other.kind_name()
                    )));
                }
            }
        }
        // Sprig appends to a nil slice: nothing appended leaves it nil.
        if out.is_empty() {
            return Ok(Value::nil_list(ListKind::Iface));
        }
        Ok(list_of(out))
    });
    for name in ["chunk", "mustChunk"] {
        def(t, name, &[Int, Any], None, |c, a| {
            let size = arg_int(a, 0);
            let items = list_items(a.get(1).unwrap_or(&NIL), |k| {
                format!("Cannot chunk type {k}")
            })?;
            if size <= 0 {
                return Err("runtime error: makeslice: len out of range".into());
            }
            let chunks: Vec<Value> = items
                .chunks(size as usize)
                .map(|ch| list_of(ch.to_vec()))
                .collect();
            c.check_size(chunks.len() as u128)?;
            Ok(Value::List(Rc::new(chunks), ListKind::Lists))
        });
    }
    def(t, "until", &[Int], None, |c, a| {
        let n = arg_int(a, 0);
        let step = if n < 0 { -1 } else { 1 };
        until_step(c, 0, n, step).map(int_list)
    });
    def(t, "untilStep", &[Int, Int, Int], None, |c, a| {
        until_step(c, arg_int(a, 0), arg_int(a, 1), arg_int(a, 2)).map(int_list)
    });
    def(t, "seq", &[], Some(Int), |c, a| {
        let p: Vec<i64> = (0..a.len()).map(|i| arg_int(a, i)).collect();
        let v = match p.as_slice() {
            [end] => {
                let inc = if *end < 1 { -1 } else { 1 };
                until_step(c, 1, end.saturating_add(inc), inc)?
            }
            [start, end] => {
                let step = if end < start { -1 } else { 1 };
                until_step(c, *start, end.saturating_add(step), step)?
            }
            [start, step, end] => {
                let mut inc = 1;
                if end < start {
                    inc = -1;
                    if *step > 0 {
                        return Ok(Value::str(""));
                    }
                }
                until_step(c, *start, end.saturating_add(inc), *step)?
            }
            _ => Vec::new(),
        };
        let parts: Vec<String> = v.iter().map(i64::to_string).collect();
        let out = parts.join(" ");
        c.check_size(out.len() as u128)?;
        Ok(Value::str(out))
    });
}

fn int_list(v: Vec<i64>) -> Value {
    Value::List(
        Rc::new(v.into_iter().map(Value::Int).collect()),
        ListKind::Int,
    )
}

/// Sprig's `untilStep`, refusing sequences longer than the evaluation bounds allow.
fn until_step(c: &Ctx, start: i64, stop: i64, step: i64) -> Result<Vec<i64>, FnError> {
    let count: u128 = if stop < start {
        if step >= 0 {
            return Ok(Vec::new());
        }
        ((start as i128 - stop as i128 - (step as i128) - 1) / -(step as i128)) as u128
    } else {
        if step <= 0 {
            return Ok(Vec::new());
        }
        ((stop as i128 - start as i128 + step as i128 - 1) / step as i128) as u128
    };
    c.check_size(count)?;
    let mut v = Vec::with_capacity(count as usize);
    let mut i = start as i128;
    for _ in 0..count {
        v.push(i as i64);
        i += step as i128;
    }
    Ok(v)
}
