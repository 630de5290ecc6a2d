#!/usr/bin/env bash
# Fetches Debian's source of the installed LuaJIT into /var/cache/ljmkit/luajit-src.
# The recorder compiles against its internal headers (lj_obj.h, lj_frame.h, ...)
# so that it can read the VM state the public API does not expose. Nothing of
# it is committed. Idempotent and quiet when the matching version is present.
set -euo pipefail

dest=/var/cache/ljmkit/luajit-src
ver=$(dpkg-query -W -f='${Version}' libluajit-5.1-dev 2>/dev/null || true)
if [ -z "$ver" ]; then
  echo "luajit-source: libluajit-5.1-dev is not installed" >&2
  exit 1
fi
if [ -f "$dest/.debian-version" ] && [ "$(cat "$dest/.debian-version")" = "$ver" ] \
   && [ -f "$dest/src/lj_obj.h" ]; then
  exit 0
fi

sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"

# A deb-src entry for bookworm (deb822 style, next to the distribution's list).
srclist=/etc/apt/sources.list.d/ljmkit-deb-src.sources
if ! apt-cache showsrc luajit 2>/dev/null | grep -q "^Version: $ver\$"; then
  if [ ! -f "$srclist" ]; then
    $sudo tee "$srclist" >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  $sudo apt-get update -qq >/dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get source -qq "luajit=$ver" >/dev/null 2>&1) || {
  echo "luajit-source: apt-get source luajit=$ver failed" >&2
  exit 1
}
tree=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
if [ -z "$tree" ] || [ ! -f "$tree/src/lj_obj.h" ]; then
  echo "luajit-source: unexpected source layout in $work" >&2
  exit 1
fi
$sudo mkdir -p "$(dirname "$dest")"
$sudo rm -rf "$dest"
$sudo mv "$tree" "$dest"
echo "$ver" | $sudo tee "$dest/.debian-version" >/dev/null
