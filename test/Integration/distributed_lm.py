# REQUIRES: mpi
# RUN: %python %s
# The LSTM language model (models/lstm_lm: nn.LSTM folded over a forest of
# chains) data-parallel on 2 ranks under mpirun (docs/distributed.md,
# "Real workloads"): with synchronous AdaAlter the ranks' params after 4
# steps, each rank on its own 3 sequences, equal one process's after the
# same steps on all 6 (1e-5 of each tensor's scale): the tree schedule,
# the fold's gradient and the averaging of the embedding's and decoder's
# gradients compose. Local AdaAlter (H = 2 after 2 synchronous steps)
# runs too, its ranks apart between averages and equal after one.
import os
import sys
import tempfile

import numpy as np
from grove_dist import launch
from grove_testing import Model, assert_close, rng

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "models", "lstm_lm"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import generate  # noqa: E402
from grove import nn  # noqa: E402

RANK_SCRIPT = os.path.join(HERE, "Inputs", "distributed_rank.py")
V, E, H, SEQ, T, STEPS, RANKS = 40, 6, 5, 3, 6, 4, 2
EPS = 1e-3
R = rng()
NAMES = ["embed.weight", "lstm.W", "lstm.U", "lstm.b", "decoder.weight",
         "decoder.bias"]


def run(workdir, name, steps, weights, tokens, targets):
    forest = [np.stack([np.stack([a] * RANKS)] * steps)
              for a in nn.chains(SEQ, T)]
    data = {"model": name, "steps": steps, "timeout": 60.0,
            "num_inputs": 5, "weight_names": np.array(NAMES),
            "read_names": np.array(NAMES)}
    for i, x in enumerate(forest + [tokens, targets]):
        data["in%d" % i] = x
    for n, w in weights.items():
        data["w_" + n] = w
    np.savez(os.path.join(workdir, "inputs.npz"), **data)
    code, out, _ = launch(RANK_SCRIPT, ["train", workdir], RANKS, 300)
    assert code == 0, out
    return [dict(np.load(os.path.join(workdir, "rank%d.npz" % r)))
            for r in range(RANKS)]


def main():
    workdir = tempfile.mkdtemp(prefix="grove-dist-lm-")
    # AdaAlter's first steps divide by sqrt(epsilon) (its accumulator starts
    # at 0): the default 1e-7 magnifies the rounding of the ranks' sum
    # against one process's 3000-fold, past the bound below under some
    # thread schedules. 1e-3 keeps the check about the averaging.
    sync = generate.module(V, E, H, lr=0.05, epsilon=EPS, name="lm_sync")
    Model(sync, name="lm_sync", workdir=workdir,
          grovec_flags=["--data-parallel"])
    one = Model(generate.module(V, E, H, lr=0.05, epsilon=EPS,
                                name="lm_one"),
                name="lm_one", workdir=workdir)
    weights = {n: R.uniform(-0.3, 0.3, s).astype(np.float32)
               for n, s in (("embed.weight", (V, E)), ("lstm.W", (E, 4 * H)),
                            ("lstm.U", (H, 4 * H)), ("lstm.b", (4 * H,)),
                            ("decoder.weight", (V, H)),
                            ("decoder.bias", (V,)))}
    tokens = R.integers(0, V, (STEPS, RANKS, SEQ * T)).astype(np.int32)
    targets = R.integers(0, V, (STEPS, RANKS, SEQ * T)).astype(np.int32)
    results = run(workdir, "lm_sync", STEPS, weights, tokens, targets)
    for n, w in weights.items():
        one.set_weight(n, w)
    both = [a.reshape(-1) for a in nn.chains(RANKS * SEQ, T)]
    for s in range(STEPS):
        one.call("train_step", *both, tokens[s].reshape(-1),
                 targets[s].reshape(-1))
    worst = 0.0
    for n in NAMES:
        expected = one.get_weight(n)
        scale = float(np.abs(expected).max())
        for r, res in enumerate(results):
            worst = max(worst, assert_close(
                res["p_" + n], expected, rtol=0, atol=1e-5 * scale,
                what=f"{n} on rank {r}") / scale)
    print(f"synchronous AdaAlter, {RANKS} ranks: {STEPS} steps equal one "
          f"process on both ranks' sequences, worst {worst:.1e} of scale")

    local = generate.module(V, E, H, lr=0.05, period=2, warmup=2,
                            epsilon=EPS, name="lm_local")
    Model(local, name="lm_local", workdir=workdir,
          grovec_flags=["--data-parallel"])
    for steps, equal in ((3, False), (4, True)):
        results = run(workdir, "lm_local", steps, weights, tokens[:steps],
                      targets[:steps])
        same = all(np.array_equal(results[0]["p_" + n], results[1]["p_" + n])
                   for n in NAMES)
        assert same == equal, (steps, same)
    print("Local AdaAlter (H = 2 after 2 synchronous steps): the ranks "
          "differ after step 3, agree after the average at step 4")


if __name__ == "__main__":
    main()
