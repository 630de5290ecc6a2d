#!/usr/bin/env bash
# Installs what exporters/heaptrack:heaptrack_gui_test needs: Debian's
# heaptrack_gui, a virtual X server to run it on (Xvfb, whose -fbdir
# framebuffer file is the screenshot source), xwininfo (x11-utils) to see
# its windows and libXtst (XTEST, loaded through ctypes) to click its tabs.
# Idempotent; prints nothing when everything is present, one
# "setup: installing ..." line on stderr when it installs.
set -euo pipefail

packages=(
  heaptrack-gui   # heaptrack_gui 1.4.0
  xvfb            # Xvfb
  x11-utils       # xwininfo
  libxtst6        # libXtst.so.6 (x11-utils needs it too; the test loads it itself)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup: installing ${missing[*]}" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# apt's chatter (e.g. "debconf: delaying package configuration") is shown
# only when something fails.
if ! { $sudo apt-get update -qq &&
       DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
         "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "setup: installing ${missing[*]} failed" >&2
  exit 1
fi
