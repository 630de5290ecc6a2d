# setup-lib.sh -- what the set-up scripts share (sourced, never run):
# package checks, apt installs that say why they failed, the machine's
# Debian release and its apt mirrors. Every function is safe under
# `set -euo pipefail`: a package that is not installed, a file that is not
# there or an empty answer is a value, never an exit.

sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
apt_etc=${LJM_APT_ETC:-/etc/apt}  # where apt's sources are (another folder in tests)

# fail STEP WHY [WHAT TO DO]: one line on stderr, then exit 1.
fail() {
  echo "setup: $1 failed: $2${3:+ ($3)}" >&2
  exit 1
}

# installed PKG: true when dpkg has PKG installed.
installed() {
  local s
  s=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
  [ "$s" = "install ok installed" ]
}

# installed_version PKG: its installed source version, or nothing.
installed_version() {
  local s
  s=$(dpkg-query -W -f='${Status} ${source:Version}' "$1" 2>/dev/null) || return 0
  case $s in "install ok installed "*) echo "${s#install ok installed }" ;; esac
}

# codename: the release this machine runs (bookworm, trixie, ...).
codename() {
  # shellcheck source=/dev/null
  (. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
}

apt_updated=0
# apt_update: refreshes the package lists once per run.
apt_update() {
  [ $apt_updated -eq 0 ] || return 0
  local log
  log=$(mktemp)
  if ! $sudo apt-get update -qq >"$log" 2>&1; then
    local why
    why=$(grep -m1 -E '^(E|Err):' "$log" || tail -n 1 "$log")
    rm -f "$log"
    fail "apt-get update" "${why:-no reason given}" "check the mirrors in /etc/apt/sources.list and /etc/apt/sources.list.d/"
  fi
  rm -f "$log"
  apt_updated=1
}

# has_candidate PKG: true when apt can install PKG on this release.
has_candidate() {
  local c
  c=$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p') || return 1
  [ -n "$c" ] && [ "$c" != "(none)" ]
}

# apt_install STEP PKG...: installs what is missing of PKG... quietly; on
# failure one line naming the step and apt's first error.
apt_install() {
  local step=$1 p missing=() log why
  shift
  for p in "$@"; do installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "setup: installing ${missing[*]}" >&2
  apt_update
  log=$(mktemp)
  if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
       "${missing[@]}" >"$log" 2>&1; then
    why=$(grep -m1 -E '^E:' "$log" || tail -n 1 "$log")
    rm -f "$log"
    fail "$step" "apt-get install ${missing[*]}: ${why:-no reason given}" \
      "run 'apt-get install ${missing[*]}' to see apt's whole answer"
  fi
  rm -f "$log"
}

# apt_uri SUITE: the URI of the first apt source (deb or deb-src) that
# serves SUITE, from /etc/apt/sources.list and sources.list.d/*.list and
# *.sources; nothing when no source does. Scripts take their mirrors from
# here, so a machine behind a local mirror or proxy fetches where apt does.
apt_uri() {
  local suite=$1 f
  {
  for f in "$apt_etc/sources.list" "$apt_etc"/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    # deb [options] URI SUITE COMPONENTS...
    awk -v s="$suite" '$1 ~ /^deb(-src)?$/ {
        i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if ($(i + 1) == s) { sub(/\/+$/, "", $i); print $i; exit } }' "$f"
  done
  for f in "$apt_etc"/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # deb822 stanzas: URIs: and Suites: fields, stanzas apart by blank lines.
    awk -v s="$suite" 'BEGIN { RS = "" }
      { uri = ""; ok = 0; n = split($0, line, "\n")
        for (j = 1; j <= n; j++) {
          if (line[j] ~ /^URIs:/) { split(line[j], w, /[ \t]+/); uri = w[2] }
          if (line[j] ~ /^Suites:/) { m = split(line[j], w, /[ \t]+/)
            for (k = 2; k <= m; k++) if (w[k] == s) ok = 1 }
          if (line[j] ~ /^Enabled: *no/) { ok = 0; uri = "" } }
        if (ok && uri != "") { sub(/\/+$/, "", uri); print uri; exit } }' "$f"
  done
  } | head -n 1 || true
}

# debian_mirror: the machine's main Debian archive (from apt); else fails.
debian_mirror() {
  local c m
  c=$(codename)
  m=$(apt_uri "$c")
  [ -n "$m" ] || m=$(apt_uri "$c-updates")
  [ -n "$m" ] || fail "finding the Debian mirror" "no apt source serves '$c'" \
    "add the Debian archive for '$c' to /etc/apt/sources.list"
  echo "$m"
}
