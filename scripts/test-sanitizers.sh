#!/usr/bin/env bash
# scripts/test-sanitizers.sh - the runtime and its gtests built with
# AddressSanitizer and UndefinedBehaviorSanitizer (build-asan/, runtime only:
# no compiler), then the gtest suite run under them. Any report fails it.
# Run by scripts/test.sh; alone after scripts/setup.sh.
# Environment: GROVE_ASAN_BUILD_DIR (default <repo>/build-asan).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GROVE_ASAN_BUILD_DIR:-$ROOT/build-asan}"
LLVM=/usr/lib/llvm-22
FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"

if [[ ! -f "$BUILD/build.ninja" ]]; then
  echo "sanitizers: configuring $BUILD (runtime and gtests only)"
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DGROVE_BUILD_COMPILER=OFF -DGROVE_ENABLE_CUDA=OFF \
    "-DCMAKE_C_FLAGS=$FLAGS" "-DCMAKE_CXX_FLAGS=$FLAGS" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined -fuse-ld=lld -B$LLVM/bin" \
    >/dev/null
fi
echo "sanitizers: building grove-runtime-tests"
set +e
ninja -C "$BUILD" grove-runtime-tests | { grep -Ev '^\[[0-9]+/[0-9]+\] ' || true; }
status=${PIPESTATUS[0]}
set -e
[[ $status -eq 0 ]] || { echo "sanitizers: build FAILED" >&2; exit 1; }

# The out-of-memory tests ask for 2^50 bytes: the allocator must say no
# (NULL) rather than abort.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
echo "sanitizers: gtest under ASan+UBSan"
OMP_NUM_THREADS=1 "$BUILD/unittests/grove-runtime-tests" --gtest_brief=1 \
  ${GROVE_ASAN_GTEST_OUTPUT:+--gtest_output="xml:$GROVE_ASAN_GTEST_OUTPUT"}
