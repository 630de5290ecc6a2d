#!/usr/bin/env bash
# What the browser tests (tests/browser) need: Debian's Chromium (the browser;
# Playwright's own browser downloads cannot work here), graphviz (the graph
# view of pprof's web UI) and a font, plus the npm packages playwright-core
# (drives Chromium) and speedscope (its web app) at pinned versions in
# /var/cache/ljmkit/npm -- no global install, no browser download.
# Idempotent and quiet: prints nothing when everything is present.
set -euo pipefail

npm_dir=${LJM_BROWSER_NPM:-/var/cache/ljmkit/npm}
# Pinned: the tests drive these versions' behaviour (playwright-core 1.58
# needs Node.js >= 18: Debian 12 ships 18).
pw_version=1.58.0
speedscope_version=1.25.0

sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"

# -- What is missing (one line says all that will be installed) ----------
debs=(chromium graphviz fonts-dejavu-core)
command -v npm >/dev/null 2>&1 || debs+=(npm)  # nodejs from elsewhere may bring its own
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
installed_version() {  # installed_version PACKAGE -> its version, or nothing
  local f="$npm_dir/node_modules/$1/package.json"
  [ -f "$f" ] && node -e 'process.stdout.write(String(require(process.argv[1]).version))' "$f" 2>/dev/null
}
npm_missing=()
[ "$(installed_version playwright-core || true)" = "$pw_version" ] ||
  npm_missing+=("playwright-core@$pw_version")
{ [ "$(installed_version speedscope || true)" = "$speedscope_version" ] &&
  [ -f "$npm_dir/node_modules/speedscope/dist/release/index.html" ]; } ||
  npm_missing+=("speedscope@$speedscope_version")
if [ ${#missing[@]} -eq 0 ] && [ ${#npm_missing[@]} -eq 0 ]; then
  exit 0
fi
what="${missing[*]}"
[ ${#npm_missing[@]} -eq 0 ] || what="${what:+$what }${npm_missing[*]} (npm, in $npm_dir)"
echo "setup: installing $what" >&2

# -- Debian packages ------------------------------------------------------
if [ ${#missing[@]} -gt 0 ]; then
  log=$(mktemp)
  apt_install() {
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >"$log" 2>&1
  }
  # The package lists are refreshed only when the install needs it (none
  # yet, or outdated ones naming files the mirror no longer has).
  if ! apt_install; then
    $sudo apt-get update -qq >/dev/null
    apt_install || { cat "$log" >&2; rm -f "$log"; exit 1; }
  fi
  rm -f "$log"
fi

# -- npm packages (both installed together from one package.json) --------
if [ ${#npm_missing[@]} -gt 0 ]; then
  $sudo mkdir -p "$(dirname "$npm_dir")"
  # Built beside the final folder and swapped in whole, so an interrupted
  # install never leaves a half-filled folder that looks complete.
  work="$npm_dir.new.$$"
  $sudo rm -rf "$work"
  $sudo mkdir -p "$work"
  $sudo tee "$work/package.json" >/dev/null <<JSON
{
  "name": "ljmkit-browser-tests",
  "private": true,
  "description": "Installed by ljmkit scripts/setup-tests.d/browser.sh for tests/browser",
  "dependencies": {
    "playwright-core": "$pw_version",
    "speedscope": "$speedscope_version"
  }
}
JSON
  log=$(mktemp)
  if ! (cd "$work" && $sudo env PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
        npm install --prefix "$work" --no-audit --no-fund --ignore-scripts \
        --no-update-notifier --loglevel=error >"$log" 2>&1); then
    cat "$log" >&2
    rm -f "$log"
    $sudo rm -rf "$work"
    exit 1
  fi
  rm -f "$log"
  $sudo rm -rf "$npm_dir.old.$$"
  [ ! -e "$npm_dir" ] || $sudo mv "$npm_dir" "$npm_dir.old.$$"
  $sudo mv "$work" "$npm_dir"
  $sudo rm -rf "$npm_dir.old.$$"
  # Readable by anyone: the tests may run as another user.
  $sudo chmod -R a+rX "$npm_dir"
fi
