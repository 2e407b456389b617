//go:build !go1.27

package main

import (
	"crypto"
	"crypto/tls"
)

// Before Go 1.27 there is no crypto/mldsa (mldsa_go127.go has the ML-DSA
// code): no ML-DSA phases, and crypto/tls neither serves nor accepts an
// ML-DSA certificate, so no leaf key is ML-DSA.

func mldsaPhases() []phaseMaker { return nil }

func mldsaLeafKey(crypto.PublicKey) (string, tls.SignatureScheme, bool) { return "", 0, false }

func mldsaCertKeys() []string { return nil }
