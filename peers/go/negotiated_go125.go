//go:build go1.25

package main

import (
	"crypto/tls"
	"fmt"
)

// negotiatedGroup is the key exchange group of a finished handshake, as
// crypto/tls reports it (ConnectionState.CurveID, Go 1.25 on). When the
// client's received bytes hold a readable ServerHello, the group on the wire
// must agree.
func negotiatedGroup(cs tls.ConnectionState, received []byte) (tls.CurveID, error) {
	if len(received) > 0 {
		if wire, err := serverHelloGroup(received); err == nil && wire != cs.CurveID {
			return 0, fmt.Errorf("crypto/tls reports group %v but the ServerHello carries %v", cs.CurveID, wire)
		}
	}
	return cs.CurveID, nil
}
