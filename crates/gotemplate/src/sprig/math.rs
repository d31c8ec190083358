//! Sprig's arithmetic: integer functions over `cast.ToInt64` (results are Go
//! `int64`), float functions, and the `*f` family, which Sprig computes in
//! decimal (shopspring/decimal) so that `addf 1.1 2.2` is `3.3`.

use topograph_gocompat::strconv;

use super::{arg_int, arg_str, to_float64, to_int64};
use crate::funcs::{FnError, FnResult, Param, Table, def};
use crate::value::Value;

use Param::{Any, Float64, Int, Str};

const DIV_ZERO: &str = "runtime error: integer divide by zero";

fn i2(a: &[Value]) -> (i64, i64) {
    (a.first().map_or(0, to_int64), a.get(1).map_or(0, to_int64))
}

pub(crate) fn register(t: &mut Table) {
    def(t, "add1", &[Any], None, |_, a| {
        Ok(Value::Int64(a.first().map_or(0, to_int64).wrapping_add(1)))
    });
    def(t, "add", &[], Some(Any), |_, a| {
        Ok(Value::Int64(
            a.iter().map(to_int64).fold(0i64, i64::wrapping_add),
        ))
    });
    def(t, "sub", &[Any, Any], None, |_, a| {
        let (x, y) = i2(a);
        Ok(Value::Int64(x.wrapping_sub(y)))
    });
    def(t, "div", &[Any, Any], None, |_, a| {
        let (x, y) = i2(a);
        if y == 0 {
            return Err(DIV_ZERO.into());
        }
        Ok(Value::Int64(x.wrapping_div(y)))
    });
    def(t, "mod", &[Any, Any], None, |_, a| {
        let (x, y) = i2(a);
        if y == 0 {
            return Err(DIV_ZERO.into());
        }
        Ok(Value::Int64(x.wrapping_rem(y)))
    });
    def(t, "mul", &[Any], Some(Any), |_, a| {
        Ok(Value::Int64(
            a.iter().map(to_int64).fold(1i64, i64::wrapping_mul),
        ))
    });
    for name in ["max", "biggest"] {
        def(t, name, &[Any], Some(Any), |_, a| {
            Ok(Value::Int64(a.iter().map(to_int64).max().unwrap_or(0)))
        });
    }
    def(t, "min", &[Any], Some(Any), |_, a| {
        Ok(Value::Int64(a.iter().map(to_int64).min().unwrap_or(0)))
    });
    def(t, "maxf", &[Any], Some(Any), |_, a| {
        let mut it = a.iter().map(to_float64);
        let first = it.next().unwrap_or(0.0);
        Ok(Value::Float64(it.fold(first, go_max)))
    });
    def(t, "minf", &[Any], Some(Any), |_, a| {
        let mut it = a.iter().map(to_float64);
        let first = it.next().unwrap_or(0.0);
        Ok(Value::Float64(it.fold(first, go_min)))
    });
    def(t, "floor", &[Any], None, |_, a| {
        Ok(Value::Float64(a.first().map_or(0.0, to_float64).floor()))
    });
    def(t, "ceil", &[Any], None, |_, a| {
        Ok(Value::Float64(a.first().map_or(0.0, to_float64).ceil()))
    });
    def(t, "round", &[Any, Int], Some(Float64), |_, a| {
        let round_on = match a.get(2) {
            Some(Value::Float64(f)) => *f,
            _ => 0.5,
        };
        let val = a.first().map_or(0.0, to_float64);
        let pow = 10f64.powf(arg_int(a, 1) as f64);
        let digit = pow * val;
        let frac = digit - digit.trunc();
        let r = if frac >= round_on {
            digit.ceil()
        } else {
            digit.floor()
        };
        Ok(Value::Float64(r / pow))
    });
    def(t, "randInt", &[Int, Int], None, |_, a| {
        let (lo, hi) = (arg_int(a, 0), arg_int(a, 1));
        if hi <= lo {
            return Err("invalid argument to Intn".into());
        }
        let span = (hi as i128 - lo as i128) as u64;
        Ok(Value::Int(
            (lo as i128 + (random_u64() % span) as i128) as i64,
        ))
    });
    def(t, "atoi", &[Str], None, |_, a| {
        // Sprig drops `strconv.Atoi`'s error and keeps 0.
        Ok(Value::Int(strconv::atoi(arg_str(a, 0)).unwrap_or(0)))
    });
    def(t, "int64", &[Any], None, |_, a| {
        Ok(Value::Int64(a.first().map_or(0, to_int64)))
    });
    def(t, "int", &[Any], None, |_, a| {
        Ok(Value::Int(a.first().map_or(0, to_int64)))
    });
    def(t, "float64", &[Any], None, |_, a| {
        Ok(Value::Float64(a.first().map_or(0.0, to_float64)))
    });
    def(t, "toDecimal", &[Any], None, |_, a| {
        let s = crate::fmt::sprint(&a[..a.len().min(1)]);
        Ok(Value::Int64(parse_octal(&s).unwrap_or(0)))
    });
    def(t, "add1f", &[Any], None, |_, a| {
        decimal_op(a.first(), &[Value::Int(1)], Op::Add)
    });
    def(t, "addf", &[], Some(Any), |_, a| {
        decimal_op(Some(&Value::Float64(0.0)), a, Op::Add)
    });
    def(t, "subf", &[Any], Some(Any), |_, a| {
        decimal_op(a.first(), a.get(1..).unwrap_or(&[]), Op::Sub)
    });
    def(t, "mulf", &[Any], Some(Any), |_, a| {
        decimal_op(a.first(), a.get(1..).unwrap_or(&[]), Op::Mul)
    });
    def(t, "divf", &[Any], Some(Any), |_, a| {
        decimal_op(a.first(), a.get(1..).unwrap_or(&[]), Op::Div)
    });
}

fn go_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    a.max(b)
}

fn go_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    a.min(b)
}

fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u8(0);
    h.finish()
}

/// `strconv.ParseInt(s, 8, 64)`.
fn parse_octal(s: &str) -> Option<i64> {
    let (neg, b) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if b.is_empty() || !b.bytes().all(|c| (b'0'..=b'7').contains(&c)) {
        return None;
    }
    let v = i128::from_str_radix(b, 8).ok()?;
    let v = if neg { -v } else { v };
    i64::try_from(v).ok()
}

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// An exact decimal `mant × 10^exp`.
#[derive(Clone, Copy)]
struct Dec {
    mant: i128,
    exp: i32,
}

impl Dec {
    /// `decimal.NewFromFloat`: the shortest decimal that reads back as `f`.
    fn from_f64(f: f64) -> Option<Dec> {
        if !f.is_finite() {
            return None;
        }
        let s = format!("{:e}", f);
        let (m, e) = s.split_once('e')?;
        let e: i32 = e.parse().ok()?;
        let neg = m.starts_with('-');
        let m = m.trim_start_matches('-');
        let (int, frac) = m.split_once('.').unwrap_or((m, ""));
        let digits = format!("{int}{frac}");
        let mut mant: i128 = digits.parse().ok()?;
        if neg {
            mant = -mant;
        }
        Some(Dec {
            mant,
            exp: e - frac.len() as i32,
        })
    }

    fn align(a: Dec, b: Dec) -> Option<(i128, i128, i32)> {
        let exp = a.exp.min(b.exp);
        let sa = 10i128.checked_pow((a.exp - exp) as u32)?;
        let sb = 10i128.checked_pow((b.exp - exp) as u32)?;
        Some((a.mant.checked_mul(sa)?, b.mant.checked_mul(sb)?, exp))
    }

    fn to_f64(self) -> f64 {
        format!("{}e{}", self.mant, self.exp).parse().unwrap_or(0.0)
    }

    fn apply(self, op: Op, b: Dec) -> Result<Option<Dec>, FnError> {
        Ok(match op {
            Op::Add => Dec::align(self, b).and_then(|(x, y, e)| {
                Some(Dec {
                    mant: x.checked_add(y)?,
                    exp: e,
                })
            }),
            Op::Sub => Dec::align(self, b).and_then(|(x, y, e)| {
                Some(Dec {
                    mant: x.checked_sub(y)?,
                    exp: e,
                })
            }),
            Op::Mul => self.mant.checked_mul(b.mant).map(|m| Dec {
                mant: m,
                exp: self.exp + b.exp,
            }),
            Op::Div => {
                if b.mant == 0 {
                    return Err("decimal division by 0".into());
                }
                // Quotient rounded half away from zero to 16 decimal places.
                let shift = 16 + self.exp - b.exp;
                let (num, den) = if shift >= 0 {
                    (
                        10i128
                            .checked_pow(shift as u32)
                            .and_then(|p| self.mant.checked_mul(p)),
                        Some(b.mant),
                    )
                } else {
                    (
                        Some(self.mant),
                        10i128
                            .checked_pow((-shift) as u32)
                            .and_then(|p| b.mant.checked_mul(p)),
                    )
                };
                match (num, den) {
                    (Some(n), Some(d)) => {
                        let q = n / d;
                        let r = n % d;
                        let q = if 2 * r.abs() >= d.abs() {
                            if (n < 0) != (d < 0) { q - 1 } else { q + 1 }
                        } else {
                            q
                        };
                        Some(Dec { mant: q, exp: -16 })
                    }
                    _ => None,
                }
            }
        })
    }
}

fn decimal_op(first: Option<&Value>, rest: &[Value], op: Op) -> FnResult {
    let a = first.map_or(0.0, to_float64);
    let mut acc = Dec::from_f64(a);
    let mut float = a;
    for x in rest {
        let b = to_float64(x);
        float = match op {
            Op::Add => float + b,
            Op::Sub => float - b,
            Op::Mul => float * b,
            Op::Div => {
                if b == 0.0 {
                    return Err("decimal division by 0".into());
                }
                float / b
            }
        };
        acc = match (acc, Dec::from_f64(b)) {
            (Some(d), Some(e)) => d.apply(op, e)?,
            _ => None,
        };
    }
    Ok(Value::Float64(match acc {
        Some(d) => d.to_f64(),
        None => float,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_arithmetic() {
        let r = decimal_op(Some(&Value::Float64(1.1)), &[Value::Float64(2.2)], Op::Add);
        assert!(matches!(r, Ok(Value::Float64(f)) if f == 3.3));
        let r = decimal_op(Some(&Value::Float64(10.0)), &[Value::Float64(3.0)], Op::Div);
        assert!(matches!(r, Ok(Value::Float64(f)) if f == 3.3333333333333335));
        assert_eq!(parse_octal("777"), Some(511));
    }
}
