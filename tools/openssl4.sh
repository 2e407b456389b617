#!/usr/bin/env bash
# OpenSSL 3.5 LTS and 4.0 side by side, in one command (`make openssl4`).
#
# Route: a build variant. One binary cannot link two libcryptos (their static symbols clash, and
# OpenSSL has no supported symbol prefix), and openssl-sys's `vendored` feature only takes
# openssl-src 300.x. So: OpenSSL 4.0 is built once with openssl-src 400.x's own builder (the same
# Configure flags as the vendored 3.5; tools/ossl4-build), and a second pqprof is built against it in
# target/ossl4 (OPENSSL_NO_VENDOR, OPENSSL_DIR; liboqs through feature oqs-system-openssl so it links
# the same libcrypto). Then each binary measures the OpenSSL backend's phases and the real OpenSSL
# handshakes into a results file of its own, back to back (3.5, 4.0, 3.5 again as a control for the
# machine's drift); `pqprof compare` gives the verdicts and the site shows the runs, each labelled
# with its OpenSSL version.
#
# Usage: tools/openssl4.sh [extra `pqprof run` flags, e.g. --budget-ms 500]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
o4=$root/target/openssl4
bin35=$root/target/release/pqprof
bin40=$root/target/ossl4/release/pqprof

if [ ! -f "$o4/install/lib/libcrypto.a" ]; then
  echo "openssl4: building OpenSSL 4.0 into target/openssl4 (about 3 minutes on 2 cores)"
  start=$(date +%s)
  OSSL4_OUT=$o4 cargo build --release --locked --manifest-path tools/ossl4-build/Cargo.toml --target-dir target/ossl4-build
  echo "openssl4: OpenSSL 4.0 built in $(( $(date +%s) - start )) s"
fi
[ -x "$bin35" ] || cargo build --release --locked
start=$(date +%s)
OPENSSL_NO_VENDOR=1 OPENSSL_STATIC=1 OPENSSL_DIR=$o4/install OPENSSL_ROOT_DIR=$o4/install \
  cargo build --release --locked --no-default-features --features oqs-system-openssl --target-dir target/ossl4
echo "openssl4: pqprof against OpenSSL 4.0 built in $(( $(date +%s) - start )) s (target/ossl4)"

v35=$("$bin35" openssl-version)
v40=$("$bin40" openssl-version)
case "$v40" in
  "OpenSSL 4."*) ;;
  *) echo "openssl4: the second build links $v40, not OpenSSL 4: see target/ossl4/release/build/openssl-sys-*/output" >&2; exit 1 ;;
esac
echo "openssl4: $v35 (target/release) beside $v40 (target/ossl4/release)"

out35=$("$bin35" results-path)
"$bin35" run --backend openssl --out "$out35" "$@"
"$bin35" handshake --stack openssl --results "$out35"
sleep 1 # a new second: the two files' names differ
out40=$("$bin40" results-path)
"$bin40" run --backend openssl --out "$out40" "$@"
"$bin40" handshake --stack openssl --results "$out40"
# 3.5 again after 4.0 (A, B, A'): the control says how much the machine itself moved meanwhile.
sleep 1
out35b=$("$bin35" results-path)
"$bin35" run --backend openssl --out "$out35b" "$@"
"$bin35" handshake --stack openssl --results "$out35b"
"$bin35" check "$out35" "$out40" "$out35b"
echo; echo "openssl4: control, 3.5 against 3.5 measured after 4.0 (differences here are the machine's):"
"$bin35" compare "$out35" "$out35b"
echo; echo "openssl4: 4.0 against 3.5:"
"$bin35" compare "$out35" "$out40"
echo "openssl4: $out35 and $out35b ($v35), $out40 ($v40); \`make render\` puts them on the site"
