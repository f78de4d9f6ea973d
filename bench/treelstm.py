#!/usr/bin/env python3
"""Tree-LSTM on real syntax trees: Grove's batched fold against its node-by-
node form and PyTorch, inference and training, in one run.

    .venv/bin/python bench/treelstm.py           # ~9 min (3 rounds; DyNet's workers
                                                 # ~40 s a round); prints the table,
                                                 # writes its section of docs/perf.md
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
                   the per-child gates on all edges, index_add_ for the sums;
  * DyNet autobatch  DyNet 2.1 (PyPI's dynet38), the cell written node by
                   node as DyNet users write it, one graph a batch, batched
                   at run time by DyNet's autobatching
                   (bench/dynet_treelstm.py, a worker process a strategy):
                   its agenda strategy (--dynet-autobatch 1, Neubig et al.
                   2017's agenda by signature) and its depth strategy (2,
                   by depth and signature); the better counts. Where dynet
                   is not installed the column says skipped.
PyTorch runs on 1 and 2 threads and its better time counts; DyNet's wheel
has no threads (one core). Every peer starts from the same weights; the
first batch's loss is printed as a check, and the run stops unless DyNet's
is PyTorch per node's within 1e-4.
"Schedule" is the share of a Grove levels step spent in the runtime's
schedule call (grove_rt_tree_schedule timed alone on the same batches).
Throughput is trees per second over whole passes of a fixed batch list;
ratios are Grove levels' throughput over the peer's (> 1: Grove faster).
"""
import argparse
import ctypes
import importlib.util
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("GROVE_BIN", str(ROOT / "build" / "bin"))
os.environ.setdefault("GROVE_LIB", str(ROOT / "build" / "lib"))
sys.path.insert(0, str(ROOT / "test" / "lib"))
sys.path.insert(0, str(ROOT / "models" / "treelstm"))
import dynet_treelstm  # noqa: E402  (numpy only; its workers import dynet)
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
    and `seconds`), after one warm-up batch: the DyNet worker's protocol."""
    return dynet_treelstm.throughput(run, batches, seconds)[0]


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
                for v, kids in dynet_treelstm.post_order(off, ch, r):
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


# --- DyNet -------------------------------------------------------------

# The autobatch strategies timed, a worker process each (DyNet fixes its
# strategy when it starts; bench/dynet_treelstm.py): agenda is
# --dynet-autobatch 1, depth is 2. The better counts as "DyNet autobatch".
DYNET_STRATEGIES = ("agenda", "depth")
DYNET_WORKER = ROOT / "bench" / "dynet_treelstm.py"
# The most DyNet's first-batch loss may differ from PyTorch per node's: same
# weights and trees, float32 sums in other orders (~1e-6 seen).
LOSS_TOLERANCE = 1e-4


def dynet_setup(tmp, batches, w):
    """{batch size: the workers' npz}, or None after saying why DyNet is
    skipped. The module is looked for, not imported: importing dynet
    starts DyNet (and its memory pools) in this process."""
    if importlib.util.find_spec("dynet") is None:
        print("DyNet autobatch: SKIPPED, dynet is not installed (dynet38 in "
              "requirements-bench.txt; GROVE_BENCH=1 scripts/setup.sh)",
              flush=True)
        return None
    paths = {}
    for b, bs in batches.items():
        paths[b] = os.path.join(tmp, f"dynet_b{b}.npz")
        dynet_treelstm.save(paths[b], w, bs)
    return paths


def dynet_worker(data, strategy, train, seconds):
    """One worker's JSON line: trees_per_s, loss0, dynet, cpu_per_wall."""
    r = subprocess.run([sys.executable, str(DYNET_WORKER), "--strategy",
                        strategy, "--mode", "train" if train else "infer",
                        "--data", data, "--seconds", str(seconds)],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{DYNET_WORKER.name} --strategy {strategy} failed:\n"
                 + r.stderr[-3000:])
    return json.loads(r.stdout.splitlines()[-1])


def check_loss(name, loss, want):
    """The guard: a peer whose first loss differs runs another model, and
    its time would mean nothing."""
    if abs(loss - want) > LOSS_TOLERANCE:
        sys.exit(f"{name}: first-batch loss {loss:.6f}, PyTorch per node's "
                 f"{want:.6f} on the same weights and trees: not the same "
                 "model")


# --- The run -----------------------------------------------------------

def corpus_batches(tmp, quick):
    """{batch size: the fixed list of batches}."""
    path = os.path.join(tmp, "trees.bin")
    subprocess.run([sys.executable, str(ROOT / "examples" / "train_trees"
                                        / "make_data.py"), path],
                   check=True, stdout=subprocess.DEVNULL)
    trees = load_corpus(path)
    counts = {1: 8, 25: 2, 256: 1} if quick else {1: 64, 25: 8, 256: 2}
    return {b: [make_batch(trees[i * b:(i + 1) * b]) for i in range(n)]
            for b, n in counts.items()}


def run_grid(batches, w, dynet, rounds, seconds):
    """(rows, checks, DyNet's worker info): the median over rounds of
    every cell's throughputs and ratios, and the first losses."""
    levels, nodes = grove_model("levels", w), grove_model("nodes", w)
    checks, info = [], {}
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
        if dynet:
            row.update(measure_dynet(train, b, first))
        if b == 256:
            t_sched = 1 / throughput(sched, bs, seconds) * b
            row["schedule"] = t_sched / (b / row["levels"])
        return row

    def measure_dynet(train, b, first):
        """Both strategies' trees/s and the better; training checks the
        loss every round (the workers start from the weights each time)."""
        row = {}
        for s in DYNET_STRATEGIES:
            out = dynet_worker(dynet[b], s, train, seconds)
            row["dynet " + s] = out["trees_per_s"]
            info["version"] = out["dynet"]
            info["cpu_per_wall"] = max(info.get("cpu_per_wall", 0),
                                       out["cpu_per_wall"])
            if train:
                check_loss(f"DyNet {s} b{b}", out["loss0"],
                           dict(checks)[f"torch node b{b}"])
        if train and first:
            checks.append((f"dynet b{b}", out["loss0"]))
        row["dynet"] = max(row["dynet " + s] for s in DYNET_STRATEGIES)
        return row

    # Rounds over the whole grid; each cell reports the median over rounds
    # of every peer's throughput and of the paired ratios (the machine's
    # other load comes and goes between one peer's timing and the next).
    grid = [(train, b) for train in (False, True) for b in batches]
    samples = {cell: [] for cell in grid}
    for r in range(rounds):
        for cell in grid:
            samples[cell].append(measure(*cell, first=r == 0))
            print(cell, samples[cell][-1], flush=True)
    peers = ["nodes", "torch node", "torch level"] + (["dynet"] if dynet
                                                       else [])
    rows = []
    for (train, b), runs in samples.items():
        row = {"train": train, "batch": b}
        for key in runs[0]:
            row[key] = float(np.median([x[key] for x in runs]))
        for peer in peers:
            row["ratio " + peer] = float(np.median(
                [x["levels"] / x[peer] for x in runs]))
        rows.append(row)
    return rows, checks, info


def report(rows, checks, info, rounds):
    """The markdown section of docs/perf.md."""
    lines = [MARK_BEGIN, "",
             "### Tree-LSTM on stdlib syntax trees (bench/treelstm.py)", "",
             f"Child-sum Tree-LSTM (embedding {D}, memory {H}), trees per "
             f"second, median of {rounds} rounds; ratios are Grove levels "
             "over the peer (median of the per-round ratios).", "",
             "| | batch | Grove levels | Grove nodes | PyTorch node | "
             "PyTorch level | DyNet autobatch | vs Grove nodes | "
             "vs PyTorch node | vs PyTorch level | vs DyNet | "
             "schedule share |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | "
             "--- | --- |"]
    for r in rows:
        dynet = (f"{r['dynet']:.0f} | ", f"{r['ratio dynet']:.2f}x | ") \
            if "dynet" in r else ("skipped | ", "skipped | ")
        lines.append(
            f"| {'training' if r['train'] else 'inference'} | {r['batch']} | "
            f"{r['levels']:.0f} | {r['nodes']:.0f} | {r['torch node']:.0f} | "
            f"{r['torch level']:.0f} | " + dynet[0]
            + f"{r['ratio nodes']:.2f}x | {r['ratio torch node']:.1f}x | "
            f"{r['ratio torch level']:.2f}x | " + dynet[1]
            + (f"{100 * r['schedule']:.1f}%" if "schedule" in r else "")
            + " |")
    lines += ["", dynet_note(rows, info), "",
              "First training batch's loss, same weights: " + ", ".join(
                  f"{n} {l:.4f}" for n, l in checks), "", MARK_END]
    return "\n".join(lines)


def dynet_note(rows, info):
    """What the DyNet column is: its strategies' medians, or why skipped."""
    if not info:
        return ("DyNet autobatch: skipped, dynet is not installed (dynet38 "
                "in requirements-bench.txt; GROVE_BENCH=1 scripts/setup.sh).")
    per = ", ".join(
        f"{'training' if r['train'] else 'inference'} {r['batch']} "
        + " / ".join(f"{r['dynet ' + s]:.0f}" for s in DYNET_STRATEGIES)
        for r in rows)
    return (f"DyNet autobatch: DyNet {info['version']}, the better of its "
            f"{' and '.join(DYNET_STRATEGIES)} strategies, trees/s "
            f"{' / '.join(DYNET_STRATEGIES)}: {per}. One core (its wheel has "
            f"no threads; CPU time over wall time at most "
            f"{info['cpu_per_wall']:.2f}).")


def write_report(path, text):
    perf = Path(path)
    old = perf.read_text()
    pattern = re.compile(re.escape(MARK_BEGIN) + ".*?" + re.escape(MARK_END),
                         re.S)
    new = pattern.sub(lambda _: text, old) if pattern.search(old) \
        else old.rstrip() + "\n\n" + text + "\n"
    perf.write_text(new)


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
    # The corpus file, and DyNet's workers' batches for the whole run.
    with tempfile.TemporaryDirectory() as tmp:
        batches = corpus_batches(tmp, a.quick)
        w = weights()
        dynet = dynet_setup(tmp, batches, w)
        rows, checks, info = run_grid(batches, w, dynet, a.rounds, seconds)
    text = report(rows, checks, info, a.rounds)
    print(text)
    if not a.quick and a.write:
        write_report(a.write, text)


if __name__ == "__main__":
    main()
