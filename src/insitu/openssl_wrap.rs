//! In-situ timing inside libssl: the linker routes libssl's calls into libcrypto through these
//! wrappers (build.rs passes `-Wl,--wrap=NAME` for every `fn __wrap_NAME` here), which time the
//! real call when this thread's recorder is armed and pass straight through otherwise. This works
//! because OpenSSL is linked statically (the vendored build); a call inside one object file is not
//! rerouted, and none of those below is. libssl makes a hybrid group's key share, encapsulation and
//! decapsulation in one provider call each (`kx.*`), and every key-schedule step in one
//! EVP_KDF_derive (`kdf.derive`).
#![allow(non_snake_case, clippy::missing_safety_doc)]

use super::{armed, timed, CallLabel};
use std::os::raw::{c_char, c_int, c_uchar, c_void};

type Ctx = *mut c_void;

extern "C" {
    fn __real_EVP_PKEY_keygen(ctx: Ctx, ppkey: *mut Ctx) -> c_int;
    fn __real_EVP_PKEY_set1_encoded_public_key(
        pkey: Ctx,
        pub_: *const c_uchar,
        publen: usize,
    ) -> c_int;
    fn __real_EVP_PKEY_encapsulate(
        ctx: Ctx,
        wrapped: *mut c_uchar,
        wrappedlen: *mut usize,
        gen: *mut c_uchar,
        genlen: *mut usize,
    ) -> c_int;
    fn __real_EVP_PKEY_decapsulate(
        ctx: Ctx,
        out: *mut c_uchar,
        outlen: *mut usize,
        wrapped: *const c_uchar,
        wrappedlen: usize,
    ) -> c_int;
    fn __real_EVP_PKEY_derive(ctx: Ctx, key: *mut c_uchar, keylen: *mut usize) -> c_int;
    fn __real_EVP_DigestSign(
        ctx: Ctx,
        sig: *mut c_uchar,
        siglen: *mut usize,
        tbs: *const c_uchar,
        tbslen: usize,
    ) -> c_int;
    fn __real_EVP_DigestVerify(
        ctx: Ctx,
        sig: *const c_uchar,
        siglen: usize,
        tbs: *const c_uchar,
        tbslen: usize,
    ) -> c_int;
    fn __real_X509_verify(x: Ctx, pkey: Ctx) -> c_int;
    fn __real_EVP_KDF_derive(
        ctx: Ctx,
        key: *mut c_uchar,
        keylen: usize,
        params: *const c_void,
    ) -> c_int;
    fn __real_EVP_Q_mac(
        libctx: Ctx,
        name: *const c_char,
        propq: *const c_char,
        subalg: *const c_char,
        params: *const c_void,
        key: *const c_void,
        keylen: usize,
        data: *const c_uchar,
        datalen: usize,
        out: *mut c_uchar,
        outsize: usize,
        outlen: *mut usize,
    ) -> *mut c_uchar;
    fn __real_EVP_DigestUpdate(ctx: Ctx, d: *const c_void, cnt: usize) -> c_int;
    fn __real_EVP_DigestFinal_ex(ctx: Ctx, md: *mut c_uchar, s: *mut u32) -> c_int;
    fn __real_EVP_CipherInit_ex(
        ctx: Ctx,
        cipher: *const c_void,
        engine: Ctx,
        key: *const c_uchar,
        iv: *const c_uchar,
        enc: c_int,
    ) -> c_int;
    fn __real_EVP_CipherUpdate(
        ctx: Ctx,
        out: *mut c_uchar,
        outl: *mut c_int,
        inp: *const c_uchar,
        inl: c_int,
    ) -> c_int;
    fn __real_EVP_CipherFinal_ex(ctx: Ctx, out: *mut c_uchar, outl: *mut c_int) -> c_int;
    fn EVP_CIPHER_CTX_is_encrypting(ctx: *const c_void) -> c_int;
    fn EVP_CIPHER_CTX_get0_cipher(ctx: *const c_void) -> *const c_void;
    fn EVP_CIPHER_get_mode(cipher: *const c_void) -> c_int;
}

/// EVP_CIPH_GCM_MODE (include/openssl/evp.h): only record ciphers count, not the DRBG's AES-CTR.
const GCM_MODE: c_int = 0x6;

/// seal or open for a GCM context, `None` for anything else (the DRBG).
///
/// # Safety
/// `ctx` must be a live `EVP_CIPHER_CTX` (as libssl passes to the cipher calls wrapped below).
unsafe fn record_label(ctx: Ctx) -> Option<CallLabel> {
    if !armed() {
        return None;
    }
    // SAFETY: libssl hands a live EVP_CIPHER_CTX; both accessors only read it.
    let cipher = unsafe { EVP_CIPHER_CTX_get0_cipher(ctx) };
    // SAFETY: a non-null EVP_CIPHER from the live context; the accessor only reads it.
    if cipher.is_null() || unsafe { EVP_CIPHER_get_mode(cipher) } != GCM_MODE {
        return None;
    }
    // SAFETY: `ctx` is live (this function's contract); the accessor only reads it.
    Some(if unsafe { EVP_CIPHER_CTX_is_encrypting(ctx) } == 1 {
        CallLabel::AeadSeal
    } else {
        CallLabel::AeadOpen
    })
}

// Every wrapper below has the real function's signature and contract: its caller (libssl,
// libcrypto or pqprof) meets that contract, and the wrapper passes every argument on unchanged, so
// each `unsafe` call of `__real_NAME` is sound when the wrapper's own call was. Each block says so
// for its function; the wrapper adds only the timer, which touches no argument.

#[no_mangle]
/// # Safety
/// As `EVP_PKEY_keygen`'s: the caller's arguments meet its contract (they are passed on unchanged).
pub unsafe extern "C" fn __wrap_EVP_PKEY_keygen(ctx: Ctx, ppkey: *mut Ctx) -> c_int {
    // SAFETY: EVP_PKEY_keygen's own arguments, unchanged, under the contract its caller met.
    timed(CallLabel::KxKeygen, || unsafe {
        __real_EVP_PKEY_keygen(ctx, ppkey)
    })
}

#[no_mangle]
/// # Safety
/// As `EVP_PKEY_set1_encoded_public_key`'s: the caller's arguments meet its contract (they are passed on unchanged).
pub unsafe extern "C" fn __wrap_EVP_PKEY_set1_encoded_public_key(
    pkey: Ctx,
    pub_: *const c_uchar,
    publen: usize,
) -> c_int {
    // SAFETY: EVP_PKEY_set1_encoded_public_key's own arguments, unchanged, under the contract its caller met.
    timed(CallLabel::KxImport, || unsafe {
        __real_EVP_PKEY_set1_encoded_public_key(pkey, pub_, publen)
    })
}

#[no_mangle]
/// # Safety
/// As `EVP_PKEY_encapsulate`'s: the caller's arguments meet its contract (they are passed on unchanged).
pub unsafe extern "C" fn __wrap_EVP_PKEY_encapsulate(
    ctx: Ctx,
    wrapped: *mut c_uchar,
    wrappedlen: *mut usize,
    gen: *mut c_uchar,
    genlen: *mut usize,
) -> c_int {
    // A call with no output buffer only asks for the lengths.
    if wrapped.is_null() {
        // SAFETY: EVP_PKEY_encapsulate's own arguments, unchanged, under the contract its caller met.
        return unsafe { __real_EVP_PKEY_encapsulate(ctx, wrapped, wrappedlen, gen, genlen) };
    }
    // SAFETY: EVP_PKEY_encapsulate's own arguments, unchanged, under the contract its caller met.
    timed(CallLabel::KxEncaps, || unsafe {
        __real_EVP_PKEY_encapsulate(ctx, wrapped, wrappedlen, gen, genlen)
    })
}

#[no_mangle]
/// # Safety
/// As `EVP_PKEY_decapsulate`'s: the caller's arguments meet its contract (they are passed on unchanged).
pub unsafe extern "C" fn __wrap_EVP_PKEY_decapsulate(
    ctx: Ctx,
    out: *mut c_uchar,
    outlen: *mut usize,
    wrapped: *const c_uchar,
    wrappedlen: usize,
) -> c_int {
    if out.is_null() {
        // SAFETY: EVP_PKEY_decapsulate's own arguments, unchanged, under the contract its caller met.
        return unsafe { __real_EVP_PKEY_decapsulate(ctx, out, outlen, wrapped, wrappedlen) };
    }
    // SAFETY: EVP_PKEY_decapsulate's own arguments, unchanged, under the contract its caller met.
    timed(CallLabel::KxDecaps, || unsafe {
        __real_EVP_PKEY_decapsulate(ctx, out, outlen, wrapped, wrappedlen)
    })
}

#[no_mangle]
/// # Safety
/// As `EVP_PKEY_derive`'s: the caller's arguments meet its contract (they are passed on unchanged).
pub unsafe extern "C" fn __wrap_EVP_PKEY_derive(
    ctx: Ctx,
    key: *mut c_uchar,
    keylen: *mut usize,
) -> c_int {
    if key.is_null() {
        // SAFETY: EVP_PKEY_derive's own arguments, unchanged, under the contract its caller met.
        return unsafe { __real_EVP_PKEY_derive(ctx, key, keylen) };
    }
    // SAFETY: EVP_PKEY_derive's own arguments, unchanged, under the contract its caller met.
    timed(CallLabel::DhDerive, || unsafe {
        __real_EVP_PKEY_derive(ctx, key, keylen)
    })
}

#[no_mangle]
/// # Safety
/// As `EVP_DigestSign`'s: the caller's arguments meet its contract (they are passed on unchanged).
pub unsafe extern "C" fn __wrap_EVP_DigestSign(
    ctx: Ctx,
    sig: *mut c_uchar,
    siglen: *mut usize,
    tbs: *const c_uchar,
    tbslen: usize,
) -> c_int {
    if sig.is_null() {
        // SAFETY: EVP_DigestSign's own arguments, unchanged, under the contract its caller met.
        return unsafe { __real_EVP_DigestSign(ctx, sig, siglen, tbs, tbslen) };
    }
    // SAFETY: EVP_DigestSign's own arguments, unchanged, under the contract its caller met.
    timed(CallLabel::SigSign, || unsafe {
        __real_EVP_DigestSign(ctx, sig, siglen, tbs, tbslen)
    })
}

#[no_mangle]
/// # Safety
/// As `EVP_DigestVerify`'s: the caller's arguments meet its contract (they are passed on unchanged).
pub unsafe extern "C" fn __wrap_EVP_DigestVerify(
    ctx: Ctx,
    sig: *const c_uchar,
    siglen: usize,
    tbs: *const c_uchar,
    tbslen: usize,
) -> c_int {
    // SAFETY: EVP_DigestVerify's own arguments, unchanged, under the contract its caller met.
    timed(CallLabel::SigVerify, || unsafe {
        __real_EVP_DigestVerify(ctx, sig, siglen, tbs, tbslen)
    })
}

/// One certificate's signature checked against its issuer's key: libssl's chain check
/// (`X509_verify_cert` -> `internal_verify`, crypto/x509/x509_vfy.c) calls it once per certificate
/// whose issuer is not itself, so a chain of leaf + intermediate under a trusted root is two calls,
/// timed one by one as webpki's in rustls (the path building around them is not).
///
/// # Safety
/// As `X509_verify`'s: the caller's arguments meet its contract (they are passed on unchanged).
#[no_mangle]
pub unsafe extern "C" fn __wrap_X509_verify(x: Ctx, pkey: Ctx) -> c_int {
    // SAFETY: X509_verify's own arguments, unchanged, under the contract its caller met.
    timed(CallLabel::SigVerifyCert, || unsafe {
        __real_X509_verify(x, pkey)
    })
}

#[no_mangle]
/// # Safety
/// As `EVP_KDF_derive`'s: the caller's arguments meet its contract (they are passed on unchanged).
pub unsafe extern "C" fn __wrap_EVP_KDF_derive(
    ctx: Ctx,
    key: *mut c_uchar,
    keylen: usize,
    params: *const c_void,
) -> c_int {
    // SAFETY: EVP_KDF_derive's own arguments, unchanged, under the contract its caller met.
    timed(CallLabel::KdfDerive, || unsafe {
        __real_EVP_KDF_derive(ctx, key, keylen, params)
    })
}

#[no_mangle]
/// # Safety
/// As `EVP_Q_mac`'s: the caller's arguments meet its contract (they are passed on unchanged).
pub unsafe extern "C" fn __wrap_EVP_Q_mac(
    libctx: Ctx,
    name: *const c_char,
    propq: *const c_char,
    subalg: *const c_char,
    params: *const c_void,
    key: *const c_void,
    keylen: usize,
    data: *const c_uchar,
    datalen: usize,
    out: *mut c_uchar,
    outsize: usize,
    outlen: *mut usize,
) -> *mut c_uchar {
    // SAFETY: EVP_Q_mac's own arguments, unchanged, under the contract its caller met.
    timed(CallLabel::MacCompute, || unsafe {
        __real_EVP_Q_mac(
            libctx, name, propq, subalg, params, key, keylen, data, datalen, out, outsize, outlen,
        )
    })
}

#[no_mangle]
/// # Safety
/// As `EVP_DigestUpdate`'s: the caller's arguments meet its contract (they are passed on unchanged).
pub unsafe extern "C" fn __wrap_EVP_DigestUpdate(ctx: Ctx, d: *const c_void, cnt: usize) -> c_int {
    // SAFETY: EVP_DigestUpdate's own arguments, unchanged, under the contract its caller met.
    timed(CallLabel::HashUpdate, || unsafe {
        __real_EVP_DigestUpdate(ctx, d, cnt)
    })
}

#[no_mangle]
/// # Safety
/// As `EVP_DigestFinal_ex`'s: the caller's arguments meet its contract (they are passed on unchanged).
pub unsafe extern "C" fn __wrap_EVP_DigestFinal_ex(
    ctx: Ctx,
    md: *mut c_uchar,
    s: *mut u32,
) -> c_int {
    // SAFETY: EVP_DigestFinal_ex's own arguments, unchanged, under the contract its caller met.
    timed(CallLabel::HashFinish, || unsafe {
        __real_EVP_DigestFinal_ex(ctx, md, s)
    })
}

#[no_mangle]
/// # Safety
/// As `EVP_CipherInit_ex`'s: the caller's arguments meet its contract (they are passed on unchanged).
pub unsafe extern "C" fn __wrap_EVP_CipherInit_ex(
    ctx: Ctx,
    cipher: *const c_void,
    engine: Ctx,
    key: *const c_uchar,
    iv: *const c_uchar,
    enc: c_int,
) -> c_int {
    if !key.is_null() && armed() {
        // SAFETY: EVP_CipherInit_ex's own arguments, unchanged, under the contract its caller met.
        return timed(CallLabel::AeadKey, || unsafe {
            __real_EVP_CipherInit_ex(ctx, cipher, engine, key, iv, enc)
        });
    }
    // SAFETY: `ctx` is the live EVP_CIPHER_CTX the caller passed to EVP_CipherInit_ex.
    match unsafe { record_label(ctx) } {
        // SAFETY: EVP_CipherInit_ex's own arguments, unchanged, under the contract its caller met.
        Some(l) => timed(l, || unsafe {
            __real_EVP_CipherInit_ex(ctx, cipher, engine, key, iv, enc)
        }),
        // SAFETY: EVP_CipherInit_ex's own arguments, unchanged, under the contract its caller met.
        None => unsafe { __real_EVP_CipherInit_ex(ctx, cipher, engine, key, iv, enc) },
    }
}

#[no_mangle]
/// # Safety
/// As `EVP_CipherUpdate`'s: the caller's arguments meet its contract (they are passed on unchanged).
pub unsafe extern "C" fn __wrap_EVP_CipherUpdate(
    ctx: Ctx,
    out: *mut c_uchar,
    outl: *mut c_int,
    inp: *const c_uchar,
    inl: c_int,
) -> c_int {
    // SAFETY: `ctx` is the live EVP_CIPHER_CTX the caller passed to EVP_CipherUpdate.
    match unsafe { record_label(ctx) } {
        // SAFETY: EVP_CipherUpdate's own arguments, unchanged, under the contract its caller met.
        Some(l) => timed(l, || unsafe {
            __real_EVP_CipherUpdate(ctx, out, outl, inp, inl)
        }),
        // SAFETY: EVP_CipherUpdate's own arguments, unchanged, under the contract its caller met.
        None => unsafe { __real_EVP_CipherUpdate(ctx, out, outl, inp, inl) },
    }
}

#[no_mangle]
/// # Safety
/// As `EVP_CipherFinal_ex`'s: the caller's arguments meet its contract (they are passed on unchanged).
pub unsafe extern "C" fn __wrap_EVP_CipherFinal_ex(
    ctx: Ctx,
    out: *mut c_uchar,
    outl: *mut c_int,
) -> c_int {
    // SAFETY: `ctx` is the live EVP_CIPHER_CTX the caller passed to EVP_CipherFinal_ex.
    match unsafe { record_label(ctx) } {
        // SAFETY: EVP_CipherFinal_ex's own arguments, unchanged, under the contract its caller met.
        Some(l) => timed(l, || unsafe { __real_EVP_CipherFinal_ex(ctx, out, outl) }),
        // SAFETY: EVP_CipherFinal_ex's own arguments, unchanged, under the contract its caller met.
        None => unsafe { __real_EVP_CipherFinal_ex(ctx, out, outl) },
    }
}
