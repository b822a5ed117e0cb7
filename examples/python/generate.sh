#!/usr/bin/env bash
# Generates the Python messages and gRPC stubs of every proto/shogi/v1 file into gen/ (not
# committed: it is made from proto/ each time, so it never drifts from the contract), with the
# protoc that grpcio-tools bundles: no system protoc.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-$here/.venv/bin/python}"
proto="$here/../../proto"
rm -rf "$here/gen" && mkdir -p "$here/gen"
cd "$proto"
"$python" -m grpc_tools.protoc -I . \
  --python_out="$here/gen" --pyi_out="$here/gen" --grpc_python_out="$here/gen" \
  shogi/v1/*.proto
