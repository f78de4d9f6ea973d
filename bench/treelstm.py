#!/usr/bin/env python3
"""Tree-LSTM on real syntax trees: Grove's batched fold against its node-by-
node form and PyTorch, inference and training, in one run.

    .venv/bin/python bench/treelstm.py           # ~7 min (3 rounds); prints the
                                                 # table, writes its section of docs/perf.md
    .venv/bin/python bench/treelstm.py --quick   # smoke run, docs untouched

The corpus is examples/train_trees/make_data.py's: the functions of ten
standard-library packages as syntax trees (mean ~40 nodes, at most 300),
the training split in a fixed order. The model is the child-sum Tree-LSTM
of models/treelstm (embedding 64, memory 150 as Tai et al.'s, 10 classes),
one tree a sample, at batch 1, 25 and 256. Peers, all float32 on this
machine's cores:
  * Grove levels   grove.tree_fold batched by (level, arity)
                   (--tree-batching=levels, -O3 --cpu=native), one call of
                   `forward` or `train_step` (Adam) per batch via grove_invoke;
  * Grove nodes    the same model, one cell call a node (--tree-batching=nodes):
                   the unbatched baseline the seed paper's 6.25x is against;
  * PyTorch node   torch 1.13, the cell applied node by node in post-order in
                   Python (what the model's definition says), autograd, Adam;
  * PyTorch level  the careful hand-batched version: levels found with numpy
                   frontiers, per level one gather of the children's states,
                   the per-child gates on all edges, index_add_ for the sums.
PyTorch runs on 1 and 2 threads and its better time counts. Every peer
starts from the same weights; the first batch's loss is printed as a check.
"Schedule" is the share of a Grove levels step spent in the runtime's
schedule call (grove_rt_tree_schedule timed alone on the same batches).
Throughput is trees per second over whole passes of a fixed batch list;
ratios are Grove levels' throughput over the peer's (> 1: Grove faster).
"""
import argparse
import ctypes
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("GROVE_BIN", str(ROOT / "build" / "bin"))
os.environ.setdefault("GROVE_LIB", str(ROOT / "build" / "lib"))
sys.path.insert(0, str(ROOT / "test" / "lib"))
sys.path.insert(0, str(ROOT / "models" / "treelstm"))
import generate  # noqa: E402

V, D, H, C = 512, 64, 150, 10
MARK_BEGIN = "<!-- treelstm: written by bench/treelstm.py -->"
MARK_END = "<!-- /treelstm -->"


def load_corpus(path):
    with open(path, "rb") as f:
        data = f.read()
    vocab, classes, train, test = struct.unpack_from("<4i", data, 8)
    at, trees = 24, []
    for _ in range(train):
        n, label = struct.unpack_from("<2i", data, at)
        at += 8
        arr = np.frombuffer(data, np.int32, n + 1 + n - 1 + n, at)
        at += 4 * (3 * n)
        trees.append((arr[:n + 1], arr[n + 1:2 * n], arr[2 * n:], label))
    return trees


def make_batch(trees):
    """One forest from trees (node 0 of each is its root)."""
    offsets, children, tokens, roots, labels = [np.zeros(1, np.int32)], [], [], [], []
    nodes = edges = 0
    for off, ch, tok, label in trees:
        offsets.append(off[1:] + edges)
        children.append(ch + nodes)
        tokens.append(tok)
        roots.append(nodes)
        labels.append(label)
        nodes += len(tok)
        edges += len(ch)
    cat = lambda xs: np.ascontiguousarray(np.concatenate(xs).astype(np.int32))
    return (cat(offsets), cat(children) if children else np.zeros(0, np.int32),
            np.array(roots, np.int32), cat(tokens), np.array(labels, np.int32))


def weights(seed=0):
    r = np.random.default_rng(seed)
    w = {}
    for name, shape in generate.params("child-sum", V, D, H, C, "f32"):
        bound = 1.0 if name == "embed" else 1 / np.sqrt(
            shape[0] if len(shape) > 1 and name != "out.weight" else H)
        w[name] = (bound * (2 * r.random(shape) - 1)).astype(np.float32)
        if len(shape) == 1:
            w[name][:] = 0
    return w


def throughput(run, batches, seconds):
    """Trees per second over whole passes of `batches` (at least one pass
    and `seconds`), after one warm-up batch."""
    run(batches[0])
    done, t0 = 0, time.perf_counter()
    while True:
        for b in batches:
            run(b)
            done += len(b[2])
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return done / elapsed


# --- Grove -------------------------------------------------------------

def grove_model(mode, w):
    from grove_testing import Model
    text = generate.module("child-sum", V, D, H, C, "f32", lr=1e-3,
                           name=f"bench_tree_{mode}")
    m = Model(text, name=f"bench_tree_{mode}",
              grovec_flags=["-O3", "--cpu=native", f"--tree-batching={mode}"])
    for n, a in w.items():
        m.set_weight(n, a)
    return m


def grove_runner(m, train):
    def run(b):
        off, ch, roots, tokens, labels = b
        if train:
            return float(m.call("train_step", off, ch, roots, tokens, labels)[0])
        m.call("forward", off, ch, roots, tokens)
    return run


def memref_type(rank):
    class Memref(ctypes.Structure):
        _fields_ = [("allocated", ctypes.c_void_p),
                    ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64),
                    ("sizes", ctypes.c_int64 * rank),
                    ("strides", ctypes.c_int64 * rank)]
    return Memref


MEMREF = {1: memref_type(1), 2: memref_type(2)}


def schedule_runner():
    """The runtime's schedule service alone, as generated code calls it."""
    lib = ctypes.CDLL(str(ROOT / "build" / "lib" / "libgrove_rt.so"))
    fn = lib._mlir_ciface_grove_rt_tree_schedule
    fn.restype = ctypes.c_int64

    def memref(a):
        m = MEMREF[a.ndim](None, a.ctypes.data, 0)
        for d in range(a.ndim):
            m.sizes[d], m.strides[d] = a.shape[d], a.strides[d] // 4
        return m

    def run(b):
        off, ch, roots = b[0], b[1], b[2]
        n, e = len(off) - 1, len(ch)
        # order, position, groups, edge_child, edge_parent, child_start,
        # parent_edge, root_of, root_position (abi.h).
        outs = [np.empty(n, np.int32), np.empty(n, np.int32),
                np.empty((n, 4), np.int32), np.empty(e, np.int32),
                np.empty(e, np.int32), np.empty(n + 1, np.int32),
                np.empty(n, np.int32), np.empty(n, np.int32),
                np.empty(len(roots), np.int32)]
        ms = [memref(off), memref(ch), memref(roots)]
        os_ = [memref(o) for o in outs]
        args = [ctypes.byref(x) for x in ms] + [ctypes.c_int32(0),
                                                 ctypes.c_int32(0)]
        args += [ctypes.byref(x) for x in os_]
        count = fn(*args)
        assert count > 0
    return run


# --- PyTorch -----------------------------------------------------------

def torch_modules(w, device="cpu"):
    """The PyTorch peers on `device` (bench/gpu/treelstm.py runs them on the
    GPU): index arrays are built with numpy, as a careful user would, and
    moved there."""
    import torch

    def idx(a):
        return torch.from_numpy(np.asarray(a, np.int64)).to(device)

    class Cell(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.p = torch.nn.ParameterDict(
                {k.replace(".", "_"): torch.nn.Parameter(
                    torch.tensor(v, device=device)) for k, v in w.items()})

        def node(self, x, hs, cs):
            p = self.p
            hsum = torch.stack(hs).sum(0) if hs else x.new_zeros(1, H)
            iou = x @ p["iou_W"] + hsum @ p["iou_U"] + p["iou_b"]
            i, o, u = torch.sigmoid(iou[:, :H]), torch.sigmoid(
                iou[:, H:2 * H]), torch.tanh(iou[:, 2 * H:])
            c = i * u
            if hs:
                f = torch.sigmoid(x @ p["f_W"] + torch.cat(hs) @ p["f_U"]
                                  + p["f_b"])
                c = c + (f * torch.cat(cs)).sum(0, keepdim=True)
            return o * torch.tanh(c), c

        def head(self, hr):
            return hr @ self.p["out_weight"].T + self.p["out_bias"]

        def per_node(self, b):
            off, ch, roots, tokens, _ = b
            x = self.p["embed"][idx(tokens)]
            h, c, out = {}, {}, []
            for r in roots:
                stack = [(int(r), False)]
                while stack:
                    v, ready = stack.pop()
                    kids = ch[off[v]:off[v + 1]]
                    if not ready:
                        stack.append((v, True))
                        stack.extend((int(k), False) for k in kids)
                        continue
                    h[v], c[v] = self.node(x[v:v + 1], [h[int(k)] for k in kids],
                                           [c[int(k)] for k in kids])
                out.append(h[int(r)])
            return self.head(torch.cat(out))

        def by_level(self, b):
            off, ch, roots, tokens, _ = b
            n = len(tokens)
            p = self.p
            arity = np.diff(off)
            parent = np.full(n, -1, np.int64)
            parent[ch] = np.repeat(np.arange(n), arity)
            # Heights by frontiers: leaves first, then nodes whose children
            # are all done.
            level = np.zeros(n, np.int64)
            pending = arity.astype(np.int64).copy()
            frontier = np.flatnonzero(pending == 0)
            levels = []
            while frontier.size:
                levels.append(frontier)
                par = parent[frontier]
                par = par[par >= 0]
                np.subtract.at(pending, par, 1)
                nxt = np.unique(par[pending[par] == 0])
                level[nxt] = len(levels)
                frontier = nxt
            pos = np.empty(n, np.int64)
            order = np.concatenate(levels)
            pos[order] = np.arange(n)
            x = p["embed"][idx(tokens[order])]
            hs, cs, start = [], [], 0
            for nodes in levels:
                k = len(nodes)
                xl = x[start:start + k]
                iou = xl @ p["iou_W"] + p["iou_b"]
                kids = np.concatenate([ch[off[v]:off[v + 1]] for v in nodes]) \
                    if start else np.zeros(0, np.int64)
                if kids.size:
                    hprev, cprev = torch.cat(hs), torch.cat(cs)
                    kpos = idx(pos[kids])
                    hk, ck = hprev[kpos], cprev[kpos]
                    local = idx(np.repeat(np.arange(k), arity[nodes]))
                    hsum = xl.new_zeros(k, H).index_add(0, local, hk)
                    iou = iou + hsum @ p["iou_U"]
                    f = torch.sigmoid(xl[local] @ p["f_W"] + hk @ p["f_U"]
                                      + p["f_b"])
                    fc = xl.new_zeros(k, H).index_add(0, local, f * ck)
                i, o, u = torch.sigmoid(iou[:, :H]), torch.sigmoid(
                    iou[:, H:2 * H]), torch.tanh(iou[:, 2 * H:])
                c = i * u + fc if kids.size else i * u
                hs.append(o * torch.tanh(c))
                cs.append(c)
                start += k
            return self.head(torch.cat(hs)[idx(pos[roots])])

    return Cell()


def torch_runner(w, kind, train, threads):
    import torch
    torch.set_num_threads(threads)
    m = torch_modules(w)
    fwd = m.per_node if kind == "node" else m.by_level
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)

    def run(b):
        if not train:
            with torch.no_grad():
                fwd(b)
            return None
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(
            fwd(b), torch.from_numpy(b[4].astype(np.int64)))
        loss.backward()
        opt.step()
        return float(loss)
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--write", default=str(ROOT / "docs" / "perf.md"))
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds over the whole grid (default 3; --quick: 1)")
    a = ap.parse_args()
    seconds = 0.3 if a.quick else 2.0
    if a.quick:
        a.rounds = 1
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trees.bin")
        subprocess.run([sys.executable, str(ROOT / "examples" / "train_trees"
                                            / "make_data.py"), path],
                       check=True, stdout=subprocess.DEVNULL)
        trees = load_corpus(path)
    sizes = (1, 25, 256)
    counts = {1: 64, 25: 8, 256: 2} if not a.quick else {1: 8, 25: 2, 256: 1}
    batches = {b: [make_batch(trees[i * b:(i + 1) * b])
                   for i in range(counts[b])] for b in sizes}
    w = weights()
    levels, nodes = grove_model("levels", w), grove_model("nodes", w)

    rows, checks = [], []
    sched = schedule_runner()

    def measure(train, b, first):
        """Every peer's trees/s on `b`-tree batches, one after the other."""
        bs = batches[b]
        row = {}
        # Every peer from the same weights: reset Grove's, fresh torch.
        for name, m in (("levels", levels), ("nodes", nodes)):
            for n, arr in w.items():
                m.set_weight(n, arr)
            run = grove_runner(m, train)
            if train and first:
                checks.append((f"grove {name} b{b}", run(bs[0])))
                for n, arr in w.items():
                    m.set_weight(n, arr)
            row[name] = throughput(run, bs, seconds)
        for kind in ("node", "level"):
            best = 0
            for threads in (1, 2):
                run = torch_runner(w, kind, train, threads)
                if train and threads == 1 and first:
                    checks.append((f"torch {kind} b{b}",
                                   torch_runner(w, kind, True, 1)(bs[0])))
                best = max(best, throughput(
                    run, bs, seconds if kind == "level" else
                    min(seconds, 0.5)))
            row["torch " + kind] = best
        if b == 256:
            t_sched = 1 / throughput(sched, bs, seconds) * b
            row["schedule"] = t_sched / (b / row["levels"])
        return row

    # Rounds over the whole grid; each cell reports the median over rounds
    # of every peer's throughput and of the paired ratios (the machine's
    # other load comes and goes between one peer's timing and the next).
    grid = [(train, b) for train in (False, True) for b in sizes]
    samples = {cell: [] for cell in grid}
    for r in range(a.rounds):
        for cell in grid:
            samples[cell].append(measure(*cell, first=r == 0))
            print(cell, samples[cell][-1], flush=True)
    for (train, b), runs in samples.items():
        row = {"train": train, "batch": b}
        for key in runs[0]:
            row[key] = float(np.median([x[key] for x in runs]))
        for peer in ("nodes", "torch node", "torch level"):
            row["ratio " + peer] = float(np.median(
                [x["levels"] / x[peer] for x in runs]))
        rows.append(row)

    lines = [MARK_BEGIN, "",
             "### Tree-LSTM on stdlib syntax trees (bench/treelstm.py)", "",
             f"Child-sum Tree-LSTM (embedding {D}, memory {H}), trees per "
             f"second, median of {a.rounds} rounds; ratios are Grove levels "
             "over the peer (median of the per-round ratios).", "",
             "| | batch | Grove levels | Grove nodes | PyTorch node | "
             "PyTorch level | vs Grove nodes | vs PyTorch node | "
             "vs PyTorch level | schedule share |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(
            f"| {'training' if r['train'] else 'inference'} | {r['batch']} | "
            f"{r['levels']:.0f} | {r['nodes']:.0f} | {r['torch node']:.0f} | "
            f"{r['torch level']:.0f} | {r['ratio nodes']:.2f}x | "
            f"{r['ratio torch node']:.1f}x | "
            f"{r['ratio torch level']:.2f}x | "
            + (f"{100 * r['schedule']:.1f}%" if "schedule" in r else "")
            + " |")
    lines += ["", "First training batch's loss, same weights: " + ", ".join(
        f"{n} {l:.4f}" for n, l in checks), "", MARK_END]
    report = "\n".join(lines)
    print(report)
    if a.quick or not a.write:
        return
    perf = Path(a.write)
    text = perf.read_text()
    pattern = re.compile(re.escape(MARK_BEGIN) + ".*?" + re.escape(MARK_END),
                         re.S)
    text = pattern.sub(lambda _: report, text) if pattern.search(text) \
        else text.rstrip() + "\n\n" + report + "\n"
    perf.write_text(text)


if __name__ == "__main__":
    main()
