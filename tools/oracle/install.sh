#!/usr/bin/env bash
# Installs the test tooling's Python packages (tools/requirements.txt: the cshogi oracle, buf,
# helm, prometheus-client, all pinned) into the venv .tools/venv, never into the system's Python.
# Safe to run again: a venv whose packages match is left as it is.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/.tools/venv"
req="$root/tools/requirements.txt"
stamp="$venv/.requirements"
if [ ! -x "$venv/bin/python3" ]; then
  python3 -m venv "$venv"
fi
if ! cmp -s "$req" "$stamp" 2>/dev/null || ! cmp -s "$here/requirements.txt" "$stamp.oracle" 2>/dev/null; then
  "$venv/bin/python3" -m pip install --disable-pip-version-check --quiet -r "$req"
  cp "$req" "$stamp"
  cp "$here/requirements.txt" "$stamp.oracle"
fi
"$venv/bin/python3" -c 'import cshogi, importlib.metadata as m; print("setup: cshogi", m.version("cshogi"), "in .tools/venv")'
