#!/usr/bin/env bash
# Renders an iapguard report in headless Chromium with networking disabled, takes screenshots, and fails
# when the page logs a console error (CSP violations included), makes a network request, or its inline
# script did not run (a CSP hash mismatch would block it).
#
# Usage: scripts/check-report-in-browser.sh REPORT.html [OUT_DIR]
#   OUT_DIR defaults to /tmp/iapguard-browser-check (outside git). It receives:
#     screenshot.png       light mode, 1280 px wide
#     screenshot-dark.png  prefers-color-scheme: dark
#     dom.html             the DOM after scripts ran
#     screenshot-nojs.png  the page with its script removed (as with JavaScript off)
#     chromium.log         Chromium's stderr (console messages)
#     netlog.json          Chromium's network log
# Installs Debian's `chromium` package with apt-get when it is missing (needs root or sudo).
set -euo pipefail

if [[ $# -lt 1 || ! -f "$1" ]]; then
  echo "usage: $0 REPORT.html [OUT_DIR]" >&2
  exit 64
fi
report="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
out="${2:-/tmp/iapguard-browser-check}"
mkdir -p "$out"

if ! command -v chromium >/dev/null 2>&1; then
  echo "chromium not found; installing Debian's chromium package" >&2
  if [[ $(id -u) -eq 0 ]]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

profile="$(mktemp -d /tmp/iapguard-chromium-profile.XXXXXX)"
trap 'rm -rf "$profile"' EXIT

# Networking off: every host resolves to nothing, every request goes to a closed local proxy, and the
# background services that phone home are disabled. Any attempt still shows up in the net log.
common=(
  --headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check
  --user-data-dir="$profile" --disable-background-networking --disable-component-update
  --disable-default-apps --disable-sync --disable-extensions --disable-domain-reliability
  --metrics-recording-only --no-pings --host-resolver-rules="MAP * ~NOTFOUND"
  --proxy-server="http://127.0.0.1:9" --proxy-bypass-list="<-loopback>"
  --allow-file-access-from-files
)
url="file://$report"

chromium "${common[@]}" --enable-logging=stderr --v=0 \
  --log-net-log="$out/netlog.json" --net-log-capture-mode=Default \
  --window-size=1280,2400 --hide-scrollbars --screenshot="$out/screenshot.png" "$url" \
  >"$out/chromium.log" 2>&1 || true
chromium "${common[@]}" --enable-logging=stderr --v=0 --dump-dom "$url" >"$out/dom.html" 2>>"$out/chromium.log" || true
# JavaScript off: headless screenshots need script, so render a copy of the page without its <script>.
nojs="$profile/report-nojs.html"
python3 -c 'import re,sys; open(sys.argv[2],"w",encoding="utf-8").write(re.sub(r"<script>.*?</script>","",open(sys.argv[1],encoding="utf-8").read(),flags=re.S))' "$report" "$nojs"
chromium "${common[@]}" --window-size=1280,1600 --hide-scrollbars \
  --screenshot="$out/screenshot-nojs.png" "file://$nojs" >/dev/null 2>&1 || true
chromium "${common[@]}" --blink-settings=preferredColorScheme=0 --force-dark-mode \
  --window-size=1280,1600 --hide-scrollbars --screenshot="$out/screenshot-dark.png" "$url" >/dev/null 2>&1 || true

status=0
if [[ ! -s "$out/screenshot.png" ]]; then
  echo "FAIL: no screenshot was written" >&2
  status=1
fi

# Console output from the page: Chromium logs it as CONSOLE lines; CSP violations read "Refused to ...".
if grep -E 'CONSOLE|Refused to|Content Security Policy|Uncaught' "$out/chromium.log" >"$out/console.txt"; then
  echo "FAIL: the page logged console messages:" >&2
  sed 's/^/  /' "$out/console.txt" >&2
  status=1
fi

# Network: every URL request the page started. Chromium's own background services (update checks, account
# lookups) start requests with the initiator "not an origin"; requests started by the page carry the page's
# origin ("null" for a file:// page). Any such request to something other than file:/data: fails the check.
if [[ -s "$out/netlog.json" ]]; then
  python3 - "$out/netlog.json" >"$out/requests.txt" <<'PY'
import json, re, sys
log = json.load(open(sys.argv[1], encoding="utf-8", errors="replace"))
names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
for event in log.get("events", []):
    params = event.get("params") or {}
    if names.get(event["type"]) != "URL_REQUEST_START_JOB" or "url" not in params:
        continue
    if params.get("initiator") == "not an origin":
        continue  # the browser itself, not the page
    if re.match(r"^(file:|data:|about:|chrome:|blob:)", params["url"]):
        continue
    print(params.get("initiator"), params["url"])
PY
  if [[ -s "$out/requests.txt" ]]; then
    echo "FAIL: the page attempted network requests:" >&2
    sed 's/^/  /' "$out/requests.txt" >&2
    status=1
  fi
else
  echo "FAIL: no net log was written (cannot prove there were no requests)" >&2
  status=1
fi

# The inline script ran (the CSP hash matched): it turns sortable headers into buttons.
if ! grep -q 'class="sort"' "$out/dom.html"; then
  echo "FAIL: the inline script did not run (CSP hash mismatch?)" >&2
  status=1
fi
# With JavaScript off the page still renders (the screenshot exists); every <details> is in the markup.
if [[ ! -s "$out/screenshot-nojs.png" ]]; then
  echo "FAIL: no screenshot with JavaScript off" >&2
  status=1
fi
count_details() { python3 -c 'import sys; print(open(sys.argv[1], encoding="utf-8", errors="replace").read().count("<details"))' "$1"; }
js_details=$(count_details "$out/dom.html")
src_details=$(count_details "$report")
if [[ "$js_details" -ne "$src_details" ]]; then
  echo "FAIL: the file has $src_details <details>, the rendered DOM $js_details" >&2
  status=1
fi

if [[ $status -eq 0 ]]; then
  echo "OK: $(chromium --version 2>/dev/null) rendered $report: no console messages, no network requests,"
  echo "    script ran, $js_details <details> rendered. Screenshots: $out/screenshot.png, $out/screenshot-dark.png"
fi
exit $status
