#!/usr/bin/env bash
# `buf breaking` for the shogi.v1 contracts (rules: `breaking` in proto/buf.yaml), against two
# references, so that a wire break fails before it lands:
#
# 1. proto/released.json, the image of the contract as last released (`make proto-release`
#    writes it, and refuses to if the new contract breaks the old image). It holds whatever
#    commits came since, so a break spread over several commits or merges is caught too.
# 2. The contract this change started from: on a branch, its merge-base with main (origin/main
#    when there is one); on main, HEAD when proto/ has uncommitted changes, else HEAD^1 (the
#    main before the last commit or merge: in CI's clean clone of main, the merge being
#    checked). This covers what was added since the last release. Skipped, saying so, when
#    that commit has no released image yet (it predates this check: the options and the move
#    of PartitionLease/Member to bus.proto came with it).
#
# Usage: tools/buf-breaking.sh [--release]   (--release: check 1, then rewrite the image)
# BUF_BREAKING_AGAINST=<git ref> replaces the reference of check 2.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
released=proto/released.json
command -v buf >/dev/null || { echo "buf-breaking: buf is missing (make setup)" >&2; exit 1; }

image() {
  # Without source info, so that a comment alone changes nothing; pretty-printed, so that a
  # change to the contract reads as a diff.
  (cd proto && buf build --exclude-source-info -o -#format=json) |
    python3 -c 'import json,sys; json.dump(json.load(sys.stdin), sys.stdout, indent=1, sort_keys=True); print()'
}

test -f "$released" || { echo "buf-breaking: $released is missing" >&2; exit 1; }
echo "buf-breaking: against the released contract ($released)"
(cd proto && buf breaking --against "../$released")

if [ "${1:-}" = "--release" ]; then
  image >"$released.tmp" && mv "$released.tmp" "$released"
  echo "buf-breaking: $released rewritten from proto/"
  exit 0
fi

git rev-parse --git-dir >/dev/null 2>&1 ||
  { echo "buf-breaking: not a git checkout: the check against earlier commits needs one" >&2; exit 1; }
head=$(git rev-parse HEAD)
base="${BUF_BREAKING_AGAINST:-}"
if [ -z "$base" ]; then
  for ref in origin/main main; do
    if git rev-parse -q --verify "$ref^{commit}" >/dev/null; then
      merge_base=$(git merge-base HEAD "$ref")
      [ "$merge_base" != "$head" ] && base=$merge_base
      break
    fi
  done
fi
if [ -z "$base" ]; then
  if ! git diff --quiet HEAD -- proto; then
    base=$head
  elif git rev-parse -q --verify 'HEAD^1' >/dev/null; then
    base=$(git rev-parse 'HEAD^1')
  elif [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    echo "buf-breaking: shallow clone, HEAD^1 is missing: git fetch --unshallow" >&2
    exit 1
  else
    echo "buf-breaking: HEAD is the first commit: nothing before it to compare with"
    exit 0
  fi
fi
base=$(git rev-parse "$base^{commit}")
if ! git cat-file -e "$base:$released" 2>/dev/null; then
  echo "buf-breaking: ${base:0:12} predates $released; the released contract was checked"
  exit 0
fi
echo "buf-breaking: against the contract at ${base:0:12}"
(cd proto && buf breaking --against "../.git#ref=$base,subdir=proto")
