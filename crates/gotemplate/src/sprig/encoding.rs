//! Sprig's encodings and digests: base64 and base32 (Go's standard alphabets and
//! error texts), SHA-1/256/512 hex digests and Adler-32.

use sha2::Digest;

use super::arg_str;
use crate::funcs::{Param, Table, def};
use crate::value::Value;

use Param::Str;

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

pub(crate) fn register(t: &mut Table) {
    def(t, "b64enc", &[Str], None, |c, a| {
        let s = arg_str(a, 0);
        c.check_size(s.len() as u128 * 4 / 3 + 4)?;
        Ok(Value::str(b64_encode(s.as_bytes())))
    });
    def(t, "b64dec", &[Str], None, |_, a| {
        Ok(Value::str(match b64_decode(arg_str(a, 0)) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => e,
        }))
    });
    def(t, "b32enc", &[Str], None, |c, a| {
        let s = arg_str(a, 0);
        c.check_size(s.len() as u128 * 8 / 5 + 8)?;
        Ok(Value::str(b32_encode(s.as_bytes())))
    });
    def(t, "b32dec", &[Str], None, |_, a| {
        Ok(Value::str(match b32_decode(arg_str(a, 0)) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => e,
        }))
    });
    def(t, "sha1sum", &[Str], None, |_, a| {
        Ok(Value::str(hex(&sha1(arg_str(a, 0).as_bytes()))))
    });
    def(t, "sha256sum", &[Str], None, |_, a| {
        Ok(Value::str(hex(&sha2::Sha256::digest(
            arg_str(a, 0).as_bytes(),
        ))))
    });
    def(t, "sha512sum", &[Str], None, |_, a| {
        Ok(Value::str(hex(&sha2::Sha512::digest(
            arg_str(a, 0).as_bytes(),
        ))))
    });
    def(t, "adler32sum", &[Str], None, |_, a| {
        Ok(Value::str(adler32(arg_str(a, 0).as_bytes()).to_string()))
    });
}

/// Lower-case hex, two digits a byte (without a formatted string per byte).
pub(crate) fn hex(b: &[u8]) -> String {
    let digit = |d: u8| char::from_digit(u32::from(d), 16).unwrap_or('0');
    let mut out = String::with_capacity(b.len() * 2);
    for &x in b {
        out.push(digit(x >> 4));
        out.push(digit(x & 0xf));
    }
    out
}

fn b64_encode(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for ch in b.chunks(3) {
        let n = (u32::from(ch[0]) << 16)
            | (u32::from(*ch.get(1).unwrap_or(&0)) << 8)
            | u32::from(*ch.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= ch.len() {
                out.push(B64[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `base64.StdEncoding.DecodeString`, quantum by quantum with Go's error offsets.
fn b64_decode(s: &str) -> Result<Vec<u8>, String> {
    let src = s.as_bytes();
    let err = |i: usize| format!("illegal base64 data at input byte {i}");
    let mut out = Vec::new();
    let mut si = 0usize;
    while si < src.len() {
        let mut dbuf = [0u8; 4];
        let mut dlen = 4;
        let mut j = 0usize;
        let mut end = false;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                return Err(err(si - j));
            }
            let c = src[si];
            si += 1;
            if let Some(d) = B64.iter().position(|x| *x == c) {
                dbuf[j] = d as u8;
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' {
                return Err(err(si - 1));
            }
            match j {
                0 | 1 => return Err(err(si - 1)),
                2 => {
                    while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                        si += 1;
                    }
                    if si == src.len() {
                        return Err(err(src.len()));
                    }
                    if src[si] != b'=' {
                        return Err(err(si - 1));
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                si += 1;
            }
            if si < src.len() {
                return Err(err(si));
            }
            dlen = j;
            end = true;
            break;
        }
        let v = (u32::from(dbuf[0]) << 18)
            | (u32::from(dbuf[1]) << 12)
            | (u32::from(dbuf[2]) << 6)
            | u32::from(dbuf[3]);
        let bytes = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        out.extend_from_slice(&bytes[..dlen.saturating_sub(1)]);
        if end {
            break;
        }
    }
    Ok(out)
}

fn b32_encode(b: &[u8]) -> String {
    let mut out = String::new();
    for ch in b.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..ch.len()].copy_from_slice(ch);
        let n = buf.iter().fold(0u64, |acc, x| (acc << 8) | u64::from(*x));
        let chars = match ch.len() {
            1 => 2,
            2 => 4,
            3 => 5,
            4 => 7,
            _ => 8,
        };
        for k in 0..8 {
            if k < chars {
                out.push(B32[((n >> (35 - 5 * k)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `base32.StdEncoding.DecodeString` with Go's error offsets (newlines stripped first).
fn b32_decode(s: &str) -> Result<Vec<u8>, String> {
    let src: Vec<u8> = s.bytes().filter(|c| *c != b'\n' && *c != b'\r').collect();
    let olen = src.len();
    let err = |i: usize| format!("illegal base32 data at input byte {i}");
    let mut out = Vec::new();
    let mut pos = 0usize;
    let mut end = false;
    while pos < olen && !end {
        let mut dbuf = [0u8; 8];
        let mut dlen = 8;
        let mut j = 0usize;
        while j < 8 {
            let rest = olen - pos;
            if rest == 0 {
                return Err(err(olen - j));
            }
            let c = src[pos];
            pos += 1;
            let rest = olen - pos;
            if c == b'=' && j >= 2 && rest < 8 {
                if rest + j < 7 {
                    return Err(err(olen));
                }
                for k in 0..7 - j {
                    if rest > k && src[pos + k] != b'=' {
                        return Err(err(olen - rest + k - 1));
                    }
                }
                dlen = j;
                end = true;
                if matches!(dlen, 1 | 3 | 6) {
                    return Err(err(olen - rest - 1));
                }
                break;
            }
            match B32.iter().position(|x| *x == c) {
                Some(d) => dbuf[j] = d as u8,
                None => return Err(err(olen - rest - 1)),
            }
            j += 1;
        }
        let n = dbuf.iter().fold(0u64, |acc, x| (acc << 5) | u64::from(*x));
        let bytes = match dlen {
            8 => 5,
            7 => 4,
            5 => 3,
            4 => 2,
            2 => 1,
            _ => 0,
        };
        for k in 0..bytes {
            out.push((n >> (32 - 8 * k)) as u8);
        }
    }
    Ok(out)
}

fn adler32(b: &[u8]) -> u32 {
    let (mut a, mut s) = (1u32, 0u32);
    for &x in b {
        a = (a + u32::from(x)) % 65521;
        s = (s + a) % 65521;
    }
    (s << 16) | a
}

/// SHA-1 (FIPS 180-4), for `sha1sum`.
fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    let mut msg = data.to_vec();
    let bits = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bits.to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 20];
    for (i, x) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&x.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_round_trip() {
        assert_eq!(b64_encode(b"hello"), "aGVsbG8=");
        assert_eq!(b64_decode("aGVsbG8=").ok(), Some(b"hello".to_vec()));
        assert!(b64_decode("aGVsbG8").is_err());
        assert_eq!(b32_encode(b"hello"), "NBSWY3DP");
        assert_eq!(b32_decode("NBSWY3DP").ok(), Some(b"hello".to_vec()));
        assert_eq!(
            hex(&sha1(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(hex(&[0x00, 0x0f, 0xa0, 0xff, 0x5c]), "000fa0ff5c");
        assert_eq!(adler32(b"Wikipedia"), 300286872);
    }
}
