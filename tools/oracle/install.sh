#!/usr/bin/env bash
# Installs the oracle's Python dependencies (cshogi, pinned) for the differential tests of
# crates/shogi-rules. Used by the CI script; safe to run again.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python3 -m pip install --disable-pip-version-check --quiet -r "$here/requirements.txt"
python3 -c 'import cshogi, importlib.metadata as m; print("cshogi", m.version("cshogi"), "installed")'
