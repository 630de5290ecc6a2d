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

# shellcheck source=../setup-lib.sh
. "$(dirname "$0")/../setup-lib.sh"
apt_install "installing heaptrack_gui and Xvfb" "${packages[@]}"
