//! Parsers of bytes and text that come from outside pqprof: the first TLS and SSH flights of a real
//! connection, the output of liboqs's and OpenSSL's speed tools, and valgrind's callgrind files. Each is fuzzed (`fuzz/`).

pub mod callgrind;
pub mod liboqs_speed;
pub mod openssl_speed;
pub mod ssh;
pub mod tls;
pub mod x509;
