#!/usr/bin/env bash
# Installs the example clients' dependencies (`make setup` runs it; safe to run again):
# - examples/python/.venv: the pinned PyPI packages of examples/python/requirements.txt;
# - examples/typescript/node_modules: `npm ci` from the committed package-lock.json, on the
#   machine's Node.js, which must be 20 or later (Debian 12's own nodejs is 18).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python3 -m venv "$here/python/.venv"
"$here/python/.venv/bin/python" -m pip install --disable-pip-version-check --quiet \
  -r "$here/python/requirements.txt"
echo "setup: examples/python/.venv: $("$here/python/.venv/bin/python" -m pip freeze | grep -c ==) packages"
node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$node_major" -lt 20 ]; then
  echo "setup: the TypeScript example needs Node.js 20 or later (found: $(node --version 2>&1))" >&2
  exit 1
fi
(cd "$here/typescript" && npm ci --no-audit --no-fund --loglevel=error)
echo "setup: node $(node --version), examples/typescript/node_modules from package-lock.json"
