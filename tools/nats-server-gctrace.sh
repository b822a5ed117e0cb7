#!/usr/bin/env bash
# nats-server with its Go garbage collector traced: a stand-in for the binary, for benchmarks
# that start their own server (they drain its log and keep none of it). Each line of its
# standard error, `gc N @...` lines included, is also appended to $GCTRACE_LOG with the time of
# day in front (seconds since the epoch, to the millisecond), so that a collection can be set
# beside the slow verdicts a benchmark prints. For example:
#
#   GCTRACE_LOG=/tmp/gc.log NATS_SERVER_BIN=$PWD/tools/nats-server-gctrace.sh \
#     E2E_ONLY=1 cargo bench -p arbiter-stack --bench pipeline
#
# NATS_KEY (current, oldest or a version) picks the binary, as in tools/soak.sh. NATS_PROFILE_PORT
# also serves Go's profiles on that port (`--profile`), to read while the benchmark runs:
#
#   curl -s 'http://127.0.0.1:PORT/debug/pprof/heap?debug=1' > heap.txt
#   curl -s 'http://127.0.0.1:PORT/debug/pprof/profile?seconds=20' > cpu.pb
#   tools/pprof-top.py heap heap.txt; tools/pprof-top.py cpu cpu.pb
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$(bash "$here/nats-server.sh" path "${NATS_KEY:-current}")"
: "${GCTRACE_LOG:?GCTRACE_LOG names the file the timestamped log is appended to}"
export GODEBUG="${GODEBUG:+$GODEBUG,}gctrace=1"
profile=()
[ -n "${NATS_PROFILE_PORT:-}" ] && profile=(--profile "$NATS_PROFILE_PORT")
exec "$bin" "${profile[@]}" "$@" 2> >(perl -MTime::HiRes=time -ne '
  BEGIN { $| = 1; open(LOG, ">>", $ENV{GCTRACE_LOG}) or die "$ENV{GCTRACE_LOG}: $!"; select((select(LOG), $| = 1)[0]) }
  printf LOG "%.3f %s", time, $_; print STDERR $_')
