//go:build go1.27

package main

// ML-DSA (FIPS 204), which crypto/mldsa and crypto/tls support from Go 1.27:
// the evidence's naming of an ML-DSA leaf, and the ML-DSA-44/65/87 phases over
// a TLS 1.3 CertificateVerify, with the discipline of the ECDSA-P256 ones
// (benches.go). Builds with older Go get mldsa_go124.go instead.
//
// The timed calls are the ones crypto/tls makes in TLS 1.3 (Go 1.27.3):
//   - the server signs in handshake_server_tls13.go (sendServerCertificate)
//     with crypto.SignMessage(key, rand, signed, crypto.Hash(0)): an ML-DSA
//     scheme signs the content directly, with no pre-hash (auth.go,
//     typeAndHashFromSignatureScheme: directSigning). *mldsa.PrivateKey is not
//     a crypto.MessageSigner, so SignMessage calls its Sign with
//     crypto.Hash(0), which is pure ML-DSA with an empty context, hedged (the
//     randomness comes from the module's DRBG; the reader is not used);
//   - the client verifies in handshake_client_tls13.go (readServerCertificate)
//     through verifyHandshakeSignature (auth.go), which calls
//     mldsa.Verify(pub, signed, sig, nil): pure ML-DSA, empty context, with
//     the public key crypto/x509 parsed from the leaf certificate.

import (
	"bytes"
	"crypto"
	"crypto/mldsa"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strconv"
	"time"
)

var mldsaParameterSets = []mldsa.Parameters{mldsa.MLDSA44(), mldsa.MLDSA65(), mldsa.MLDSA87()}

// mldsaLeafKey names an ML-DSA leaf key and gives its TLS 1.3 scheme (see
// leafKey for why the scheme follows from the key).
func mldsaLeafKey(pub crypto.PublicKey) (string, tls.SignatureScheme, bool) {
	k, ok := pub.(*mldsa.PublicKey)
	if !ok {
		return "", 0, false
	}
	switch k.Parameters() {
	case mldsa.MLDSA44():
		return "ML-DSA-44", tls.MLDSA44, true // 0x0904
	case mldsa.MLDSA65():
		return "ML-DSA-65", tls.MLDSA65, true // 0x0905
	case mldsa.MLDSA87():
		return "ML-DSA-87", tls.MLDSA87, true // 0x0906
	}
	return "", 0, false
}

// mldsaCertKeys are the ML-DSA leaf keys crypto/tls serves and verifies, as
// pqprof's authentications name their algorithms.
func mldsaCertKeys() []string { return []string{"ML-DSA-44", "ML-DSA-65", "ML-DSA-87"} }

// mldsaPhases are keygen, sign and verify for each parameter set.
func mldsaPhases() []phaseMaker {
	var makers []phaseMaker
	for _, p := range mldsaParameterSets {
		makers = append(makers,
			func() (*phase, error) { return newMLDSAKeygen(p) },
			func() (*phase, error) { return newMLDSASign(p) },
			func() (*phase, error) { return newMLDSAVerify(p) },
		)
	}
	return makers
}

// thousands writes n with a comma every three digits, as the Includes texts
// spell sizes.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// mldsaSignCV is a TLS 1.3 server's CertificateVerify signature with an
// ML-DSA key, made with crypto/tls's call (see the top of this file).
func mldsaSignCV(key crypto.Signer, msg []byte) ([]byte, error) {
	return crypto.SignMessage(key, rand.Reader, msg, crypto.Hash(0))
}

// mldsaVerifyCV is a TLS 1.3 client's check of it, with crypto/tls's call.
func mldsaVerifyCV(pub *mldsa.PublicKey, msg, sig []byte) error {
	return mldsa.Verify(pub, msg, sig, nil)
}

// checkMLDSASignature checks a signature's size and that it verifies.
func checkMLDSASignature(p mldsa.Parameters, pub *mldsa.PublicKey, msg, sig []byte) error {
	if err := expectSize("the "+p.String()+" signature", sig, p.SignatureSize()); err != nil {
		return err
	}
	if err := mldsaVerifyCV(pub, msg, sig); err != nil {
		return fmt.Errorf("a signature does not verify: %w", err)
	}
	return nil
}

// checkTamperedMLDSASignature makes sure a signature with one bit flipped is
// refused. The bit is in the first byte, the commitment hash c~, so that the
// refusal comes from the verification equation, not from a malformed hint
// encoding at the end of the signature.
func checkTamperedMLDSASignature(p mldsa.Parameters, pub *mldsa.PublicKey, msg, sig []byte) error {
	bad := bytes.Clone(sig)
	bad[0] ^= 1
	if mldsaVerifyCV(pub, msg, bad) == nil {
		return fmt.Errorf("%s: a tampered signature verified", p)
	}
	return nil
}

// loadedMLDSAKey is a private key as serve has it: generated, written as a
// seed-only PKCS#8 key and read back with x509.ParsePKCS8PrivateKey (which
// expands the seed once, as the signing key keeps it).
func loadedMLDSAKey(p mldsa.Parameters) (*mldsa.PrivateKey, error) {
	sk, err := mldsa.GenerateKey(p)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(sk)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, err
	}
	loaded, ok := k.(*mldsa.PrivateKey)
	if !ok || !loaded.Equal(sk) {
		return nil, fmt.Errorf("%s: the PKCS#8 key did not read back as the same key", p)
	}
	return loaded, nil
}

// certificatePublicKey is a public key as a TLS client has it from the leaf
// certificate: crypto/x509 parses the SubjectPublicKeyInfo with
// mldsa.NewPublicKey, which keeps the encoding and its hash tr but not the
// expanded matrix A (Verify expands it every call).
func certificatePublicKey(pub *mldsa.PublicKey) (*mldsa.PublicKey, error) {
	spki, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(spki)
	if err != nil {
		return nil, err
	}
	parsed, ok := k.(*mldsa.PublicKey)
	if !ok || !parsed.Equal(pub) {
		return nil, errors.New("the SubjectPublicKeyInfo did not parse back as the same ML-DSA key")
	}
	return parsed, nil
}

// ---- keygen ----

type mldsaKeyPair struct {
	sk  *mldsa.PrivateKey
	pub []byte // exported
}

type mldsaKeygenBench struct {
	p   mldsa.Parameters
	out []mldsaKeyPair
}

func newMLDSAKeygen(p mldsa.Parameters) (*phase, error) {
	return &phase{
		Algorithm: p.String(), Operation: "sig.keygen",
		Includes: fmt.Sprintf("mldsa.GenerateKey(mldsa.%s()): a fresh 32-byte seed expanded to the private key "+
			"(the matrix A and s1, s2, t0 in NTT form, and the public key with its hash tr), "+
			"and exporting the %s-byte public key (PublicKey().Bytes()).",
			mldsaFunc(p), thousands(p.PublicKeySize())),
		bench: &mldsaKeygenBench{p: p},
	}, nil
}

func mldsaFunc(p mldsa.Parameters) string {
	switch p {
	case mldsa.MLDSA44():
		return "MLDSA44"
	case mldsa.MLDSA65():
		return "MLDSA65"
	}
	return "MLDSA87"
}

func (b *mldsaKeygenBench) run(n int, samples []int64) error {
	b.out = reuse(b.out, n)
	for i := range n {
		t0 := time.Now()
		sk, err := mldsa.GenerateKey(b.p)
		var pub []byte
		if err == nil {
			pub = sk.PublicKey().Bytes()
		}
		samples[i] = int64(time.Since(t0))
		if err != nil {
			return err
		}
		b.out[i] = mldsaKeyPair{sk, pub}
	}
	return nil
}

// check uses the new key end to end: it signs a CertificateVerify content,
// and the signature verifies under the exported public key, imported from
// its bytes.
func (b *mldsaKeygenBench) check(i int) error {
	kp := b.out[i]
	if err := expectSize("the "+b.p.String()+" public key", kp.pub, b.p.PublicKeySize()); err != nil {
		return err
	}
	pub, err := mldsa.NewPublicKey(b.p, kp.pub)
	if err != nil {
		return err
	}
	msg := certificateVerifyMessage(randomBytes(transcriptBytes))
	sig, err := mldsaSignCV(kp.sk, msg)
	if err != nil {
		return err
	}
	return checkMLDSASignature(b.p, pub, msg, sig)
}

// ---- sign ----

type mldsaSignBench struct {
	p   mldsa.Parameters
	key *mldsa.PrivateKey
	pub *mldsa.PublicKey
	out []signed
}

func newMLDSASign(p mldsa.Parameters) (*phase, error) {
	key, err := loadedMLDSAKey(p)
	if err != nil {
		return nil, err
	}
	pub, err := certificatePublicKey(key.PublicKey())
	if err != nil {
		return nil, err
	}
	msg := certificateVerifyMessage(randomBytes(transcriptBytes))
	sig, err := mldsaSignCV(key, msg)
	if err != nil {
		return nil, err
	}
	if err := checkMLDSASignature(p, pub, msg, sig); err != nil {
		return nil, err
	}
	if err := checkTamperedMLDSASignature(p, pub, msg, sig); err != nil {
		return nil, err
	}
	return &phase{
		Algorithm: p.String(), Operation: "sig.sign",
		Includes: fmt.Sprintf("crypto.SignMessage(key, rand.Reader, content, crypto.Hash(0)), the call crypto/tls's TLS 1.3 server makes, "+
			"over the 130-byte CertificateVerify content (a new transcript hash each call): pure %s, hedged, empty context, no pre-hash, "+
			"a %s-byte signature; the key already loaded from its seed-only PKCS#8 form (expanded once).",
			p, thousands(p.SignatureSize())),
		bench: &mldsaSignBench{p: p, key: key, pub: pub},
	}, nil
}

func (b *mldsaSignBench) run(n int, samples []int64) error {
	b.out = reuse(b.out, n)
	var signer crypto.Signer = b.key // as crypto/tls holds it: tls.Certificate.PrivateKey.(crypto.Signer)
	for i := range n {
		msg := certificateVerifyMessage(randomBytes(transcriptBytes))
		t0 := time.Now()
		sig, err := mldsaSignCV(signer, msg)
		samples[i] = int64(time.Since(t0))
		if err != nil {
			return err
		}
		b.out[i] = signed{msg, sig}
	}
	return nil
}

func (b *mldsaSignBench) check(i int) error {
	return checkMLDSASignature(b.p, b.pub, b.out[i].msg, b.out[i].sig)
}

// ---- verify ----

type mldsaVerifyBench struct {
	p    mldsa.Parameters
	pub  *mldsa.PublicKey
	pool []signed
	next int
	out  []error
}

func newMLDSAVerify(p mldsa.Parameters) (*phase, error) {
	key, err := loadedMLDSAKey(p)
	if err != nil {
		return nil, err
	}
	pub, err := certificatePublicKey(key.PublicKey())
	if err != nil {
		return nil, err
	}
	b := &mldsaVerifyBench{p: p, pub: pub}
	for range poolSize {
		msg := certificateVerifyMessage(randomBytes(transcriptBytes))
		sig, err := mldsaSignCV(key, msg)
		if err != nil {
			return nil, err
		}
		if err := expectSize("the "+p.String()+" signature", sig, p.SignatureSize()); err != nil {
			return nil, err
		}
		b.pool = append(b.pool, signed{msg, sig})
	}
	if err := checkTamperedMLDSASignature(p, pub, b.pool[0].msg, b.pool[0].sig); err != nil {
		return nil, err
	}
	return &phase{
		Algorithm: p.String(), Operation: "sig.verify",
		Includes: fmt.Sprintf("mldsa.Verify(pub, content, sig, nil), the call crypto/tls's TLS 1.3 client makes, "+
			"of a %s-byte signature over the 130-byte CertificateVerify content: pure %s, empty context; "+
			"the public key already parsed from its SubjectPublicKeyInfo as crypto/x509 parses a certificate's "+
			"(it keeps the %s-byte encoding and its hash tr, so each Verify expands the matrix A itself).",
			thousands(p.SignatureSize()), p, thousands(p.PublicKeySize())),
		bench: b,
	}, nil
}

func (b *mldsaVerifyBench) run(n int, samples []int64) error {
	b.out = reuse(b.out, n)
	for i := range n {
		in := &b.pool[b.next%poolSize]
		b.next++
		t0 := time.Now()
		err := mldsaVerifyCV(b.pub, in.msg, in.sig)
		samples[i] = int64(time.Since(t0))
		b.out[i] = err
	}
	return nil
}

func (b *mldsaVerifyBench) check(i int) error {
	if b.out[i] != nil {
		return fmt.Errorf("a valid signature was rejected: %w", b.out[i])
	}
	return nil
}
