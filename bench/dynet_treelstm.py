#!/usr/bin/env python3
"""DyNet's autobatching on bench/treelstm.py's Tree-LSTM: one worker process
a strategy (DyNet fixes it when it starts), run by bench/treelstm.py.

    .venv/bin/python bench/dynet_treelstm.py --strategy agenda --mode train \\
        --data batches.npz --seconds 2

The model is bench/treelstm.py's child-sum Tree-LSTM (its PyTorch
`Cell.node` and `head`), written node by node as DyNet users write it: one
computation graph a batch, every tree's expressions in it, one forward (and
backward); DyNet's autobatching finds the batches. `--data` is an npz of the
weights (`w.<name>`, bench/treelstm.py's `weights()`) and the forests
(`<i>.offsets`, `.children`, `.roots`, `.tokens`, `.labels`: make_batch's).
Prints one JSON line: trees per second (bench/treelstm.py's protocol), the
first batch's mean cross-entropy from the initial weights, DyNet's version
and the process's CPU time over wall time while timed.

Autobatch strategies (`--dynet-autobatch N`, read when dynet is imported;
dynet/exec.cc, BatchedExecutionEngine::incremental_forward_no_update): 0 is
the plain engine, no batching; 1 the agenda-based strategy of Neubig et al.
2017 (ready nodes grouped by signature, the signature with the lowest
average depth runs next); 2 depth-based (nodes grouped by (depth,
signature)); 3 agenda restricted to one depth at a time; > 99 times 1-3 on
the first graph and keeps the fastest.

Threads: the PyPI wheel (dynet38 2.2, DyNet 2.1) links neither MKL nor
OpenMP, so its Eigen kernels run on one core; `cpu_per_wall` shows it.
"""
import argparse
import json
import sys
import time
from importlib import metadata

import numpy as np

STRATEGIES = {"none": 0, "agenda": 1, "depth": 2}
# Memory (MB) of the forward, backward, parameter and scratch pools.
# Autobatching cannot grow a pool (DyNet raises instead), so it is reserved
# up front: a batch of 256 trees (~11k nodes) trains in 128,128,16,32 and
# fails in 64,64,16,16; this leaves twice the room (~750 MB resident).
MEM = "256,256,32,64"
# The npz's arrays of a forest, in make_batch's order.
FOREST = ("offsets", "children", "roots", "tokens", "labels")


def save(path, w, batches):
    """The worker's input: weights and forests (make_batch's tuples)."""
    arrays = {f"w.{k}": v for k, v in w.items()}
    for i, b in enumerate(batches):
        arrays.update({f"{i}.{k}": a for k, a in zip(FOREST, b)})
    np.savez(path, **arrays)


def load(path):
    """(weights, batches) as `save` wrote them."""
    z = np.load(path)
    w = {k[2:]: z[k] for k in z.files if k.startswith("w.")}
    batches = []
    while f"{len(batches)}.roots" in z.files:
        batches.append(tuple(z[f"{len(batches)}.{k}"] for k in FOREST))
    return w, batches


def post_order(off, ch, root):
    """The nodes under `root` (children offsets `off`, children `ch`), each
    after its children, with its children: (node, children)."""
    stack = [(int(root), False)]
    while stack:
        v, ready = stack.pop()
        kids = ch[off[v]:off[v + 1]]
        if ready:
            yield v, kids
            continue
        stack.append((v, True))
        stack.extend((int(k), False) for k in kids)


class TreeLSTM:
    """bench/treelstm.py's Cell in DyNet: column vectors, so every weight
    used as x @ W there is W^T here."""

    def __init__(self, dy, w):
        self.dy = dy
        self.pc = dy.ParameterCollection()
        self.H = w["f.U"].shape[0]
        add = self.pc.parameters_from_numpy
        self.embed = self.pc.lookup_parameters_from_numpy(w["embed"])
        self.iou_W, self.iou_U = add(w["iou.W"].T), add(w["iou.U"].T)
        self.iou_b = add(w["iou.b"])
        self.f_W, self.f_U, self.f_b = add(w["f.W"].T), add(w["f.U"].T), \
            add(w["f.b"])
        self.out_W, self.out_b = add(w["out.weight"]), add(w["out.bias"])

    def node(self, tok, kids):
        """(h, c) of one node from its token and its children's (h, c)."""
        dy, H = self.dy, self.H
        x = dy.lookup(self.embed, tok)
        if kids:
            hsum = dy.esum([h for h, _ in kids])
            iou = dy.affine_transform([self.iou_b, self.iou_W, x,
                                       self.iou_U, hsum])
        else:
            iou = dy.affine_transform([self.iou_b, self.iou_W, x])
        i = dy.logistic(dy.pick_range(iou, 0, H))
        o = dy.logistic(dy.pick_range(iou, H, 2 * H))
        u = dy.tanh(dy.pick_range(iou, 2 * H, 3 * H))
        c = dy.cmult(i, u)
        if kids:
            # fx + U_f h_k, not affine_transform([fx, U_f, h_k]): with an
            # expression as its bias, DyNet 2.1's autobatched backward
            # raises "broadcasting over columns with mini-batched inputs
            # is not implemented yet".
            fx = dy.affine_transform([self.f_b, self.f_W, x])
            c = dy.esum([c] + [dy.cmult(dy.logistic(fx + self.f_U * hk), ck)
                               for hk, ck in kids])
        return dy.cmult(o, dy.tanh(c)), c

    def tree(self, b, root):
        """The root's logits (an expression); nodes added in post-order."""
        off, ch, _, tokens, _ = b
        hc = {}
        for v, kids in post_order(off, ch, root):
            hc[v] = self.node(int(tokens[v]), [hc[int(k)] for k in kids])
        return self.dy.affine_transform([self.out_b, self.out_W, hc[root][0]])

    def logits(self, b):
        """Every root's logits in a fresh graph (expressions, not yet run)."""
        self.dy.renew_cg()
        return [self.tree(b, int(r)) for r in b[2]]

    def loss(self, b):
        """Mean cross-entropy over the batch's trees (an expression)."""
        dy = self.dy
        return dy.esum([dy.pickneglogsoftmax(z, int(y)) for z, y in
                        zip(self.logits(b), b[4])]) / len(b[2])


def runner(m, train):
    dy = m.dy
    trainer = dy.AdamTrainer(m.pc, alpha=1e-3, beta_1=0.9, beta_2=0.999,
                             eps=1e-8)
    # torch.optim.Adam's semantics: no gradient clipping (DyNet clips at 5
    # by default) and dense updates of the embedding (DyNet's sparse ones
    # skip the moment decay of rows a batch does not use).
    trainer.set_clip_threshold(0)
    trainer.set_sparse_updates(False)

    def run(b):
        if not train:
            # The logits in numpy, as the other peers hand them back.
            dy.concatenate_cols(m.logits(b)).npvalue()
            return None
        loss = m.loss(b)
        value = loss.value()
        loss.backward()
        trainer.update()
        return value
    return run


def throughput(run, batches, seconds):
    """bench/treelstm.py's protocol: trees per second over whole passes of
    `batches` (at least one pass and `seconds`), after one warm-up batch;
    also CPU time over wall time."""
    run(batches[0])
    done, t0, c0 = 0, time.perf_counter(), time.process_time()
    while True:
        for b in batches:
            run(b)
            done += len(b[2])
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return done / elapsed, (time.process_time() - c0) / elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--strategy", choices=STRATEGIES, required=True)
    ap.add_argument("--mode", choices=("infer", "train"), required=True)
    ap.add_argument("--data", required=True, help="npz (see above)")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--logits", help="write the first batch's logits from "
                    "the initial weights here (.npy), as (trees, classes)")
    a = ap.parse_args()
    # DyNet reads its options from sys.argv when it is first imported.
    sys.argv[1:] = ["--dynet-autobatch", str(STRATEGIES[a.strategy]),
                    "--dynet-mem", MEM, "--dynet-seed", "1"]
    import dynet as dy
    w, batches = load(a.data)
    m = TreeLSTM(dy, w)
    # Before any update: the check against the other peers' losses.
    loss0 = m.loss(batches[0]).value()
    if a.logits:
        np.save(a.logits, dy.concatenate_cols(
            m.logits(batches[0])).npvalue().reshape(m.out_b.shape()[0], -1).T)
    tps, cpu = throughput(runner(m, a.mode == "train"), batches, a.seconds)
    version = f"{dy.__version__} (dynet38 {metadata.version('dyNET38')})"
    print(json.dumps({"strategy": a.strategy, "mode": a.mode,
                      "trees_per_s": tps, "loss0": loss0,
                      "cpu_per_wall": cpu, "dynet": version}))


if __name__ == "__main__":
    main()
