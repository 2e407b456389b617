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

/// A key-generation context for a provider algorithm by name ("ML-KEM-768", "ML-DSA-65").
pub(crate) fn keygen_ctx(name: &CStr) -> Result<PkeyCtx<()>, ErrorStack> {
    // SAFETY: the pointer is checked before use; PkeyCtx owns and frees the context.
    unsafe {
        let ctx =
            openssl_sys::EVP_PKEY_CTX_new_from_name(ptr::null_mut(), name.as_ptr(), ptr::null());
        if ctx.is_null() {
            return Err(ErrorStack::get());
        }
        let ctx = PkeyCtx::<()>::from_ptr(ctx);
        check(openssl_sys::EVP_PKEY_keygen_init(ctx.as_ptr()))?;
        Ok(ctx)
    }
}

/// Generates a key with a prepared context.
pub(crate) fn generate_with(ctx: &PkeyCtx<()>) -> Result<PKey<Private>, ErrorStack> {
    // SAFETY: the context is live; the new key's ownership passes to PKey, which frees it on drop.
    unsafe {
        let mut key = ptr::null_mut();
        check(openssl_sys::EVP_PKEY_generate(ctx.as_ptr(), &mut key))?;
        Ok(PKey::from_ptr(key))
    }
}

/// Generates a key of a provider algorithm by name ("ML-KEM-768", "ML-DSA-65", "SLH-DSA-SHAKE-128s")
/// with a new context, as libssl does per handshake.
pub(crate) fn generate(name: &CStr) -> Result<PKey<Private>, ErrorStack> {
    generate_with(&keygen_ctx(name)?)
}

/// Imports a raw public key of a provider algorithm by name.
pub(crate) fn public_from_raw(name: &CStr, raw: &[u8]) -> Result<PKey<Public>, ErrorStack> {
    // SAFETY: `raw` is valid for its length; a non-null result is an owned EVP_PKEY.
    unsafe {
        let key = openssl_sys::EVP_PKEY_new_raw_public_key_ex(
            ptr::null_mut(),
            name.as_ptr(),
            ptr::null(),
            raw.as_ptr(),
            raw.len(),
        );
        if key.is_null() {
            return Err(ErrorStack::get());
        }
        Ok(PKey::from_ptr(key))
    }
}

/// An encapsulation context for `key`, with the output lengths it reported.
pub(crate) struct Encapsulator {
    ctx: PkeyCtx<Public>,
    ct_len: usize,
    ss_len: usize,
}

impl Encapsulator {
    pub(crate) fn new(key: &PKey<Public>) -> Result<Encapsulator, ErrorStack> {
        let ctx = PkeyCtx::new(key)?;
        // SAFETY: with null output buffers the call only reports the output lengths.
        unsafe {
            check(openssl_sys::EVP_PKEY_encapsulate_init(
                ctx.as_ptr(),
                ptr::null(),
            ))?;
            let (mut ct_len, mut ss_len) = (0, 0);
            check(openssl_sys::EVP_PKEY_encapsulate(
                ctx.as_ptr(),
                ptr::null_mut(),
                &mut ct_len,
                ptr::null_mut(),
                &mut ss_len,
            ))?;
            Ok(Encapsulator {
                ctx,
                ct_len,
                ss_len,
            })
        }
    }

    /// -> (ciphertext, shared secret).
    pub(crate) fn encapsulate(&mut self) -> Result<(Vec<u8>, Vec<u8>), ErrorStack> {
        let (mut ct, mut ss) = (vec![0u8; self.ct_len], vec![0u8; self.ss_len]);
        let (mut ct_len, mut ss_len) = (self.ct_len, self.ss_len);
        // SAFETY: the buffers have the lengths the context reported.
        unsafe {
            check(openssl_sys::EVP_PKEY_encapsulate(
                self.ctx.as_ptr(),
                ct.as_mut_ptr(),
                &mut ct_len,
                ss.as_mut_ptr(),
                &mut ss_len,
            ))?;
        }
        ct.truncate(ct_len);
        ss.truncate(ss_len);
        Ok((ct, ss))
    }
}

/// Encapsulates to `key` -> (ciphertext, shared secret). The EVP_PKEY_CTX is made per call, as a
/// TLS server does per handshake.
pub(crate) fn encapsulate(key: &PKey<Public>) -> Result<(Vec<u8>, Vec<u8>), ErrorStack> {
    Encapsulator::new(key)?.encapsulate()
}

/// A decapsulation context for `key`, with the secret length it reported for `ct_len` bytes.
pub(crate) struct Decapsulator {
    ctx: PkeyCtx<Private>,
}

impl Decapsulator {
    pub(crate) fn new(key: &PKey<Private>) -> Result<Decapsulator, ErrorStack> {
        let ctx = PkeyCtx::new(key)?;
        // SAFETY: the context is live.
        unsafe {
            check(openssl_sys::EVP_PKEY_decapsulate_init(
                ctx.as_ptr(),
                ptr::null(),
            ))?
        };
        Ok(Decapsulator { ctx })
    }

    pub(crate) fn decapsulate(&mut self, ct: &[u8]) -> Result<Vec<u8>, ErrorStack> {
        // SAFETY: the first call only reports the secret's length; the buffer then has it; `ct` is
        // valid for its length.
        unsafe {
            let mut ss_len = 0;
            check(openssl_sys::EVP_PKEY_decapsulate(
                self.ctx.as_ptr(),
                ptr::null_mut(),
                &mut ss_len,
                ct.as_ptr(),
                ct.len(),
            ))?;
            let mut ss = vec![0u8; ss_len];
            check(openssl_sys::EVP_PKEY_decapsulate(
                self.ctx.as_ptr(),
                ss.as_mut_ptr(),
                &mut ss_len,
                ct.as_ptr(),
                ct.len(),
            ))?;
            ss.truncate(ss_len);
            Ok(ss)
        }
    }
}

/// Decapsulates `ct` with `key` -> shared secret. The EVP_PKEY_CTX is made per call.
pub(crate) fn decapsulate(key: &PKey<Private>, ct: &[u8]) -> Result<Vec<u8>, ErrorStack> {
    Decapsulator::new(key)?.decapsulate(ct)
}

/// HKDF through EVP_KDF, as libssl's tls13_hkdf_expand_ex makes each key-schedule call: fetch the
/// KDF, make a context, set the parameters, derive, free (OpenSSL 3.5 ssl/tls13_enc.c).
pub(crate) struct Hkdf(pub &'static CStr);

/// EVP_KDF_HKDF_MODE_EXTRACT_ONLY / EXPAND_ONLY (include/openssl/kdf.h).
const EXTRACT_ONLY: std::os::raw::c_int = 1;
const EXPAND_ONLY: std::os::raw::c_int = 2;

impl Hkdf {
    fn derive(
        &self,
        mode: std::os::raw::c_int,
        key: &[u8],
        salt: Option<&[u8]>,
        info: Option<&[u8]>,
        len: usize,
    ) -> Result<Vec<u8>, ErrorStack> {
        use openssl_sys::{OSSL_PARAM_construct_end, OSSL_PARAM_construct_octet_string};
        let mut mode = mode;
        let mut out = vec![0u8; len];
        // SAFETY: every pointer handed to OpenSSL outlives the call that reads it (the parameter
        // array points into `key`, `salt`, `info`, `mode` and the static digest name); the KDF and
        // its context are freed on every path.
        unsafe {
            let kdf = openssl_sys::EVP_KDF_fetch(ptr::null_mut(), c"HKDF".as_ptr(), ptr::null());
            if kdf.is_null() {
                return Err(ErrorStack::get());
            }
            let ctx = openssl_sys::EVP_KDF_CTX_new(kdf);
            openssl_sys::EVP_KDF_free(kdf);
            if ctx.is_null() {
                return Err(ErrorStack::get());
            }
            let mut params = vec![
                OSSL_PARAM_construct_int(c"mode".as_ptr(), &mut mode),
                OSSL_PARAM_construct_utf8_string(c"digest".as_ptr(), self.0.as_ptr() as *mut _, 0),
                OSSL_PARAM_construct_octet_string(
                    c"key".as_ptr(),
                    key.as_ptr() as *mut _,
                    key.len(),
                ),
            ];
            if let Some(s) = salt {
                params.push(OSSL_PARAM_construct_octet_string(
                    c"salt".as_ptr(),
                    s.as_ptr() as *mut _,
                    s.len(),
                ));
            }
            if let Some(i) = info {
                params.push(OSSL_PARAM_construct_octet_string(
                    c"info".as_ptr(),
                    i.as_ptr() as *mut _,
                    i.len(),
                ));
            }
            params.push(OSSL_PARAM_construct_end());
            let r = openssl_sys::EVP_KDF_derive(ctx, out.as_mut_ptr(), len, params.as_ptr());
            openssl_sys::EVP_KDF_CTX_free(ctx);
            check(r)?;
        }
        Ok(out)
    }
}

impl crate::backend::Kdf for Hkdf {
    fn extract(&self, salt: &[u8], ikm: &[u8]) -> anyhow::Result<crate::backend::Loaded> {
        let len = if self.0 == c"SHA384" { 48 } else { 32 };
        Ok(Box::new(self.derive(
            EXTRACT_ONLY,
            ikm,
            Some(salt),
            None,
            len,
        )?))
    }

    fn expand(
        &self,
        prk: &crate::backend::Loaded,
        info: &[u8],
        len: usize,
    ) -> anyhow::Result<Vec<u8>> {
        Ok(self.derive(
            EXPAND_ONLY,
            crate::backend::loaded::<Vec<u8>>(prk)?,
            None,
            Some(info),
            len,
        )?)
    }
}

extern "C" {
    // OpenSSL 3 params.h; not in openssl-sys 0.9.118.
    fn OSSL_PARAM_construct_int(
        key: *const std::os::raw::c_char,
        buf: *mut std::os::raw::c_int,
    ) -> openssl_sys::OSSL_PARAM;
    fn OSSL_PARAM_construct_utf8_string(
        key: *const std::os::raw::c_char,
        buf: *mut std::os::raw::c_char,
        bsize: usize,
    ) -> openssl_sys::OSSL_PARAM;
    // OpenSSL 3: crypto/evp/mac_lib.c; libssl's Finished uses it (ssl/tls13_enc.c, tls13_final_finish_mac).
    fn EVP_Q_mac(
        libctx: *mut openssl_sys::OSSL_LIB_CTX,
        name: *const std::os::raw::c_char,
        propq: *const std::os::raw::c_char,
        subalg: *const std::os::raw::c_char,
        params: *const openssl_sys::OSSL_PARAM,
        key: *const std::os::raw::c_void,
        keylen: usize,
        data: *const u8,
        datalen: usize,
        out: *mut u8,
        outsize: usize,
        outlen: *mut usize,
    ) -> *mut u8;
}

/// HMAC keyed per call with EVP_Q_mac.
pub(crate) struct Hmac(pub &'static CStr);

impl crate::backend::Mac for Hmac {
    fn compute(&self, key: &[u8], msg: &[u8]) -> anyhow::Result<Vec<u8>> {
        let mut out = vec![0u8; 64];
        let mut n = 0usize;
        // SAFETY: the buffers are valid for their lengths; `out` has room for any SHA-2 HMAC.
        let r = unsafe {
            EVP_Q_mac(
                ptr::null_mut(),
                c"HMAC".as_ptr(),
                ptr::null(),
                self.0.as_ptr(),
                ptr::null(),
                key.as_ptr().cast(),
                key.len(),
                msg.as_ptr(),
                msg.len(),
                out.as_mut_ptr(),
                out.len(),
                &mut n,
            )
        };
        if r.is_null() {
            return Err(ErrorStack::get().into());
        }
        out.truncate(n);
        Ok(out)
    }
}
