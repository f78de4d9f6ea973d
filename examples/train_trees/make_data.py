#!/usr/bin/env python3
"""Makes the Tree-LSTM corpus from real syntax trees that ship with Python.

Every function (and method) of ten standard-library packages becomes one
tree: its `ast` nodes (expression contexts dropped), each a token: the
node's type, or for names, attributes and arguments the identifier when it
is among the corpus's most frequent ones. The label is the package the
function comes from (asyncio, email, ...): the classifier must tell code
apart by its shape and vocabulary. Nobody here wrote these trees, and they
need no download: they are the installed interpreter's own library.

Output (little-endian), read by examples/train_trees/train_trees.c:
  magic "GTREES1\\0", int32 vocab, classes, train count, test count, then per
  tree: int32 nodes, label, then child_offsets (nodes + 1), children
  (nodes - 1), tokens (nodes). Node 0 is the root; with --binary each node
  has at most two children (long child lists become chains of list nodes,
  token "<list>").

    python3 examples/train_trees/make_data.py /tmp/trees.bin [--binary]
"""
import argparse
import ast
import collections
import os
import random
import struct
import sysconfig

# Packages of Debian's libpython3.11-stdlib itself (lib2to3 and distutils
# are separate Debian packages, so they are not here).
PACKAGES = ("asyncio", "email", "unittest", "xml", "multiprocessing",
            "importlib", "http", "logging", "urllib", "ctypes")
MAX_NODES = 300
NAMES = 400  # identifiers kept as their own token
VOCAB = 512  # the models' embedding rows (models/treelstm)
SEED = 1234


def functions(package):
    root = os.path.join(sysconfig.get_paths()["stdlib"], package)
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames[:] = sorted(d for d in dirnames if d not in ("test", "tests"))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            with open(os.path.join(dirpath, name), "rb") as f:
                try:
                    tree = ast.parse(f.read())
                except (SyntaxError, ValueError):
                    continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield node


def children(node):
    return [c for c in ast.iter_child_nodes(node)
            if not isinstance(c, ast.expr_context)]


def name_of(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.arg):
        return node.arg
    return None


def flatten(fn):
    """Pre-order nodes and each node's child list (local ids)."""
    nodes, kids = [], []
    stack = [(fn, -1)]
    while stack:
        node, parent = stack.pop()
        me = len(nodes)
        nodes.append(node)
        kids.append([])
        if parent >= 0:
            kids[parent].append(me)
        for c in reversed(children(node)):
            stack.append((c, me))
    return nodes, kids


def binarize(kids):
    """At most two children a node: a node's children k1 .. kn (n > 2)
    become k1 and a new list node holding k2 .. kn, recursively (the
    right-branching binarization of parse trees). Returns the new child
    lists; nodes past the original ones are list nodes."""
    out = [list(k) for k in kids]
    for v in range(len(kids)):
        ks = out[v]
        while len(ks) > 2:
            out.append(ks[1:])
            out[v] = [ks[0], len(out) - 1]
            v, ks = len(out) - 1, out[-1]
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("output")
    p.add_argument("--binary", action="store_true")
    p.add_argument("--test-fraction", type=float, default=0.2)
    a = p.parse_args()

    samples = []
    for label, package in enumerate(PACKAGES):
        before = len(samples)
        for fn in functions(package):
            nodes, kids = flatten(fn)
            if len(nodes) <= MAX_NODES:
                samples.append((label, nodes, kids))
        if len(samples) - before < 50:
            raise SystemExit(f"make_data: the standard library here has "
                             f"{len(samples) - before} functions in "
                             f"{package}; it needs 50")
    names = collections.Counter(
        n for _, nodes, _ in samples for n in map(name_of, nodes) if n)
    types = sorted({type(n).__name__ for _, nodes, _ in samples
                    for n in nodes})
    vocab = {t: i for i, t in enumerate(types + ["<list>"])}
    for n, _ in names.most_common(NAMES):
        vocab.setdefault("name:" + n, len(vocab))

    if len(vocab) > VOCAB:
        raise SystemExit(f"make_data: {len(vocab)} tokens, more than the "
                         f"model's {VOCAB}")

    def token(node):
        n = name_of(node)
        return vocab.get("name:" + n, vocab[type(node).__name__]) if n \
            else vocab[type(node).__name__]

    random.Random(SEED).shuffle(samples)
    test = int(len(samples) * a.test_fraction)
    with open(a.output, "wb") as f:
        f.write(b"GTREES1\0")
        f.write(struct.pack("<4i", len(vocab), len(PACKAGES),
                            len(samples) - test, test))
        for label, nodes, kids in samples[test:] + samples[:test]:
            tokens = [token(n) for n in nodes]
            if a.binary:
                kids = binarize(kids)
                tokens += [vocab["<list>"]] * (len(kids) - len(nodes))
            offsets = [0]
            for k in kids:
                offsets.append(offsets[-1] + len(k))
            flat = [c for k in kids for c in k]
            f.write(struct.pack(f"<2i{len(offsets)}i{len(flat)}i{len(kids)}i",
                                len(kids), label, *offsets, *flat, *tokens))
    counts = collections.Counter(label for label, _, _ in samples[:test])
    sizes = [len(n) for _, n, _ in samples]
    print(f"make_data: {len(samples)} trees ({len(samples) - test} train, "
          f"{test} test), {len(vocab)} tokens, {len(PACKAGES)} classes, "
          f"mean {sum(sizes) / len(sizes):.1f} nodes; majority class of the "
          f"test split {max(counts.values()) / test:.1%}")


if __name__ == "__main__":
    main()
