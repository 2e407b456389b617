//go:build !quic

package main

import (
	"crypto/tls"
	"errors"
)

// errNoQUIC is what --quic answers in a peer built without quic-go.
var errNoQUIC = errors.New("this Go peer is built without quic-go (peers/go/quic-deps.sh fetches it, build.sh then builds it in)")

// quicBuilt is empty: no QUIC client or server here.
func quicBuilt() string { return "" }

func newQUICClient(*client, string) (connector, error) { return nil, errNoQUIC }

func quicServe(*server, *tls.Config, string, string) error { return errNoQUIC }
