//! The two algorithms of an X.509 certificate a peer sent: its public key's and its issuer's
//! signature's (RFC 5280 section 4.1), read from the DER without checking anything else. `pqprof
//! probe` names a server's chain with them. Never panics on any input
//! (fuzz/fuzz_targets/probe_bytes.rs).

/// A DER element: its tag and its contents.
fn element(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        // Long form: the low bits count the length's bytes (at most 4 here: no certificate is
        // 4 GiB; 0x80 alone, the indefinite length, is not DER).
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |a, &b| a << 8 | b as usize);
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

const SEQUENCE: u8 = 0x30;
const OID: u8 = 0x06;

/// The OID (its content bytes) and parameters of an AlgorithmIdentifier's contents.
fn algorithm(contents: &[u8]) -> Option<(&[u8], &[u8])> {
    let (tag, oid, params) = element(contents)?;
    (tag == OID).then_some((oid, params))
}

/// (public key algorithm, signature algorithm) of a certificate, by name where known (`name`),
/// else as a dotted OID.
pub fn algorithms(der: &[u8]) -> Option<(String, String)> {
    let (tag, cert, _) = element(der)?;
    if tag != SEQUENCE {
        return None;
    }
    let (tag, tbs, rest) = element(cert)?;
    if tag != SEQUENCE {
        return None;
    }
    let (tag, sig_alg, _) = element(rest)?;
    if tag != SEQUENCE {
        return None;
    }
    let (sig_oid, _) = algorithm(sig_alg)?;
    // tbsCertificate: [0] version (optional), serialNumber, signature, issuer, validity, subject,
    // subjectPublicKeyInfo.
    let mut fields = tbs;
    let (tag, _, after) = element(fields)?;
    if tag == 0xa0 {
        fields = after;
    }
    for _ in 0..5 {
        let (_, _, after) = element(fields)?;
        fields = after;
    }
    let (tag, spki, _) = element(fields)?;
    if tag != SEQUENCE {
        return None;
    }
    let (tag, key_alg, _) = element(spki)?;
    if tag != SEQUENCE {
        return None;
    }
    let (key_oid, params) = algorithm(key_alg)?;
    let key = match (name(key_oid), element(params)) {
        // An EC key names its curve in the parameters.
        (Some("EC"), Some((OID, curve, _))) => {
            format!(
                "ECDSA {}",
                name(curve).map_or_else(|| dotted(curve), String::from)
            )
        }
        (Some(n), _) => n.to_string(),
        (None, _) => dotted(key_oid),
    };
    let signature = name(sig_oid).map_or_else(|| dotted(sig_oid), String::from);
    Some((key, signature))
}

/// Names of the OIDs a TLS server's chain carries, by their DER content bytes. Sources: RFC 5480
/// (EC keys and curves), RFC 5758 (ECDSA with SHA-2), RFC 8017 (RSA), RFC 8410 (Ed25519, Ed448),
/// RFC 9881 / NIST CSOR (ML-DSA: 2.16.840.1.101.3.4.3.17-19).
fn name(oid: &[u8]) -> Option<&'static str> {
    const NAMES: &[(&[u8], &str)] = &[
        (&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01], "EC"),
        (&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07], "P-256"),
        (&[0x2b, 0x81, 0x04, 0x00, 0x22], "P-384"),
        (&[0x2b, 0x81, 0x04, 0x00, 0x23], "P-521"),
        (
            &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02],
            "ECDSA with SHA-256",
        ),
        (
            &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03],
            "ECDSA with SHA-384",
        ),
        (
            &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x04],
            "ECDSA with SHA-512",
        ),
        (
            &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01],
            "RSA",
        ),
        (
            &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0a],
            "RSA-PSS",
        ),
        (
            &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b],
            "RSA with SHA-256",
        ),
        (
            &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0c],
            "RSA with SHA-384",
        ),
        (
            &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0d],
            "RSA with SHA-512",
        ),
        (&[0x2b, 0x65, 0x70], "Ed25519"),
        (&[0x2b, 0x65, 0x71], "Ed448"),
        (
            &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11],
            "ML-DSA-44",
        ),
        (
            &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x12],
            "ML-DSA-65",
        ),
        (
            &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x13],
            "ML-DSA-87",
        ),
    ];
    NAMES.iter().find(|(o, _)| *o == oid).map(|(_, n)| *n)
}

/// An OID's dotted form ("1.2.840.10045.2.1"); "?" for bytes that are not one.
fn dotted(oid: &[u8]) -> String {
    let mut arcs: Vec<u64> = Vec::new();
    let mut value: u64 = 0;
    for &b in oid {
        if value > u64::MAX >> 7 {
            return "?".into();
        }
        value = value << 7 | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            arcs.push(value);
            value = 0;
        }
    }
    let Some(&first) = arcs.first() else {
        return "?".into();
    };
    if value != 0 || oid.last().is_some_and(|b| b & 0x80 != 0) {
        return "?".into();
    }
    let (a, b) = match first {
        0..=39 => (0, first),
        40..=79 => (1, first - 40),
        _ => (2, first - 80),
    };
    std::iter::once(a)
        .chain(std::iter::once(b))
        .chain(arcs[1..].iter().copied())
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DER element of `tag` around `contents`, short or long form.
    fn der(tag: u8, contents: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        let n = contents.len();
        if n < 0x80 {
            out.push(n as u8);
        } else {
            out.extend([0x82, (n >> 8) as u8, n as u8]);
        }
        out.extend_from_slice(contents);
        out
    }

    fn cert(key_alg: &[u8], sig_oid: &[u8], padding: usize) -> Vec<u8> {
        let mut tbs = der(0xa0, &der(0x02, &[2]));
        tbs.extend(der(0x02, &[1])); // serial
        tbs.extend(der(SEQUENCE, &der(OID, sig_oid))); // signature
        tbs.extend(der(SEQUENCE, &[])); // issuer
        tbs.extend(der(SEQUENCE, &[])); // validity
        tbs.extend(der(SEQUENCE, &[])); // subject
        let mut spki = der(SEQUENCE, key_alg);
        spki.extend(der(0x03, &vec![0; padding]));
        tbs.extend(der(SEQUENCE, &spki));
        let mut c = der(SEQUENCE, &tbs);
        c.extend(der(SEQUENCE, &der(OID, sig_oid)));
        c.extend(der(0x03, &[0, 1, 2]));
        der(SEQUENCE, &c)
    }

    const EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
    const P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
    const ECDSA_SHA256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02];
    const MLDSA65: &[u8] = &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x12];

    #[test]
    fn names_an_ec_key_by_its_curve_and_an_ml_dsa_key_by_its_oid() {
        let mut ec = der(OID, EC);
        ec.extend(der(OID, P256));
        assert_eq!(
            algorithms(&cert(&ec, ECDSA_SHA256, 65)),
            Some(("ECDSA P-256".into(), "ECDSA with SHA-256".into()))
        );
        // A 1,952-byte key (ML-DSA-65's, FIPS 204): the long length form.
        assert_eq!(
            algorithms(&cert(&der(OID, MLDSA65), MLDSA65, 1952)),
            Some(("ML-DSA-65".into(), "ML-DSA-65".into()))
        );
    }

    #[test]
    fn an_unknown_oid_is_dotted_and_a_truncated_certificate_is_none() {
        // 1.2.3.4: first byte 40 * 1 + 2.
        let c = cert(&der(OID, &[0x2a, 0x03, 0x04]), &[0x2a, 0x03, 0x04], 3);
        assert_eq!(algorithms(&c), Some(("1.2.3.4".into(), "1.2.3.4".into())));
        for cut in 0..c.len() {
            assert_eq!(algorithms(&c[..cut]), None, "cut at {cut}");
        }
        assert_eq!(dotted(&[0x2a, 0x86]), "?");
        // 2.16.840.1.101.3.4.3.18: arcs past the first byte in base 128.
        assert_eq!(dotted(MLDSA65), "2.16.840.1.101.3.4.3.18");
    }
}
