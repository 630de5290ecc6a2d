#!/usr/bin/env bash
# What the browser tests (tests/browser) need: Debian's Chromium (the browser;
# Playwright's own browser downloads cannot work here), graphviz (the graph
# view of pprof's web UI, and ljm heap --format dot's test) and a font, plus
# the npm packages playwright-core (drives Chromium), speedscope (its web app)
# and mermaid (parses and draws ljm heap --format mermaid in the page) at
# pinned versions in /var/cache/ljmkit/npm -- no global install, no browser
# download.
# Idempotent and quiet: prints nothing when everything is present.
set -euo pipefail

npm_dir=${LJM_BROWSER_NPM:-/var/cache/ljmkit/npm}
# Pinned: the tests drive these versions' behaviour (playwright-core 1.58
# needs Node.js >= 18: Debian 12 ships 18).
pw_version=1.58.0
speedscope_version=1.25.0
mermaid_version=11.12.1

# shellcheck source=../setup-lib.sh
. "$(dirname "$0")/../setup-lib.sh"

# -- What is missing ------------------------------------------------------
debs=(chromium graphviz fonts-dejavu-core)
command -v npm >/dev/null 2>&1 || debs+=(npm)  # nodejs from elsewhere may bring its own
missing=()
for p in "${debs[@]}"; do installed "$p" || missing+=("$p"); done
npm_version() {  # npm_version PACKAGE -> its installed version, or nothing
  local f="$npm_dir/node_modules/$1/package.json"
  [ -f "$f" ] && node -e 'process.stdout.write(String(require(process.argv[1]).version))' "$f" 2>/dev/null
}
npm_missing=()
[ "$(npm_version playwright-core || true)" = "$pw_version" ] ||
  npm_missing+=("playwright-core@$pw_version")
{ [ "$(npm_version speedscope || true)" = "$speedscope_version" ] &&
  [ -f "$npm_dir/node_modules/speedscope/dist/release/index.html" ]; } ||
  npm_missing+=("speedscope@$speedscope_version")
{ [ "$(npm_version mermaid || true)" = "$mermaid_version" ] &&
  [ -f "$npm_dir/node_modules/mermaid/dist/mermaid.min.js" ]; } ||
  npm_missing+=("mermaid@$mermaid_version")

# -- Debian packages ------------------------------------------------------
[ ${#missing[@]} -eq 0 ] || apt_install "installing Chromium" "${missing[@]}"
[ ${#npm_missing[@]} -gt 0 ] || exit 0
echo "setup: installing ${npm_missing[*]} (npm, in $npm_dir)" >&2

# -- npm packages (all installed together from one package.json) ---------
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
    "speedscope": "$speedscope_version",
    "mermaid": "$mermaid_version"
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
    fail "installing the npm packages" "npm install ${npm_missing[*]} failed" "npm's messages are above"
  fi
  rm -f "$log"
  $sudo rm -rf "$npm_dir.old.$$"
  [ ! -e "$npm_dir" ] || $sudo mv "$npm_dir" "$npm_dir.old.$$"
  $sudo mv "$work" "$npm_dir"
  $sudo rm -rf "$npm_dir.old.$$"
  # Readable by anyone: the tests may run as another user.
  $sudo chmod -R a+rX "$npm_dir"
fi
