//go:build go1.27

package main

import (
	"crypto"
	"crypto/mldsa"
	"errors"
	"strings"
	"testing"
)

func mldsaKeys(t *testing.T, p mldsa.Parameters, n int) []crypto.Signer {
	t.Helper()
	keys := make([]crypto.Signer, n)
	for i := range keys {
		k, err := mldsa.GenerateKey(p)
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = k
	}
	return keys
}

// serve and client with an ML-DSA root -> intermediate -> leaf chain: the
// evidence names the leaf's key and scheme, and the server's flight (the
// ML-DSA-87 one about 21 kB) is captured whole.
func TestServeAnMLDSAChain(t *testing.T) {
	cases := []struct {
		p      mldsa.Parameters
		scheme uint16
	}{
		{mldsa.MLDSA65(), 0x0905},
		{mldsa.MLDSA44(), 0x0904},
		{mldsa.MLDSA87(), 0x0906},
	}
	for _, c := range cases {
		chainPath, keyPath, rootPath := writeChain(t, mldsaKeys(t, c.p, 3)...)
		s := newSession(t, "X25519MLKEM768", chainPath, keyPath, rootPath)
		ev, _ := s.evidenceAndRun("X25519MLKEM768", 2)
		if ev.CertKey != c.p.String() || uint16(ev.Scheme) != c.scheme || len(ev.ChainBytes) != 2 {
			t.Errorf("%s: evidence cert_key %q, scheme %#04x, chain %v", c.p, ev.CertKey, uint16(ev.Scheme), ev.ChainBytes)
		}
		t.Logf("%s: chain %v bytes, server flight %d bytes", c.p, ev.ChainBytes, ev.ServerFlightBytes)
		// Each certificate holds a public key and a signature of the set.
		for i, n := range ev.ChainBytes {
			if n < c.p.PublicKeySize()+c.p.SignatureSize() {
				t.Errorf("%s: certificate %d is %d bytes", c.p, i, n)
			}
		}
		// The flight has the two certificates and the CertificateVerify's signature.
		if min := int64(ev.ChainBytes[0] + ev.ChainBytes[1] + c.p.SignatureSize()); ev.ServerFlightBytes <= min {
			t.Errorf("%s: server flight %d bytes, want over %d", c.p, ev.ServerFlightBytes, min)
		}
	}
}

func TestMLDSALeafKeyNamesAndSchemes(t *testing.T) {
	for _, c := range []struct {
		p      mldsa.Parameters
		name   string
		scheme uint16
	}{
		{mldsa.MLDSA44(), "ML-DSA-44", 0x0904},
		{mldsa.MLDSA65(), "ML-DSA-65", 0x0905},
		{mldsa.MLDSA87(), "ML-DSA-87", 0x0906},
	} {
		k, err := mldsa.GenerateKey(c.p)
		if err != nil {
			t.Fatal(err)
		}
		if name, scheme := leafKey(k.PublicKey()); name != c.name || uint16(scheme) != c.scheme {
			t.Errorf("%s: leafKey gives %q, %#04x", c.p, name, uint16(scheme))
		}
	}
}

// The nine ML-DSA phases are registered, and their Includes name the call
// crypto/tls makes.
func TestMLDSAPhasesAreRegistered(t *testing.T) {
	phases, err := allPhases()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]*phase{}
	for _, p := range phases {
		found[p.Algorithm+" "+p.Operation] = p
	}
	for _, alg := range []string{"ML-DSA-44", "ML-DSA-65", "ML-DSA-87"} {
		for op, call := range map[string]string{
			"sig.keygen": "mldsa.GenerateKey",
			"sig.sign":   "crypto.SignMessage(key, rand.Reader, content, crypto.Hash(0))",
			"sig.verify": "mldsa.Verify(pub, content, sig, nil)",
		} {
			p := found[alg+" "+op]
			if p == nil {
				t.Errorf("no %s %s phase", alg, op)
				continue
			}
			if !strings.Contains(p.Includes, call) {
				t.Errorf("%s %s: Includes %q does not name %s", alg, op, p.Includes, call)
			}
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 130: "130", 1312: "1,312", 4627: "4,627", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q", n, got)
		}
	}
}

// corruptMLDSA corrupts an ML-DSA bench's first output so that its check
// must fail; it reports whether the bench was one.
func corruptMLDSA(b bench) bool {
	switch b := b.(type) {
	case *mldsaKeygenBench:
		other, _ := mldsa.GenerateKey(b.p)
		b.out[0].sk = other // the exported public key is no longer the key's
	case *mldsaSignBench:
		b.out[0].msg[len(b.out[0].msg)-1] ^= 1
	case *mldsaVerifyBench:
		b.out[0] = errors.New("rejected")
	default:
		return false
	}
	return true
}
