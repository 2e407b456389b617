package main

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The references the phases are checked against, against the RFCs' vectors.
func TestReferenceHMACMatchesRFC4231(t *testing.T) {
	cases := []struct {
		name     string
		key, msg []byte
		want     string
	}{
		{"test case 2", []byte("Jefe"), []byte("what do ya want for nothing?"),
			"af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649"},
		// A 131-byte key, longer than SHA-384's block: hashed first.
		{"test case 6", bytes.Repeat([]byte{0xaa}, 131), []byte("Test Using Larger Than Block-Size Key - Hash Key First"),
			"4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c60c2ef6ab4030fe8296248df163f44952"},
	}
	for _, c := range cases {
		want := unhex(t, c.want)
		if got := refHMAC(newSHA384, c.key, c.msg); !bytes.Equal(got, want) {
			t.Errorf("RFC 4231 %s: refHMAC = %x", c.name, got)
		}
		if got := finishedMAC(c.key, c.msg); !bytes.Equal(got, want) {
			t.Errorf("RFC 4231 %s: crypto/hmac = %x", c.name, got)
		}
	}
}

// RFC 5869 has no SHA-384 vectors: appendix A.1's SHA-256 one holds the
// construction, its 42 bytes needing two HMAC blocks.
func TestReferenceHKDFMatchesRFC5869(t *testing.T) {
	ikm := bytes.Repeat([]byte{0x0b}, 22)
	salt := unhex(t, "000102030405060708090a0b0c")
	info := unhex(t, "f0f1f2f3f4f5f6f7f8f9")
	newSHA256 := func() hash.Hash { return sha256.New() }
	if got := refHMAC(newSHA256, salt, ikm); !bytes.Equal(got, unhex(t, "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5")) {
		t.Errorf("PRK = %x", got)
	}
	want := unhex(t, "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
	if got := refHKDF(newSHA256, salt, ikm, info, 42); !bytes.Equal(got, want) {
		t.Errorf("OKM = %x", got)
	}
}

func TestSHA384KnownAnswer(t *testing.T) {
	if err := checkSHA384(); err != nil {
		t.Fatal(err)
	}
}

// RFC 8446 section 7.1: HkdfLabel is the length, then "tls13 " + label and
// the context, each after its length byte.
func TestExpandLabelInfoLayout(t *testing.T) {
	info := expandLabelInfo("derived", 48, nil)
	want := append([]byte{0, 48, 13}, "tls13 derived"...)
	if want = append(want, 0); !bytes.Equal(info, want) {
		t.Errorf("info = %x, want %x", info, want)
	}
	ctx := bytes.Repeat([]byte{0xcc}, 48)
	info = expandLabelInfo("c hs traffic", 48, ctx)
	if len(info) != 2+1+18+1+48 || info[21] != 48 || !bytes.Equal(info[22:], ctx) {
		t.Errorf("info with a context = %x", info)
	}
}

// The workloads have pqprof's shapes (src/case/key_schedule.rs, aead.rs).
func TestKeyScheduleWorkloadsHavePqprofsSizes(t *testing.T) {
	p, err := newKDFExtract()
	if err != nil {
		t.Fatal(err)
	}
	ex := p.bench.(*kdfExtractBench)
	if len(ex.salt) != 48 || len(ex.ikms) != 16 || len(ex.ikms[0]) != 32 {
		t.Errorf("extract: %d-byte salt, %d secrets of %d bytes", len(ex.salt), len(ex.ikms), len(ex.ikms[0]))
	}
	p, err = newKDFExpand()
	if err != nil {
		t.Fatal(err)
	}
	exp := p.bench.(*kdfExpandBench)
	if len(exp.prk) != 48 || len(exp.infos) != len(tls13Labels) {
		t.Errorf("expand: %d-byte PRK, %d infos", len(exp.prk), len(exp.infos))
	}
	for i, info := range exp.infos {
		if want := 2 + 1 + len("tls13 ") + len(tls13Labels[i]) + 1 + 48; len(info) != want {
			t.Errorf("expand: info %d is %d bytes, want %d", i, len(info), want)
		}
	}
	p, err = newMAC()
	if err != nil {
		t.Fatal(err)
	}
	m := p.bench.(*macBench)
	if len(m.key) != 48 || len(m.msgs) != 16 || len(m.msgs[0]) != 48 {
		t.Errorf("mac: %d-byte key, %d messages of %d bytes", len(m.key), len(m.msgs), len(m.msgs[0]))
	}
	for _, finish := range []bool{false, true} {
		p, err = newHash(finish)
		if err != nil {
			t.Fatal(err)
		}
		h := p.bench.(*hashBench)
		if len(h.prefix) != 300 || len(h.block) != 128 {
			t.Errorf("%s: %d-byte prefix, %d-byte block", p.Operation, len(h.prefix), len(h.block))
		}
	}
	p, err = newAEADKey()
	if err != nil {
		t.Fatal(err)
	}
	if k := p.bench.(*aeadKeyBench); len(k.key) != 32 || len(k.want) != 64+16 {
		t.Errorf("aead.key: %d-byte key, %d-byte probe", len(k.key), len(k.want))
	}
}

// Each new phase's outputs verify, and a plausible wrong output (made from
// other inputs, not a flipped bit: TestChecksCatchACorruptedOutput does that)
// is refused.
func TestKeySchedulePhasesRefuseOutputsOfOtherInputs(t *testing.T) {
	run := func(t *testing.T, p *phase, n int) {
		t.Helper()
		if err := p.bench.run(n, make([]int64, n)); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := p.bench.check(i); err != nil {
				t.Fatalf("%s %s: output %d: %v", p.Algorithm, p.Operation, i, err)
			}
		}
	}
	const n = 2 * poolSize // every pool input, twice

	p, err := newKDFExtract()
	if err != nil {
		t.Fatal(err)
	}
	run(t, p, n)
	ex := p.bench.(*kdfExtractBench)
	ex.out[0].input = 1 // the PRK of secret 0, taken for secret 1's
	if p.bench.check(0) == nil {
		t.Error("extract: another secret's PRK passed")
	}
	ex.out[1].out, _ = hkdf.Extract(sha512.New384, ex.ikms[1], randomBytes(48))
	if p.bench.check(1) == nil {
		t.Error("extract: a PRK with another salt passed")
	}

	p, err = newKDFExpand()
	if err != nil {
		t.Fatal(err)
	}
	run(t, p, n)
	exp := p.bench.(*kdfExpandBench)
	exp.out[0].input = 7 // "derived" output for "finished"
	if p.bench.check(0) == nil {
		t.Error("expand: another label's secret passed")
	}
	exp.out[1].out = exp.out[1].out[:32]
	if p.bench.check(1) == nil {
		t.Error("expand: a 32-byte secret passed")
	}

	p, err = newMAC()
	if err != nil {
		t.Fatal(err)
	}
	run(t, p, n)
	m := p.bench.(*macBench)
	m.out[0].out = finishedMAC(randomBytes(48), m.msgs[m.out[0].input])
	if p.bench.check(0) == nil {
		t.Error("mac: a tag with another key passed")
	}
	h256 := hmac.New(sha256.New, m.key)
	h256.Write(m.msgs[m.out[1].input])
	m.out[1].out = h256.Sum(nil)
	if p.bench.check(1) == nil {
		t.Error("mac: an HMAC-SHA256 tag passed")
	}

	p, err = newHash(false)
	if err != nil {
		t.Fatal(err)
	}
	run(t, p, n)
	hb := p.bench.(*hashBench)
	hb.ctxs[0].Reset()
	hb.ctxs[0].Write(hb.prefix) // as if the timed Write had taken nothing
	if p.bench.check(0) == nil {
		t.Error("hash.block: a transcript without the block passed")
	}

	p, err = newHash(true)
	if err != nil {
		t.Fatal(err)
	}
	run(t, p, n)
	hf := p.bench.(*hashBench)
	hf.ctxs[0].Write(hf.block)
	hf.out[0] = hf.ctxs[0].Sum(nil) // a later state's digest
	if p.bench.check(0) == nil {
		t.Error("hash.finish: the digest of a longer transcript passed")
	}

	p, err = newAEADKey()
	if err != nil {
		t.Fatal(err)
	}
	run(t, p, n)
	k := p.bench.(*aeadKeyBench)
	other := bytes.Clone(k.key)
	other[31] ^= 1
	if k.out[0], err = newRecordKey(other); err != nil {
		t.Fatal(err)
	}
	if p.bench.check(0) == nil {
		t.Error("aead.key: a key from other bytes passed")
	}
}

// hash.finish leaves the running hash as it was, as pqprof's finish_copy
// does: Sum twice, or Sum then more bytes, agrees with one-shot digests.
func TestSumFinishesACopy(t *testing.T) {
	h := sha512.New384()
	h.Write([]byte("abc"))
	first := h.Sum(nil)
	if !bytes.Equal(first, h.Sum(nil)) {
		t.Error("a second Sum differs")
	}
	h.Write([]byte("def"))
	want := sha512.Sum384([]byte("abcdef"))
	if !bytes.Equal(h.Sum(nil), want[:]) {
		t.Error("Sum changed the running hash")
	}
}
