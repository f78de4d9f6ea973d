"""Elastic training: the loss when workers join, jumping vs ramping the rate.

"Dynamic Mini-batch SGD for Elastic Distributed Training" (2019): when the
world grows, the global batch grows with it and the linear scaling rule
raises the learning rate at once; with momentum the jump's effect arrives
late and hurts. grove.elastic_lr ramps the rate from the old world's to the
new over T steps instead. This trains the digits MLP
(models/mlp_train's, SGD with momentum 0.9, 32 digits a rank a step, the
rate 0.05 x the world) data-parallel on 1 rank for PHASE1 steps,
checkpoints it, and continues on 4 ranks from the checkpoint, once with
ramp_steps = 0 (the jump to 4x) and once with the ramp; each run is
repeated over seeds. Prints the mean loss over windows of steps after the
change and the held-out accuracy at the end, and writes the marked
"elastic" section of docs/perf.md.

    .venv/bin/python bench/elastic.py [--quick]
"""
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RANK_SCRIPT = ROOT / "test" / "Integration" / "Inputs" / "distributed_rank.py"
PHASE1, PHASE2, WINDOW, RAMP, BATCH, BASE_LR = 100, 150, 25, 100, 32, 0.1


def source(ramp):
    return f"""
module @el{ramp} {{
  grove.param @fc1.weight : tensor<128x64xf32>
  grove.param @fc1.bias : tensor<128xf32>
  grove.param @fc2.weight : tensor<10x128xf32>
  grove.param @fc2.bias : tensor<10xf32>
  func.func @logits(%x: tensor<?x64xf32>) -> tensor<?x10xf32> {{
    %w1 = grove.get_param @fc1.weight : tensor<128x64xf32>
    %b1 = grove.get_param @fc1.bias : tensor<128xf32>
    %w2 = grove.get_param @fc2.weight : tensor<10x128xf32>
    %b2 = grove.get_param @fc2.bias : tensor<10xf32>
    %h = grove.matmul %x, %w1 {{transpose_rhs}} : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    %hb = grove.add %h, %b1 : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %a = grove.relu %hb : tensor<?x128xf32>
    %o = grove.matmul %a, %w2 {{transpose_rhs}} : (tensor<?x128xf32>, tensor<10x128xf32>) -> tensor<?x10xf32>
    %z = grove.add %o, %b2 : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
    return %z : tensor<?x10xf32>
  }}
  func.func @forward(%x: tensor<?x64xf32>) -> tensor<?x10xf32> {{
    %z = func.call @logits(%x) : (tensor<?x64xf32>) -> tensor<?x10xf32>
    return %z : tensor<?x10xf32>
  }}
  func.func @train_step(%x: tensor<?x64xf32>, %y: tensor<?xi32>) -> (tensor<f32>, tensor<f32>) {{
    %loss, %g:4 = grove.value_and_grad [@fc1.weight, @fc1.bias, @fc2.weight, @fc2.bias] {{
      %z = func.call @logits(%x) : (tensor<?x64xf32>) -> tensor<?x10xf32>
      %l = grove.softmax_cross_entropy %z, %y : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
      grove.yield %l : tensor<f32>
    }} : tensor<f32>, tensor<128x64xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>
    %base = grove.constant dense<{BASE_LR}> : tensor<f32>
    %lr = grove.elastic_lr %base {{base_world = 1, ramp_steps = {ramp}}} : tensor<f32>
    grove.sgd [@fc1.weight, @fc1.bias, @fc2.weight, @fc2.bias] (%g#0, %g#1, %g#2, %g#3)
        lr(%lr : tensor<f32>) {{momentum = 0.9 : f64}}
        : tensor<128x64xf32>, tensor<128xf32>, tensor<10x128xf32>, tensor<10xf32>
    return %loss, %lr : tensor<f32>, tensor<f32>
  }}
}}
"""


def phase(workdir, model, ranks, steps, data, rng, weights, **extra):
    from grove_dist import launch
    x_tr, y_tr = data
    idx = rng.integers(0, len(x_tr), (steps, ranks, BATCH))
    inputs = {"model": model, "steps": steps, "timeout": 60.0, "num_inputs": 2,
              "num_outputs": 2, "weight_names": np.array(list(weights)),
              "read_names": np.array([]), "in0": x_tr[idx], "in1": y_tr[idx],
              **extra}
    for name, w in weights.items():
        inputs["w_" + name] = w
    np.savez(os.path.join(workdir, "inputs.npz"), **inputs)
    code, out, _ = launch(str(RANK_SCRIPT), ["train", workdir], ranks, 600,
                          env={"PYTHONPATH": str(ROOT / "test" / "lib")})
    paths = [os.path.join(workdir, f"rank{r}.npz") for r in range(ranks)]
    assert code == 0 and all(map(os.path.exists, paths)), out
    results = [dict(np.load(p)) for p in paths]
    assert all("error" not in r for r in results), out
    losses = np.mean([[float(s[0]) for s in r["losses"]] for r in results],
                     axis=0)
    rates = [float(s[1]) for s in results[0]["losses"]]
    return losses, rates


def main():
    sys.path.insert(0, str(ROOT / "bench"))
    from timing import quick_args, use_build
    opts = quick_args(__doc__)
    use_build("models/mlp")
    from grove_testing import Model
    from train import load_split
    x_tr, x_te, y_tr, y_te = load_split()
    data = (x_tr.astype(np.float32), y_tr.astype(np.int32))
    workdir = tempfile.mkdtemp(prefix="grove-elastic-")
    models = {}
    for ramp in (0, RAMP):
        m = Model(source(ramp), name=f"el{ramp}", workdir=workdir,
                  grovec_flags=["--data-parallel"])
        models[ramp] = m
    seeds = [0] if opts.quick else [0, 1, 2]
    curves = {0: [], RAMP: []}
    accuracy = {0: [], RAMP: []}
    for seed in seeds:
        rng = np.random.default_rng(seed)
        weights = {
            "fc1.weight": rng.uniform(-1, 1, (128, 64)).astype(np.float32) / 8,
            "fc1.bias": np.zeros(128, np.float32),
            "fc2.weight": rng.uniform(-1, 1, (10, 128)).astype(np.float32)
            / np.sqrt(128),
            "fc2.bias": np.zeros(10, np.float32)}
        ck = os.path.join(workdir, f"phase1.{seed}.safetensors")
        first, _ = phase(workdir, "el0", 1, PHASE1, data, rng, weights,
                         save=ck)
        for ramp in (0, RAMP):
            losses, rates = phase(workdir, f"el{ramp}", 4, PHASE2, data,
                                  np.random.default_rng(seed + 100), weights,
                                  load=ck, save=ck + f".{ramp}")
            curves[ramp].append(losses)
            m = models[ramp]
            m.load_weights(ck + f".{ramp}")
            z, = m.call("forward", x_te.astype(np.float32))
            accuracy[ramp].append(float((z.argmax(1) == y_te).mean()))
            print(f"seed {seed} ramp {ramp:3d}: rates {rates[0]:.3g} -> "
                  f"{rates[-1]:.3g}; loss after the change "
                  + " ".join(f"{losses[i:i + WINDOW].mean():.3f}"
                             for i in range(0, PHASE2, WINDOW))
                  + f"; held-out {accuracy[ramp][-1]:.4f}", flush=True)
    section = report(curves, accuracy, seeds)
    print("\n" + section)
    if not opts.quick:
        sys.path.insert(0, str(ROOT / "bench"))
        from timing import write_perf_section
        write_perf_section(ROOT / "docs" / "perf.md", "elastic", section)


def report(curves, accuracy, seeds):
    windows = list(range(0, PHASE2, WINDOW))
    lines = ["<!-- elastic: written by bench/elastic.py -->",
             "## Elastic training: jump vs ramp (digits MLP)", "",
             f"SGD with momentum 0.9, {BATCH} digits a rank a step, the rate "
             f"{BASE_LR} x the world (grove.elastic_lr, base world 1): {PHASE1} "
             f"steps on 1 rank, a checkpoint, then {PHASE2} steps on 4 ranks "
             f"from it, the rate jumping to 4x at once or ramping over {RAMP} "
             f"steps. Training loss (mean over the 4 ranks) averaged over "
             f"windows of {WINDOW} steps after the change, and the held-out "
             f"accuracy at the end; mean over {len(seeds)} seeds.", "",
             "| policy | " + " | ".join(f"steps {w}-{w + WINDOW - 1}"
                                        for w in windows)
             + " | held-out accuracy |",
             "| --- | " + " | ".join("---" for _ in windows) + " | --- |"]
    for ramp, label in ((0, "jump (ramp 0)"), (RAMP, f"ramp over {RAMP}")):
        mean = np.mean(curves[ramp], axis=0)
        lines.append(f"| {label} | "
                     + " | ".join(f"{mean[w:w + WINDOW].mean():.3f}"
                                  for w in windows)
                     + f" | {statistics.mean(accuracy[ramp]):.1%} |")
    lines.append("<!-- /elastic -->")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
