#!/usr/bin/env bash
# Installs what the test suite needs beyond cargo, on a fresh machine; safe to run again.
# - cshogi (PyPI), the independent oracle of the differential tests;
# - nats-server (Debian), which the service tests spawn on a free port;
# - buf (PyPI, buf-bin, pinned), which lints the .proto contracts (`make lint-proto`) and
#   generates the console's TypeScript (`make console`);
# - Chromium and a Japanese font (Debian) for the console's browser test, and Node.js with
#   npm if missing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/oracle/install.sh"
python3 -m pip install --disable-pip-version-check --quiet buf-bin==1.75.0
# Under pyenv, a newly installed script is on PATH only once the shims are rebuilt.
if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
echo "setup: buf $(buf --version)"
# From Debian, where missing: nats-server (the service tests); Chromium (the console's browser
# test drives it with playwright-core, pinned in web/console/package.json); Node.js and npm
# (the console's pinned front-end toolchain), which the machine image normally has.
missing=()
command -v nats-server >/dev/null 2>&1 || missing+=(nats-server)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
# A Japanese font, so that the pieces' kanji show in the test's screenshots (12 MB).
[ -n "$(fc-list :lang=ja 2>/dev/null)" ] || missing+=(fonts-ipafont-gothic)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    # Waits for another apt run's lock rather than failing at once.
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 "${missing[@]}"
  else
    echo "setup: missing ${missing[*]}; install with: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
echo "setup: $(nats-server --version)"
echo "setup: $(chromium --version 2>/dev/null), node $(node --version), npm $(npm --version)"
