//go:build !go1.25

package main

import (
	"crypto/tls"
	"errors"
)

// negotiatedGroup is the key exchange group of a finished handshake. Go 1.24's
// ConnectionState does not report it, so it is read from the ServerHello the
// client received; the bytes must have been captured.
func negotiatedGroup(_ tls.ConnectionState, received []byte) (tls.CurveID, error) {
	if len(received) == 0 {
		return 0, errors.New("the negotiated group needs the captured ServerHello on this Go")
	}
	return serverHelloGroup(received)
}
