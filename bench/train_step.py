#!/usr/bin/env python3
"""Training on the host: Grove's compiled train_step vs PyTorch and JAX.

    GROVE_BENCH=1 scripts/setup.sh                 # once: JAX, optax
    .venv/bin/python bench/train_step.py           # ~13 min; prints the tables
                                                   # and writes its section of docs/perf.md
    .venv/bin/python bench/train_step.py --quick   # smoke run, docs untouched

Part 1, one training step (forward, backward, Adam update of every weight)
of the digits MLP (models/mlp_train, 64-128-10) at batch 64 and 1024 and of
the digits CNN (models/cnn_train: conv-BN-ReLU-pool twice, linear) at batch
16 and 256, and of the tiny ResNeSt on 32x32 images at batch 16
(models/resnest/generate.py --train: batch-statistics BN, the split
attentions fused forward and backward, SGD with momentum 0.9 and weight
decay 1e-4 in every peer; PyTorch runs models/resnest/reference.py and JAX
bench/jax_resnest.py, both functional), each peer in its own process:
  * Grove          the model's train_step (grovec -O3 --cpu=native), called
                   through grove_invoke from Python (ctypes), on its 2-thread
                   OpenMP team;
  * PyTorch eager  torch 1.13, the same layers, torch.optim.Adam(foreach=True),
                   zero_grad(set_to_none=True), on 1 and on 2 threads
                   (ResNeSt: torch.optim.SGD(foreach=True));
  * JAX jit        jax 0.4.30 + optax.adam (ResNeSt: add_decayed_weights
                   then sgd with momentum), the whole step under jax.jit with
                   params and optimizer state donated, block_until_ready after
                   each step (no asynchronous dispatch in the time).
All start from the same weights (one seeded generator) and see the same
batch; the loss of the first step is printed next to the times as a check.
Peak RSS is the process's (interpreter and libraries included).

Part 2, the optimizer update alone over ResNeSt-50's trainable parameters
(263 tensors, 27.5M floats, their gradients given): Adam (Grove, PyTorch's
foreach Adam, optax) and LAMB (Grove, optax). GB/s counts the bytes an
update must move per float (Adam and LAMB: read p, g, m, v and write p, m, v:
28 bytes), against an in-place stream of the same size in the same run
(Grove p += g: 12 bytes a float, 2 threads). LAMB cannot move only those:
its norms must be known before the update (docs/training.md, "Bytes per
parameter"); Grove's LAMB moves 48 bytes a float (its loops: the norms'
reads and the in-place update), and the last column gives the share of the
stream at the bytes Grove's loops move.

Method: in each process 5 rounds, each the median per-call time over 0.3 s
after a warm-up; the median of the rounds is the process's time. Each train
step runs in 3 processes per peer (--repeat), taken in turn with the other
peers', and the best counts: on this shared 2-core machine one process can
run up to 2x slower than the next. Ratios are peer time / Grove time (> 1:
Grove faster).
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "models" / "resnest"))
from timing import sample  # noqa: E402

WORK = ROOT / "build-bench" / "train"
SEED = 7
GROVEC_FLAGS = ["-O3", "--cpu=native"]
# Bytes a float Grove's update loops move (test/Pipelines/
# optimizer-in-place.mlir and lamb-two-passes.mlir check the loops): Adam
# one pass (read p, g, m, v; write p, m, v); LAMB the norms of p (read p)
# and of the update direction (read p, g, m, v), then the update.
GROVE_BYTES_MOVED = {"adam": 28, "lamb": 4 + 16 + 28}
MODELS = {"mlp": ("models/mlp_train/mlp_train.mlir", "mlp_train", 1e-3),
          "cnn": ("models/cnn_train/cnn_train.mlir", "cnn_train", 2e-3),
          "resnest": (None, "resnesttiny_train", None)}
CASES = [("mlp", 64), ("mlp", 1024), ("cnn", 16), ("cnn", 256),
         ("resnest", 16)]
RESNEST_IMAGE = 32
PEERS = ["grove", "torch1", "torch2", "jax"]
LABEL = {"grove": "Grove", "torch1": "PyTorch eager, 1 thread",
         "torch2": "PyTorch eager, 2 threads", "jax": "JAX jit"}


def measure(fn, rounds, seconds):
    return statistics.median(sample(fn, seconds) for _ in range(rounds))


# ---------------------------------------------------------------------------
# Shared weights and data
# ---------------------------------------------------------------------------

def resnest_model():
    """The tiny ResNeSt with train_step: (its MLIR, its (name, shape)s)."""
    import generate
    return generate.generate("tiny", RESNEST_IMAGE, "unfused", train=True)


def source(model):
    src, name, _ = MODELS[model]
    if src:
        return str(ROOT / src)
    path = WORK / name / f"{name}.mlir"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(resnest_model()[0])
    return str(path)


def shapes(model):
    if model == "resnest":
        return resnest_model()[1]
    if model == "mlp":
        return [("fc1.weight", (128, 64)), ("fc1.bias", (128,)),
                ("fc2.weight", (10, 128)), ("fc2.bias", (10,))]
    return [("conv1.weight", (16, 1, 3, 3)), ("conv1.bias", (16,)),
            ("bn1.weight", (16,)), ("bn1.bias", (16,)),
            ("conv2.weight", (32, 16, 3, 3)), ("conv2.bias", (32,)),
            ("bn2.weight", (32,)), ("bn2.bias", (32,)),
            ("fc.weight", (10, 128)), ("fc.bias", (10,))]


def initial(model):
    g = np.random.default_rng(SEED)
    if model == "resnest":
        # Drawn once by the driver (reference.py imports torch, which would
        # count in every worker's peak RSS).
        with np.load(WORK / "resnest_initial.npz") as f:
            return dict(f)
    out = {}
    for name, shape in shapes(model):
        if name.startswith("bn"):
            out[name] = (np.ones if name.endswith("weight") else np.zeros)(
                shape, np.float32)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
            out[name] = g.uniform(-1, 1, shape).astype(np.float32) / np.sqrt(
                fan_in)
    return out


def batch(model, b):
    g = np.random.default_rng(SEED + b)
    shape = (b, 3, RESNEST_IMAGE, RESNEST_IMAGE) if model == "resnest" else (
        b, 64)
    return (g.uniform(0, 1, shape).astype(np.float32),
            g.integers(0, 10, b).astype(np.int32))


# ---------------------------------------------------------------------------
# Workers: one per (peer, case); print one JSON line
# ---------------------------------------------------------------------------

def grove_library(model):
    _, name, _ = MODELS[model]
    from grove_testing import Model
    workdir = WORK / name
    workdir.mkdir(parents=True, exist_ok=True)
    m = Model(source(model), name=name, grovec_flags=GROVEC_FLAGS,
              workdir=str(workdir))
    return m, workdir / f"lib{name}.so"


def grove_worker(model, b, rounds, seconds):
    from grove_testing import Model
    _, name, _ = MODELS[model]
    so = WORK / name / f"lib{name}.so"
    m = Model(source(model), name=name, workdir=str(WORK / name),
              library=str(so))
    for k, v in initial(model).items():
        m.set_weight(k, v)
    x, y = batch(model, b)
    first = float(m.call("train_step", x, y)[0])
    step = m.bind("train_step", x, y)
    return first, measure(step, rounds, seconds), "grove_invoke via ctypes"


def torch_nets(model):
    import torch
    import torch.nn as nn
    if model == "mlp":
        net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
        names = ["0.weight", "0.bias", "2.weight", "2.bias"]
        return net, names, lambda x: x
    net = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32),
        nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(128, 10))
    names = ["0.weight", "0.bias", "1.weight", "1.bias", "4.weight", "4.bias",
             "5.weight", "5.bias", "9.weight", "9.bias"]
    return net, names, lambda x: x.reshape(-1, 1, 8, 8)


def torch_resnest(b, threads):
    """The tiny ResNeSt's step, functional (reference.py, training=True)."""
    import torch
    import generate
    from reference import resnest
    p = {k: torch.from_numpy(v) for k, v in initial("resnest").items()}
    trained = [n for n, _ in generate.trainable(shapes("resnest"))]
    for n in trained:
        p[n].requires_grad_(True)
    opt = torch.optim.SGD([p[n] for n in trained], foreach=True,
                          **generate.SGD)
    x, y = batch("resnest", b)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y).long()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(
            resnest(p, tx, "tiny", training=True), ty)
        loss.backward()
        opt.step()
        return loss
    return step


def torch_worker(model, b, rounds, seconds, threads):
    import torch
    torch.set_num_threads(threads)
    if model == "resnest":
        step = torch_resnest(b, threads)
        first = float(step())
        return first, measure(step, rounds, seconds), \
            f"torch {torch.__version__}, {threads} thread(s)"
    net, names, shape = torch_nets(model)
    params = dict(net.named_parameters())
    with torch.no_grad():
        for tname, (_, v) in zip(names, initial(model).items()):
            params[tname].copy_(torch.from_numpy(v))
    opt = torch.optim.Adam(net.parameters(), lr=MODELS[model][2],
                           foreach=True)
    x, y = batch(model, b)
    tx, ty = shape(torch.from_numpy(x)), torch.from_numpy(y).long()
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(tx), ty)
        loss.backward()
        opt.step()
        return loss

    first = float(step())
    return first, measure(step, rounds, seconds), \
        f"torch {torch.__version__}, {threads} thread(s)"


def jax_worker(model, b, rounds, seconds):
    import jax
    import jax.numpy as jnp
    import optax
    params = {k: jnp.asarray(v) for k, v in initial(model).items()}
    stats = {f"bn{i}.{s}": jnp.asarray(np.full(c, 1.0 if s == "var" else 0.0,
                                               np.float32))
             for i, c in ((1, 16), (2, 32)) for s in ("mean", "var")}

    def bn(x, p, s, i):
        mean = x.mean(axis=(0, 2, 3))
        var = x.var(axis=(0, 2, 3))
        n = x.size // x.shape[1]
        new = {f"bn{i}.mean": 0.9 * s[f"bn{i}.mean"] + 0.1 * mean,
               f"bn{i}.var": 0.9 * s[f"bn{i}.var"] + 0.1 * var * n / (n - 1)}
        xh = (x - mean[None, :, None, None]) / jnp.sqrt(
            var[None, :, None, None] + 1e-5)
        return (xh * p[f"bn{i}.weight"][None, :, None, None]
                + p[f"bn{i}.bias"][None, :, None, None]), new

    def conv(x, w, bias):
        y = jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                         dimension_numbers=("NCHW", "OIHW",
                                                            "NCHW"))
        return y + bias[None, :, None, None]

    def pool(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2),
                                     (1, 1, 2, 2), "VALID")

    def logits(p, s, x):
        if model == "mlp":
            h = jax.nn.relu(x @ p["fc1.weight"].T + p["fc1.bias"])
            return h @ p["fc2.weight"].T + p["fc2.bias"], s
        h = x.reshape(-1, 1, 8, 8)
        new = {}
        for i in (1, 2):
            h, upd = bn(conv(h, p[f"conv{i}.weight"], p[f"conv{i}.bias"]), p,
                        s, i)
            new.update(upd)
            h = pool(jax.nn.relu(h))
        h = h.reshape(h.shape[0], -1)
        return h @ p["fc.weight"].T + p["fc.bias"], new

    if model == "resnest":
        import generate
        import jax_resnest
        trained = {n for n, _ in generate.trainable(shapes(model))}
        full = {k: jnp.asarray(v) for k, v in initial(model).items()}
        params = {k: v for k, v in full.items() if k in trained}
        stats = {k: v for k, v in full.items() if k not in trained}

        def logits(p, s, x):
            z, new = jax_resnest.logits({**p, **s}, x, "tiny")
            return z, {**s, **new}
        opt = optax.chain(
            optax.add_decayed_weights(generate.SGD["weight_decay"]),
            optax.sgd(generate.SGD["lr"], momentum=generate.SGD["momentum"]))
    else:
        opt = optax.adam(MODELS[model][2])

    def loss_fn(p, s, x, y):
        z, new = logits(p, s, x)
        return optax.softmax_cross_entropy_with_integer_labels(z, y).mean(), new

    state = opt.init(params)

    def train_step(p, st, s, x, y):
        (loss, new), g = jax.value_and_grad(loss_fn, has_aux=True)(p, s, x, y)
        updates, st = opt.update(g, st, p)
        return optax.apply_updates(p, updates), st, new, loss

    train_step = jax.jit(train_step, donate_argnums=(0, 1, 2))
    x, y = batch(model, b)
    x, y = jnp.asarray(x), jnp.asarray(y)
    box = {"p": params, "st": state, "s": stats}

    def step():
        box["p"], box["st"], box["s"], loss = train_step(
            box["p"], box["st"], box["s"], x, y)
        loss.block_until_ready()
        return loss

    first = float(step())
    return first, measure(step, rounds, seconds), \
        f"jax {jax.__version__}, jit, donated buffers"


# ---------------------------------------------------------------------------
# Part 2: the update alone over ResNeSt-50's parameters
# ---------------------------------------------------------------------------

def resnest_shapes():
    sys.path.insert(0, str(ROOT / "models" / "resnest"))
    import generate
    _, params = generate.generate("50", 224, "fused")
    return [(n, tuple(s)) for n, s in params
            if not n.endswith(("running_mean", "running_var"))]


def update_source(kind):
    """Grove: params and their gradients as state; `update` applies one
    optimizer step in place; `stream` is p += g over one tensor as large as
    all of them together."""
    sh = resnest_shapes()
    T = lambda s: "tensor<" + "x".join(map(str, s)) + "xf32>"
    lines = [f"module @upd_{kind} {{"]
    for i, (_, s) in enumerate(sh):
        lines += [f"  grove.param @p{i} : {T(s)}", f"  grove.param @g{i} : {T(s)}"]
    total = sum(int(np.prod(s)) for _, s in sh)
    lines += [f"  grove.param @big : {T((total,))}",
              f"  grove.param @bigg : {T((total,))}"]
    lines.append("  func.func @update() {")
    for i, (_, s) in enumerate(sh):
        lines.append(f"    %g{i} = grove.get_param @g{i} : {T(s)}")
    refs = ", ".join(f"@p{i}" for i in range(len(sh)))
    grads = ", ".join(f"%g{i}" for i in range(len(sh)))
    types = ", ".join(T(s) for _, s in sh)
    attrs = "{lr = 1.0e-03 : f64}" if kind == "adam" else \
        "{lr = 1.0e-03 : f64, weight_decay = 0.01 : f64}"
    lines += [f"    grove.{kind} [{refs}] ({grads}) {attrs} : {types}",
              "    return", "  }",
              "  func.func @stream() {",
              f"    %p = grove.get_param @big : {T((total,))}",
              f"    %g = grove.get_param @bigg : {T((total,))}",
              f"    %s = grove.add %p, %g : ({T((total,))}, {T((total,))}) -> {T((total,))}",
              f"    grove.set_param @big = %s : {T((total,))}",
              "    return", "  }", "}"]
    return "\n".join(lines), sh, total


def update_worker(peer, kind, rounds, seconds):
    g = np.random.default_rng(SEED)
    if peer == "grove":
        from grove_testing import Model
        src, sh, total = update_source(kind)
        name = f"upd_{kind}"
        workdir = WORK / name
        m = Model(src, name=name, workdir=str(workdir),
                  library=str(workdir / f"lib{name}.so"))
        for i, (_, s) in enumerate(sh):
            m.set_weight(f"p{i}", g.standard_normal(s).astype(np.float32))
            m.set_weight(f"g{i}", g.standard_normal(s).astype(np.float32))
        m.set_weight("big", np.zeros(total, np.float32))
        m.set_weight("bigg", np.ones(total, np.float32))
        upd = m.bind("update", num_outputs=0)
        stream = m.bind("stream", num_outputs=0)
        # Rounds of the two in turn: on this shared machine the bandwidth a
        # process gets changes within seconds, and the share compares
        # moments next to each other.
        t, ts = [], []
        for _ in range(rounds):
            t.append(sample(upd, seconds))
            ts.append(sample(stream, seconds))
        return {"time": statistics.median(t), "floats": total,
                "stream": statistics.median(ts)}
    sh = resnest_shapes()
    total = sum(int(np.prod(s)) for _, s in sh)
    if peer == "torch":
        import torch
        torch.set_num_threads(2)
        ps = [torch.from_numpy(g.standard_normal(s).astype(np.float32))
              .requires_grad_() for _, s in sh]
        for p in ps:
            p.grad = torch.randn_like(p)
        opt = torch.optim.Adam(ps, lr=1e-3, foreach=True)
        return {"time": measure(opt.step, rounds, seconds), "floats": total}
    import jax
    import optax
    ps = {str(i): jax.numpy.asarray(g.standard_normal(s).astype(np.float32))
          for i, (_, s) in enumerate(sh)}
    gs = {k: jax.numpy.ones_like(v) for k, v in ps.items()}
    opt = optax.adam(1e-3) if kind == "adam" else optax.lamb(
        1e-3, weight_decay=0.01)
    box = {"p": ps, "s": opt.init(ps)}

    def apply(p, s, grads):
        u, s = opt.update(grads, s, p)
        return optax.apply_updates(p, u), s

    apply = jax.jit(apply, donate_argnums=(0, 1))

    def step():
        box["p"], box["s"] = apply(box["p"], box["s"], gs)
        jax.block_until_ready(box["p"])

    return {"time": measure(step, rounds, seconds), "floats": total}


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

def worker_env(peer):
    sys.path.insert(0, str(ROOT / "bench"))
    from run import GLIBC_TUNABLES  # bench/run.py: one definition
    paths = [ROOT / "test" / "lib", ROOT / "models" / "resnest", ROOT / "bench"]
    env = {**os.environ, "GLIBC_TUNABLES": GLIBC_TUNABLES,
           "OPENBLAS_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(map(str, paths)),
           "GROVE_BIN": str(ROOT / "build" / "bin"),
           "GROVE_LIB": str(ROOT / "build" / "lib")}
    if peer == "grove":
        env["OMP_NUM_THREADS"] = "2"
    return env


def run_worker(args, peer, timeout=900):
    cmd = [sys.executable, __file__, "--worker", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=worker_env(peer))
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": tail[:160]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def worker_main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("what")
    ap.add_argument("peer")
    ap.add_argument("case")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.3)
    a = ap.parse_args(argv)
    if a.what == "init":
        from reference import random_params
        np.savez(WORK / "resnest_initial.npz", **random_params(
            shapes("resnest"), np.random.default_rng(SEED)))
        print(json.dumps({}))
        return
    if a.what == "step":
        model, b = a.case.split(":")
        b = int(b)
        if a.peer == "grove":
            first, t, info = grove_worker(model, b, a.rounds, a.seconds)
        elif a.peer.startswith("torch"):
            first, t, info = torch_worker(model, b, a.rounds, a.seconds,
                                          int(a.peer[-1]))
        else:
            first, t, info = jax_worker(model, b, a.rounds, a.seconds)
        out = {"first_loss": first, "time": t, "info": info}
    else:
        out = update_worker(a.peer, a.case, a.rounds, a.seconds)
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="2 rounds of 0.1 s, MLP at batch 64 only, no update "
                    "benchmark; docs/perf.md untouched")
    ap.add_argument("--repeat", type=int, default=3,
                    help="processes per (case, peer), interleaved; the best "
                    "is reported")
    opts = ap.parse_args()
    os.environ.setdefault("GROVE_BIN", str(ROOT / "build" / "bin"))
    os.environ.setdefault("GROVE_LIB", str(ROOT / "build" / "lib"))
    sys.path.insert(0, str(ROOT / "test" / "lib"))
    timing = ["--rounds", "2", "--seconds", "0.1"] if opts.quick else []
    cases = CASES[:1] if opts.quick else CASES
    for model in sorted({m for m, _ in cases}):
        print(f"compiling {model} ...", flush=True)
        grove_library(model)
    if any(m == "resnest" for m, _ in cases):
        # In a process of its own: a worker's peak RSS starts at its
        # parent's, and reference.py imports torch.
        run_worker(["init", "-", "resnest"], "grove")
    steps = {}
    # This machine is shared: a process can run up to 2x slower than the
    # next. Each peer's processes alternate with the others', and each
    # peer's best process counts.
    for model, b in cases:
        for _ in range(1 if opts.quick else opts.repeat):
            for peer in PEERS:
                r = run_worker(["step", peer, f"{model}:{b}", *timing], peer)
                best = steps.get((model, b, peer))
                if "time" in r and (not best or "time" not in best or
                                    r["time"] < best["time"]):
                    steps[(model, b, peer)] = r
                elif not best:
                    steps[(model, b, peer)] = r
                shown = (f"{r['time'] * 1e6:10.1f} us  loss0 "
                         f"{r['first_loss']:.5f}  peak RSS {r['rss_mb']:.0f} MB"
                         if "time" in r else r["error"])
                print(f"{model} b={b:<5d} {LABEL[peer]:26s} {shown}",
                      flush=True)
    updates = {}
    if not opts.quick:
        from grove_testing import Model
        for kind in ("adam", "lamb"):
            print(f"compiling the {kind} update ...", flush=True)
            src, _, _ = update_source(kind)
            workdir = WORK / f"upd_{kind}"
            workdir.mkdir(parents=True, exist_ok=True)
            Model(src, name=f"upd_{kind}", grovec_flags=GROVEC_FLAGS,
                  workdir=str(workdir))
            for peer in (("grove", "torch", "jax") if kind == "adam"
                         else ("grove", "jax")):
                r = run_worker(["update", peer, kind], peer)
                updates[(kind, peer)] = r
                print(f"{kind} update {peer:6s} "
                      + (f"{r['time'] * 1e3:8.1f} ms" if "time" in r
                         else r["error"]), flush=True)
    section = report(cases, steps, updates,
                     1 if opts.quick else opts.repeat)
    print("\n" + section)
    if not opts.quick:
        write(section)


def report(cases, steps, updates, repeat):
    import datetime
    day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    cell = lambda r: f"{r['time'] * 1e6:.0f}" if "time" in r else "n/a"
    lines = ["<!-- train-step: written by bench/train_step.py -->",
             "## Training step, host", "",
             f"{day}, {os.cpu_count()} cores. One train step (forward, "
             "backward, Adam update of every weight; ResNeSt: SGD with "
             "momentum and weight decay) from the same weights and "
             "batch; median per-step time in µs (5 rounds × median over 0.3 s, "
             f"each peer in its own process; the best of {repeat} such processes "
             "per peer, run in turn with the other peers', since single processes "
             "on this shared machine vary by up to 2×). Ratio: peer time / Grove "
             "time (> 1: "
             "Grove faster). Peak RSS of each process, interpreter and libraries "
             "included. The first step's loss agrees across peers (a check "
             "that they train the same thing).", "",
             "| model | batch | Grove | PyTorch 1 t | PyTorch 2 t | JAX jit | vs "
             "PyTorch (best) | vs JAX | first loss (Grove / torch / JAX) | peak "
             "RSS MB (Grove / torch 2 t / JAX) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for model, b in cases:
        r = {p: steps[(model, b, p)] for p in PEERS}
        g = r["grove"].get("time")
        best_torch = min((r[p]["time"] for p in ("torch1", "torch2")
                          if "time" in r[p]), default=None)
        ratio = lambda t: f"{t / g:.2f}×" if g and t else "n/a"
        loss = " / ".join(f"{r[p]['first_loss']:.4f}" if "time" in r[p]
                          else "n/a" for p in ("grove", "torch2", "jax"))
        rss = " / ".join(f"{r[p]['rss_mb']:.0f}" if "time" in r[p] else "n/a"
                         for p in ("grove", "torch2", "jax"))
        lines.append(f"| {model} | {b} | {cell(r['grove'])} | {cell(r['torch1'])}"
                     f" | {cell(r['torch2'])} | {cell(r['jax'])} | "
                     f"{ratio(best_torch)} | {ratio(r['jax'].get('time'))} | "
                     f"{loss} | {rss} |")
    if updates:
        g = updates[("adam", "grove")]
        stream_gbs = 12 * g["floats"] / g["stream"] / 1e9 if "stream" in g else 0
        lines += ["", "The optimizer update alone over ResNeSt-50's trainable "
                  f"parameters (263 tensors, {g.get('floats', 0) / 1e6:.1f}M "
                  "floats): ms per update and GB/s at 28 bytes a float (read p, g, "
                  "m, v; write p, m, v), against Grove's in-place stream p += g "
                  f"over as many floats in the same run: {stream_gbs:.1f} GB/s "
                  "(12 bytes a float, 2 threads).", "",
                  "| update | peer | ms | GB/s | share of the stream | bytes "
                  "a float moved | share of the stream at those |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for (kind, peer), r in updates.items():
            if "time" not in r:
                lines.append(f"| {kind} | {peer} | n/a ({r['error']}) | | |")
                continue
            gbs = 28 * r["floats"] / r["time"] / 1e9
            share = f"{gbs / stream_gbs:.0%}" if stream_gbs else "n/a"
            moved = GROVE_BYTES_MOVED[kind] if peer == "grove" else None
            at_moved = (f"{moved * r['floats'] / r['time'] / 1e9 / stream_gbs:.0%}"
                        if moved and stream_gbs else "n/a")
            lines.append(f"| {kind} | {peer} | {r['time'] * 1e3:.1f} | "
                         f"{gbs:.1f} | {share} | {moved or 'n/a'} | "
                         f"{at_moved} |")
    lines.append("<!-- /train-step -->")
    return "\n".join(lines)


def write(section):
    perf = ROOT / "docs" / "perf.md"
    text = perf.read_text()
    pattern = re.compile(r"<!-- train-step:.*?<!-- /train-step -->", re.S)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else \
        text.rstrip() + "\n\n" + section + "\n"
    perf.write_text(text)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker_main(sys.argv[2:])
    else:
        main()
