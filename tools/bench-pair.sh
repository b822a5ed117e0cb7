#!/usr/bin/env bash
# The pipeline benchmark's end-to-end window from two checkouts, side by side on this host:
# BASE (a baseline tree, for issue 38 a worktree of 6f5a67f plus the benchmark's /varz counts
# and E2E_SECS, measurement only: `git worktree add ../base 6f5a67f && git -C ../base apply
# "$PWD/tools/bench-base-6f5a67f.patch"`) and this checkout,
# alternating BASE, this, BASE, this... so that both meet the same machine. Each run prints the
# benchmark's own lines (verdict latency, CPU a move, NATS messages a move, nats-server's
# memory) and nats-server's live heap after each collection (Go's gctrace, median and largest
# over the run), read through tools/nats-server-gctrace.sh.
#
#   tools/bench-pair.sh ../base [ROUNDS]   (E2E_TARGET, default 5000 moves/s; E2E_SECS, 10 s)
#
# Build both first (`cargo bench -p arbiter-stack --bench pipeline --no-run` in each), so that
# no run waits on a compile.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="$(cd "${1:?usage: tools/bench-pair.sh BASE_DIR [ROUNDS]}" && pwd)"
rounds="${2:-3}"
target="${E2E_TARGET:-5000}"
lscpu | grep 'Model name' || true
for r in $(seq "$rounds"); do
  for tree in "$base" "$here"; do
    log="$(mktemp)"
    gc="$(mktemp)"
    (cd "$tree" && GCTRACE_LOG="$gc" NATS_SERVER_BIN="$here/tools/nats-server-gctrace.sh" \
      E2E_ONLY=1 E2E_TARGET="$target" cargo bench -q -p arbiter-stack --bench pipeline) \
      >"$log" 2>/dev/null
    heap="$(grep -o '[0-9]*->[0-9]*->[0-9]* MB' "$gc" | sed 's/.*->\([0-9]*\) MB/\1/' | sort -n |
      awk '{v[NR]=$1} END {if (NR) printf "median %s MB, largest %s MB over %d collections", v[int((NR+1)/2)], v[NR], NR; else print "no collection"}')"
    echo "== round $r: $(git -C "$tree" log -1 --format='%h %s' | cut -c1-60)"
    grep -E 'end to end|CPU per move|NATS messages' "$log" | sed 's/^/   /'
    echo "   nats-server live heap after each collection: $heap"
    rm -f "$log" "$gc"
  done
done
