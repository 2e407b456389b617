#!/usr/bin/env bash
# Loads the rendered site in headless Chromium: saves a screenshot, and fails if the page has no
# suite cards or the browser logs anything to the console (the pages have no JavaScript, so any
# console message is an error). Then the browser check (smoke/browser/check.mjs, playwright-core
# driving Debian's chromium): every page at 1280x800 and 390x844 must not be wider than the window,
# every stacked bar must have a legend and nothing may reach the console; it is first run against
# smoke/browser/fixture, whose pages break each rule, and must fail there.
# Usage: smoke/site-check.sh [SITE_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
site=$(realpath "${1:-site}")
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "site-check: chromium not found (apt-get install chromium)" >&2; exit 1; }
[ -f "$site/index.html" ] || { echo "site-check: $site/index.html missing: run make run or pqprof render first" >&2; exit 1; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$profile" --enable-logging=stderr --v=0)
mkdir -p target
for page in index phases compare history methodology insitu network composition; do
  timeout 90 "$browser" "${flags[@]}" --window-size=1280,2400 --screenshot="target/site-$page.png" \
    "file://$site/$page.html" 2>"$profile/$page.log" >/dev/null
  if grep -q ":CONSOLE" "$profile/$page.log"; then
    echo "site-check: $page.html logged to the console:" >&2
    grep ":CONSOLE" "$profile/$page.log" >&2
    exit 1
  fi
done
dom=$(timeout 90 "$browser" "${flags[@]}" --dump-dom "file://$site/index.html" 2>/dev/null)
cards=$(grep -o 'class="card suite"' <<<"$dom" | wc -l)
[ "$cards" -gt 0 ] || { echo "site-check: index.html shows no suite cards" >&2; exit 1; }
echo "site-check: ok: $cards suite cards, no console messages; screenshots in target/site-*.png"

command -v node >/dev/null || { echo "site-check: node not found (apt-get install npm)" >&2; exit 1; }
[ -d smoke/browser/node_modules/playwright-core ] || (cd smoke/browser && npm ci --no-audit --no-fund --ignore-scripts)
# The checks can fail: each fixture page breaks one rule, and each must be reported.
fixture=$(timeout 300 node smoke/browser/check.mjs smoke/browser/fixture --shots target/site-shots/fixture --expect-fail)
for want in "too-wide.html at 1280x800: document is" "too-wide.html at 390x844: document is" \
            "unlabelled bar: stacked bar without a legend" "is not in its legend" "console.html at 1280x800: console log" \
            "clipped.html at 1280x800: a table the page says fits"; do
  grep -qF "$want" <<<"$fixture" || { echo "site-check: the browser check did not report \"$want\" on its fixture:" >&2; echo "$fixture" >&2; exit 1; }
done
echo "site-check: the browser check fails on its fixture as it must (too wide, no legend, console output, a fitting table clipped)"
timeout 600 node smoke/browser/check.mjs "$site" --shots target/site-shots
