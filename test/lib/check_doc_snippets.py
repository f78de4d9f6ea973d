"""Checks that the code blocks of the recipe docs are the tree's own code.

A fenced code block preceded by a line `<!-- source: PATH -->` must appear in
PATH (relative to the repository root) line for line, white space at the
ends of lines and indentation ignored. Usage: check_doc_snippets.py ROOT
DOC...; exits 1 naming each block that is not found.
"""
import pathlib
import re
import sys

MARK = re.compile(r"^\s*<!-- source: (\S+) -->\s*$")
FENCE = re.compile(r"^\s*```")


def blocks(doc):
    """Yields (source path, code lines, line number) for each marked block."""
    lines = doc.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if not m or i + 1 >= len(lines) or not FENCE.match(lines[i + 1]):
            i += 1
            continue
        start = i + 2
        end = start
        while end < len(lines) and not FENCE.match(lines[end]):
            end += 1
        yield m.group(1), lines[start:end], i + 1
        i = end + 1


def normalize(lines):
    return [" ".join(l.split()) for l in lines if l.strip()]


def found(code, source):
    want = normalize(code)
    have = normalize(source.splitlines())
    return any(have[k:k + len(want)] == want
               for k in range(len(have) - len(want) + 1))


def main():
    root = pathlib.Path(sys.argv[1])
    bad = checked = 0
    for doc in map(pathlib.Path, sys.argv[2:]):
        for path, code, line in blocks(doc):
            checked += 1
            source = root / path
            if not source.is_file() or not found(code, source.read_text()):
                print(f"{doc}:{line}: block not found in {path}")
                bad += 1
    print(f"{checked} blocks checked, {bad} not found")
    return 1 if bad or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
