#!/usr/bin/env bash
# The load harness for the timing-sensitive tests: a newcomer's machine and CI's are rarely idle,
# so a test that only passes on an idle machine is a failing test.
#
#   tools/busy.sh [-n N] COMMAND [ARGS...]
#
# runs COMMAND with N busy processes spinning beside it (default: two per core, `nproc` x 2),
# at the same priority as the command, and stops them when it ends, however it ends. Its exit
# status is COMMAND's. Example: `tools/busy.sh make test`, or `tools/busy.sh tools/soak.sh 30
# crash cluster`.
set -euo pipefail
n=$(( $(nproc) * 2 ))
if [ "${1:-}" = -n ]; then n=${2:?"-n takes a number"}; shift 2; fi
[ "$#" -gt 0 ] || { echo "usage: tools/busy.sh [-n N] COMMAND [ARGS...]" >&2; exit 2; }
pids=()
stop() { [ "${#pids[@]}" -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; }
trap stop EXIT
trap 'exit 130' INT TERM
for _ in $(seq "$n"); do
  # A shell loop that never sleeps: one runnable process, as a compiler job is.
  ( exec -a busy-loop bash -c 'while :; do :; done' ) &
  pids+=($!)
done
echo "busy: $n busy processes on $(nproc) cores beside: $*" >&2
"$@"
