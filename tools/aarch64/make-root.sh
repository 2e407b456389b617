#!/bin/bash
# make-root.sh -- makes (or reuses) $CACHE/root: Debian sid with everything the aarch64 steps need,
# so the host needs nothing but debootstrap. Rustup's toolchains here have no aarch64 standard
# library and cannot fetch one; Debian's rustc, cargo and libstd-rust-dev:arm64 are one version.
#
# Reused when ROOT/.pqprof-root-stamp names the same suite and packages (0.01 s). A root whose
# debootstrap did not finish (a leftover /debootstrap folder, no apt) is removed and made again; one
# whose apt stage did not finish, or whose package list changed, is completed (apt is idempotent).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
SUITE=sid

# The cross toolchain and Rust; what the -sys crates need (cmake, clang and libclang for bindgen,
# perl for OpenSSL's Configure, git for build.rs); binutils for the marker check (objdump); qemu's
# build dependencies for a linux-user build (a small part of `apt-get build-dep qemu`) and dpkg-dev
# for `apt-get source`; Debian's static arm64 OpenSSL with the zlib and zstd it links, for the short
# CI build (aarch64.sh --short).
PKGS="rustc cargo libstd-rust-dev:arm64 gcc-aarch64-linux-gnu g++-aarch64-linux-gnu \
libc6-dev-arm64-cross binutils-aarch64-linux-gnu cmake clang libclang-dev perl make pkgconf git \
ca-certificates build-essential file xz-utils bc \
dpkg-dev python3 python3-venv meson ninja-build libglib2.0-dev flex bison \
libssl-dev:arm64 zlib1g-dev:arm64 libzstd-dev:arm64"
STAMP=$ROOT/.pqprof-root-stamp
WANT="suite=$SUITE pkgs=$PKGS"
if [[ -f $STAMP && "$(cat "$STAMP")" == "$WANT" ]]; then
    echo "make-root: $ROOT is complete (its stamp matches)"
    exit 0
fi
[[ $(id -u) -eq 0 ]] || { echo "make-root: needs root (debootstrap, chroot)" >&2; exit 1; }

# The Debian mirror this machine's apt uses.
MIRROR=$(grep -hoE 'https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list.d/*.sources \
    /etc/apt/sources.list 2>/dev/null | grep -v security | head -1 | tr -d ' ' || true)
MIRROR=${MIRROR:-http://deb.debian.org/debian}
MIRROR=${MIRROR%/}
echo "make-root: $ROOT from $MIRROR ($SUITE)"
command -v debootstrap >/dev/null || {
    "${NICE[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${NICE[@]}" apt-get install -y -qq debootstrap
}

if [[ -d $ROOT/debootstrap || ! -x $ROOT/usr/bin/apt-get ]]; then
    rm -rf --one-file-system "$ROOT"
    mkdir -p "$ROOT"
    t=$(date +%s)
    "${NICE[@]}" debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR"
    echo "make-root: debootstrap took $(($(date +%s) - t)) s"
fi

cat >"$ROOT/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb deb-src
URIs: $MIRROR
Suites: $SUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
rm -f "$ROOT/etc/apt/sources.list"
# A mirror's sid Release file can be past its Valid-Until (seen here); the archive key still holds.
printf '%s\n' 'Acquire::Check-Valid-Until "false";' 'APT::Install-Recommends "false";' \
    >"$ROOT/etc/apt/apt.conf.d/99pqprof"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# Extra CA certificates of this machine (a TLS-intercepting proxy): cargo inside needs them.
mkdir -p "$ROOT/usr/local/share/ca-certificates"
cp -a /usr/local/share/ca-certificates/. "$ROOT/usr/local/share/ca-certificates/" 2>/dev/null || true

t=$(date +%s)
in_root "dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
    export DEBIAN_FRONTEND=noninteractive
    nice -n 19 ionice -c3 apt-get update -q
    nice -n 19 ionice -c3 apt-get install -y -q $PKGS
    update-ca-certificates >/dev/null
    apt-get clean"
echo "make-root: apt took $(($(date +%s) - t)) s"
in_root 'rustc --version; cargo --version; aarch64-linux-gnu-gcc --version | head -1'
echo "$WANT" >"$STAMP"
echo "make-root: $ROOT is $(du -sh --one-file-system "$ROOT" | cut -f1)"
