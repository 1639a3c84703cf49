#!/bin/bash
# Screenshot a report.html in headless Chromium (no network, throwaway profile).
# Usage: scripts/screenshot_report.sh REPORT.html OUT.png [WIDTHxHEIGHT]   (default 1280x4000)
# Needs chromium (Debian: apt-get install -y chromium); $CHROMIUM overrides the binary.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 REPORT.html OUT.png [WIDTHxHEIGHT]" >&2
  exit 2
fi
html=$(realpath "$1")
out=$(realpath -m "$2")
size=${3:-1280x4000}
browser=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [ -z "$browser" ]; then
  echo "error: chromium not found; install it (apt-get install -y chromium) or set CHROMIUM" >&2
  exit 3
fi
[ -f "$html" ] || { echo "error: $html does not exist" >&2; exit 2; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
  --user-data-dir="$profile" --screenshot="$out" --window-size="${size/x/,}" "file://$html" \
  > /dev/null 2>&1
[ -s "$out" ] || { echo "error: chromium wrote no screenshot to $out" >&2; exit 1; }
echo "$out"
