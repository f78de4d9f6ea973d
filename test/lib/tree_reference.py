"""Tree-LSTM references and forests for the tree tests and benchmarks.

`forest(parents)` turns per-node parent arrays into the CSR child lists the
ABI takes (docs/trees.md); `TorchTreeLSTM` is an independent PyTorch
implementation of models/treelstm's cells, node by node in post-order, with
autograd for the gradients.
"""
import os
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.join(ROOT, "models", "treelstm"))
import generate  # noqa: E402  (models/treelstm/generate.py)


def forest(parents, shuffle=None):
    """CSR child lists (offsets, children, roots) of a forest given as a
    parent array (-1: a root, in sample order). With `shuffle` (a numpy
    Generator) the node ids are permuted first, so that ids say nothing of
    the order the nodes must be computed in. Returns also the permutation
    (new id of each old node)."""
    parents = np.asarray(parents, dtype=np.int64)
    n = len(parents)
    perm = shuffle.permutation(n) if shuffle is not None else np.arange(n)
    new_parent = np.full(n, -1, np.int64)
    for old, p in enumerate(parents):
        new_parent[perm[old]] = perm[p] if p >= 0 else -1
    kids = [[] for _ in range(n)]
    roots = []
    for old in range(n):  # children in their old order: position matters
        if parents[old] >= 0:
            kids[new_parent[perm[old]]].append(perm[old])
        else:
            roots.append(perm[old])
    offsets = np.zeros(n + 1, np.int32)
    offsets[1:] = np.cumsum([len(k) for k in kids])
    children = np.array([c for k in kids for c in k], np.int32)
    return offsets, children, np.array(roots, np.int32), perm


def random_parents(r, trees, max_nodes, max_arity=None):
    """Random trees of 1..max_nodes nodes each, concatenated."""
    parents = []
    for _ in range(trees):
        base = len(parents)
        size = int(r.integers(1, max_nodes + 1))
        count = [0] * size
        parents.append(-1)
        for i in range(1, size):
            while True:
                p = int(r.integers(0, i))
                if max_arity is None or count[p] < max_arity:
                    break
            count[p] += 1
            parents.append(base + p)
    return parents


class TorchTreeLSTM:
    """models/treelstm's forward, one node at a time (post-order)."""

    def __init__(self, form, weights, dtype=torch.float64):
        self.form = form
        self.w = {k: torch.tensor(v, dtype=dtype, requires_grad=True)
                  for k, v in weights.items()}
        self.dtype = dtype

    def node(self, x, hs, cs):
        w, H = self.w, self.w["out.weight"].shape[1]
        if self.form == "child-sum":
            hsum = sum(hs) if hs else torch.zeros(H, dtype=self.dtype)
            iou = x @ w["iou.W"] + hsum @ w["iou.U"] + w["iou.b"]
            i, o, u = (torch.sigmoid(iou[:H]), torch.sigmoid(iou[H:2 * H]),
                       torch.tanh(iou[2 * H:]))
            c = i * u
            for hk, ck in zip(hs, cs):
                f = torch.sigmoid(x @ w["f.W"] + hk @ w["f.U"] + w["f.b"])
                c = c + f * ck
        else:
            zero = torch.zeros(H, dtype=self.dtype)
            h0, c0 = (hs[0], cs[0]) if len(hs) > 0 else (zero, zero)
            h1, c1 = (hs[1], cs[1]) if len(hs) > 1 else (zero, zero)
            g = (x @ w["gates.W"] + h0 @ w["gates.U0"] + h1 @ w["gates.U1"]
                 + w["gates.b"])
            i, f0, f1, o = (torch.sigmoid(g[k * H:(k + 1) * H])
                            for k in range(4))
            u = torch.tanh(g[4 * H:])
            c = i * u + f0 * c0 + f1 * c1
        return o * torch.tanh(c), c

    def run(self, offsets, children, roots, tokens):
        """(logits [B, C], every node's h [N, H]) as torch tensors."""
        n = len(offsets) - 1
        x = self.w["embed"][torch.as_tensor(tokens, dtype=torch.long)]
        h, c = [None] * n, [None] * n
        for root in roots:
            stack = [(int(root), False)]
            while stack:  # post-order without recursion (deep chains)
                v, ready = stack.pop()
                kids = [int(k) for k in children[offsets[v]:offsets[v + 1]]]
                if not ready:
                    stack.append((v, True))
                    stack.extend((k, False) for k in reversed(kids))
                    continue
                h[v], c[v] = self.node(x[v], [h[k] for k in kids],
                                       [c[k] for k in kids])
        H = self.w["out.weight"].shape[1]
        hr = (torch.stack([h[int(r)] for r in roots]) if len(roots)
              else torch.zeros((0, H), dtype=self.dtype))
        hall = (torch.stack(h) if n else torch.zeros((0, H), dtype=self.dtype))
        return hr @ self.w["out.weight"].T + self.w["out.bias"], hall


def random_weights(r, form, V, D, H, C, scale=0.5):
    return {n: (scale * r.standard_normal(s) / np.sqrt(s[0] if len(s) > 1
                                                         else 1))
            for n, s in generate.params(form, V, D, H, C, "f32")}
