#!/usr/bin/env bash
# Installs the system packages iapguard builds against, if they are missing (Debian/Ubuntu).
set -euo pipefail
need=()
pkgs=(libsqlite3-dev libcurl4-openssl-dev)
# CI runs the PostgreSQL store tests against a throwaway server (initdb + pg_ctl from Debian's package),
# and scores the demo world's findings against its truth with python3 (scripts/demo-ratio.py).
[ "${CI:-}" = "true" ] && pkgs+=(postgresql python3)
for pkg in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi
