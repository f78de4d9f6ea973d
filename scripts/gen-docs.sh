#!/usr/bin/env bash
# scripts/gen-docs.sh - regenerate docs/generated/ from the ODS definitions
# (op reference and pass reference). test/docs.test fails when they are stale.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GROVE_BUILD_DIR:-$ROOT/build}"
ninja -C "$BUILD" mlir-doc >/dev/null
cp "$BUILD/docs/Dialects/GroveDialect.md" "$ROOT/docs/generated/GroveOps.md"
# Two passes declare their options in PassOptions.def, not Passes.td: their
# "Options" sections come from its rows.
python3 "$ROOT/scripts/lib/pass_options_doc.py" \
  "$ROOT/include/grove/Dialect/Grove/Transforms/PassOptions.def" \
  "$BUILD/docs/GroveTransformsPasses.md" \
  >"$ROOT/docs/generated/GroveTransformsPasses.md"
cp "$BUILD/docs/GroveLinalgTransformsPasses.md" "$ROOT/docs/generated/GroveLinalgTransformsPasses.md"
cp "$BUILD/docs/GroveConversionPasses.md" "$ROOT/docs/generated/GroveConversionPasses.md"
cp "$BUILD/docs/GroveCodegenPasses.md" "$ROOT/docs/generated/GroveCodegenPasses.md"
echo "gen-docs: docs/generated/ updated"
