#!/usr/bin/env bash
# scripts/test.sh - set up, build, and run every test suite: lit (dialect,
# transforms, conversions, pipelines, grovec, integration) and the runtime's
# gtest suite. Ends with one line "N passed, N failed, N skipped" and exits
# non-zero on any failure. CUDA tests are reported as skipped (unsupported)
# where no GPU/toolkit exists - never as passed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GROVE_BUILD_DIR:-$ROOT/build}"
LLVM=/usr/lib/llvm-22

"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh" all mlir-doc
status=0

echo "test: format"
"$ROOT/scripts/check-format.sh" || status=1

RESULTS="$BUILD/test-results"
rm -rf "$RESULTS" && mkdir -p "$RESULTS"

echo "test: lit"
"$LLVM/bin/lit" -sv --xunit-xml-output "$RESULTS/lit.xml" "$BUILD/test" || status=1

echo "test: pytest (the grove Python package, as installed in .venv)"
"$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider \
  --junitxml="$RESULTS/pytest.xml" "$ROOT/test/python" || status=1

echo "test: gtest (runtime)"
OMP_NUM_THREADS=1 "$BUILD/unittests/grove-runtime-tests" --gtest_brief=1 \
  --gtest_output="xml:$RESULTS/gtest.xml" || status=1

# The thread-team service once more on two threads, where its split of a
# range over the team can be checked (on one thread those cases skip).
echo "test: gtest (runtime thread team, 2 OpenMP threads)"
OMP_NUM_THREADS=2 "$BUILD/unittests/grove-runtime-tests" --gtest_brief=1 \
  --gtest_filter='ParallelFor*' \
  --gtest_output="xml:$RESULTS/gtest-threads.xml" || status=1

echo "test: gtest (compiler helpers)"
"$BUILD/unittests/grove-compiler-tests" --gtest_brief=1 \
  --gtest_output="xml:$RESULTS/gtest-compiler.xml" || status=1

echo "test: gtest (runtime under ASan+UBSan, build-asan/)"
GROVE_ASAN_GTEST_OUTPUT="$RESULTS/gtest-asan.xml" \
  "$ROOT/scripts/test-sanitizers.sh" || status=1

reports=("$RESULTS/lit.xml" "$RESULTS/pytest.xml" "$RESULTS/gtest.xml" "$RESULTS/gtest-threads.xml"
  "$RESULTS/gtest-compiler.xml" "$RESULTS/gtest-asan.xml")
if [[ -x "$BUILD/unittests/grove-runtime-cuda-tests" ]]; then
  echo "test: gtest (CUDA runtime; GPU cases SKIPPED where no GPU)"
  "$BUILD/unittests/grove-runtime-cuda-tests" --gtest_brief=1 \
    --gtest_output="xml:$RESULTS/gtest-cuda.xml" || status=1
  reports+=("$RESULTS/gtest-cuda.xml")
else
  echo "test: CUDA target not built (no CUDA toolkit): CUDA runtime tests SKIPPED"
fi

"$ROOT/.venv/bin/python" "$ROOT/scripts/lib/summarize.py" "${reports[@]}" ||
  status=1
exit $status
