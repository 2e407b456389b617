#!/bin/bash
# aead-harnesses.sh: builds aead_harnesses.c against the OpenSSL pqprof vendors (make build first)
# and runs it: pqprof's AES-256-GCM encrypt call beside `openssl speed -aead`'s, and the two mixed,
# to show which difference between the harnesses moves the figure on this CPU (see the .c file).
set -euo pipefail
cd "$(dirname "$0")/../.."
inc=$(ls -d target/release/build/openssl-sys-*/out/openssl-build/install 2>/dev/null | head -1)
[[ -n $inc ]] || { echo "aead-harnesses: no vendored OpenSSL under target/release/build (run make build)" >&2; exit 1; }
out=target/crosscheck/aead_harnesses
mkdir -p target/crosscheck
cc -O2 -o "$out" tools/crosscheck/aead_harnesses.c -I"$inc/include" "$inc/lib/libcrypto.a" -lpthread -ldl
grep -m1 "model name" /proc/cpuinfo
"$out"
