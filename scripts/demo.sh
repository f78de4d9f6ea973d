#!/usr/bin/env bash
# scripts/demo.sh - the main job on a fresh Debian 12 machine: install what
# Grove needs, build it, compile the shipped MLP with grovec, link it into the
# example app and classify scikit-learn's held-out digits.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GROVE_BUILD_DIR:-$ROOT/build}"

"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh" grovec grove_rt digits

echo
echo "demo: grovec models/mlp/mlp.mlir -> $BUILD/examples/digits/grove_mlp_model/"
ls -l "$BUILD/examples/digits/grove_mlp_model/"
echo
echo "demo: examples/digits (C app linked with libmlp.a and libgrove_rt):"
exec "$BUILD/examples/digits/digits" \
  "$BUILD/examples/digits/grove_mlp_model/mlp.safetensors" \
  "$ROOT/models/mlp/digits_test.bin" \
  --expect "$ROOT/models/mlp/reference_accuracy.txt"
