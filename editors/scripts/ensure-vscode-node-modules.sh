#!/usr/bin/env bash
# `npm ci` for editors/vscode when its package-lock.json changed since the last install (idempotent).
# --ignore-scripts: nothing the build needs runs an install script (esbuild's binary comes as an
# optional package), and the optional keytar of @vscode/vsce would try a GitHub download.
set -euo pipefail
EXT=$(cd "$(dirname "$0")/../vscode" && pwd)
cd "$EXT"
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f node_modules/.tclint-lock-sha ] && [ "$(cat node_modules/.tclint-lock-sha)" = "$want" ]; then
  echo "$EXT"; exit 0
fi
command -v npm >/dev/null || "$(dirname "$0")/ensure-apt.sh" nodejs npm
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2
echo "$want" > node_modules/.tclint-lock-sha
echo "$EXT"
