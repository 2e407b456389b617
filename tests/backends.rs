//! Every backend is correct on every algorithm it supports, and backends interoperate: what one
//! makes, another accepts.

use pqprof::algorithm::{self, Kind, Operation};
use pqprof::backend::{self, Backend};
use pqprof::case::{self, certificate_verify_message};
use pqprof::results::Form;
use pqprof::suite::Workload;

fn supporting(alg: &str, kind: Kind) -> Vec<Box<dyn Backend>> {
    let op = Operation::ALL
        .into_iter()
        .find(|o| o.kind() == kind)
        .unwrap();
    backend::all()
        .into_iter()
        .filter(|b| b.supports(alg, op))
        .collect()
}

/// SPHINCS+ in liboqs 0.13 is the round-3.1 scheme, not FIPS 205 (see src/backend/liboqs.rs).
fn fips_205_pair(a: &dyn Backend, b: &dyn Backend, alg: &str) -> bool {
    !(alg.starts_with("SLH-DSA") && (a.name() == "liboqs") != (b.name() == "liboqs"))
}

#[test]
fn every_supported_case_builds_runs_and_verifies() {
    let w = Workload {
        payload_bytes: 16384,
        aad_bytes: 5,
    };
    let mut built = 0;
    for b in backend::all() {
        for a in algorithm::all() {
            // SLH-DSA-128s keygen/sign take up to seconds; the run itself covers them.
            if a.name.ends_with("128s") {
                continue;
            }
            for op in Operation::ALL
                .into_iter()
                .filter(|o| o.kind() == a.kind && b.supports(&a.name, *o))
            {
                for form in [Form::Handshake, Form::Primitive] {
                    let primitive = form == Form::Primitive;
                    if primitive && b.setup(&a.name, op).is_none() && a.kind != Kind::Sig {
                        assert!(
                            case::build(b.as_ref(), a, op, &w, form).is_err(),
                            "{} {} {op} has no setup but builds a primitive",
                            b.name(),
                            a.name
                        );
                        continue;
                    }
                    let mut c = case::build(b.as_ref(), a, op, &w, form)
                        .unwrap_or_else(|e| panic!("{} {} {op} {form:?}: {e:#}", b.name(), a.name));
                    c.set_batch(2);
                    for i in 0..3 {
                        c.prepare(2 * i, 0).unwrap();
                        c.prepare(2 * i + 1, 1).unwrap();
                        c.run(0);
                        c.run(1);
                        c.keep(0);
                        c.keep(1);
                    }
                    let n = c
                        .verify_kept()
                        .unwrap_or_else(|e| panic!("{} {} {op} {form:?}: {e:#}", b.name(), a.name));
                    assert_eq!(n, 6);
                    built += 1;
                }
            }
        }
    }
    // KEM ops across liboqs, RustCrypto, OpenSSL, aws-lc and libcrux, DH, signatures, AEAD and the primitive
    // forms (OpenSSL KEM x 3 and DH derive x 2, RustCrypto encaps and P-256 derive, signatures).
    assert!(built >= 70, "only {built} cases");
}

#[test]
fn kem_interop_both_ways() {
    for alg in ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"] {
        let bs = supporting(alg, Kind::Kem);
        // liboqs, RustCrypto, OpenSSL, aws-lc and libcrux.
        assert_eq!(bs.len(), 5, "{alg}");
        for a in &bs {
            for b in &bs {
                let (ka, kb) = (a.kem(alg).unwrap(), b.kem(alg).unwrap());
                let (ek, dk) = ka.keygen().unwrap();
                let (ct, ss) = kb.encaps(&ek).unwrap();
                assert_eq!(
                    ka.decaps(&dk, &ct).unwrap(),
                    ss,
                    "{alg}: keygen+decaps {} / encaps {}",
                    a.name(),
                    b.name()
                );
                assert_eq!(ss.len(), 32);
            }
        }
    }
}

#[test]
fn an_encapsulation_key_out_of_range_is_refused_by_every_handshake_form() {
    // FIPS 203 section 7.2: the modulus check on an encapsulation key received. A coefficient of
    // 0xfff (>= q = 3329) in the first 12 bits.
    for b in supporting("ML-KEM-768", Kind::Kem) {
        let k = b.kem("ML-KEM-768").unwrap();
        let (mut ek, _) = k.keygen().unwrap();
        ek[0] = 0xff;
        ek[1] |= 0x0f;
        assert!(
            k.encaps(&ek).is_err(),
            "{} encapsulated to an invalid key",
            b.name()
        );
    }
}

#[test]
fn key_schedule_interop() {
    // HKDF, HMAC and SHA-2: every backend gives the same bytes for the same inputs.
    for (kdf, mac, hash, n) in [
        ("HKDF-SHA256", "HMAC-SHA256", "SHA-256", 32),
        ("HKDF-SHA384", "HMAC-SHA384", "SHA-384", 48),
    ] {
        let bs = supporting(kdf, Kind::Kdf);
        assert_eq!(bs.len(), 3, "{kdf}: RustCrypto, OpenSSL, aws-lc");
        let outputs: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> = bs
            .iter()
            .map(|b| {
                let k = b.kdf(kdf).unwrap();
                let prk = k.extract(&[1u8; 48][..n], &[2u8; 32]).unwrap();
                let okm = k.expand(&prk, b"tls13 c hs traffic", n).unwrap();
                let tag = b
                    .mac(mac)
                    .unwrap()
                    .compute(&[3u8; 48][..n], &[4u8; 48][..n])
                    .unwrap();
                let h = b.hash(hash).unwrap();
                let mut ctx = h.start().unwrap();
                h.update(&mut ctx, &[5u8; 1000]).unwrap();
                let first = h.finish_copy(&ctx).unwrap();
                h.update(&mut ctx, b"more").unwrap();
                assert_ne!(
                    first,
                    h.finish_copy(&ctx).unwrap(),
                    "{}: finish_copy must leave the context running",
                    b.name()
                );
                (okm, tag, first)
            })
            .collect();
        for (o, b) in outputs.iter().zip(&bs) {
            assert_eq!(
                o,
                &outputs[0],
                "{kdf}: {} differs from {}",
                b.name(),
                bs[0].name()
            );
            assert_eq!(o.0.len(), n);
        }
    }
}

#[test]
fn dh_interop_both_ways() {
    for alg in ["X25519", "P-256"] {
        let bs = supporting(alg, Kind::Dh);
        assert_eq!(bs.len(), 3, "{alg}: RustCrypto, OpenSSL, aws-lc");
        for a in &bs {
            for b in &bs {
                let (da, db) = (a.dh(alg).unwrap(), b.dh(alg).unwrap());
                let (pa, sa) = da.keygen().unwrap();
                let (pb, sb) = db.keygen().unwrap();
                assert_eq!(
                    da.derive(&sa, &pb).unwrap(),
                    db.derive(&sb, &pa).unwrap(),
                    "{alg}: {} with {}",
                    a.name(),
                    b.name()
                );
            }
        }
        // A malformed share is an error, not a panic.
        assert!(bs[0]
            .dh(alg)
            .unwrap()
            .derive(&bs[0].dh(alg).unwrap().keygen().unwrap().1, &[1, 2, 3])
            .is_err());
    }
}

#[test]
fn signature_interop_and_a_flipped_bit_fails() {
    let msg = certificate_verify_message().unwrap();
    for a in algorithm::all()
        .iter()
        .filter(|a| a.kind == Kind::Sig && !a.name.ends_with("128s"))
    {
        let bs = supporting(&a.name, Kind::Sig);
        for signer in &bs {
            let s = signer.sig(&a.name).unwrap();
            let (pk, sk) = s.keygen().unwrap();
            let mut sig = s.sign(&sk, &msg).unwrap();
            for verifier in &bs {
                let v = verifier.sig(&a.name).unwrap();
                let vk = v.load_public(&pk).unwrap();
                let ok = v.verify(&vk, &msg, &sig).unwrap();
                if fips_205_pair(signer.as_ref(), verifier.as_ref(), &a.name) {
                    assert!(
                        ok,
                        "{}: signed by {}, rejected by {}",
                        a.name,
                        signer.name(),
                        verifier.name()
                    );
                } else {
                    // Documented: liboqs 0.13's SPHINCS+ is not FIPS 205 SLH-DSA.
                    assert!(
                        !ok,
                        "{}: liboqs SPHINCS+ now verifies as FIPS 205; update backend/liboqs.rs",
                        a.name
                    );
                }
            }
            let mid = sig.len() / 2;
            sig[mid] ^= 0x10;
            assert!(
                !s.verify(&s.load_public(&pk).unwrap(), &msg, &sig).unwrap(),
                "{} {}: flipped bit verifies",
                signer.name(),
                a.name
            );
        }
    }
}

#[test]
fn aead_interop_and_tamper_detection() {
    let bs = supporting("AES-256-GCM", Kind::Aead);
    assert_eq!(bs.len(), 3);
    let key = [7u8; 32];
    let nonce = [9u8; 12];
    let aad = [23u8, 3, 3, 0x40, 0x10];
    let plain: Vec<u8> = (0..16384u32).map(|i| i as u8).collect();
    for a in &bs {
        for b in &bs {
            let (ea, eb) = (
                a.aead("AES-256-GCM").unwrap(),
                b.aead("AES-256-GCM").unwrap(),
            );
            let (mut ka, mut kb) = (ea.load_key(&key).unwrap(), eb.load_key(&key).unwrap());
            let mut buf = plain.clone();
            let tag = ea.seal(&mut ka, &nonce, &aad, &mut buf).unwrap();
            assert_ne!(buf, plain);
            buf.extend_from_slice(&tag);
            let mut tampered = buf.clone();
            eb.open(&mut kb, &nonce, &aad, &mut buf).unwrap();
            assert_eq!(
                buf[..plain.len()],
                plain[..],
                "sealed by {}, opened by {}",
                a.name(),
                b.name()
            );
            tampered[100] ^= 1;
            assert!(eb.open(&mut kb, &nonce, &aad, &mut tampered).is_err());
        }
    }
}

#[test]
fn outputs_have_the_sizes_the_registry_declares() {
    for b in backend::all() {
        for alg in ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"] {
            if let Some(k) = b.kem(alg) {
                let (ek, _) = k.keygen().unwrap();
                let (ct, _) = k.encaps(&ek).unwrap();
                let a = algorithm::find(alg).unwrap();
                assert_eq!(
                    (Some(ek.len()), Some(ct.len())),
                    (a.public_key, a.ciphertext),
                    "{} {alg}",
                    b.name()
                );
            }
        }
        for alg in ["X25519", "P-256"] {
            if let Some(d) = b.dh(alg) {
                assert_eq!(
                    Some(d.keygen().unwrap().0.len()),
                    algorithm::find(alg).unwrap().public_key,
                    "{} {alg}",
                    b.name()
                );
            }
        }
    }
}
