#!/usr/bin/env bash
# Fetches Debian's sources of both LuaJIT flavours the recorder is built for:
#   luajit   (Debian's LuaJIT)        -> /var/cache/ljmkit/luajit-src
#   luajit2  (OpenResty's LuaJIT)     -> /var/cache/ljmkit/luajit2-src
# The recorder compiles against their internal headers (lj_obj.h, ...) and
# picks the matching layout when it starts; the tests build each flavour's
# VM from them. The version fetched is the installed one if that flavour is
# installed, else the one apt would install. Only sources are fetched: no
# package is installed or removed. Nothing of it is committed. Idempotent
# and quiet when the matching versions are present.
set -euo pipefail

sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"

# A deb-src entry for bookworm (deb822 style, next to the distribution's list).
srclist=/etc/apt/sources.list.d/ljmkit-deb-src.sources
ensure_deb_src() {  # ensure_deb_src <source package> <version>
  apt-cache showsrc "$1" 2>/dev/null | grep -q "^Version: $2\$" && return 0
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
}

fetch() {  # fetch <source package> <library package> <destination>
  local src=$1 lib=$2 dest=$3 ver
  ver=$(dpkg-query -W -f='${Status} ${Version}' "$lib" 2>/dev/null |
        sed -n 's/^install ok installed //p')
  [ -n "$ver" ] || ver=$(apt-cache policy "$lib" 2>/dev/null | sed -n 's/^ *Candidate: //p')
  if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
    echo "luajit-source: apt knows no version of $lib" >&2
    return 1
  fi
  if [ -f "$dest/.debian-version" ] && [ "$(cat "$dest/.debian-version")" = "$ver" ] \
     && [ -f "$dest/src/lj_obj.h" ]; then
    return 0
  fi
  ensure_deb_src "$src" "$ver"
  local work tree
  work=$(mktemp -d)
  (cd "$work" && apt-get source -qq "$src=$ver" >/dev/null 2>&1) || {
    echo "luajit-source: apt-get source $src=$ver failed" >&2
    rm -rf "$work"
    return 1
  }
  tree=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
  if [ -z "$tree" ] || [ ! -f "$tree/src/lj_obj.h" ]; then
    echo "luajit-source: unexpected source layout in $work" >&2
    rm -rf "$work"
    return 1
  fi
  $sudo mkdir -p "$(dirname "$dest")"
  $sudo rm -rf "$dest"
  $sudo mv "$tree" "$dest"
  echo "$ver" | $sudo tee "$dest/.debian-version" >/dev/null
  rm -rf "$work"
}

fetch luajit libluajit-5.1-2 /var/cache/ljmkit/luajit-src
fetch luajit2 libluajit2-5.1-2 /var/cache/ljmkit/luajit2-src
