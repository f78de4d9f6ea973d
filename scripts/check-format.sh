#!/usr/bin/env bash
# scripts/check-format.sh - every tracked C/C++ file is clang-format clean
# (the root .clang-format, LLVM style). Lists the files that are not and
# exits 1; `clang-format -i FILE` fixes one. Run by scripts/test.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
command -v clang-format >/dev/null ||
  { echo "format: clang-format not found (scripts/setup.sh installs it)" >&2; exit 1; }
bad=()
while IFS= read -r f; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.cpp' '*.h' '*.c')
if ((${#bad[@]})); then
  echo "format: ${#bad[@]} file(s) not clang-format clean:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "format: $(git ls-files '*.cpp' '*.h' '*.c' | wc -l) files clean ($(clang-format --version))"
