//! A small safe wrapper over the OpenSSL 3.5 EVP calls the `openssl` crate does not expose yet:
//! key generation and raw public-key import by algorithm name, and KEM encapsulate / decapsulate.

use foreign_types::ForeignType;
use openssl::error::ErrorStack;
use openssl::pkey::{PKey, Private, Public};
use openssl::pkey_ctx::PkeyCtx;
use std::ffi::CStr;
use std::ptr;

fn check(ret: std::os::raw::c_int) -> Result<(), ErrorStack> {
    if ret > 0 {
        Ok(())
    } else {
        Err(ErrorStack::get())
    }
}

/// Generates a key of a provider algorithm by name ("ML-KEM-768", "ML-DSA-65", "SLH-DSA-SHAKE-128s").
pub fn generate(name: &CStr) -> Result<PKey<Private>, ErrorStack> {
    // SAFETY: every pointer is checked before use; the context is freed on every path, and the new
    // key's ownership passes to PKey, which frees it on drop.
    unsafe {
        let ctx = openssl_sys::EVP_PKEY_CTX_new_from_name(ptr::null_mut(), name.as_ptr(), ptr::null());
        if ctx.is_null() {
            return Err(ErrorStack::get());
        }
        let ctx = PkeyCtx::<()>::from_ptr(ctx);
        check(openssl_sys::EVP_PKEY_keygen_init(ctx.as_ptr()))?;
        let mut key = ptr::null_mut();
        check(openssl_sys::EVP_PKEY_generate(ctx.as_ptr(), &mut key))?;
        Ok(PKey::from_ptr(key))
    }
}

/// Imports a raw public key of a provider algorithm by name.
pub fn public_from_raw(name: &CStr, raw: &[u8]) -> Result<PKey<Public>, ErrorStack> {
    // SAFETY: `raw` is valid for its length; a non-null result is an owned EVP_PKEY.
    unsafe {
        let key = openssl_sys::EVP_PKEY_new_raw_public_key_ex(ptr::null_mut(), name.as_ptr(), ptr::null(), raw.as_ptr(), raw.len());
        if key.is_null() {
            return Err(ErrorStack::get());
        }
        Ok(PKey::from_ptr(key))
    }
}

/// Encapsulates to `key` -> (ciphertext, shared secret). The EVP_PKEY_CTX is made per call, as a
/// TLS server does per handshake.
pub fn encapsulate(key: &PKey<Public>) -> Result<(Vec<u8>, Vec<u8>), ErrorStack> {
    let ctx = PkeyCtx::new(key)?;
    // SAFETY: the first call only reports the output lengths; the buffers then have those lengths.
    unsafe {
        check(openssl_sys::EVP_PKEY_encapsulate_init(ctx.as_ptr(), ptr::null()))?;
        let (mut ct_len, mut ss_len) = (0, 0);
        check(openssl_sys::EVP_PKEY_encapsulate(ctx.as_ptr(), ptr::null_mut(), &mut ct_len, ptr::null_mut(), &mut ss_len))?;
        let (mut ct, mut ss) = (vec![0u8; ct_len], vec![0u8; ss_len]);
        check(openssl_sys::EVP_PKEY_encapsulate(ctx.as_ptr(), ct.as_mut_ptr(), &mut ct_len, ss.as_mut_ptr(), &mut ss_len))?;
        ct.truncate(ct_len);
        ss.truncate(ss_len);
        Ok((ct, ss))
    }
}

/// Decapsulates `ct` with `key` -> shared secret. The EVP_PKEY_CTX is made per call.
pub fn decapsulate(key: &PKey<Private>, ct: &[u8]) -> Result<Vec<u8>, ErrorStack> {
    let ctx = PkeyCtx::new(key)?;
    // SAFETY: as in `encapsulate`; `ct` is valid for its length.
    unsafe {
        check(openssl_sys::EVP_PKEY_decapsulate_init(ctx.as_ptr(), ptr::null()))?;
        let mut ss_len = 0;
        check(openssl_sys::EVP_PKEY_decapsulate(ctx.as_ptr(), ptr::null_mut(), &mut ss_len, ct.as_ptr(), ct.len()))?;
        let mut ss = vec![0u8; ss_len];
        check(openssl_sys::EVP_PKEY_decapsulate(ctx.as_ptr(), ss.as_mut_ptr(), &mut ss_len, ct.as_ptr(), ct.len()))?;
        ss.truncate(ss_len);
        Ok(ss)
    }
}
