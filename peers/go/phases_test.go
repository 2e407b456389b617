package main

import (
	"bytes"
	"crypto/sha256"
	"slices"
	"testing"
	"time"
)

func TestCertificateVerifyMessageLayout(t *testing.T) {
	hash := bytes.Repeat([]byte{0xab}, sha256.Size)
	m := certificateVerifyMessage(hash)
	if len(m) != 130 || cvMessageSize != 130 {
		t.Fatalf("message is %d bytes (constant %d), RFC 8446 makes it 130", len(m), cvMessageSize)
	}
	if !bytes.Equal(m[:64], bytes.Repeat([]byte{0x20}, 64)) {
		t.Errorf("the first 64 bytes are not spaces: %x", m[:64])
	}
	if string(m[64:97]) != "TLS 1.3, server CertificateVerify" {
		t.Errorf("context string is %q", m[64:97])
	}
	if m[97] != 0 {
		t.Errorf("separator is %#x, want 0", m[97])
	}
	if !bytes.Equal(m[98:], hash) {
		t.Errorf("the transcript hash is not the last 32 bytes")
	}
}

func TestRecordNonceXorsTheSequenceNumberIntoTheLastEightBytes(t *testing.T) {
	var iv [12]byte
	for i := range iv {
		iv[i] = 0xff
	}
	n := recordNonce(iv, 1)
	want := [12]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}
	if n != want {
		t.Errorf("nonce(seq 1) = %x, want %x", n, want)
	}
	n = recordNonce([12]byte{}, 0x0102030405060708)
	want = [12]byte{0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}
	if n != want {
		t.Errorf("nonce(zero IV) = %x, want %x", n, want)
	}
	if recordNonce(iv, 0) != iv {
		t.Errorf("sequence 0 must leave the IV as it is")
	}
}

func TestRecordAADIsTheRecordHeader(t *testing.T) {
	got := recordAAD(recordSize + gcmTagSize) // 16,400 = 0x4010
	if want := []byte{23, 3, 3, 0x40, 0x10}; !bytes.Equal(got, want) {
		t.Errorf("AAD = %x, want %x", got, want)
	}
}

func TestSameSecretRejectsAWrongOrShortSecret(t *testing.T) {
	a := bytes.Repeat([]byte{7}, 32)
	if err := sameSecret(a, bytes.Clone(a)); err != nil {
		t.Errorf("equal secrets rejected: %v", err)
	}
	b := bytes.Clone(a)
	b[31] ^= 1
	if sameSecret(a, b) == nil {
		t.Error("a secret differing in one bit was accepted")
	}
	if sameSecret(a[:16], a[:16]) == nil {
		t.Error("a 16-byte secret was accepted")
	}
}

func TestCheckKEMRejectsTheWrongKeyAndSecret(t *testing.T) {
	dk, ek, err := kemKeygen()
	if err != nil {
		t.Fatal(err)
	}
	if len(ek) != mlkem768EncapsulationKeySize {
		t.Fatalf("encapsulation key is %d bytes", len(ek))
	}
	ss, ct, err := kemEncapsulate(ek)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkKEM(dk, ss, ct); err != nil {
		t.Fatalf("a good encapsulation was rejected: %v", err)
	}
	other, _, err := kemKeygen()
	if err != nil {
		t.Fatal(err)
	}
	if checkKEM(other, ss, ct) == nil {
		t.Error("decapsulating with another key was accepted")
	}
	wrong := bytes.Clone(ss)
	wrong[0] ^= 1
	if checkKEM(dk, wrong, ct) == nil {
		t.Error("a wrong secret was accepted")
	}
	if checkKEM(dk, ss, ct[:100]) == nil {
		t.Error("a short ciphertext was accepted")
	}
}

func TestCheckDHRejectsTheWrongPeer(t *testing.T) {
	for _, c := range []dhCurve{x25519, p256} {
		a, _, err := dhKeygen(c.curve)
		if err != nil {
			t.Fatal(err)
		}
		b, bShare, err := dhKeygen(c.curve)
		if err != nil {
			t.Fatal(err)
		}
		if len(bShare) != c.shareSize {
			t.Errorf("%s share is %d bytes, want %d", c.name, len(bShare), c.shareSize)
		}
		secret, err := dhDerive(c.curve, a, bShare)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.checkDH(secret, a.PublicKey().Bytes(), b); err != nil {
			t.Errorf("%s: a good exchange was rejected: %v", c.name, err)
		}
		stranger, _, err := dhKeygen(c.curve)
		if err != nil {
			t.Fatal(err)
		}
		if c.checkDH(secret, a.PublicKey().Bytes(), stranger) == nil {
			t.Errorf("%s: a secret with another peer was accepted", c.name)
		}
		if _, err := dhDerive(c.curve, a, bShare[:len(bShare)-1]); err == nil {
			t.Errorf("%s: a truncated share was imported", c.name)
		}
	}
}

func TestIterationsFollowTheBudget(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		requested    int
		budget, call time.Duration
		want         int
	}{
		{1000, 2000 * ms, 30 * time.Microsecond, 1000}, // 66,666 fit: the count wins
		{1000, 2000 * ms, 10 * ms, 200},                // the budget wins
		{1000, 2000 * ms, 1400 * ms, 10},               // the minimum
		{5, 2000 * ms, 1400 * ms, 5},                   // never more than asked for
		{200, 200 * ms, 0, 200},                        // a call too fast for the clock
	}
	for _, c := range cases {
		if got := iterationsFor(c.requested, c.budget, c.call); got != c.want {
			t.Errorf("iterationsFor(%d, %v, %v) = %d, want %d", c.requested, c.budget, c.call, got, c.want)
		}
	}
}

func TestChunksAddUp(t *testing.T) {
	for _, c := range [][2]int{{1000, 10}, {10, 10}, {7, 10}, {13, 4}, {1, 1}, {200, 2}} {
		total := 0
		for r := range c[1] {
			total += chunkSize(c[0], c[1], r)
		}
		if total != c[0] {
			t.Errorf("chunks of %d over %d rounds add up to %d", c[0], c[1], total)
		}
	}
}

func TestMedian(t *testing.T) {
	if got := median([]int64{5, 1, 3}); got != 3 {
		t.Errorf("median of 3 = %d", got)
	}
	if got := median([]int64{4, 1, 3, 2}); got != 2 {
		t.Errorf("median of 4 = %d", got)
	}
}

// Every phase runs the whole discipline on a tiny budget: it gets its
// iterations, and the first and last of each chunk are verified.
func TestMeasureRunsAndVerifiesEveryPhase(t *testing.T) {
	phases, err := allPhases()
	if err != nil {
		t.Fatal(err)
	}
	s := settings{iterations: 12, rounds: 3, budgetMs: 1000, warmupMs: 0}
	if err := measure(phases, s); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range phases {
		name := p.Algorithm + " " + p.Operation
		seen[name] = true
		if len(p.SamplesNs) != 12 {
			t.Errorf("%s: %d samples, want 12", name, len(p.SamplesNs))
		}
		if p.Warmup != 1 {
			t.Errorf("%s: %d warm-up calls, want 1", name, p.Warmup)
		}
		if p.Verified < 1+2*3 { // warm-up, then first and last of 3 chunks
			t.Errorf("%s: only %d outputs verified", name, p.Verified)
		}
		if slices.Contains(p.SamplesNs, 0) || p.Includes == "" {
			t.Errorf("%s: a zero sample or no includes", name)
		}
		// The key exchanges and signatures also in a handshake's state: as
		// many as each chunk, up to situPerChunk, here 4 a chunk.
		wantSitu := 0
		if inState(p.Operation) {
			wantSitu = 12
		}
		if len(p.SituNs) != wantSitu || slices.Contains(p.SituNs, 0) {
			t.Errorf("%s: %d calls in a handshake's state, want %d, none zero", name, len(p.SituNs), wantSitu)
		}
	}
	// 17 (11, then aead.key and the key schedule's five), and ML-DSA-44/65/87
	// keygen, sign and verify where this Go has crypto/mldsa.
	if want := 17 + len(mldsaPhases()); len(seen) != want {
		t.Errorf("%d distinct phases, want %d", len(seen), want)
	}
}

// A check must fail when the output it checks is wrong: each bench's last
// output is corrupted in place after one call.
func TestChecksCatchACorruptedOutput(t *testing.T) {
	phases, err := allPhases()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range phases {
		name := p.Algorithm + " " + p.Operation
		if err := p.bench.run(1, make([]int64, 1)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := p.bench.check(0); err != nil {
			t.Fatalf("%s: a good output was rejected: %v", name, err)
		}
		switch b := p.bench.(type) {
		case *kemKeygenBench:
			other, _, _ := kemKeygen()
			b.out[0].dk = other
		case *kemEncapsBench:
			b.out[0].sharedKey[0] ^= 1
		case *kemDecapsBench:
			b.out[0].sharedKey[0] ^= 1
		case *dhKeygenBench:
			b.pubs[0][len(b.pubs[0])-1] ^= 1 // the exported share no longer matches the key
		case *dhDeriveBench:
			b.out[0].secret[0] ^= 1
		case *sigSignBench:
			b.out[0].msg[len(b.out[0].msg)-1] ^= 1
		case *sigVerifyBench:
			b.out[0] = false
		case *aeadBench:
			b.out[0][0] ^= 1
		case *aeadKeyBench:
			b.out[0], _ = newRecordKey(randomBytes(aes256KeySize))
		case *kdfExtractBench:
			b.out[0].out[0] ^= 1
		case *kdfExpandBench:
			b.out[0].out[sha384Size-1] ^= 1
		case *macBench:
			b.out[0].out[0] ^= 1
		case *hashBench:
			if b.finish {
				b.out[0][0] ^= 1
			} else {
				b.ctxs[0].Write([]byte{0}) // one byte more than the transcript had
			}
		default:
			if !corruptMLDSA(b) {
				t.Fatalf("%s: no corruption for %T", name, b)
			}
		}
		if p.bench.check(0) == nil {
			t.Errorf("%s: a corrupted output passed its check", name)
		}
	}
}

func TestRawRoundTripsAgree(t *testing.T) {
	workloads, err := measureRaw(2, 3)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"ML-KEM-768 round trip", "P-256 ECDH round trip"}
	for i, w := range workloads {
		if w.Name != names[i] {
			t.Errorf("workload %d is %q, want %q", i, w.Name, names[i])
		}
		if len(w.SampleMediansNs) != 2 || len(w.SamplesNs) != 6 {
			t.Errorf("%s: %d medians and %d samples, want 2 and 6", w.Name, len(w.SampleMediansNs), len(w.SamplesNs))
		}
	}
}
