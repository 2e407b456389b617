//! The raw arrays stored compactly (schema 4, #36): a list of integers (every sample of a phase, a
//! handshake's connections, a network cell's handshakes, a capacity step's latencies) is written
//! as one string, `d1:` and the base64 (RFC 4648 section 4, with padding) of the differences of
//! successive values, each zigzag-mapped (0, -1, 1, -2, ... to 0, 1, 2, 3, ...) and written as a
//! LEB128 varint (7 bits a byte, the high bit set on every byte but the last). Nothing is rounded:
//! the values decode exactly, in their order, and `check` recomputes every figure from them. A
//! file of an older schema, whose arrays are JSON lists, reads the same.
//!
//! About a third of a default run's file: the newest Zen 5 run's 4.35 MB in lists was 2.96 MB
//! packed (its 6,485 arrays of eight values or more).

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serializer};

/// The form's tag: differences, zigzag, LEB128, base64.
const TAG: &str = "d1:";

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Each byte's value in `ALPHABET`, or `INVALID`: a render decodes some 30 million characters.
const INVALID: u8 = 0xff;
const VALUES: [u8; 256] = {
    let mut t = [INVALID; 256];
    let mut i = 0;
    while i < 64 {
        t[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// A list of integers as its packed string.
pub fn encode(xs: &[u64]) -> String {
    let mut bytes = Vec::with_capacity(xs.len() * 3);
    let mut prev = 0u64;
    for &x in xs {
        let d = x.wrapping_sub(prev) as i64;
        prev = x;
        let mut z = ((d << 1) ^ (d >> 63)) as u64;
        loop {
            let b = (z & 0x7f) as u8;
            z >>= 7;
            if z == 0 {
                bytes.push(b);
                break;
            }
            bytes.push(b | 0x80);
        }
    }
    let mut out = String::with_capacity(TAG.len() + bytes.len().div_ceil(3) * 4);
    out.push_str(TAG);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A packed string's integers, or what is wrong with it.
pub fn decode(s: &str) -> Result<Vec<u64>, String> {
    let body = s
        .strip_prefix(TAG)
        .ok_or_else(|| format!("a packed list starts with {TAG:?}"))?;
    if body.len() % 4 != 0 {
        return Err(format!(
            "a packed list's base64 is {} characters, not a multiple of 4",
            body.len()
        ));
    }
    let raw = body.as_bytes();
    // Every quad but a padded last one is four alphabet characters, three bytes: the fast path.
    let full = if raw.last() == Some(&b'=') {
        raw.len() - 4
    } else {
        raw.len()
    };
    // The bytes go straight into the varints, one pass and no buffer between: a render decodes
    // some 75 million characters. At most one value a byte; the spare room is given back at the end.
    let mut v = Varints {
        out: Vec::with_capacity(raw.len() / 4 * 3),
        ..Varints::default()
    };
    for quad in raw[..full].chunks_exact(4) {
        let x = [0, 1, 2, 3].map(|i| VALUES[quad[i] as usize]);
        // Alphabet values are under 64: any other bit set is a character outside it.
        if (x[0] | x[1] | x[2] | x[3]) & 0xc0 != 0 {
            return Err(not_base64(quad));
        }
        let n =
            u32::from(x[0]) << 18 | u32::from(x[1]) << 12 | u32::from(x[2]) << 6 | u32::from(x[3]);
        v.push((n >> 16) as u8)?;
        v.push((n >> 8) as u8)?;
        v.push(n as u8)?;
    }
    if full < raw.len() {
        let quad = &raw[full..];
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 {
            return Err("misplaced '=' in a packed list".into());
        }
        let mut n = 0u32;
        for (i, &c) in quad[..4 - pad].iter().enumerate() {
            let x = VALUES[c as usize];
            if x == INVALID {
                return Err(not_base64(&quad[..4 - pad]));
            }
            n |= u32::from(x) << (18 - 6 * i);
        }
        // The bits past the last byte are zero in the one encoding of those bytes (RFC 4648
        // section 3.5), so one list has one string.
        if n & ((1 << (8 * pad)) - 1) != 0 {
            return Err("a packed list's padding bits are not zero".into());
        }
        for i in 0..3 - pad {
            v.push((n >> (16 - 8 * i)) as u8)?;
        }
    }
    if v.shift != 0 {
        return Err("a packed list ends inside a value".into());
    }
    v.out.shrink_to_fit();
    Ok(v.out)
}

/// The varint reader: each value's 7-bit groups, low first, then its zigzag difference added to
/// the value before.
#[derive(Default)]
struct Varints {
    out: Vec<u64>,
    z: u64,
    shift: u32,
    prev: u64,
    at: usize,
}

impl Varints {
    #[inline(always)]
    fn push(&mut self, b: u8) -> Result<(), String> {
        if self.shift > 63 || (self.shift == 63 && b & 0x7e != 0) {
            return Err(format!("a varint longer than 64 bits at byte {}", self.at));
        }
        self.at += 1;
        self.z |= u64::from(b & 0x7f) << self.shift;
        if b & 0x80 != 0 {
            self.shift += 7;
            return Ok(());
        }
        let d = (self.z >> 1) as i64 ^ -((self.z & 1) as i64);
        self.prev = self.prev.wrapping_add(d as u64);
        self.out.push(self.prev);
        (self.z, self.shift) = (0, 0);
        Ok(())
    }
}

/// What is wrong with a quad that holds a character outside the alphabet.
fn not_base64(quad: &[u8]) -> String {
    match quad.iter().find(|&&c| VALUES[c as usize] == INVALID) {
        Some(b'=') => "misplaced '=' in a packed list".into(),
        Some(&c) => format!("{:?} is not base64", c as char),
        None => "not base64".into(),
    }
}

/// An integer packed as its 64 bits: a `u64` as it is, an `i64` (memory deltas, which can be
/// negative) as its two's complement.
trait Bits: Copy + for<'de> Deserialize<'de> {
    fn from_bits(b: u64) -> Self;
    fn to_bits(self) -> u64;
}

impl Bits for u64 {
    fn from_bits(b: u64) -> Self {
        b
    }
    fn to_bits(self) -> u64 {
        self
    }
}

impl Bits for i64 {
    fn from_bits(b: u64) -> Self {
        b as i64
    }
    fn to_bits(self) -> u64 {
        self as u64
    }
}

fn serialize<T: Bits, S: Serializer>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
    let bits: Vec<u64> = v.iter().map(|x| x.to_bits()).collect();
    s.serialize_str(&encode(&bits))
}

/// Reads a packed string, or a JSON list as older files hold.
struct Packed<T>(std::marker::PhantomData<T>);

impl<'de, T: Bits> Visitor<'de> for Packed<T> {
    type Value = Vec<T>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of integers, or one packed as \"d1:...\"")
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Vec<T>, E> {
        // For u64 the map is the identity, and the vector is reused in place.
        Ok(decode(s)
            .map_err(E::custom)?
            .into_iter()
            .map(T::from_bits)
            .collect())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Vec<T>, A::Error> {
        Vec::<T>::deserialize(de::value::SeqAccessDeserializer::new(seq))
    }
}

fn deserialize<'de, T: Bits, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    d.deserialize_any(Packed(std::marker::PhantomData))
}

/// Serde's form of a `Vec<u64>` field: written packed, read packed or as a JSON list.
pub mod u64s {
    use super::*;

    pub fn serialize<S: Serializer>(v: &[u64], s: S) -> Result<S::Ok, S::Error> {
        super::serialize(v, s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
        super::deserialize(d)
    }
}

/// The same for a `Vec<i64>` field.
pub mod i64s {
    use super::*;

    pub fn serialize<S: Serializer>(v: &[i64], s: S) -> Result<S::Ok, S::Error> {
        super::serialize(v, s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<i64>, D::Error> {
        super::deserialize(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_lists_pack_to_the_bytes_worked_out_by_hand() {
        // [] -> no bytes. [1] -> difference 1, zigzag 2: byte 0x02 -> "Ag==".
        assert_eq!(encode(&[]), "d1:");
        assert_eq!(encode(&[1]), "d1:Ag==");
        // [300, 299]: 300 zigzag 600 = 0b100_1011000 -> 0xd8 0x04; -1 zigzag 1 -> 0x01.
        // 0xd8 0x04 0x01 -> base64 "2AQB".
        assert_eq!(encode(&[300, 299]), "d1:2AQB");
        assert_eq!(decode("d1:2AQB").unwrap(), vec![300, 299]);
        assert_eq!(decode("d1:Ag==").unwrap(), vec![1]);
        // "Ah==" carries the same byte with a padding bit set: not the encoding of anything.
        assert!(decode("d1:Ah==").unwrap_err().contains("padding bits"));
        assert_eq!(decode("d1:").unwrap(), Vec::<u64>::new());
    }

    #[test]
    fn every_value_and_order_survives_including_the_extremes() {
        let xs = vec![
            0,
            u64::MAX,
            1,
            u64::MAX - 1,
            12_345_678,
            12_345_677,
            1 << 63,
            0,
            7,
        ];
        assert_eq!(decode(&encode(&xs)).unwrap(), xs);
        let samples: Vec<u64> = (0..1000u64)
            .map(|i| 900_000 + (i * 7919) % 200_000)
            .collect();
        let packed = encode(&samples);
        assert_eq!(decode(&packed).unwrap(), samples);
        // Six-digit nanoseconds take 7 characters and a comma in a list; packed about 4.
        assert!(packed.len() < samples.len() * 5, "{}", packed.len());
    }

    #[test]
    fn a_broken_string_is_an_error_not_a_panic() {
        for bad in [
            "1:AAAA",
            "d1:AAA",
            "d1:A===",
            "d1:AA==AAAA",
            "d1:*AAA",
            "d1:gA==",
            "d1:////////////////",
        ] {
            assert!(decode(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_field_reads_a_list_or_a_packed_string_and_writes_packed() {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct T {
            #[serde(with = "u64s")]
            a: Vec<u64>,
            #[serde(with = "i64s")]
            b: Vec<i64>,
        }
        let old: T = serde_json::from_str(r#"{"a": [5, 3, 9], "b": [-2, 4]}"#).unwrap();
        let text = serde_json::to_string(&old).unwrap();
        assert!(text.contains(r#""a":"d1:"#), "{text}");
        let new: T = serde_json::from_str(&text).unwrap();
        assert_eq!(new, old);
        assert_eq!(new.b, vec![-2, 4]);
        let err = serde_json::from_str::<T>(r#"{"a": "d1:!!!!", "b": []}"#).unwrap_err();
        assert!(err.to_string().contains("not base64"), "{err}");
    }
}
