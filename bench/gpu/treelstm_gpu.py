"""Tree-LSTM on the GPU, a section of bench/gpu/run.py.

Grove's child-sum Tree-LSTM (models/treelstm at bench/treelstm.py's sizes:
embedding 64, memory 150, 10 classes) compiled for CUDA with the fold
batched by level (`libtreelstm_bench.so`, made by scripts/gpu-check.sh
prepare), against PyTorch hand-batched by level on the same GPU
(bench/treelstm.py's peer: levels found with numpy on the host, one gather
of the children's states a level, the per-child gates on all edges,
index_add_ for the sums), from the same weights, on the stdlib syntax-tree
corpus prepare ships (data/trees.bin, examples/train_trees/make_data.py).
Inference and an Adam train step at batch 25 and 256 trees; the logits of
the first batch are checked against PyTorch's first (f32, 1e-3 of max
|logit|). Times are microseconds a batch (wall time on one stream: both
sides wait for the host, Grove's tree schedule synchronizes it).
"""
import math
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BATCHES = (25, 256)


def treelstm_bench(models, data, rows, numerics, fail, Grove, timed_for,
                   check):
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import treelstm as T  # bench/treelstm.py: corpus, weights, PyTorch peer

    trees = T.load_corpus(os.path.join(data, "trees.bin"))
    w = T.weights()
    grove = Grove(os.path.join(models, "libtreelstm_bench.so"),
                  "treelstm_bench")
    for name, array in w.items():
        grove.set_weight(name, array)
    peer = T.torch_modules(w, "cuda")
    opt = torch.optim.Adam(peer.parameters(), lr=1e-3)
    calls = {}
    for b in BATCHES:
        batch = T.make_batch(trees[:b])
        inputs = [torch.from_numpy(a).cuda() for a in batch]
        calls[b] = (batch, inputs[4].long(),
                    grove.prepare("forward", inputs[:4]),
                    grove.prepare("train_step", inputs))
        fwd = calls[b][2]
        fwd()
        with torch.no_grad():
            want = peer.by_level(batch)
        scale = want.abs().max().item()
        err = check(f"Tree-LSTM forward, {b} trees",
                    fwd.result(torch.float32), want, 0, 1e-3 * scale)
        numerics.append(f"Tree-LSTM forward, {b} trees: {err / scale:.2g} "
                        "(PyTorch f32 by level on the GPU; bound 1e-3)")

    nan = math.nan
    for b in BATCHES:
        batch, labels, fwd, step = calls[b]
        t_g, _ = timed_for(fwd, 1.0)
        with torch.no_grad():
            t_e, _ = timed_for(lambda: peer.by_level(batch), 1.0)
        rows.append(("Tree-LSTM forward (f32, by level)",
                      f"{b} trees (Grove {b * 1e6 / t_g:.0f} trees/s)",
                      "µs (vs eager)", t_g, t_e, nan, None))

    def torch_step(batch, labels):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(peer.by_level(batch), labels)
        loss.backward()
        opt.step()

    for b in BATCHES:
        batch, labels, fwd, step = calls[b]
        t_g, _ = timed_for(step, 1.0)
        t_e, _ = timed_for(lambda: torch_step(batch, labels), 1.0)
        rows.append(("Tree-LSTM train step (f32, Adam, by level)",
                      f"{b} trees (Grove {b * 1e6 / t_g:.0f} trees/s)",
                      "µs (vs eager)", t_g, t_e, nan, None))
