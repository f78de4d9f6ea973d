#!/usr/bin/env python3
"""Adds the options declared in PassOptions.def to mlir-tblgen's pass doc.

grove-insert-collectives and grove-batch-dynamic-trees declare their options
in include/grove/Dialect/Grove/Transforms/PassOptions.def (one row each, so
that the pipelines and grovec declare theirs from the same rows), not in
Passes.td, so mlir-tblgen's -gen-pass-doc gives them no "Options" section.
This reads the rows and inserts, after each such pass's description, the
section mlir-tblgen would have written for them (same layout: `-name : text`,
names padded to the longest).

  pass_options_doc.py PassOptions.def GroveTransformsPasses.md > OUT.md

scripts/gen-docs.sh writes docs/generated/GroveTransformsPasses.md with it and
test/docs.test checks that file against it.
"""

import ast
import re
import sys

# Which pass each kind of row belongs to.
PASS_OF_MACRO = {
    "GROVE_COLLECTIVES_OPTION": "grove-insert-collectives",
    "GROVE_COLLECTIVES_PASS_OPTION": "grove-insert-collectives",
    "GROVE_TREES_OPTION": "grove-batch-dynamic-trees",
}


def split_arguments(text):
    """The top-level comma-separated arguments of a macro call's body."""
    args, depth, current, i = [], 0, "", 0
    while i < len(text):
        c = text[i]
        if c == '"':
            end = i + 1
            while text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            current += text[i:end + 1]
            i = end + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            args.append(current.strip())
            current = ""
        else:
            current += c
        i += 1
    args.append(current.strip())
    return args


def string_value(arg):
    """The value of a C string literal, or of adjacent ones concatenated."""
    literals = re.findall(r'"(?:[^"\\]|\\.)*"', arg)
    if not literals or re.sub(r'"(?:[^"\\]|\\.)*"', "", arg).strip():
        raise ValueError("not a string literal: " + arg)
    return "".join(ast.literal_eval(s) for s in literals)


def read_rows(path):
    """{pass name: [(option name, description)]}, in the file's order."""
    text = open(path, encoding="utf-8").read()
    # Preprocessor lines (the empty default definitions) and comments are
    # not rows.
    text = re.sub(r"//[^\n]*", "", text)
    lines, continued = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("#") or continued:
            continued = line.rstrip().endswith("\\")
            continue
        lines.append(line)
    text = "\n".join(lines)
    rows = {}
    for match in re.finditer(r"\b(GROVE_[A-Z_]+_OPTION)\s*\(", text):
        macro = match.group(1)
        if macro not in PASS_OF_MACRO:
            raise ValueError("unknown row kind " + macro)
        depth, end = 1, match.end()
        while depth:
            if text[end] == '"':
                end += 1
                while text[end] != '"':
                    end += 2 if text[end] == "\\" else 1
            elif text[end] == "(":
                depth += 1
            elif text[end] == ")":
                depth -= 1
            end += 1
        args = split_arguments(text[match.end():end - 1])
        # NAME is the first string argument (TYPE and FIELD are C++ tokens),
        # DESCRIPTION the last.
        name = next(a for a in args if a.startswith('"'))
        rows.setdefault(PASS_OF_MACRO[macro], []).append(
            (string_value(name), string_value(args[-1])))
    return rows


def options_section(options):
    width = max(len(name) for name, _ in options)
    lines = ["-%s : %s" % (name.ljust(width), text) for name, text in options]
    return "#### Options\n\n```\n" + "\n".join(lines) + "\n```\n\n"


def add_sections(doc, rows):
    for pass_name, options in rows.items():
        heading = "### `-%s`\n" % pass_name
        start = doc.find(heading)
        if start < 0:
            raise ValueError("no section for " + pass_name)
        end = doc.find("\n### ", start + len(heading))
        end = len(doc) if end < 0 else end + 1
        if "\n#### Options\n" in doc[start:end]:
            raise ValueError(pass_name + " already has options in Passes.td")
        section = options_section(options)
        if end == len(doc):
            section = "\n" + section.rstrip("\n") + "\n"
        doc = doc[:end] + section + doc[end:]
    return doc


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: pass_options_doc.py PassOptions.def PASSES.md")
    rows = read_rows(sys.argv[1])
    doc = open(sys.argv[2], encoding="utf-8").read()
    sys.stdout.write(add_sections(doc, rows))


if __name__ == "__main__":
    main()
