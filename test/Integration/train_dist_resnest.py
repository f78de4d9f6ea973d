# REQUIRES: mpi
# RUN: %python %s
# The tiny ResNeSt (models/resnest/generate.py --depth tiny --train: split
# attention, batch-statistics BN, SGD with momentum) trained data-parallel
# on the digits (8x8 upsampled to 16x16, three equal channels) on 2 ranks,
# 32 images a rank a step, from the same weights and batches, compiled
# dense and with the compressors at >= 32x fewer bytes: top-k 1/64 with
# error feedback (values and indices: 32x) and CSER (GRBS 1/64 of every
# param each step, 1/8 every 8th: 34x). Over three seeds (weights and
# batches) each one's mean held-out accuracy must be within 0.5% of the
# dense runs' mean (the issue's bar; 450 digits, one is 0.22%), and each
# rank's bytes a step are checked against the dense ones.
# Prints the table docs/distributed.md quotes.
import json
import os
import sys
import tempfile

import numpy as np
from grove_dist import launch
from grove_testing import Model

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "models", "resnest"))
sys.path.insert(0, os.path.join(ROOT, "models", "mlp"))
import generate  # noqa: E402
from train import load_split  # noqa: E402

RANK = os.path.join(HERE, "Inputs", "resnest_dist_rank.py")
RANKS, PER_RANK, EPOCHS, IMAGE = 2, 32, 12, 16
# The final accuracy of one run moves by a digit or two with the seed: the
# bar is on the mean of three (weights and batches from each).
SEEDS = (5, 6, 7)
METHODS = [
    ("dense", [], 1.0),
    ("top-k 1/64 + EF", ["--compressor=topk", "--compress-ratio=64",
                         "--compress-error=feedback"], 32.0),
    ("CSER (1/64, 1/8 every 8)", ["--compressor=grbs", "--compress-ratio=64",
                                  "--compress-error=reset", "--sync-period=8",
                                  "--period-ratio=8"], 32.0),
]


def images(x):
    """8x8 digits in [0, 1] as 3 x 16 x 16 images."""
    x = x.reshape(-1, 1, 8, 8)
    x = np.kron(x, np.ones((1, 1, 2, 2), np.float32))
    return np.repeat(x, 3, axis=1).astype(np.float32)


def initial_weights(params, g):
    """He-normal convolutions, unit BN scales, PyTorch's uniform fc, BN
    statistics at their start (mean 0, variance 1)."""
    w = {}
    for name, shape in params:
        if name.endswith("running_mean"):
            w[name] = np.zeros(shape)
        elif name.endswith("running_var"):
            w[name] = np.ones(shape)
        elif len(shape) == 4:
            fan_in = shape[1] * shape[2] * shape[3]
            w[name] = g.normal(0, np.sqrt(2 / fan_in), shape)
        elif len(shape) == 2:
            bound = 1 / np.sqrt(shape[1])
            w[name] = g.uniform(-bound, bound, shape)
        elif name.endswith("weight"):
            w[name] = np.ones(shape)
        elif name == "fc.bias":
            w[name] = g.uniform(-0.1, 0.1, shape)
        else:
            w[name] = np.zeros(shape)
    return {k: v.astype(np.float32) for k, v in w.items()}


def train(source, work, seed, x_tr, x_te, y_tr, y_te, params):
    """Each method's accuracy and bytes a step, from one seed's weights
    and batches."""
    g = np.random.default_rng(seed)
    steps_per_epoch = len(x_tr) // (RANKS * PER_RANK)
    order = np.concatenate([
        g.permutation(len(x_tr))[:steps_per_epoch * RANKS * PER_RANK]
        .reshape(steps_per_epoch, RANKS, PER_RANK) for _ in range(EPOCHS)])
    data = os.path.join(work, "data.npz")
    np.savez(data, x_train=images(x_tr), y_train=y_tr.astype(np.int32),
             x_test=images(x_te), y_test=y_te.astype(np.int32), order=order,
             **{"w_" + k: v for k, v in initial_weights(params, g).items()})
    results = {}
    for i, (label, _, _) in enumerate(METHODS):
        name = f"rdist{i}"
        out = os.path.join(work, f"{name}_{seed}.json")
        code, text, _ = launch(RANK, [os.path.join(work, f"lib{name}.so"),
                                      name, data, out], RANKS, 900)
        assert code == 0 and os.path.exists(out), text
        with open(out) as f:
            results[label] = json.load(f)
    return results


def main():
    text, params = generate.generate("tiny", IMAGE, "unfused", train=True)
    work = tempfile.mkdtemp(prefix="grove-resnest-dist-")
    source = os.path.join(work, "resnest.mlir")
    with open(source, "w") as f:
        f.write(text)
    for i, (_, flags, _) in enumerate(METHODS):
        Model(source, name=f"rdist{i}", workdir=work,
              grovec_flags=["--data-parallel", *flags])
    split = load_split()
    runs = [train(source, work, seed, *split, params) for seed in SEEDS]
    mean = {label: float(np.mean([r[label]["accuracy"] for r in runs]))
            for label, _, _ in METHODS}
    dense = runs[0]["dense"]["bytes_per_step"]
    print(f"| method | bytes a step a rank | vs dense | accuracy, seeds "
          f"{', '.join(map(str, SEEDS))} | mean |")
    print("| --- | --- | --- | --- | --- |")
    for label, _, least in METHODS:
        sent = runs[0][label]["bytes_per_step"]
        accuracies = " / ".join(f"{r[label]['accuracy']:.2%}" for r in runs)
        print(f"| {label} | {sent:,.0f} | {dense / sent:.1f}x | "
              f"{accuracies} | {mean[label]:.2%} |")
        assert dense / sent >= least, (label, dense / sent)
        assert mean[label] >= mean["dense"] - 0.005 - 1e-9, (label, mean)
    assert mean["dense"] >= 0.9, mean


if __name__ == "__main__":
    main()
