#!/usr/bin/env python3
"""Trains the child-sum Tree-LSTM (models/treelstm/treelstm.mlir: the cell
batched level by level at run time, Adam, one compiled train_step) from
Python, on syntax trees of ten standard-library packages.

    .venv/bin/python examples/train_trees/make_data.py trees.bin
    .venv/bin/python examples/python/train_trees.py trees.bin [--epochs 8]
        [--batch 32] [--logdir runs/trees] [--expect-accuracy A]

Each batch is one forest (offsets, children, roots, tokens, labels; docs/
trees.md), as examples/train_trees's C app builds it. Per epoch: a tqdm bar
(on a terminal only), the mean loss and the held-out accuracy, written to
<logdir>/metrics.csv and as TensorBoard scalars.
"""
import argparse
import os
import struct
import sys

import numpy as np
from tqdm import tqdm

import grove
from common import Loader, Metrics, init_weights

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def read_corpus(path):
    """make_data.py's file: (vocab, classes, train trees, test trees); a tree
    is (offsets, children, tokens, label)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"GTREES1\0":
        sys.exit(f"{path}: not a make_data.py corpus")
    vocab, classes, train, test = struct.unpack_from("<4i", data, 8)
    at, trees = 24, []
    for _ in range(train + test):
        n, label = struct.unpack_from("<2i", data, at)
        at += 8
        ints = np.frombuffer(data, np.int32, 3 * n, at)
        at += 12 * n
        trees.append((ints[:n + 1], ints[n + 1:2 * n], ints[2 * n:], label))
    return vocab, classes, trees[:train], trees[train:]


def forest(trees):
    """The trees as one forest: the entries' first five arguments."""
    offsets, children, tokens, roots = [np.zeros(1, np.int32)], [], [], []
    nodes = edges = 0
    for off, kids, toks, _ in trees:
        offsets.append(off[1:] + edges)
        children.append(kids + nodes)
        tokens.append(toks)
        roots.append(nodes)
        nodes += len(toks)
        edges += len(kids)
    cat = lambda xs: np.concatenate(xs).astype(np.int32)  # noqa: E731
    labels = np.array([t[3] for t in trees], np.int32)
    return (cat(offsets), cat(children), np.array(roots, np.int32),
            cat(tokens), labels)


def accuracy(model, trees, batch=256):
    right = 0
    for start in range(0, len(trees), batch):
        off, kids, roots, toks, labels = forest(trees[start:start + batch])
        right += int((model.forward(off, kids, roots, toks).argmax(1)
                      == labels).sum())
    return right / len(trees)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--logdir", default="runs/trees")
    ap.add_argument("--expect-accuracy", type=float, default=0.0)
    a = ap.parse_args()

    _, _, train, test = read_corpus(a.data)
    model = grove.load(grove.compile(
        os.path.join(ROOT, "models", "treelstm", "treelstm.mlir")))
    # The C app's initialisation: the embedding U(-1, 1), the matrices
    # nn.Linear's 1/sqrt(fan_in), the gate biases zero.
    hidden = dict((p.name, p.shape) for p in model.params)["f.U"][0]

    def bound(name, shape):
        if name == "embed":
            return 1.0
        if name in ("iou.b", "f.b"):
            return 0.0
        return 1 / np.sqrt(hidden if name.startswith("out") else shape[0])
    init_weights(model, np.random.default_rng(0), bound)
    loader = Loader(len(train), a.batch,
                    lambda idx: forest([train[i] for i in idx]))
    metrics = Metrics(a.logdir, ["loss", "accuracy"])
    print(f"child-sum Tree-LSTM: {len(train)} training and {len(test)} "
          f"held-out trees, batch {a.batch}")
    for epoch in range(1, a.epochs + 1):
        losses = [float(model.train_step(*b)) for b in tqdm(
            loader, desc=f"epoch {epoch}", leave=False, disable=None)]
        acc, loss = accuracy(model, test), float(np.mean(losses))
        print(f"epoch {epoch:2d}: loss {loss:.4f}, held-out accuracy "
              f"{100 * acc:.1f}%", flush=True)
        metrics.log(epoch, {"loss": loss, "accuracy": acc})
    metrics.close()
    model.save(os.path.join(a.logdir, "treelstm.safetensors"))
    if acc < a.expect_accuracy:
        sys.exit(f"held-out accuracy {acc:.3f} is below {a.expect_accuracy}")


if __name__ == "__main__":
    main()
