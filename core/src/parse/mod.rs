//! Parsers of bytes and text that come from outside pqprof: the first TLS and SSH flights of a real
//! connection, the output of liboqs's and OpenSSL's speed tools and of h2load, and valgrind's
//! callgrind files. Each is fuzzed (`fuzz/`).

pub mod callgrind;
pub mod h2load;
pub mod liboqs_speed;
pub mod openssl_speed;
pub mod ssh;
pub mod tls;
pub mod x509;

/// Bytes from their hex digits, two a byte ("16030300"); none for text that is not whole pairs of
/// hex digits.
pub fn from_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() % 2 != 0 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Bytes as hex digits, two a byte, lower case.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_goes_there_and_back_and_refuses_what_is_not_hex() {
        assert_eq!(super::to_hex(&[0x16, 0x03, 0xff]), "1603ff");
        assert_eq!(super::from_hex("1603ff"), Some(vec![0x16, 0x03, 0xff]));
        assert_eq!(super::from_hex("160"), None);
        assert_eq!(super::from_hex("zz"), None);
        assert_eq!(super::from_hex("é1"), None);
    }
}
