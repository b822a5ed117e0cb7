#!/usr/bin/env bash
# Loops the crash and cluster tests, by hand (a test that fails one run in ten is a failing
# test): `tools/loop-crash-cluster.sh [ROUNDS]` after `cargo test --workspace` has built them;
# NATS_KEY=oldest runs them on the oldest supported nats-server. The test and service binaries
# are copied aside first, so that builds meanwhile do not change them. A failing run's output
# stays in /tmp/loop-<test>-<round>.log (the crash test also keeps its services' logs).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rm -rf /tmp/loopbin && mkdir -p /tmp/loopbin/deps
for b in move-validator repetition-watcher impasse-judge shogi-arbiter; do cp target/debug/$b /tmp/loopbin/; done
crash=$(ls -t target/debug/deps | grep -E "^crash-[0-9a-f]+$" | head -1)
cluster=$(ls -t target/debug/deps | grep -E "^cluster-[0-9a-f]+$" | head -1)
cp target/debug/deps/$crash /tmp/loopbin/deps/crash; cp target/debug/deps/$cluster /tmp/loopbin/deps/cluster
export NATS_SERVER_BIN=$(tools/nats-server.sh path ${NATS_KEY:-current})
ok=0; fail=0
for i in $(seq "${1:-10}"); do
  for t in crash cluster; do
    if ARBITER_TEST_LOG=info /tmp/loopbin/deps/$t > /tmp/loop-$t-$i.log 2>&1; then ok=$((ok+1)); rm -f /tmp/loop-$t-$i.log; else fail=$((fail+1)); echo "FAIL $t run $i"; fi
  done
  echo "round $i: ok=$ok fail=$fail $(date +%T)"
done
