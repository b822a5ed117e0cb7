#!/usr/bin/env bash
# `make test-clients`: the example clients of examples/ against a real `shogi-arbiter serve`,
# each failing on any wrong answer. Needs `make setup` (the Python venv, node_modules, buf,
# nats-server). About 30 s once the debug build exists (cargo test made it).
#
# 1. serve on its embedded bus (as `make run`): a reflection client that speaks only
#    grpc.reflection.v1alpha (grpcio-reflection), then the Python and the TypeScript client.
# 2. serve over a real nats-server with JetStream: the verdict listener (nats-py, a durable
#    JetStream consumer) processes the verdicts of both clients' games, each once; run again
#    with an empty database, it gets none of them a second time; a listener killed between
#    recording a verdict and acknowledging it gets it again when restarted, and skips it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="$root/examples/python"
ts="$root/examples/typescript"
python="$py/.venv/bin/python"
test -x "$python" || { echo "clients: $python is missing: run make setup" >&2; exit 1; }
test -d "$ts/node_modules" || { echo "clients: $ts/node_modules is missing: run make setup" >&2; exit 1; }
# The pinned current nats-server (tools/nats-server.versions), as the Rust tests run.
nats_server="$(bash "$root/tools/nats-server.sh" path current)"
test -x "$nats_server" || { echo "clients: $nats_server is missing: run make setup" >&2; exit 1; }

work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# Waits up to 30 s for a line matching $2 in file $1 and prints its first match.
wait_for_line() {
  local file=$1 pattern=$2 i
  for ((i = 0; i < 300; i++)); do
    if grep -m1 -E "$pattern" "$file" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "clients: no line matching '$pattern' in $file after 30 s:" >&2
  cat "$file" >&2
  return 1
}

# Starts `shogi-arbiter serve` with extra flags; sets $addr to the address it printed first.
serve() {
  local out="$work/serve-$#.out"
  RUST_LOG=warn "$arbiter" serve --listen 127.0.0.1:0 --grace-secs 2 "$@" >"$out" 2>"$work/serve.err" &
  pids+=($!)
  serve_pid=$!
  addr="$(wait_for_line "$out" '^127\.0\.0\.1:[0-9]+$')" || { cat "$work/serve.err" >&2; exit 1; }
  echo "clients: shogi-arbiter serve $* on $addr"
}

stop_serve() {
  kill -TERM "$serve_pid"
  wait "$serve_pid" || { echo "clients: serve did not exit cleanly" >&2; cat "$work/serve.err" >&2; exit 1; }
}

echo "clients: building shogi-arbiter (debug, as the tests use it)"
(cd "$root" && ${CARGO:-cargo} build --locked --quiet -p shogi-arbiter)
arbiter="${CARGO_TARGET_DIR:-$root/target}/debug/shogi-arbiter"

echo "clients: generating the Python and TypeScript code from proto/"
"$py/generate.sh"
(cd "$ts" && buf generate && npx --no-install tsc -p .)

echo "clients: the verdict listener's unit tests"
(cd "$py" && "$python" -m unittest --quiet test_verdict_listener)

run_clients() {
  echo "clients: python play_game.py"
  "$python" "$py/play_game.py" --addr "$addr"
  echo "clients: typescript dist/main.js"
  node "$ts/dist/main.js" --addr "$addr"
}

# 1. The embedded bus.
serve
echo "clients: python reflection_check.py (grpc.reflection.v1alpha)"
"$python" "$py/reflection_check.py" --addr "$addr"
run_clients
stop_serve

# 2. A real nats-server with JetStream, on a port it picks.
"$nats_server" -a 127.0.0.1 -p -1 -js -sd "$work/jetstream" >"$work/nats.log" 2>&1 &
pids+=($!)
nats_addr="$(wait_for_line "$work/nats.log" 'Listening for client connections on' | grep -oE '127\.0\.0\.1:[0-9]+')"
nats_url="nats://$nats_addr"
serve --nats-url "$nats_url"
echo "clients: python verdict_listener.py on $nats_url"
"$python" "$py/verdict_listener.py" --nats-url "$nats_url" --db "$work/verdicts.sqlite" \
  --expect perpetual_check,perpetual_check,declaration,declaration,timeout,timeout,timeout --idle 2 --timeout 60 &
listener=$!
pids+=($listener)
run_clients
wait "$listener"
echo "clients: the listener again, same durable consumer, empty database: nothing comes twice"
"$python" "$py/verdict_listener.py" --nats-url "$nats_url" --db "$work/again.sqlite" \
  --expect "" --idle 2 --timeout 30
echo "clients: a listener that dies between recording a verdict and acknowledging it"
status=0
"$python" "$py/verdict_listener.py" --nats-url "$nats_url" --db "$work/crash.sqlite" \
  --durable crash-test --ack-wait 1 --crash-before-ack --timeout 30 || status=$?
[ "$status" = 3 ] || { echo "clients: the crashing listener exited $status, not 3" >&2; exit 1; }
echo "clients: restarted, it gets every verdict again and records the one it had once"
"$python" "$py/verdict_listener.py" --nats-url "$nats_url" --db "$work/crash.sqlite" \
  --durable crash-test --ack-wait 1 --expect perpetual_check,perpetual_check,declaration,declaration,timeout,timeout,timeout \
  --idle 3 --timeout 30 | tee "$work/restarted.out"
grep -q "6 verdicts processed, 1 redelivered ones skipped" "$work/restarted.out" ||
  { echo "clients: the restarted listener did not skip exactly the one it had recorded" >&2; exit 1; }
stop_serve
echo "clients: every client answered right"
