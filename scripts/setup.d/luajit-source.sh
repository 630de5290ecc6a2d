#!/usr/bin/env bash
# Fetches the LuaJIT sources the recorder is compiled against, into
# /var/cache/ljmkit: it reads VM internals (lj_obj.h, ...) whose layout differs
# between LuaJIT trees, and picks the running VM's layout when it starts.
#   luajit-src, luajit2-src  bookworm's luajit and luajit2, required (apt-get
#                            source: the installed version if bookworm's, else the newest)
#   luajit-trixie-src, luajit-sid-src   trixie's and sid's luajit
#   luajit-installed-src     the installed LuaJIT's source, if no tree above has it
#   tarantool-luajit-src     the LuaJIT fork in the installed tarantool's source
# Trixie and sid come from their signed Sources indexes and the pool, not apt,
# so apt-get update stays bookworm-sized; when the mirror has lost a revision's
# .dsc, its verified .orig stands in (no Debian patches, .debian-orig-only).
# A tree other than bookworm's that cannot be fetched is one line, and the
# build leaves that LuaJIT out; a bookworm tree that cannot be fetched fails
# the set-up in one line. Everything comes from the mirrors the machine's apt
# sources name (main and security), never a fixed host. Nothing is installed
# or removed, nothing committed. Idempotent and quiet: present trees cost no network, the indexes'
# choice being cached in luajit-index/ until the installed version is in no
# tree (or LJMKIT_LUAJIT_REFRESH=1).
set -euo pipefail
# shellcheck source=../setup-lib.sh
. "$(dirname "$0")/../setup-lib.sh"

cache=/var/cache/ljmkit
index_dir=$cache/luajit-index
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -e "$keyring" ] || keyring=/usr/share/keyrings/debian-archive-keyring.pgp
codename=$(codename)
mirror=$(debian_mirror)
security=$(apt_uri "$codename-security")
[ -n "$security" ] || security=$(apt_uri bookworm-security)
say() { echo "luajit-source: $*" >&2; }
have() {  # have <tree> <version>
  [ -f "$1/src/lj_obj.h" ] && [ "$(cat "$1/.debian-version" 2>/dev/null)" = "$2" ]
}
first_dir() {  # first_dir DIR [DEPTH [PATH-GLOB]]: the first directory there, or nothing
  find "$1" -mindepth "${2:-1}" -maxdepth "${2:-1}" -type d -path "${3:-*}" -print -quit 2>/dev/null || true
}
install_tree() {  # install_tree <unpacked tree> <destination> <version>
  [ -f "$1/src/lj_obj.h" ] || return 1
  echo "$3" >"$1/.debian-version"
  $sudo mkdir -p "$(dirname "$2")"
  $sudo rm -rf "$2"
  $sudo mv "$1" "$2"
}

# --- bookworm: apt-get source, from a deb-src entry next to the distribution's list.
srclist=/etc/apt/sources.list.d/ljmkit-deb-src.sources
ensure_deb_src() {
  if [ ! -f "$srclist" ]; then
    {
      # The machine's own release too: apt-get source of its tarantool below.
      own=""; [ -z "$codename" ] || [ "$codename" = bookworm ] || own=" $codename"
      printf 'Types: deb-src\nURIs: %s\nSuites: bookworm bookworm-updates%s\nComponents: main\nSigned-By: %s\n' \
        "$mirror" "$own" "$keyring"
      [ -z "$security" ] ||
        printf '\nTypes: deb-src\nURIs: %s\nSuites: bookworm-security\nComponents: main\nSigned-By: %s\n' \
          "$security" "$keyring"
    } | $sudo tee "$srclist" >/dev/null
  fi
  apt_updated=0
  apt_update
}

madison=""
bookworm_versions() {  # bookworm_versions <source package>: sets listed and newest
  local p v
  listed=" " newest=""
  [ -n "$madison" ] || madison=$({ apt-cache madison luajit luajit2 2>/dev/null || true; } | awk -F' [|] ' '
    $3 ~ / bookworm(-updates|-security)?\/main Sources$/ { gsub(/ /, "", $1); print $1, $2 }')
  while read -r p v; do
    [ "$p" = "$1" ] || continue
    listed+="$v "
    if [ -z "$newest" ] || dpkg --compare-versions "$v" gt "$newest"; then newest=$v; fi
  done <<<"$madison"
}

fetch_bookworm() {  # fetch_bookworm <source package> <library package> <destination>
  local src=$1 lib=$2 dest=$3 ver="" work tree
  # On bookworm, the installed version if it is bookworm's; else the newest.
  if [ "$codename" = bookworm ]; then
    ver=$(installed_version "$lib")
    have "$dest" "$ver" && return 0
  fi
  bookworm_versions "$src"
  [ -n "$newest" ] || { ensure_deb_src; madison=""; bookworm_versions "$src"; }
  [[ -n $ver && $listed == *" $ver "* ]] || ver=$newest
  if [ -z "$ver" ]; then
    say "apt knows no bookworm version of $src"
    return 1
  fi
  have "$dest" "$ver" && return 0
  work=$(mktemp -d)
  (cd "$work" && apt-get source -qq "$src=$ver" >/dev/null 2>&1) || {
    say "apt-get source $src=$ver failed"
    rm -rf "$work"
    return 1
  }
  tree=$(first_dir "$work")
  install_tree "$tree" "$dest" "$ver" || {
    say "unexpected source layout in $work"
    return 1
  }
  rm -rf "$work"
}

for pair in "luajit libluajit-5.1-2" "luajit2 libluajit2-5.1-2"; do
  read -r src lib <<<"$pair"
  fetch_bookworm "$src" "$lib" "$cache/$src-src" ||
    fail "fetching the LuaJIT sources" "no $src source tree from Debian 12 (bookworm)" \
      "the recorder is built against it; apt-get source $src needs a bookworm deb-src entry, see $srclist"
done

# Tarantool, where installed (the test machine: a real program on its own
# LuaJIT fork, statically linked): the fork its source package bundles.
tt_dest=$cache/tarantool-luajit-src
tt_ver=$(installed_version tarantool)
if [ -n "$tt_ver" ] && ! have "$tt_dest" "$tt_ver"; then
  work=$(mktemp -d)
  if (cd "$work" && apt-get source -qq "tarantool=$tt_ver" >/dev/null 2>&1) &&
     tree=$(first_dir "$work" 3 '*/third_party/luajit') &&
     [ -n "$tree" ] && install_tree "$tree" "$tt_dest" "$tt_ver"; then
    :
  else
    say "$tt_dest missing: cannot fetch tarantool $tt_ver's source (the build leaves it out)"
  fi
  rm -rf "$work"
fi

# --- trixie, sid (and the installed version): Sources index and pool.
get() {  # get <url> <file> [SHA256:<hash>]
  /usr/lib/apt/apt-helper -o Acquire::Retries=1 download-file "$@" >/dev/null 2>&1
}
verify() {  # verify <InRelease> <Release out>: signed by a key of Debian's archive keyring
  local out
  if command -v gpgv >/dev/null; then
    out=$(gpgv --homedir "${1%/*}" --status-fd 1 --keyring "$keyring" --output "$2" "$1" 2>/dev/null) || true
    grep -q '^\[GNUPG:\] GOODSIG' <<<"$out" && ! grep -q '^\[GNUPG:\] BADSIG' <<<"$out"
  else
    sqv --keyring "$keyring" --cleartext --output "$2" "$1" >/dev/null 2>&1
  fi
}

refresh=${LJMKIT_LUAJIT_REFRESH:-}
refreshed=" "
index() {  # index <suite>: the cached luajit and luajit2 stanzas of its Sources
  local suite=$1 f=$index_dir/$1 base=$mirror w sha ok=0
  if [ -f "$f" ] && { [ -z "$refresh" ] || [[ $refreshed == *" $suite "* ]]; }; then
    echo "$f"; return 0
  fi
  case $suite in *-security) base=$security; [ -n "$base" ] || return 1 ;; esac
  w=$(mktemp -d)
  if get "$base/dists/$suite/InRelease" "$w/InRelease" && verify "$w/InRelease" "$w/Release"; then
    sha=$(sed -n 's/^ \([0-9a-f]\{64\}\) \+[0-9]\+ main\/source\/Sources.xz$/\1/p' "$w/Release")
    if [ -n "$sha" ] && get "$base/dists/$suite/main/source/Sources.xz" "$w/Sources.xz" "SHA256:$sha" &&
       xz -dc "$w/Sources.xz" |
         awk -v RS= '/(^|\n)Package: luajit2?(\n|$)/ { print; print "" }' >"$w/stanzas"; then
      $sudo mkdir -p "$index_dir"
      $sudo cp "$w/stanzas" "$f"
      ok=1
    fi
  fi
  rm -rf "$w"
  refreshed+="$suite "
  [ $ok -eq 1 ] && { echo "$f"; return 0; }
  [ -f "$f" ] || return 1
  say "cannot refresh $suite's Sources index; using the cached one"
  echo "$f"
}
stanza() {  # stanza <index file> <package> [<version>]: the first matching stanza
  awk -v RS= -v p="$2" -v v="${3:-}" '
    $0 ~ ("(^|\n)Package: " p "(\n|$)") && (v == "" || index($0, "\nVersion: " v "\n")) {
      print; exit }' "$1"
}
field() { sed -n "/^$1: /{s///p;q}"; }

fetch_pool() {  # fetch_pool <stanza> <destination>: .dsc, else the .orig alone
  local st=$1 dest=$2 ver dir w sha name all=1 dsc="" orig="" tree
  ver=$(field Version <<<"$st")
  dir=$(field Directory <<<"$st")
  w=$(mktemp -d)
  while read -r sha _ name; do
    if get "$mirror/$dir/$name" "$w/$name" "SHA256:$sha"; then
      case $name in *.asc) ;; *.dsc) dsc=$name ;; *.orig.tar.*) orig=$name ;; esac
    else
      rm -f "$w/$name" "$w/$name.FAILED"; all=0
    fi
  done < <(awk '/^Checksums-Sha256:/ { c = 1; next } /^[^ ]/ { c = 0 } c' <<<"$st")
  if [ $all -eq 1 ] && [ -n "$dsc" ] &&
     dpkg-source -x "$w/$dsc" "$w/tree" >/dev/null 2>&1; then
    tree=$w/tree orig=""
  elif [ -n "$orig" ] && mkdir "$w/orig" && tar -xf "$w/$orig" -C "$w/orig" 2>/dev/null; then
    tree=$(first_dir "$w/orig")
    [ -z "$tree" ] || echo "$orig alone: the .dsc or Debian tarball could not be fetched, so no Debian patches" \
      >"$tree/.debian-orig-only"
  fi
  if [ -n "${tree:-}" ] && install_tree "$tree" "$dest" "$ver"; then
    [ -z "$orig" ] || say "$dest: $ver from $orig alone (the mirror lacks its .dsc or Debian tarball; no Debian patches)"
    rm -rf "$w"; return 0
  fi
  rm -rf "$w"; return 1
}

wanted=" "  # the versions the suites' trees have or should have
fetch_suite() {  # fetch_suite <suite> <destination>: its luajit, if it can
  local suite=$1 dest=$2 f st ver
  if ! f=$(index "$suite"); then
    say "$dest missing: cannot read $suite's Sources index (the build leaves it out)"
    return 0
  fi
  st=$(stanza "$f" luajit)
  ver=$(field Version <<<"$st")
  if [ -z "$ver" ]; then
    say "$dest missing: $suite has no luajit source (the build leaves it out)"
    return 0
  fi
  wanted+="$ver "
  have "$dest" "$ver" && return 0
  fetch_pool "$st" "$dest" && return 0
  if [ -f "$dest/src/lj_obj.h" ]; then
    say "$dest kept at $(cat "$dest/.debian-version"): cannot fetch $suite's luajit $ver"
  else
    say "$dest missing: cannot fetch $suite's luajit $ver from the pool (the build leaves it out)"
  fi
}

# The installed LuaJIT (either flavour provides libluajit-5.1.so.2) should
# be among the trees. Its version in no tree nor cached index means the cache
# is stale; one that no index read has is remembered, so it costs the
# network once.
src="" ver=""
for lib in libluajit-5.1-2 libluajit2-5.1-2; do
  read -r src ver < <(dpkg-query -W -f='${Status} ${source:Package} ${source:Version}\n' "$lib" \
                        2>/dev/null | sed -n 's/^install ok installed //p') || true
  [ -z "$ver" ] || break
done
unfound=$index_dir/installed-unfound
remembered() { [ -z "${LJMKIT_LUAJIT_REFRESH:-}" ] && [ "$(cat "$unfound" 2>/dev/null)" = "$src $ver" ]; }
suites=(trixie sid)
inst=$cache/luajit-installed-src
if [ -n "$ver" ] && ! have "$cache/$src-src" "$ver" && ! have "$inst" "$ver" && ! remembered; then
  stale=1
  for s in "${suites[@]}"; do
    [ -f "$index_dir/$s" ] && [ -n "$(stanza "$index_dir/$s" "$src" "$ver")" ] && stale=0
  done
  [ $stale -eq 0 ] || refresh=1
fi

fetch_suite trixie "$cache/luajit-trixie-src"
fetch_suite sid "$cache/luajit-sid-src"

if [ -z "$ver" ] || have "$cache/$src-src" "$ver" || [[ $src == luajit && $wanted == *" $ver "* ]]; then
  [ ! -e "$inst" ] || $sudo rm -rf "$inst"
elif ! have "$inst" "$ver" || [ "$(cat "$inst/.debian-source" 2>/dev/null)" != "$src" ]; then
  st=""
  if ! remembered; then
    refresh=1
    for s in trixie trixie-updates trixie-security sid testing; do
      f=$(index "$s") && st=$(stanza "$f" "$src" "$ver") && [ -n "$st" ] && break
    done
    if [ -z "$st" ]; then
      $sudo mkdir -p "$index_dir"
      echo "$src $ver" | $sudo tee "$unfound" >/dev/null
    fi
  fi
  if [ -z "$st" ]; then
    say "$inst missing: the installed $src $ver is in no Debian index read (the build leaves it out)"
  elif fetch_pool "$st" "$inst"; then
    echo "$src" | $sudo tee "$inst/.debian-source" >/dev/null
  else
    say "$inst missing: cannot fetch $src $ver from the pool (the build leaves it out)"
  fi
fi
