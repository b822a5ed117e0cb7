#!/usr/bin/env bash
# Runs every cargo-fuzz target for FUZZ_SECONDS each (default 15: the brief run CI does; run it
# for hours by hand with FUZZ_SECONDS=3600). The record readers are seeded from the shared game
# records, read in place from ../shared (never copied). cargo-fuzz needs nightly features, which
# RUSTC_BOOTSTRAP=1 enables on the stable toolchain this project uses.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../fuzz"
seconds="${FUZZ_SECONDS:-15}"
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install --locked cargo-fuzz@0.13.2
fi
shared="$(cd ../.. && pwd)/shared/corpus/records"
test -d "$shared" || { echo "fuzz: $shared is missing" >&2; exit 1; }
export RUSTC_BOOTSTRAP=1
for target in sfen usi_move usi_record csa kif jkf write_any; do
  mkdir -p "corpus/$target"
  seeds=()
  case "$target" in csa | kif | write_any) seeds=("$shared") ;; esac
  echo "fuzz: $target for ${seconds}s"
  cargo fuzz run "$target" "corpus/$target" "${seeds[@]}" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 2>&1 |
    grep -E '^(stat::number_of_executed_units|Done|==|SUMMARY|INFO: Seed)' || true
  # A crash leaves an artifact and a non-zero exit: make it fail the run.
  if compgen -G "artifacts/$target/crash-*" >/dev/null; then
    echo "fuzz: $target crashed; see fuzz/artifacts/$target" >&2
    exit 1
  fi
done
