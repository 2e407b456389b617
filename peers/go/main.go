// Command pqprof-go-peer is pqprof's Go counterpart: it times Go's own
// implementations of the key exchange, signature and record phases, and runs
// real TLS 1.3 loopback handshakes with crypto/tls, so that pqprof can put Go's
// figures beside those of liboqs, OpenSSL, RustCrypto and rustls.
//
// Every subcommand writes machine output as JSON on stdout; errors go to
// stderr with exit code 1.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

const usageText = `usage: pqprof-go-peer <subcommand> [flags]

  version                      Go version, platform, and the TLS groups and certificate
                               keys this Go supports
  phases [--iterations N] [--rounds R] [--budget-ms B] [--warmup-ms W]
         [--raw-samples S] [--raw-per-sample K]
                               per-call timings of every phase, and seed 000's raw workload
  serve --group G --cert CHAIN.pem|CERT.der --key KEY.pem [--bind ADDR] [--concurrent]
        [--timeout-s S] [--quic [--mode full|token|retry]]
                               TLS 1.3 echo server on ADDR (default 127.0.0.1), one
                               connection at a time or each in its own goroutine;
                               control lines on stdin (reset N, stats N).
                               CHAIN.pem: the certificates sent, leaf first (leaf,
                               intermediates); or one DER certificate. KEY.pem: the
                               leaf's PKCS#8 key (ECDSA P-256; ML-DSA-44/65/87 on Go 1.27+)
  client --group G --addr HOST:PORT --ca ROOT.der [--timeout-s S] [--quic [--mode full|token]]
                               TLS 1.3 client trusting the chain's root (DER); commands
                               on stdin: evidence, run N, run N reset, open, cpu.
                               --quic: over QUIC v1 (quic-go, in a peer built with it),
                               its server on a UDP port of the same number as a TCP port
                               it holds
  pair --group G --cert CHAIN.pem --key KEY.pem --ca ROOT.der
                               client and server in this process over memory, one P:
                               each side's time per handshake; commands on stdin:
                               check, run N
  capacity --group G --cert CHAIN.pem --key KEY.pem [--threads T | --hold] [--timeout-s S]
                               the capacity step's server on 127.0.0.1; control lines
                               on stdin: cpu, mem N, release
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usageText)
		os.Exit(1)
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "version":
		err = versionCmd(args)
	case "phases":
		err = phasesCmd(args)
	case "serve":
		err = serveCmd(args)
	case "client":
		err = clientCmd(args)
	case "pair":
		err = pairCmd(args)
	case "capacity":
		err = capacityCmd(args)
	case "help", "-h", "--help":
		fmt.Print(usageText)
	default:
		err = fmt.Errorf("unknown subcommand %q\n%s", cmd, usageText)
	}
	if err != nil {
		fail(err)
	}
}

// fail reports err on stderr and exits 1; flag errors have been printed by the
// flag package already.
func fail(err error) {
	if !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "pqprof-go-peer:", err)
	}
	os.Exit(1)
}

// newFlags makes a flag set whose errors are returned rather than exiting, so
// that every failure leaves through fail.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	return fs
}

// parseFlags parses args and refuses stray positional arguments, which would
// otherwise be silently ignored.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// versionReport is the answer to `version`. CertKeys are the leaf keys this
// Go's crypto/tls serves and verifies (pqprof's authentication algorithms):
// ECDSA P-256 always, ML-DSA from Go 1.27.
type versionReport struct {
	GoVersion string   `json:"go_version"`
	GOOS      string   `json:"goos"`
	GOARCH    string   `json:"goarch"`
	Groups    []string `json:"groups"`
	CertKeys  []string `json:"cert_keys"`
	// QUIC is the quic-go built in for `serve --quic` and `client --quic`
	// (empty: none).
	QUIC string `json:"quic,omitempty"`
}

func versionCmd(args []string) error {
	if err := parseFlags(newFlags("version"), args); err != nil {
		return err
	}
	groups, err := supportedGroups()
	if err != nil {
		return err
	}
	return writeJSON(os.Stdout, versionReport{
		GoVersion: runtime.Version(),
		GOOS:      runtime.GOOS,
		GOARCH:    runtime.GOARCH,
		Groups:    groups,
		CertKeys:  append([]string{"ECDSA-P256"}, mldsaCertKeys()...),
		QUIC:      quicBuilt(),
	})
}

// exitWithParent ends this process soon after pqprof ends, however pqprof
// ends. pqprof's own children die with it through PR_SET_PDEATHSIG, but the
// kernel ties that to the thread that started the child, and a Go client is
// started by the thread that first connects (the network grid's cell threads
// end with their cell; the child must outlive them). The parent process's id
// changes only when the whole process has gone, so it is watched instead,
// once a second. Closing stdin ends every long-running command as well; this
// covers a command busy on a connection when it happens.
func exitWithParent() {
	parent := os.Getppid()
	if parent == 1 {
		return // started by init (or a container's first process): no parent to follow
	}
	go func() {
		for range time.Tick(time.Second) {
			if os.Getppid() != parent {
				os.Exit(1)
			}
		}
	}()
}
