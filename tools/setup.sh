#!/usr/bin/env bash
# Installs what the test suite needs beyond cargo, on a fresh machine; safe to run again.
# - cshogi (PyPI), the independent oracle of the differential tests;
# - nats-server (Debian), which the service tests spawn on a free port;
# - buf (PyPI, buf-bin, pinned), which lints the .proto contracts (`make lint-proto`);
# - the example clients' dependencies (`make test-clients`): examples/python/requirements.txt
#   (PyPI, pinned) in examples/python/.venv, examples/typescript's package-lock.json (npm).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/oracle/install.sh"
python3 -m pip install --disable-pip-version-check --quiet buf-bin==1.75.0
# Under pyenv, a newly installed script is on PATH only once the shims are rebuilt.
if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
echo "setup: buf $(buf --version)"
if ! command -v nats-server >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq nats-server
  else
    echo "setup: nats-server is missing; install it with: sudo apt-get install -y nats-server" >&2
    exit 1
  fi
fi
echo "setup: $(nats-server --version)"

# The example clients: a venv of pinned PyPI packages, and npm ci from the committed lock file
# (Node.js 20 or later, which the machine has; Debian's own nodejs is 18, too old).
python3 -m venv "$here/../examples/python/.venv"
"$here/../examples/python/.venv/bin/python" -m pip install --disable-pip-version-check --quiet \
  -r "$here/../examples/python/requirements.txt"
echo "setup: examples/python/.venv: $("$here/../examples/python/.venv/bin/python" -m pip freeze | grep -c ==) packages"
node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$node_major" -lt 20 ]; then
  echo "setup: the TypeScript example needs Node.js 20 or later (found: $(node --version 2>&1))" >&2
  exit 1
fi
(cd "$here/../examples/typescript" && npm ci --no-audit --no-fund --loglevel=error)
echo "setup: node $(node --version), examples/typescript/node_modules from package-lock.json"
