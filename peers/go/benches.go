package main

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/mlkem"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// The phases' workloads. Each timed call is one plain function call below
// (kemEncapsulate, dhDerive, signCV, ...), so that the code measured is the
// code verified and the code the raw workload and the tests use.

// poolSize is how many pre-made inputs a phase rotates over, so that it does
// not work on one value only (as pqprof's cases do).
const poolSize = 16

// Sizes from the specifications: FIPS 203 (ML-KEM-768), RFC 7748 (X25519),
// SEC 1 (an uncompressed P-256 point), RFC 8446 (records).
const (
	mlkem768EncapsulationKeySize = 1184
	mlkem768CiphertextSize       = 1088
	sharedSecretSize             = 32
	x25519ShareSize              = 32
	p256ShareSize                = 65
	recordSize                   = 16384
	gcmTagSize                   = 16
)

// reuse returns s with length n, keeping its backing array when it is big
// enough: a chunk's outputs live until the chunk is verified.
func reuse[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) // never fails (Go 1.24 on: it crashes the program instead)
	return b
}

func expectSize(what string, b []byte, want int) error {
	if len(b) != want {
		return fmt.Errorf("%s is %d bytes, the specification says %d", what, len(b), want)
	}
	return nil
}

// sameSecret checks that two parties derived the same shared secret.
func sameSecret(a, b []byte) error {
	if err := expectSize("the shared secret", a, sharedSecretSize); err != nil {
		return err
	}
	if !bytes.Equal(a, b) {
		return errors.New("the two sides derived different secrets")
	}
	return nil
}

// ---- ML-KEM-768 ----

// kemKeygen is a TLS client's key share: a fresh key pair, and the
// encapsulation key as the bytes it sends.
func kemKeygen() (*mlkem.DecapsulationKey768, []byte, error) {
	dk, err := mlkem.GenerateKey768()
	if err != nil {
		return nil, nil, err
	}
	return dk, dk.EncapsulationKey().Bytes(), nil
}

// kemEncapsulate is a TLS server's side: it receives the encapsulation key as
// bytes, so importing them is part of the cost.
func kemEncapsulate(ek []byte) (sharedKey, ciphertext []byte, err error) {
	key, err := mlkem.NewEncapsulationKey768(ek)
	if err != nil {
		return nil, nil, err
	}
	sharedKey, ciphertext = key.Encapsulate()
	return sharedKey, ciphertext, nil
}

// checkKEM checks an encapsulation: sizes, and that decapsulating the
// ciphertext with dk gives the encapsulator's secret.
func checkKEM(dk *mlkem.DecapsulationKey768, sharedKey, ciphertext []byte) error {
	if err := expectSize("the ciphertext", ciphertext, mlkem768CiphertextSize); err != nil {
		return err
	}
	got, err := dk.Decapsulate(ciphertext)
	if err != nil {
		return err
	}
	return sameSecret(got, sharedKey)
}

type kemKeyPair struct {
	dk *mlkem.DecapsulationKey768
	ek []byte
}

type kemKeygenBench struct{ out []kemKeyPair }

func newKEMKeygen() (*phase, error) {
	return &phase{
		Algorithm: "ML-KEM-768", Operation: "kem.keygen",
		Includes: "mlkem.GenerateKey768 and exporting the 1,184-byte encapsulation key (EncapsulationKey().Bytes()).",
		bench:    &kemKeygenBench{},
	}, nil
}

func (b *kemKeygenBench) run(n int, samples []int64) error {
	b.out = reuse(b.out, n)
	for i := range n {
		t0 := time.Now()
		dk, ek, err := kemKeygen()
		samples[i] = int64(time.Since(t0))
		if err != nil {
			return err
		}
		b.out[i] = kemKeyPair{dk, ek}
	}
	return nil
}

// check uses the new key pair end to end: encapsulate to its exported key,
// decapsulate with its private half.
func (b *kemKeygenBench) check(i int) error {
	kp := b.out[i]
	if err := expectSize("the encapsulation key", kp.ek, mlkem768EncapsulationKeySize); err != nil {
		return err
	}
	ss, ct, err := kemEncapsulate(kp.ek)
	if err != nil {
		return err
	}
	return checkKEM(kp.dk, ss, ct)
}

type kemEncapsulation struct {
	server     int // index into the key pool
	sharedKey  []byte
	ciphertext []byte
}

type kemEncapsBench struct {
	pool []kemKeyPair
	next int
	out  []kemEncapsulation
}

func newKEMEncaps() (*phase, error) {
	b := &kemEncapsBench{}
	for range poolSize {
		dk, ek, err := kemKeygen()
		if err != nil {
			return nil, err
		}
		b.pool = append(b.pool, kemKeyPair{dk, ek})
	}
	// A secret that does not match must be caught.
	ss, ct, err := kemEncapsulate(b.pool[0].ek)
	if err != nil {
		return nil, err
	}
	if checkKEM(b.pool[1].dk, ss, ct) == nil {
		return nil, errors.New("ML-KEM-768: decapsulating with the wrong key matched the secret")
	}
	return &phase{
		Algorithm: "ML-KEM-768", Operation: "kem.encaps",
		Includes: "mlkem.NewEncapsulationKey768 importing the peer's 1,184-byte encapsulation key from bytes, then Encapsulate.",
		bench:    b,
	}, nil
}

func (b *kemEncapsBench) run(n int, samples []int64) error {
	b.out = reuse(b.out, n)
	for i := range n {
		s := b.next % poolSize
		b.next++
		ek := b.pool[s].ek
		t0 := time.Now()
		ss, ct, err := kemEncapsulate(ek)
		samples[i] = int64(time.Since(t0))
		if err != nil {
			return err
		}
		b.out[i] = kemEncapsulation{s, ss, ct}
	}
	return nil
}

func (b *kemEncapsBench) check(i int) error {
	e := b.out[i]
	return checkKEM(b.pool[e.server].dk, e.sharedKey, e.ciphertext)
}

type kemDecapsInput struct {
	dk         *mlkem.DecapsulationKey768
	ciphertext []byte
	sharedKey  []byte // the encapsulator's
}

type kemDecapsBench struct {
	pool []kemDecapsInput
	next int
	out  []struct {
		input     int
		sharedKey []byte
	}
}

func newKEMDecaps() (*phase, error) {
	b := &kemDecapsBench{}
	for range poolSize {
		dk, ek, err := kemKeygen()
		if err != nil {
			return nil, err
		}
		ss, ct, err := kemEncapsulate(ek)
		if err != nil {
			return nil, err
		}
		b.pool = append(b.pool, kemDecapsInput{dk, ct, ss})
	}
	// ML-KEM rejects implicitly: a tampered ciphertext decapsulates without
	// error to a different secret, which the comparison must catch.
	in := b.pool[0]
	tampered := bytes.Clone(in.ciphertext)
	tampered[0] ^= 1
	if checkKEM(in.dk, in.sharedKey, tampered) == nil {
		return nil, errors.New("ML-KEM-768: a tampered ciphertext gave the same secret")
	}
	return &phase{
		Algorithm: "ML-KEM-768", Operation: "kem.decaps",
		Includes: "Decapsulate of a 1,088-byte ciphertext with a decapsulation key already loaded.",
		bench:    b,
	}, nil
}

func (b *kemDecapsBench) run(n int, samples []int64) error {
	b.out = reuse(b.out, n)
	for i := range n {
		s := b.next % poolSize
		b.next++
		dk, ct := b.pool[s].dk, b.pool[s].ciphertext
		t0 := time.Now()
		ss, err := dk.Decapsulate(ct)
		samples[i] = int64(time.Since(t0))
		if err != nil {
			return err
		}
		b.out[i].input, b.out[i].sharedKey = s, ss
	}
	return nil
}

func (b *kemDecapsBench) check(i int) error {
	return sameSecret(b.out[i].sharedKey, b.pool[b.out[i].input].sharedKey)
}

// ---- ECDH: X25519 and P-256 ----

type dhCurve struct {
	name      string
	curve     ecdh.Curve
	shareSize int
	shareDesc string
}

var (
	x25519 = dhCurve{"X25519", ecdh.X25519(), x25519ShareSize, "32-byte"}
	p256   = dhCurve{"P-256", ecdh.P256(), p256ShareSize, "65-byte uncompressed"}
)

// dhKeygen is a key share: a fresh private key, and the public key as the
// bytes sent. (From Go 1.26 GenerateKey ignores the reader and always uses
// the system's secure source.)
func dhKeygen(c ecdh.Curve) (*ecdh.PrivateKey, []byte, error) {
	k, err := c.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	return k, k.PublicKey().Bytes(), nil
}

// dhDerive is one side's shared secret from the peer's share as received:
// importing (and validating) the point is part of the cost.
func dhDerive(c ecdh.Curve, priv *ecdh.PrivateKey, peerShare []byte) ([]byte, error) {
	peer, err := c.NewPublicKey(peerShare)
	if err != nil {
		return nil, err
	}
	return priv.ECDH(peer)
}

// checkDH checks that the peer, from the share our side sends, derives the
// same secret as our side did.
func (c dhCurve) checkDH(secret, share []byte, peer *ecdh.PrivateKey) error {
	if err := expectSize(c.name+" public key", share, c.shareSize); err != nil {
		return err
	}
	other, err := dhDerive(c.curve, peer, share)
	if err != nil {
		return err
	}
	return sameSecret(secret, other)
}

type dhKeygenBench struct {
	c    dhCurve
	peer *ecdh.PrivateKey
	out  []*ecdh.PrivateKey
	pubs [][]byte
}

func newDHKeygen(c dhCurve) (*phase, error) {
	peer, _, err := dhKeygen(c.curve)
	if err != nil {
		return nil, err
	}
	return &phase{
		Algorithm: c.name, Operation: "dh.keygen",
		Includes: fmt.Sprintf("ecdh.%s().GenerateKey and exporting the %s public key (PublicKey().Bytes()).", ecdhFunc(c), c.shareDesc),
		bench:    &dhKeygenBench{c: c, peer: peer},
	}, nil
}

func ecdhFunc(c dhCurve) string {
	if c.name == "P-256" {
		return "P256"
	}
	return c.name
}

func (b *dhKeygenBench) run(n int, samples []int64) error {
	b.out, b.pubs = reuse(b.out, n), reuse(b.pubs, n)
	for i := range n {
		t0 := time.Now()
		k, pub, err := dhKeygen(b.c.curve)
		samples[i] = int64(time.Since(t0))
		if err != nil {
			return err
		}
		b.out[i], b.pubs[i] = k, pub
	}
	return nil
}

// check uses the new key in an exchange with a fixed peer, who gets the
// exported public key.
func (b *dhKeygenBench) check(i int) error {
	secret, err := dhDerive(b.c.curve, b.out[i], b.peer.PublicKey().Bytes())
	if err != nil {
		return err
	}
	return b.c.checkDH(secret, b.pubs[i], b.peer)
}

type dhPair struct {
	local, peer *ecdh.PrivateKey
	peerShare   []byte
}

type dhDeriveBench struct {
	c    dhCurve
	pool []dhPair
	next int
	out  []struct {
		input  int
		secret []byte
	}
}

func newDHDerive(c dhCurve) (*phase, error) {
	b := &dhDeriveBench{c: c}
	for range poolSize {
		local, _, err := dhKeygen(c.curve)
		if err != nil {
			return nil, err
		}
		peer, share, err := dhKeygen(c.curve)
		if err != nil {
			return nil, err
		}
		b.pool = append(b.pool, dhPair{local, peer, share})
	}
	// A secret derived with the wrong peer must be caught.
	secret, err := dhDerive(c.curve, b.pool[0].local, b.pool[1].peerShare)
	if err != nil {
		return nil, err
	}
	if c.checkDH(secret, b.pool[0].local.PublicKey().Bytes(), b.pool[0].peer) == nil {
		return nil, fmt.Errorf("%s: a secret with the wrong peer matched", c.name)
	}
	return &phase{
		Algorithm: c.name, Operation: "dh.derive",
		Includes: fmt.Sprintf("NewPublicKey importing the peer's %s share from bytes, then ECDH.", c.shareDesc),
		bench:    b,
	}, nil
}

func (b *dhDeriveBench) run(n int, samples []int64) error {
	b.out = reuse(b.out, n)
	for i := range n {
		s := b.next % poolSize
		b.next++
		local, share := b.pool[s].local, b.pool[s].peerShare
		t0 := time.Now()
		secret, err := dhDerive(b.c.curve, local, share)
		samples[i] = int64(time.Since(t0))
		if err != nil {
			return err
		}
		b.out[i].input, b.out[i].secret = s, secret
	}
	return nil
}

func (b *dhDeriveBench) check(i int) error {
	in := b.pool[b.out[i].input]
	return b.c.checkDH(b.out[i].secret, in.local.PublicKey().Bytes(), in.peer)
}

// ---- ECDSA-P256 over a TLS 1.3 CertificateVerify ----

// RFC 8446 section 4.4.3: the signed content is 64 spaces, the context
// string, a zero byte, then the transcript hash (SHA-256: 32 bytes).
const (
	cvContext       = "TLS 1.3, server CertificateVerify"
	cvMessageSize   = 64 + len(cvContext) + 1 + sha256.Size
	transcriptBytes = sha256.Size
)

// certificateVerifyMessage is the content a TLS 1.3 server signs.
func certificateVerifyMessage(transcriptHash []byte) []byte {
	m := make([]byte, 0, cvMessageSize)
	m = append(m, bytes.Repeat([]byte{0x20}, 64)...)
	m = append(m, cvContext...)
	m = append(m, 0)
	return append(m, transcriptHash...)
}

// signCV is the server's signature: hash the content, sign the digest
// (randomized ECDSA, DER-encoded as TLS sends it).
func signCV(key *ecdsa.PrivateKey, msg []byte) ([]byte, error) {
	h := sha256.Sum256(msg)
	return ecdsa.SignASN1(rand.Reader, key, h[:])
}

// verifyCV is the client's check of the signature.
func verifyCV(pub *ecdsa.PublicKey, msg, sig []byte) bool {
	h := sha256.Sum256(msg)
	return ecdsa.VerifyASN1(pub, h[:], sig)
}

// checkTamperedSignature makes sure a signature with one bit flipped is
// refused, so that "verifies" means something.
func checkTamperedSignature(pub *ecdsa.PublicKey, msg, sig []byte) error {
	bad := bytes.Clone(sig)
	bad[len(bad)-1] ^= 1
	if verifyCV(pub, msg, bad) {
		return errors.New("ECDSA-P256: a tampered signature verified")
	}
	return nil
}

type signed struct{ msg, sig []byte }

type sigSignBench struct {
	key *ecdsa.PrivateKey
	out []signed
}

func newSigSign() (*phase, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	msg := certificateVerifyMessage(randomBytes(transcriptBytes))
	sig, err := signCV(key, msg)
	if err != nil {
		return nil, err
	}
	if err := checkTamperedSignature(&key.PublicKey, msg, sig); err != nil {
		return nil, err
	}
	return &phase{
		Algorithm: "ECDSA-P256", Operation: "sig.sign",
		Includes: "SHA-256 of the 130-byte CertificateVerify content (a new transcript hash each call) and ecdsa.SignASN1 with a key already loaded.",
		bench:    &sigSignBench{key: key},
	}, nil
}

func (b *sigSignBench) run(n int, samples []int64) error {
	b.out = reuse(b.out, n)
	for i := range n {
		msg := certificateVerifyMessage(randomBytes(transcriptBytes))
		t0 := time.Now()
		sig, err := signCV(b.key, msg)
		samples[i] = int64(time.Since(t0))
		if err != nil {
			return err
		}
		b.out[i] = signed{msg, sig}
	}
	return nil
}

func (b *sigSignBench) check(i int) error {
	if !verifyCV(&b.key.PublicKey, b.out[i].msg, b.out[i].sig) {
		return errors.New("a signature does not verify")
	}
	return nil
}

type sigVerifyBench struct {
	pub  *ecdsa.PublicKey
	pool []signed
	next int
	out  []bool
}

func newSigVerify() (*phase, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	b := &sigVerifyBench{pub: &key.PublicKey}
	for range poolSize {
		msg := certificateVerifyMessage(randomBytes(transcriptBytes))
		sig, err := signCV(key, msg)
		if err != nil {
			return nil, err
		}
		b.pool = append(b.pool, signed{msg, sig})
	}
	if err := checkTamperedSignature(b.pub, b.pool[0].msg, b.pool[0].sig); err != nil {
		return nil, err
	}
	return &phase{
		Algorithm: "ECDSA-P256", Operation: "sig.verify",
		Includes: "SHA-256 of the 130-byte CertificateVerify content and ecdsa.VerifyASN1 with a public key already parsed.",
		bench:    b,
	}, nil
}

func (b *sigVerifyBench) run(n int, samples []int64) error {
	b.out = reuse(b.out, n)
	for i := range n {
		in := &b.pool[b.next%poolSize]
		b.next++
		t0 := time.Now()
		ok := verifyCV(b.pub, in.msg, in.sig)
		samples[i] = int64(time.Since(t0))
		b.out[i] = ok
	}
	return nil
}

func (b *sigVerifyBench) check(i int) error {
	if !b.out[i] {
		return errors.New("a valid signature was rejected")
	}
	return nil
}

// ---- AES-256-GCM on a full TLS 1.3 record ----

// recordNonce is TLS 1.3's per-record nonce: the IV XOR the 64-bit record
// sequence number, big-endian, in its last 8 bytes (RFC 8446 section 5.3).
func recordNonce(iv [12]byte, seq uint64) [12]byte {
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], seq)
	for i, b := range s {
		iv[4+i] ^= b
	}
	return iv
}

// recordAAD is the additional data of a TLS 1.3 record: its header, with
// type application_data (23), version 0x0303 and the ciphertext length
// (RFC 8446 section 5.2).
func recordAAD(ciphertextLen int) []byte {
	return []byte{23, 3, 3, byte(ciphertextLen >> 8), byte(ciphertextLen)}
}

// openRecord decrypts a copy of a sealed record, leaving it intact.
func openRecord(a cipher.AEAD, nonce [12]byte, sealed, aad []byte) ([]byte, error) {
	return a.Open(nil, nonce[:], sealed, aad)
}

type sealedRecord struct {
	nonce  [12]byte
	sealed []byte
}

type aeadBench struct {
	encrypt   bool
	aead      cipher.AEAD
	iv        [12]byte
	seq       uint64
	plaintext []byte
	aad       []byte
	pool      []sealedRecord // records to decrypt
	next      int

	// Per output of the last chunk: its buffer (sealed or opened in place),
	// the nonce it was made with, and what Seal or Open returned.
	bufs   [][]byte
	nonces [][12]byte
	from   []int // decrypt: the pool record opened
	out    [][]byte
}

func newAEAD(encrypt bool) (*phase, error) {
	block, err := aes.NewCipher(randomBytes(32))
	if err != nil {
		return nil, err
	}
	a, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	b := &aeadBench{
		encrypt:   encrypt,
		aead:      a,
		plaintext: randomBytes(recordSize),
		aad:       recordAAD(recordSize + gcmTagSize),
	}
	copy(b.iv[:], randomBytes(12))
	for seq := range uint64(poolSize) {
		nonce := recordNonce(b.iv, 1<<40|seq)
		b.pool = append(b.pool, sealedRecord{nonce, a.Seal(nil, nonce[:], b.plaintext, b.aad)})
	}
	// A record with one bit flipped must be refused.
	bad := bytes.Clone(b.pool[0].sealed)
	bad[0] ^= 1
	if _, err := openRecord(a, b.pool[0].nonce, bad, b.aad); err == nil {
		return nil, errors.New("AES-256-GCM: a tampered record opened")
	}
	p := &phase{Algorithm: "AES-256-GCM", bench: b}
	if encrypt {
		p.Operation = "aead.encrypt"
		p.Includes = "In-place Seal of a 16,384-byte record with its 5-byte header as AAD; the keyed cipher.AEAD is made once, the nonce (IV XOR sequence number) before the timer."
	} else {
		p.Operation = "aead.decrypt"
		p.Includes = "In-place Open (tag checked) of a 16,384-byte record plus tag with its 5-byte header as AAD; the keyed cipher.AEAD is made once, the nonce before the timer."
	}
	return p, nil
}

func (b *aeadBench) run(n int, samples []int64) error {
	for len(b.bufs) < n {
		b.bufs = append(b.bufs, make([]byte, recordSize+gcmTagSize))
	}
	b.nonces, b.from, b.out = reuse(b.nonces, n), reuse(b.from, n), reuse(b.out, n)
	if b.encrypt {
		for i := range n {
			buf := b.bufs[i][:recordSize]
			copy(buf, b.plaintext)
			b.nonces[i] = recordNonce(b.iv, b.seq)
			b.seq++
			nonce := b.nonces[i][:]
			t0 := time.Now()
			sealed := b.aead.Seal(buf[:0], nonce, buf, b.aad)
			samples[i] = int64(time.Since(t0))
			b.out[i] = sealed
		}
		return nil
	}
	for i := range n {
		s := b.next % poolSize
		b.next++
		buf := b.bufs[i]
		copy(buf, b.pool[s].sealed)
		b.from[i], b.nonces[i] = s, b.pool[s].nonce
		nonce := b.nonces[i][:]
		t0 := time.Now()
		opened, err := b.aead.Open(buf[:0], nonce, buf, b.aad)
		samples[i] = int64(time.Since(t0))
		if err != nil {
			return err
		}
		b.out[i] = opened
	}
	return nil
}

func (b *aeadBench) check(i int) error {
	got := b.out[i]
	if b.encrypt {
		if err := expectSize("the sealed record", got, recordSize+gcmTagSize); err != nil {
			return err
		}
		var err error
		if got, err = openRecord(b.aead, b.nonces[i], got, b.aad); err != nil {
			return fmt.Errorf("a sealed record does not open: %w", err)
		}
	}
	if !bytes.Equal(got, b.plaintext) {
		return errors.New("the record does not open to the plaintext")
	}
	return nil
}
