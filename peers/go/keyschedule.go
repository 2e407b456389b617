package main

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"time"
)

// The rest of a full TLS 1.3 handshake with TLS_AES_256_GCM_SHA384 (what
// suites/tls13-full.toml composes): the key schedule's HKDF-SHA384, the
// Finished HMAC-SHA384, the SHA-384 transcript hash and the record keys'
// AES-256-GCM setup. Each has the workload of pqprof's own case for it
// (src/case/key_schedule.rs and src/case/aead.rs), input sizes and pools
// alike, so that Go's numbers sit beside the Rust backends'; the inputs are
// random there too, so only their shapes can match.
//
// HKDF and HMAC outputs are checked against refHMAC and refHKDF below, built
// here on SHA-384 from the RFCs' definitions rather than on crypto/hmac,
// which crypto/hkdf is itself built on; SHA-384 is held to a FIPS 180-4 known
// answer before a phase that relies on it starts.

// Sizes from FIPS 180-4 (SHA-384: 48-byte digest, 128-byte block) and
// pqprof's cases.
const (
	sha384Size  = sha512.Size384
	sha384Block = sha512.BlockSize
	// key_schedule.rs: a running transcript has taken this much before the
	// measured block or finish, as one has by the time it is hashed.
	transcriptPrefixSize = 300
	aes256KeySize        = 32
)

// tls13Labels are the labels TLS 1.3 expands with (RFC 8446 sections 7.1 and
// 7.3), the eight key_schedule.rs rotates kdf.expand over.
var tls13Labels = []string{
	"derived",
	"c hs traffic",
	"s hs traffic",
	"c ap traffic",
	"s ap traffic",
	"exp master",
	"res master",
	"finished",
}

// expandLabelInfo is the HkdfLabel of HKDF-Expand-Label (RFC 8446 section
// 7.1): the output length (2 bytes), "tls13 " + label and the context, each
// after a one-byte length.
func expandLabelInfo(label string, length int, context []byte) []byte {
	full := "tls13 " + label
	info := []byte{byte(length >> 8), byte(length), byte(len(full))}
	info = append(info, full...)
	info = append(info, byte(len(context)))
	return append(info, context...)
}

// refHMAC is HMAC by RFC 2104's definition (section 2):
// H(K XOR opad || H(K XOR ipad || text)), K zero-padded to the block, a K
// longer than the block hashed first.
func refHMAC(newHash func() hash.Hash, key, msg []byte) []byte {
	h := newHash()
	if len(key) > h.BlockSize() {
		h.Write(key)
		key = h.Sum(nil)
		h.Reset()
	}
	pad := make([]byte, h.BlockSize())
	copy(pad, key)
	for i := range pad {
		pad[i] ^= 0x36
	}
	h.Write(pad)
	h.Write(msg)
	inner := h.Sum(nil)
	h.Reset()
	for i := range pad {
		pad[i] ^= 0x36 ^ 0x5c // ipad off, opad on
	}
	h.Write(pad)
	h.Write(inner)
	return h.Sum(nil)
}

// refHKDF is HKDF by RFC 5869 section 2: PRK = HMAC(salt, IKM), then
// T(i) = HMAC(PRK, T(i-1) || info || i) until length bytes.
func refHKDF(newHash func() hash.Hash, salt, ikm, info []byte, length int) []byte {
	prk := refHMAC(newHash, salt, ikm)
	var okm, t []byte
	for i := byte(1); len(okm) < length; i++ {
		t = refHMAC(newHash, prk, append(append(t, info...), i))
		okm = append(okm, t...)
	}
	return okm[:length]
}

func newSHA384() hash.Hash { return sha512.New384() }

// checkSHA384 holds crypto/sha512's SHA-384, which the references and the
// hash phases' expected digests rest on, to FIPS 180-4's example
// (SHA-384("abc"), also in NIST's SHA_All examples).
func checkSHA384() error {
	want, _ := hex.DecodeString("cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7")
	if got := sha512.Sum384([]byte("abc")); !bytes.Equal(got[:], want) {
		return errors.New(`SHA-384("abc") is not FIPS 180-4's digest`)
	}
	return nil
}

// checkOutput compares an output with the expected one, size first.
func checkOutput(what string, got, want []byte) error {
	if err := expectSize(what, got, len(want)); err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s differs from the reference", what)
	}
	return nil
}

// keyed is one output and the pool input it was made from.
type keyed struct {
	input int
	out   []byte
}

// ---- kdf.extract: HKDF-Extract, as the handshake secret is made ----

type kdfExtractBench struct {
	salt []byte
	ikms [][]byte
	want [][]byte // the reference PRK of each ikm
	next int
	out  []keyed
}

func newKDFExtract() (*phase, error) {
	if err := checkSHA384(); err != nil {
		return nil, err
	}
	// A hash-length salt (the "derived" secret) and 32-byte inputs (an ECDHE
	// secret), as key_schedule.rs has them.
	b := &kdfExtractBench{salt: randomBytes(sha384Size)}
	for range poolSize {
		ikm := randomBytes(sharedSecretSize)
		b.ikms = append(b.ikms, ikm)
		b.want = append(b.want, refHMAC(newSHA384, b.salt, ikm))
	}
	prk, err := hkdf.Extract(sha512.New384, b.ikms[1], b.salt)
	if err != nil {
		return nil, err
	}
	if checkOutput("the PRK", prk, b.want[0]) == nil {
		return nil, errors.New("HKDF-SHA384: a PRK from another secret matched")
	}
	return &phase{
		Algorithm: "HKDF-SHA384", Operation: "kdf.extract",
		Includes: "hkdf.Extract(sha512.New384, secret, salt) of a 32-byte secret with a 48-byte salt, as the handshake secret is made (RFC 8446 section 7.1): one HMAC-SHA384 keyed with the salt, returning the 48-byte PRK.",
		bench:    b,
	}, nil
}

func (b *kdfExtractBench) run(n int, samples []int64) error {
	b.out = reuse(b.out, n)
	for i := range n {
		j := b.next % poolSize
		b.next++
		ikm := b.ikms[j]
		t0 := time.Now()
		prk, err := hkdf.Extract(sha512.New384, ikm, b.salt)
		samples[i] = int64(time.Since(t0))
		if err != nil {
			return err
		}
		b.out[i] = keyed{j, prk}
	}
	return nil
}

// check: the PRK is HMAC(salt, IKM) (RFC 5869 section 2.2).
func (b *kdfExtractBench) check(i int) error {
	return checkOutput("the PRK", b.out[i].out, b.want[b.out[i].input])
}

// ---- kdf.expand: one HKDF-Expand-Label of a hash-length secret ----

type kdfExpandBench struct {
	prk   []byte
	infos []string // crypto/hkdf takes info as a string: converted before the timer
	want  [][]byte
	next  int
	out   []keyed
}

func newKDFExpand() (*phase, error) {
	if err := checkSHA384(); err != nil {
		return nil, err
	}
	salt, ikm := randomBytes(sha384Size), randomBytes(sha384Size)
	prk, err := hkdf.Extract(sha512.New384, ikm, salt)
	if err != nil {
		return nil, err
	}
	b := &kdfExpandBench{prk: prk}
	// Derive-Secret's info for each label, over a hash-length transcript hash.
	for _, label := range tls13Labels {
		info := expandLabelInfo(label, sha384Size, randomBytes(sha384Size))
		b.infos = append(b.infos, string(info))
		b.want = append(b.want, refHKDF(newSHA384, salt, ikm, info, sha384Size))
	}
	okm, err := hkdf.Expand(sha512.New384, prk, b.infos[1], sha384Size)
	if err != nil {
		return nil, err
	}
	if checkOutput("the expanded secret", okm, b.want[0]) == nil {
		return nil, errors.New("HKDF-SHA384: a secret expanded with another label matched")
	}
	return &phase{
		Algorithm: "HKDF-SHA384", Operation: "kdf.expand",
		Includes: "hkdf.Expand(sha512.New384, prk, info, 48): one HKDF-Expand-Label of a 48-byte secret (Derive-Secret, RFC 8446 section 7.1) over the eight TLS 1.3 labels with a 48-byte context, from a PRK extracted beforehand; one HMAC-SHA384 keyed with the PRK.",
		bench:    b,
	}, nil
}

func (b *kdfExpandBench) run(n int, samples []int64) error {
	b.out = reuse(b.out, n)
	for i := range n {
		j := b.next % len(b.infos)
		b.next++
		info := b.infos[j]
		t0 := time.Now()
		okm, err := hkdf.Expand(sha512.New384, b.prk, info, sha384Size)
		samples[i] = int64(time.Since(t0))
		if err != nil {
			return err
		}
		b.out[i] = keyed{j, okm}
	}
	return nil
}

// check: the output is the reference HKDF of the salt, the secret and the
// info, extract included, as key_schedule.rs checks it.
func (b *kdfExpandBench) check(i int) error {
	return checkOutput("the expanded secret", b.out[i].out, b.want[b.out[i].input])
}

// ---- mac.compute: the Finished MAC ----

// finishedMAC is TLS 1.3's verify_data (RFC 8446 section 4.4.4), HMAC keyed
// per call with the finished key over the transcript hash, made as crypto/tls
// makes it (key_schedule.go, finishedHash).
func finishedMAC(finishedKey, transcriptHash []byte) []byte {
	h := hmac.New(sha512.New384, finishedKey)
	h.Write(transcriptHash)
	return h.Sum(nil)
}

type macBench struct {
	key  []byte
	msgs [][]byte
	want [][]byte
	next int
	out  []keyed
}

func newMAC() (*phase, error) {
	if err := checkSHA384(); err != nil {
		return nil, err
	}
	b := &macBench{key: randomBytes(sha384Size)}
	for range poolSize {
		msg := randomBytes(sha384Size)
		b.msgs = append(b.msgs, msg)
		b.want = append(b.want, refHMAC(newSHA384, b.key, msg))
	}
	if checkOutput("the MAC", finishedMAC(b.key, b.msgs[1]), b.want[0]) == nil {
		return nil, errors.New("HMAC-SHA384: the MAC of another transcript hash matched")
	}
	return &phase{
		Algorithm: "HMAC-SHA384", Operation: "mac.compute",
		Includes: "hmac.New(sha512.New384, key) from the 48-byte finished key, Write of a 48-byte transcript hash and Sum: the Finished MAC, keyed per call as crypto/tls's finishedHash does (RFC 8446 section 4.4.4).",
		bench:    b,
	}, nil
}

func (b *macBench) run(n int, samples []int64) error {
	b.out = reuse(b.out, n)
	for i := range n {
		j := b.next % poolSize
		b.next++
		msg := b.msgs[j]
		t0 := time.Now()
		tag := finishedMAC(b.key, msg)
		samples[i] = int64(time.Since(t0))
		b.out[i] = keyed{j, tag}
	}
	return nil
}

// check: the tag is RFC 2104's HMAC of the key and the message.
func (b *macBench) check(i int) error {
	return checkOutput("the MAC", b.out[i].out, b.want[b.out[i].input])
}

// ---- hash.block and hash.finish: the transcript hash ----

type hashBench struct {
	finish bool
	prefix []byte
	block  []byte
	want   []byte // SHA-384 of prefix || block (block) or of prefix (finish)

	// Per call of the last run: the running hash it was given, and (finish)
	// the digest Sum returned.
	ctxs []hash.Hash
	out  [][]byte
}

func newHash(finish bool) (*phase, error) {
	if err := checkSHA384(); err != nil {
		return nil, err
	}
	b := &hashBench{
		finish: finish,
		prefix: randomBytes(transcriptPrefixSize),
		block:  randomBytes(sha384Block),
	}
	// The expected digests are one-shot ones of the whole input, against which
	// the running hashes are checked: a timed Write that took no bytes, or a
	// finish that gave another state's digest, differs.
	prefixOnly := sha512.Sum384(b.prefix)
	whole := sha512.Sum384(append(append([]byte{}, b.prefix...), b.block...))
	if prefixOnly == whole {
		return nil, errors.New("SHA-384: the block changed nothing")
	}
	p := &phase{Algorithm: "SHA-384", bench: b}
	if finish {
		b.want = prefixOnly[:]
		p.Operation = "hash.finish"
		p.Includes = "Sum(nil) on a running SHA-384 (sha512.New384) that has taken 300 bytes: the digest of a copy, the running hash left as it was, as crypto/tls takes its transcript hash (transcript.Sum(nil))."
	} else {
		b.want = whole[:]
		p.Operation = "hash.block"
		p.Includes = "Write of one 128-byte block into a running SHA-384 (sha512.New384) that has taken 300 bytes, as a transcript grows."
	}
	return p, nil
}

func (b *hashBench) run(n int, samples []int64) error {
	b.ctxs, b.out = reuse(b.ctxs, n), reuse(b.out, n)
	for i := range n {
		if b.ctxs[i] == nil {
			b.ctxs[i] = sha512.New384()
		}
		ctx := b.ctxs[i]
		ctx.Reset()
		ctx.Write(b.prefix)
		if b.finish {
			t0 := time.Now()
			digest := ctx.Sum(nil)
			samples[i] = int64(time.Since(t0))
			b.out[i] = digest
		} else {
			block := b.block
			t0 := time.Now()
			ctx.Write(block)
			samples[i] = int64(time.Since(t0))
		}
	}
	return nil
}

// check: block, the running hash now digests prefix || block; finish, the
// digest is the prefix's.
func (b *hashBench) check(i int) error {
	if b.finish {
		return checkOutput("the transcript hash", b.out[i], b.want)
	}
	return checkOutput("the transcript hash", b.ctxs[i].Sum(nil), b.want)
}

// ---- aead.key: a record key's setup ----

// newRecordKey is an AES-256-GCM record key from its bytes: the AES key
// schedule (aes.NewCipher) and GCM's hash key (cipher.NewGCM). crypto/tls
// takes the same two steps through its internal gcm.NewGCMForTLS13
// (cipher_suites.go, aeadAESGCMTLS13), which the public API does not offer.
func newRecordKey(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// The message aead.rs's key check seals: 64 bytes of 0x5a, the nonce twelve
// 7s, and as AAD the record header of a 64-byte payload.
var (
	probeNonce     = bytes.Repeat([]byte{7}, 12)
	probePlaintext = bytes.Repeat([]byte{0x5a}, 64)
	probeAAD       = recordAAD(len(probePlaintext) + gcmTagSize)
)

func sealProbe(a cipher.AEAD) []byte {
	return a.Seal(nil, probeNonce, probePlaintext, probeAAD)
}

type aeadKeyBench struct {
	key  []byte
	want []byte // the probe sealed with a key set up beforehand
	out  []cipher.AEAD
}

func newAEADKey() (*phase, error) {
	b := &aeadKeyBench{key: randomBytes(aes256KeySize)}
	ref, err := newRecordKey(b.key)
	if err != nil {
		return nil, err
	}
	b.want = sealProbe(ref)
	// The reference itself must seal: its probe opens back to the message.
	opened, err := ref.Open(nil, probeNonce, b.want, probeAAD)
	if err != nil || !bytes.Equal(opened, probePlaintext) {
		return nil, errors.New("AES-256-GCM: the sealed probe does not open")
	}
	other, err := newRecordKey(randomBytes(aes256KeySize))
	if err != nil {
		return nil, err
	}
	if bytes.Equal(sealProbe(other), b.want) {
		return nil, errors.New("AES-256-GCM: another key sealed the probe alike")
	}
	return &phase{
		Algorithm: "AES-256-GCM", Operation: "aead.key",
		Includes: "aes.NewCipher and cipher.NewGCM from the 32-byte key bytes: the AES-256 key schedule and GCM's hash key, as a record layer sets up once per traffic secret (crypto/tls takes the same steps through its internal gcm.NewGCMForTLS13).",
		bench:    b,
	}, nil
}

func (b *aeadKeyBench) run(n int, samples []int64) error {
	b.out = reuse(b.out, n)
	for i := range n {
		t0 := time.Now()
		a, err := newRecordKey(b.key)
		samples[i] = int64(time.Since(t0))
		if err != nil {
			return err
		}
		b.out[i] = a
	}
	return nil
}

// check: the new key seals the probe as the key set up before did.
func (b *aeadKeyBench) check(i int) error {
	if !bytes.Equal(sealProbe(b.out[i]), b.want) {
		return errors.New("the new key seals differently")
	}
	return nil
}
