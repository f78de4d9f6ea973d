"""One rank of bench/dist_lm.py: trains the LSTM language model
(models/lstm_lm) on this rank's sequences of the BERT corpus for STEPS
steps, with Grove's compiled train step (AdaAlter, synchronous or Local)
or with PyTorch (an LSTM of the same shape and weights, AdaAlter written
out, DDP on gloo with the post-local-SGD hook and a periodic model
averager: synchronous for the first WARMUP steps, then local steps and an
average of the params every PERIOD). Rank 0 evaluates the validation
perplexity every EVAL steps and prints one line of JSON: the mean step
time, the step at which the perplexity first reached TARGET and the one
from which it stayed there, and the last perplexity.

    lm_rank.py grove LIBRARY SPEC        (under mpirun)
    lm_rank.py torch local|adaalter SPEC
("adaalter": the authors' Local AdaAlter written in PyTorch instead of the
post-local-SGD hook's schedule: the denominators frozen between averages,
the params and the accumulators averaged at step WARMUP and every PERIOD
after it; a cross-check of Grove's.)
SPEC: steps,eval,target,seed,lr,batch,length,vocab,embed,hidden,clip,
period,warmup,epsilon,corpus_dir
"""
import json
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__)))
from train_rank import gloo_group, reached, torch_done  # noqa: E402

EVAL_SEQUENCES = 64


def chains(count, length):
    from grove import nn
    return nn.chains(count, length)


def init(seed, vocab, embed, hidden):
    g = np.random.default_rng(seed)
    u = lambda s, b: g.uniform(-b, b, s).astype(np.float32)  # noqa: E731
    k = 1 / np.sqrt(hidden)
    return {"embed.weight": u((vocab, embed), 0.1),
            "lstm.W": u((embed, 4 * hidden), k),
            "lstm.U": u((hidden, 4 * hidden), k),
            "lstm.b": u((4 * hidden,), k),
            "decoder.weight": u((vocab, hidden), k),
            "decoder.bias": u((vocab,), k)}


def windows(data, starts, length):
    w = np.stack([data[a:a + length + 1] for a in starts])
    return (np.ascontiguousarray(w[:, :-1]).reshape(-1),
            np.ascontiguousarray(w[:, 1:]).reshape(-1))


def main():
    kind, spec = sys.argv[1], sys.argv[-1].split(",")
    (steps, every, target, seed, lr, batch, length, vocab, embed, hidden,
     clip, period, warmup, epsilon) = spec[:14]
    corpus = spec[14]
    steps, every, seed, batch, length = map(int, (steps, every, seed, batch,
                                                  length))
    vocab, embed, hidden, period, warmup = map(int, (vocab, embed, hidden,
                                                     period, warmup))
    target, lr, clip = float(target), float(lr), float(clip)
    epsilon = float(epsilon)
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    size = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    train = np.fromfile(os.path.join(corpus, "train.bin"), "<u2") \
        .astype(np.int32)
    valid = np.fromfile(os.path.join(corpus, "valid.bin"), "<u2") \
        .astype(np.int32)
    starts = np.random.default_rng(seed + 7).integers(
        0, len(train) - length - 1, (steps, size, batch))
    eval_starts = np.linspace(0, len(valid) - length - 2, EVAL_SEQUENCES) \
        .astype(np.int64)
    weights = init(seed, vocab, embed, hidden)
    if kind == "grove":
        trainer = grove_trainer(sys.argv[2], weights)
    else:
        trainer = torch_trainer(weights, lr, clip, epsilon, period, warmup,
                                rank, size, vocab, embed, hidden,
                                faithful=sys.argv[2] == "adaalter")
    step, evaluate, done = trainer
    forest = chains(batch, length)
    eval_forest = chains(EVAL_SEQUENCES, length)
    eval_x, eval_y = windows(valid, eval_starts, length)
    times, checks, ppl = [], [], float("nan")
    for s in range(steps):
        x, y = windows(train, starts[s, rank], length)
        t0 = time.perf_counter()
        step(forest, x, y)
        times.append(time.perf_counter() - t0)
        if rank == 0 and ((s + 1) % every == 0 or s + 1 == steps):
            ppl = float(np.exp(evaluate(eval_forest, eval_x, eval_y)))
            # reached() wants a quality that rises: the negated perplexity.
            checks.append((s + 1, -ppl))
    if rank == 0:
        print(json.dumps({"step": statistics.mean(times[5:]),
                          "perplexity": ppl,
                          "curve": [(s, -q) for s, q in checks],
                          **reached(checks, -target)}), flush=True)
    done()


def grove_trainer(library, weights):
    from train_rank import attached
    model, comm = attached(library, "lstm_lm", weights)

    def step(forest, x, y):
        model.call("train_step", *forest, x, y)

    def evaluate(forest, x, y):
        return float(model.call("loss", *forest, x, y)[0])

    def done():
        comm.barrier()
        comm.destroy()
    return step, evaluate, done


def torch_trainer(weights, lr, clip, epsilon, period, warmup, rank, size,
                  vocab, embed, hidden, faithful=False):
    import torch
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks import \
        post_localSGD_hook as post_local
    from torch.distributed.algorithms.model_averaging import averagers
    from torch.nn.parallel import DistributedDataParallel as DDP
    gloo_group(rank, size)

    class LM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            t = lambda k: torch.from_numpy(weights[k])  # noqa: E731
            self.embed = torch.nn.Embedding(vocab, embed)
            self.lstm = torch.nn.LSTM(embed, hidden, batch_first=True,
                                      bias=True)
            self.decoder = torch.nn.Linear(hidden, vocab)
            with torch.no_grad():
                self.embed.weight.copy_(t("embed.weight"))
                self.lstm.weight_ih_l0.copy_(t("lstm.W").T)
                self.lstm.weight_hh_l0.copy_(t("lstm.U").T)
                self.lstm.bias_ih_l0.copy_(t("lstm.b"))
                self.lstm.bias_hh_l0.zero_()
                self.decoder.weight.copy_(t("decoder.weight"))
                self.decoder.bias.copy_(t("decoder.bias"))
            self.lstm.bias_hh_l0.requires_grad_(False)

        def forward(self, x):
            h, _ = self.lstm(self.embed(x))
            return self.decoder(h.reshape(-1, hidden))

    net = LM()
    model = DDP(net)
    # After the warm-up each rank steps alone: a subgroup of itself (the
    # default, one subgroup a machine, needs CUDA in PyTorch 1.13).
    alone = [dist.new_group([r]) for r in range(size)][rank]
    state = post_local.PostLocalSGDState(process_group=None, subgroup=alone,
                                         start_localSGD_iter=warmup)
    model.register_comm_hook(state, post_local.post_localSGD_hook)
    averager = averagers.PeriodicModelAverager(period=period,
                                               warmup_steps=warmup)
    params = [p for p in net.parameters() if p.requires_grad]
    # AdaAlter (Xie et al.), as Grove's: the squares enter the denominator
    # one step late.
    acc = [torch.zeros_like(p) for p in params]
    den = [torch.zeros_like(p) for p in params]  # faithful: B, frozen
    count = [0]
    loss_fn = torch.nn.CrossEntropyLoss()

    def local_adaalter(t):
        """After step t: the authors' averages and denominator refresh."""
        if t >= warmup and (t - warmup) % period == 0:
            for tensor in params + acc:
                dist.all_reduce(tensor)
                tensor.div_(size)
        if t <= warmup or (t - warmup) % period == 0:
            for d, a in zip(den, acc):
                d.copy_(a)

    def step(forest, x, y):
        b = len(x) // len(forest[2])
        xs = torch.from_numpy(x).long().view(-1, b)
        model.zero_grad()
        loss_fn(model(xs), torch.from_numpy(y).long()).backward()
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(params, clip)
        with torch.no_grad():
            for p, a, d in zip(params, acc, den):
                p.sub_(lr * p.grad / torch.sqrt((d if faithful else a) +
                                                epsilon))
                a.add_(p.grad * p.grad)
            count[0] += 1
            if faithful:
                local_adaalter(count[0])
        if not faithful:
            averager.average_parameters(params)

    def evaluate(forest, x, y):
        b = len(x) // len(forest[2])
        with torch.no_grad():
            z = net(torch.from_numpy(x).long().view(-1, b))
            return float(loss_fn(z, torch.from_numpy(y).long()))
    return step, evaluate, torch_done


if __name__ == "__main__":
    main()
