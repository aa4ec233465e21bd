#!/usr/bin/env bash
# Install Debian packages that are missing, and nothing else (idempotent: a no-op when all are there).
# Usage: ensure-apt.sh PKG...       Used by the editor tests (tests/editors/) on a fresh CI machine.
set -euo pipefail
missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  SUDO=sudo
  command -v sudo >/dev/null || { echo "ensure-apt: need root to install: ${missing[*]}" >&2; exit 1; }
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
# serialise concurrent callers (two test sessions) on one lock
exec 9>"${TMPDIR:-/tmp}/tclint-ensure-apt.lock"
flock 9
# apt lists may be absent on a fresh machine: update once, then install
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "ensure-apt: installed ${missing[*]}" >&2
