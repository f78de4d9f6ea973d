"""One rank of bench/dist_bert.py: trains BERT-tiny on the masked-LM loss
(models/bert/generate.py) on this rank's rows of each global batch for
STEPS steps, with Grove's compiled data-parallel train_step (dense or
CSER, whatever the library was compiled with) or with PyTorch 1.13 DDP on
gloo (models/bert/reference.py's functional model in an nn.Module, AdamW
as generate.py's: one global clip of each rank's gradient, BERT's decay
groups, warm-up then linear decay), optionally with a comm hook. Rank 0
evaluates the held-out MLM loss every EVAL steps and prints one line of
JSON: the mean step time, the held-out curve and the last loss.

    bert_rank.py grove LIBRARY SPEC        (under mpirun)
    bert_rank.py torch none|bf16|fp16|powersgd SPEC
SPEC: steps,eval,lr,data_dir: data_dir holds the driver's config.json
(generate.Config's fields) and data.npz (the initial weights, each step's
rows, positions and labels for every rank, the held-out set).
"""
import json
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
sys.path.insert(0, os.path.join(ROOT, "models", "bert"))
sys.path.insert(0, os.path.dirname(__file__))
from train_rank import gloo_group, torch_done  # noqa: E402


def load(data_dir):
    """The Config and the arrays the driver wrote for this run's seed."""
    import generate
    with open(os.path.join(data_dir, "config.json")) as f:
        cfg = generate.Config(**json.load(f))
    return cfg, dict(np.load(os.path.join(data_dir, "data.npz")))


def main():
    kind, spec = sys.argv[1], sys.argv[-1].split(",")
    steps, every, lr, data_dir = int(spec[0]), int(spec[1]), \
        float(spec[2]), spec[3]
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    size = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    cfg, data = load(data_dir)
    weights = {k[2:]: v for k, v in data.items() if k.startswith("w:")}
    if kind == "grove":
        step, evaluate, done = grove_trainer(sys.argv[2], cfg, weights)
    else:
        step, evaluate, done = torch_trainer(sys.argv[2], cfg, weights, lr,
                                             rank, size)
    ids, pos, lab = data["ids"], data["positions"], data["labels"]
    held_out = [data[k] for k in ("eval_ids", "eval_positions",
                                  "eval_labels")]
    times, curve = [], []
    if rank == 0:
        curve.append((0, evaluate(cfg, *held_out)))
    for s in range(steps):
        t0 = time.perf_counter()
        step(ids[s, rank], pos[s, rank], lab[s, rank])
        times.append(time.perf_counter() - t0)
        if rank == 0 and ((s + 1) % every == 0 or s + 1 == steps):
            curve.append((s + 1, evaluate(cfg, *held_out)))
    if rank == 0:
        # The mean from step 6 on, as bench/dist_train.py: CSER's every
        # 8th, larger average must count.
        print(json.dumps({"step": statistics.mean(times[5:]),
                          "loss": curve[-1][1], "curve": curve}), flush=True)
    done()


def chunks(cfg, ids, positions, labels):
    """The held-out rows in batches of cfg.batch (the compiled batch),
    positions rebased to each batch; yields (ids, positions, labels)."""
    seq, b = cfg.seq, cfg.batch
    for start in range(0, len(ids) - b + 1, b):
        lo, hi = np.searchsorted(positions, [start * seq, (start + b) * seq])
        yield (ids[start:start + b], positions[lo:hi] - np.int32(start * seq),
               labels[lo:hi])


def mean_loss(losses):
    """The mean over every masked token of (loss, count) pairs."""
    losses = list(losses)
    return sum(l * n for l, n in losses) / sum(n for _, n in losses)


def grove_trainer(library, cfg, weights):
    from train_rank import attached
    # The driver names each library lib<name>.so.
    model, comm = attached(library, os.path.basename(library)[3:-3],
                           weights)

    def step(ids, pos, lab):
        model.call("train_step", ids, pos, lab)

    def evaluate(cfg, *held_out):
        return mean_loss((float(model.call("mlm_loss", *c)[0]), len(c[2]))
                         for c in chunks(cfg, *held_out))

    def done():
        comm.barrier()
        comm.destroy()
    return step, evaluate, done


def clipping(inner, max_norm):
    """A DDP comm hook that clips this rank's gradient to `max_norm` by
    its global norm, then hands the bucket to `inner`: Grove averages the
    optimizer's operands, which generate.py's train step has clipped on
    each rank, so the same algorithm in DDP clips before the exchange.
    With one bucket for the whole model (below) the bucket's norm is the
    gradient's."""
    def hook(state, bucket):
        buf = bucket.buffer()
        scale = min(1.0, max_norm / (float(buf.norm()) + 1e-6))
        if scale < 1.0:
            buf.mul_(scale)
        return inner(state, bucket)
    return hook


def torch_trainer(hook, cfg, weights, lr, rank, size):
    import generate
    import reference
    import torch
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.nn.parallel import DistributedDataParallel as DDP
    gloo_group(rank, size)
    names = list(weights)

    class MaskedLM(torch.nn.Module):
        """reference.py's functional model over registered params (DDP
        needs a Module), in generate.init's order."""

        def __init__(self):
            super().__init__()
            self.p = torch.nn.ParameterList(
                torch.nn.Parameter(torch.from_numpy(weights[n].copy()))
                for n in names)

        def params(self):
            return dict(zip(names, self.p))

        def forward(self, ids, positions, labels):
            return reference.mlm_loss(self.params(), cfg, ids, positions,
                                      labels)

    net = MaskedLM()
    # One bucket for the whole model: the PowerSGD hook deadlocks with two
    # on gloo (bench/dist/train_rank.py), the clipping hook needs the
    # whole gradient's norm, and the tied embedding's gradient (2/3 of the
    # bytes) is complete only at the end of the backward, so smaller
    # buckets would have little backward to overlap.
    dist._DEFAULT_FIRST_BUCKET_BYTES = 64 << 20
    model = DDP(net, bucket_cap_mb=64)
    if hook == "powersgd":
        from torch.distributed.algorithms.ddp_comm_hooks import \
            powerSGD_hook as psgd
        state = psgd.PowerSGDState(process_group=None,
                                   matrix_approximation_rank=4,
                                   start_powerSGD_iter=2)
        inner = psgd.powerSGD_hook
    else:
        state = None
        inner = {"none": default_hooks.allreduce_hook,
                 "bf16": default_hooks.bf16_compress_hook,
                 "fp16": default_hooks.fp16_compress_hook}[hook]
    model.register_comm_hook(state, clipping(inner, cfg.max_grad_norm))
    decayed = [generate.decays(cfg, n) > 0 for n in names]
    opt = torch.optim.AdamW(
        [{"params": [p for p, d in zip(net.p, decayed) if d],
          "weight_decay": cfg.weight_decay},
         {"params": [p for p, d in zip(net.p, decayed) if not d],
          "weight_decay": 0.0}],
        lr=lr, betas=(cfg.beta1, cfg.beta2), eps=cfg.epsilon)
    taken = [0]

    def step(ids, pos, lab):
        # generate.py's schedule at the steps taken before this one.
        for group in opt.param_groups:
            group["lr"] = reference.polynomial_lr(taken[0], lr, cfg.warmup,
                                                  cfg.total_steps)
        opt.zero_grad()
        model(torch.from_numpy(ids), torch.from_numpy(pos), lab).backward()
        opt.step()
        taken[0] += 1

    def evaluate(cfg, *held_out):
        with torch.no_grad():
            return mean_loss(
                (float(reference.mlm_loss(net.params(), cfg, *c)), len(c[2]))
                for c in chunks(cfg, *held_out))
    return step, evaluate, torch_done


if __name__ == "__main__":
    main()
