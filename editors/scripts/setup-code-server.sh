#!/usr/bin/env bash
# Install a real VS Code for the end-to-end test: code-server 4.100.3 (= VS Code 1.100.3) from npm,
# plus Debian's Chromium and playwright-core to drive its web UI.  Only apt and the npm registry are
# used.  Idempotent: a finished install leaves a stamp and later calls return at once.
# Usage: setup-code-server.sh [DIR]   (default: editors/.cache/code-server)   prints DIR on success.
#
# Why the detours (each one is a plain `npm install code-server` failing on this kind of machine):
# code-server >= 4.10x wants Node 22+, so the version is pinned for Debian's Node 20; its
# postinstall refuses to run as root (npm 11 dropped --unsafe-perm) -> --ignore-scripts and run it
# by hand; argon2's prebuilt download and @vscode/ripgrep's download reach GitHub -> build argon2
# from source and put Debian's rg where @vscode/ripgrep looks; kerberos needs libkrb5-dev.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${1:-$HERE/../.cache/code-server}
CS_VERSION=${CS_VERSION:-4.100.3}
PW_VERSION=${PW_VERSION:-1.65.1}
STAMP="$DIR/.installed-$CS_VERSION"
if [ -f "$STAMP" ] && [ -x "$DIR/node_modules/.bin/code-server" ]; then
  echo "$DIR"; exit 0
fi
"$HERE/ensure-apt.sh" build-essential pkg-config python3 libkrb5-dev libxkbfile-dev libsecret-1-dev \
  ripgrep chromium
mkdir -p "$DIR"
exec 9>"$DIR/.lock"; flock 9
[ -f "$STAMP" ] && { echo "$DIR"; exit 0; }
cd "$DIR"
rm -rf node_modules package.json package-lock.json
printf '{"name":"tclint-code-server","private":true}\n' > package.json
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
{
  npm install --ignore-scripts "code-server@$CS_VERSION" "playwright-core@$PW_VERSION"
  npm rebuild argon2
  cd node_modules/code-server/lib/vscode
  npm install --omit=dev --ignore-scripts
  mkdir -p node_modules/@vscode/ripgrep/bin && cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
  npm_config_yes=true npm rebuild
  cd ../..
  npm_config_unsafe_perm=true npm_config_user_agent="npm/$(npm -v) node/$(node -v) linux x64" sh postinstall.sh
} >"$DIR/setup.log" 2>&1 || { echo "setup-code-server: failed, see $DIR/setup.log" >&2; tail -30 "$DIR/setup.log" >&2; exit 1; }
"$DIR/node_modules/.bin/code-server" --version >/dev/null
touch "$STAMP"
echo "$DIR"
