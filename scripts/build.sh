#!/usr/bin/env bash
# scripts/build.sh - configure and build Grove (after scripts/setup.sh).
#
# Ninja, LLVM/MLIR 22 from Debian, linking libMLIR.so/libLLVM.so with lld:
# a tool links in about a second instead of twenty on two cores.
# Environment: GROVE_BUILD_DIR (default <repo>/build), GROVE_JOBS (default nproc).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GROVE_BUILD_DIR:-$ROOT/build}"
JOBS="${GROVE_JOBS:-$(nproc)}"
LLVM=/usr/lib/llvm-22

if [[ ! -f "$BUILD/build.ninja" ]]; then
  echo "build: configuring $BUILD"
  cmake -S "$ROOT" -B "$BUILD" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$LLVM/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM/bin/lit" \
    -DGROVE_TEST_PYTHON="$ROOT/.venv/bin/python" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -B$LLVM/bin" \
    "-DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld -B$LLVM/bin" >/dev/null
fi
echo "build: ninja -j$JOBS in $BUILD"
t0=$(date +%s)
# Progress lines are noise in CI logs; errors and warnings stay.
set +e
ninja -C "$BUILD" -j"$JOBS" "$@" | { grep -Ev '^\[[0-9]+/[0-9]+\] ' || true; }
status=${PIPESTATUS[0]}
set -e
[[ $status -eq 0 ]] || { echo "build: FAILED (ninja exit $status)" >&2; exit 1; }
echo "build: done in $(($(date +%s) - t0)) s"

# The Python package (docs/python.md) into the venv, from this build tree:
# scikit-build-core reconfigures it, finds nothing to rebuild and installs
# the `python` component.
PY="$ROOT/.venv/bin/python"
if [[ -x "$PY" && -d "$BUILD/python_packages/grove" ]]; then
  t0=$(date +%s)
  "$PY" -m pip install -q --disable-pip-version-check --no-input \
    --no-build-isolation --no-deps --config-settings=build-dir="$BUILD" \
    "$ROOT" >"$BUILD/pip-install-grove.log" 2>&1 ||
    { cat "$BUILD/pip-install-grove.log" >&2;
      echo "build: installing the grove package FAILED" >&2; exit 1; }
  echo "build: grove package installed in .venv in $(($(date +%s) - t0)) s"
elif [[ -x "$PY" ]]; then
  echo "build: the grove Python package was not built (see CMake's 'Grove Python package' line)"
fi
