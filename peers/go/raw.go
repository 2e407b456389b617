package main

import (
	"bytes"
	"crypto/ecdh"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Seed 000's raw workload ("Workload Contract"): each sample is a run of
// round trips, each round trip timed on its own. Unlike pqprof's composed
// figures (suites/raw.toml), the secrets are compared inside the timed round
// trip, as the seed does: it is a 32-byte comparison.

// rawWorkload is one workload's samples, as it appears in the JSON.
type rawWorkload struct {
	Name            string  `json:"name"`
	SampleMediansNs []int64 `json:"sample_medians_ns"`
	SamplesNs       []int64 `json:"samples_ns"`

	// roundTrip runs one timed round trip and reports whether the two sides
	// agreed; it returns an error only for a failed call.
	roundTrip func() (bool, error)
}

// kemRoundTrip: the server's decapsulation key is reused; for every round
// trip the client imports the server's encapsulation key from bytes and
// encapsulates, the server decapsulates, and the secrets are compared.
func kemRoundTrip() (*rawWorkload, error) {
	dk, ek, err := kemKeygen()
	if err != nil {
		return nil, err
	}
	return &rawWorkload{Name: "ML-KEM-768 round trip", roundTrip: func() (bool, error) {
		clientSecret, ct, err := kemEncapsulate(ek)
		if err != nil {
			return false, err
		}
		serverSecret, err := dk.Decapsulate(ct)
		if err != nil {
			return false, err
		}
		return bytes.Equal(clientSecret, serverSecret), nil
	}}, nil
}

// ecdhRoundTrip: the server's private key is reused; for every round trip a
// fresh client key is made, the client derives with the server's public key,
// the server with the client's public key parsed from bytes, and the secrets
// are compared.
func ecdhRoundTrip() (*rawWorkload, error) {
	curve := ecdh.P256()
	server, _, err := dhKeygen(curve)
	if err != nil {
		return nil, err
	}
	serverPub := server.PublicKey()
	return &rawWorkload{Name: "P-256 ECDH round trip", roundTrip: func() (bool, error) {
		client, clientShare, err := dhKeygen(curve)
		if err != nil {
			return false, err
		}
		clientSecret, err := client.ECDH(serverPub)
		if err != nil {
			return false, err
		}
		serverSecret, err := dhDerive(curve, server, clientShare)
		if err != nil {
			return false, err
		}
		return bytes.Equal(clientSecret, serverSecret), nil
	}}, nil
}

// measureRaw takes samples of both workloads, alternating which goes first
// from one sample to the next, as the seed's CI alternates scenario order.
func measureRaw(samples, perSample int) ([]*rawWorkload, error) {
	kem, err := kemRoundTrip()
	if err != nil {
		return nil, err
	}
	dh, err := ecdhRoundTrip()
	if err != nil {
		return nil, err
	}
	workloads := []*rawWorkload{kem, dh}
	for _, w := range workloads {
		w.SampleMediansNs = make([]int64, 0, samples)
		w.SamplesNs = make([]int64, 0, samples*perSample)
	}
	times := make([]int64, perSample)
	for s := range samples {
		for k := range workloads {
			w := workloads[(k+s)%len(workloads)]
			if err := w.sample(times); err != nil {
				return nil, fmt.Errorf("%s: %w", w.Name, err)
			}
			w.SamplesNs = append(w.SamplesNs, times...)
			w.SampleMediansNs = append(w.SampleMediansNs, median(times))
		}
	}
	return workloads, nil
}

// sample fills times with one timed round trip each, after a collection and
// one untimed round trip (the other workload has had the caches).
func (w *rawWorkload) sample(times []int64) error {
	runtime.GC()
	if err := w.check(w.roundTrip()); err != nil {
		return err
	}
	for i := range times {
		t0 := time.Now()
		ok, err := w.roundTrip()
		times[i] = int64(time.Since(t0))
		if err := w.check(ok, err); err != nil {
			return err
		}
	}
	return nil
}

func (w *rawWorkload) check(ok bool, err error) error {
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("the two sides' secrets differ")
	}
	return nil
}
