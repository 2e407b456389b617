package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
)

// leafKey names the key of the server's leaf certificate as the evidence does
// ("ECDSA P-256", "ML-DSA-44", "ML-DSA-65", "ML-DSA-87"; "other" for any other
// key), with the TLS 1.3 SignatureScheme of the CertificateVerify that key
// makes (0 for "other").
//
// The scheme is inferred from the key, because crypto/tls does not report it:
// ConnectionState has no field for it (Go 1.27 keeps the peer's scheme in an
// unexported testing-only field). The inference is exact in TLS 1.3 for these
// keys: an ECDSA scheme names its curve and hash (RFC 8446 section 4.2.3), so
// a P-256 key signs only with ecdsa_secp256r1_sha256, and each ML-DSA
// parameter set has one scheme of its own (mldsa44/65/87). crypto/tls's
// client enforces it too: it refuses a CertificateVerify whose scheme is not
// among signatureSchemesForPublicKey(leaf key), which for these keys is that
// one scheme (crypto/tls handshake_client_tls13.go, readServerCertificate),
// so a handshake that completed used exactly it.
func leafKey(pub crypto.PublicKey) (name string, scheme tls.SignatureScheme) {
	if k, ok := pub.(*ecdsa.PublicKey); ok && k.Curve == elliptic.P256() {
		return "ECDSA P-256", 0x0403 // ecdsa_secp256r1_sha256
	}
	if name, scheme, ok := mldsaLeafKey(pub); ok {
		return name, scheme
	}
	return "other", 0
}
