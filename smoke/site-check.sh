#!/usr/bin/env bash
# Loads the rendered site in headless Chromium: saves a screenshot, and fails if the page has no
# suite cards or the browser logs anything to the console (the pages have no JavaScript, so any
# console message is an error). Usage: smoke/site-check.sh [SITE_DIR]
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
for page in index compare methodology; do
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
