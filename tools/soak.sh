#!/usr/bin/env bash
# Runs timing-sensitive test binaries again and again (a test that fails one run in ten is a
# failing test), by hand, after `cargo test --workspace` has built them:
#
#   tools/soak.sh ROUNDS TEST...        e.g. tools/soak.sh 30 crash cluster log_integrity
#
# TEST is an integration test's name (the file name under some tests/ folder). NATS_KEY=oldest
# runs them on the oldest supported nats-server (default: current); SOAK_ARGS is passed to each
# test binary (`SOAK_ARGS="--skip every_game_gets_its_one_verdict_through_a_rolling_upgrade"`,
# as `make test-nats-oldest` runs the cluster tests on the oldest server). The test and service
# binaries are copied aside first, so that builds meanwhile do not change them; a failing run's
# output stays in $SOAK_LOGS (default /tmp/soak) as <test>-<round>.log, with ARBITER_TEST_LOG=info (or as set)
# so that the services' logs are kept. Under load: `tools/busy.sh tools/soak.sh 30 crash`.
# SOAK_NOTE, a grep -E pattern, prints the lines of a passing run's output that match it before
# the output is removed (`SOAK_NOTE="restarted, as its liveness probe would"` with
# `SOAK_ARGS=--nocapture` counts the nats-servers the cluster tests restarted).
# The last line is `N passed, N failed`; the exit status is 1 if any run failed.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=${1:?"usage: tools/soak.sh ROUNDS TEST..."}; shift
[ "$#" -gt 0 ] || { echo "usage: tools/soak.sh ROUNDS TEST..." >&2; exit 2; }
target="${CARGO_TARGET_DIR:-target}/debug"
bin="$(mktemp -d /tmp/soakbin.XXXXXX)"
logs="${SOAK_LOGS:-/tmp/soak}"
mkdir -p "$bin/deps" "$logs"
trap 'rm -rf "$bin"' EXIT
for b in move-validator repetition-watcher impasse-judge shogi-arbiter; do
  [ -x "$target/$b" ] && cp "$target/$b" "$bin/"
done
for t in "$@"; do
  exe=$(ls -t "$target/deps" | grep -E "^${t}-[0-9a-f]{16}$" | head -1)
  [ -n "$exe" ] || { echo "soak: no test binary '$t' in $target/deps: run cargo test --workspace --no-run" >&2; exit 2; }
  cp "$target/deps/$exe" "$bin/deps/$t"
done
export NATS_SERVER_BIN="${NATS_SERVER_BIN:-$(bash tools/nats-server.sh path "${NATS_KEY:-current}")}"
echo "soak: $rounds rounds of $* on $("$NATS_SERVER_BIN" --version), load $(cut -d' ' -f1-3 /proc/loadavg)"
ok=0; fail=0
declare -A failed
for i in $(seq "$rounds"); do
  for t in "$@"; do
    start=$(date +%s)
    if ARBITER_TEST_LOG="${ARBITER_TEST_LOG:-info}" "$bin/deps/$t" ${SOAK_ARGS:-} >"$logs/$t-$i.log" 2>&1; then
      ok=$((ok + 1))
      if [ -n "${SOAK_NOTE:-}" ]; then
        grep -E -- "$SOAK_NOTE" "$logs/$t-$i.log" | cut -c1-300 | sed "s/^/soak: $t round $i: /"
      fi
      rm -f "$logs/$t-$i.log"
    else
      fail=$((fail + 1)); failed[$t]=$(( ${failed[$t]:-0} + 1 ))
      echo "soak: FAIL $t round $i ($(( $(date +%s) - start )) s): $logs/$t-$i.log"
    fi
  done
  echo "soak: round $i/$rounds: ok=$ok fail=$fail $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
done
for t in "$@"; do echo "soak: $t: $(( rounds - ${failed[$t]:-0} ))/$rounds passed"; done
echo "$ok passed, $fail failed"
[ "$fail" -eq 0 ]
