#!/bin/bash
# counttest/check.sh -- the plugin's exactness test: cross-builds counttest (regions of known
# instruction counts, on two threads), runs it under the cache's qemu with libpqcount.so, and
# compares each line the plugin wrote with what the program says it must be. Prints one line per
# region and "N passed, M failed"; exits non-zero on any mismatch.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
HERE=$TOOLS/counttest
in_root "cd $HERE && CARGO_TARGET_DIR=$CACHE/counttest-target nice -n 19 ionice -c3 \
    flock $CARGO_LOCK cargo build --release --locked -q -j$JOBS"
BIN=$CACHE/counttest-target/$TARGET/release/counttest
OUT=$(mktemp /tmp/pqcount.XXXXXX)
trap 'rm -f "$OUT" "$OUT.expect"' EXIT
in_root "$QEMU -cpu ${QEMU_CPU:-neoverse-n1} -plugin $PLUGIN,out=$OUT $BIN" >"$OUT.expect"
paste -d' ' "$OUT.expect" "$OUT" | awk '
    $1 == "expect" { ok = ($2 == $3); print (ok ? "ok  " : "BAD ") $0; bad += !ok; next }
    $1 == "same"   { if ($2 in seen) { ok = (seen[$2] == $3) } else { seen[$2] = $3; ok = 1 }
                     print (ok ? "ok  " : "BAD ") $0; bad += !ok; next }
    { print "BAD " $0; bad++ }
    END { n = NR; printf "counttest: %d passed, %d failed\n", n - bad, bad; exit bad > 0 }'
