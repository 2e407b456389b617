#!/usr/bin/env bash
# Fetches quic-go and what it imports into target/go/gopath, for the Go peer's QUIC client and
# server (peers/go/quic.go, built with the tag `quic` by build.sh).
#
# The Go module proxy cannot be reached from the machines pqprof is built on, but Debian's archive
# can: Debian sid packages quic-go (golang-github-lucas-clemente-quic-go-dev, 0.59.0) with its
# golang.org/x dependencies as source, under /usr/share/gocode, for builds in GOPATH mode. The
# packages are downloaded with a sid sources list of their own (this machine's apt configuration
# is left alone) and unpacked with dpkg -x; nothing is installed. Kept once fetched: target/ is a
# cache CI keeps between runs.
#
# Exit 3, with a one-line reason on stderr, when they cannot be had.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/target/go/gopath"
# quic-go at the version the network model's parameters were read from (core/src/netmodel.rs,
# `quic_params`: its window, pacing and probe timeouts; src/stack/quicgo.rs: its CRYPTO limit):
# Debian keeps only the newest in sid, so when sid moves on this fails and says so, and the pin
# and those parameters move together. Then what it imports outside the standard library (its
# go.mod, less the test-only modules), at sid's versions.
quic=golang-github-lucas-clemente-quic-go-dev=0.59.0-2
packages=("$quic" golang-golang-x-crypto-dev golang-golang-x-net-dev golang-golang-x-sys-dev
  golang-golang-x-sync-dev)
marker="$out/.complete"

if [[ -f "$marker" && "$(cat "$marker")" == "${packages[*]}" ]]; then
  exit 0
fi
command -v apt-get >/dev/null && command -v dpkg >/dev/null ||
  { echo "quic-deps.sh: apt-get and dpkg are needed to fetch Debian's quic-go" >&2; exit 3; }
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[[ -f "$keyring" ]] || { echo "quic-deps.sh: no $keyring (apt-get install debian-archive-keyring)" >&2; exit 3; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/root"
# A mirror's sid Release file can be past its Valid-Until; the archive key still holds.
echo "deb [signed-by=$keyring] http://deb.debian.org/debian sid main" >"$work/sources.list"
opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o Dir::State::Status=/dev/null
  -o Acquire::Check-Valid-Until=false -o APT::Sandbox::User=root -o Debug::NoLocking=1)
apt-get "${opts[@]}" update -qq >/dev/null 2>"$work/err" ||
  { echo "quic-deps.sh: apt-get update of Debian sid failed: $(tail -1 "$work/err")" >&2; exit 3; }
(cd "$work/debs" && apt-get "${opts[@]}" download "${packages[@]}" >/dev/null 2>"$work/err") ||
  { echo "quic-deps.sh: downloading ${packages[*]} failed (has sid moved past $quic?): $(tail -1 "$work/err")" >&2; exit 3; }
for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$work/root"; done
[[ -d "$work/root/usr/share/gocode/src/github.com/quic-go/quic-go" ]] ||
  { echo "quic-deps.sh: the packages hold no github.com/quic-go/quic-go" >&2; exit 3; }
rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$work/root/usr/share/gocode" "$out"
(cd "$work/debs" && ls) >"$out/PACKAGES"
echo "${packages[*]}" >"$marker"
echo "quic-deps.sh: $(grep -o 'quic-go-dev_[^_]*' "$out/PACKAGES") in $out"
