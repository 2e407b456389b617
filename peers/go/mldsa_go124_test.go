//go:build !go1.27

package main

// corruptMLDSA corrupts an ML-DSA bench's first output; there are none
// before Go 1.27.
func corruptMLDSA(bench) bool { return false }
