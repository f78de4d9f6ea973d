# REQUIRES: mpi
# RUN: %python %s
# Data-parallel train steps (grove-insert-collectives, docs/distributed.md)
# on 2-4 ranks under mpirun --oversubscribe, each rank a process with its
# own context and communicator (Inputs/distributed_rank.py), against
# independent references on fresh random inputs:
#  * dense: an MLP trained with Adam for 10 steps on N ranks, each with its
#    share of the batch, ends where the same model compiled without
#    --data-parallel ends after 10 single-process steps on the whole batch:
#    every weight and Adam moment within 1e-5 of its tensor's scale; the
#    payload each rank sent is the gradients' bytes, every step. Adam's
#    epsilon is 1e-3: at the default 1e-8 an element whose gradient nearly
#    cancels moves by about lr whatever its size, so its sign and size are
#    the rounding of the sum, which differs with the ranks' summation order;
#  * GRBS with error feedback, CSER (error reset, C1/C2 every H steps) and
#    Local AdaAlter (also after a fully synchronous warm-up, as its authors'
#    --warmup-steps): a linear loss sum(p * x) makes each rank's gradient its
#    input x, so the params after SGD (lr 1) or AdaAlter steps show what the
#    collectives computed; compared with numpy transcriptions of the
#    algorithms (grove_dist.py's block draw): 1e-5 relative. GRBS at 1/32
#    moves at most 1/32 of the dense bytes;
#  * skip_nonfinite with top-k + EF: a NaN on one rank skips the step on
#    all and never enters that rank's residual (numpy model, 1e-5);
#  * faults: a rank killed (SIGKILL) or stopped (SIGSTOP) mid-training makes
#    every other rank's step fail with GROVE_ERROR_PEER naming it, within
#    the communicator's timeout + 10 s; their next step fails at once with
#    the same cause, and destroying the communicator does not wait.
import os
import tempfile

import numpy as np
from grove_dist import (GROVE_ERROR_PEER, grbs_block, launch, random_block)
from grove_testing import Model, assert_close, rng

HERE = os.path.dirname(os.path.abspath(__file__))
RANK_SCRIPT = os.path.join(HERE, "Inputs", "distributed_rank.py")
R = rng()

MLP = """
module @mlp {
  grove.param @fc1.weight : tensor<32x64xf32>
  grove.param @fc1.bias : tensor<32xf32>
  grove.param @fc2.weight : tensor<10x32xf32>
  grove.param @fc2.bias : tensor<10xf32>
  func.func @train_step(%x: tensor<?x64xf32>, %y: tensor<?xi32>) -> tensor<f32> {
    %loss, %g:4 = grove.value_and_grad [@fc1.weight, @fc1.bias, @fc2.weight, @fc2.bias] {
      %w1 = grove.get_param @fc1.weight : tensor<32x64xf32>
      %b1 = grove.get_param @fc1.bias : tensor<32xf32>
      %w2 = grove.get_param @fc2.weight : tensor<10x32xf32>
      %b2 = grove.get_param @fc2.bias : tensor<10xf32>
      %h = grove.matmul %x, %w1 {transpose_rhs} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
      %hb = grove.add %h, %b1 : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
      %a = grove.relu %hb : tensor<?x32xf32>
      %o = grove.matmul %a, %w2 {transpose_rhs} : (tensor<?x32xf32>, tensor<10x32xf32>) -> tensor<?x10xf32>
      %z = grove.add %o, %b2 : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
      %l = grove.softmax_cross_entropy %z, %y : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
      grove.yield %l : tensor<f32>
    } : tensor<f32>, tensor<32x64xf32>, tensor<32xf32>, tensor<10x32xf32>, tensor<10xf32>
    grove.adam [@fc1.weight, @fc1.bias, @fc2.weight, @fc2.bias] (%g#0, %g#1, %g#2, %g#3) {lr = 1.0e-02 : f64, epsilon = 1.0e-03 : f64}
        : tensor<32x64xf32>, tensor<32xf32>, tensor<10x32xf32>, tensor<10xf32>
    return %loss : tensor<f32>
  }
}
"""
MLP_WEIGHTS = {"fc1.weight": (32, 64), "fc1.bias": (32,),
               "fc2.weight": (10, 32), "fc2.bias": (10,)}
MLP_STATE = [n + s for n in MLP_WEIGHTS for s in ("", ".adam.m", ".adam.v")]


def linear(optimizer, shapes):
    """loss = sum_i sum(p_i * x_i): the gradient of p_i is x_i."""
    params = "\n".join(f"  grove.param @p{i} : tensor<{t}xf32>"
                       for i, t in enumerate(shapes))
    args = ", ".join(f"%x{i}: tensor<{t}xf32>" for i, t in enumerate(shapes))
    body = []
    for i, t in enumerate(shapes):
        body.append(f"      %w{i} = grove.get_param @p{i} : tensor<{t}xf32>")
        body.append(f"      %m{i} = grove.mul %w{i}, %x{i} : (tensor<{t}xf32>, "
                    f"tensor<{t}xf32>) -> tensor<{t}xf32>")
        axes = ", ".join(str(a) for a in range(t.count("x") + 1))
        body.append(f"      %s{i} = grove.reduce_sum %m{i} {{axes = array<i64: "
                    f"{axes}>}} : tensor<{t}xf32> -> tensor<f32>")
    total = "%s0"
    for i in range(1, len(shapes)):
        body.append(f"      %t{i} = grove.add {total}, %s{i} : (tensor<f32>, "
                    f"tensor<f32>) -> tensor<f32>")
        total = f"%t{i}"
    names = ", ".join(f"@p{i}" for i in range(len(shapes)))
    grads = ", ".join(f"%g#{i}" for i in range(len(shapes)))
    types = ", ".join(f"tensor<{t}xf32>" for t in shapes)
    body = "\n".join(body)
    return f"""
module @lin {{
{params}
  func.func @train_step({args}) -> tensor<f32> {{
    %loss, %g:{len(shapes)} = grove.value_and_grad [{names}] {{
{body}
      grove.yield {total} : tensor<f32>
    }} : tensor<f32>, {types}
    {optimizer.format(names=names, grads=grads, types=types)}
    return %loss : tensor<f32>
  }}
}}
"""


SGD = "grove.sgd [{names}] ({grads}) {{lr = 1.0 : f64}} : {types}"
ADAALTER = ("grove.adaalter [{names}] ({grads}) {{lr = 0.01 : f64, "
            "period = 2}} : {types}")


def build(source, name, flags, workdir):
    Model(source, name=name, workdir=workdir, grovec_flags=flags)
    return os.path.join(workdir, "lib%s.so" % name)


def run_ranks(workdir, scenario, model, ranks, steps, inputs, weights,
              read_names, timeout=60.0, job_timeout=300, watch=None,
              **extra):
    """Writes the inputs (per step, per rank), runs the scenario, returns the
    ranks' results. `extra`: num_outputs, load and save (checkpoints)."""
    data = {"model": model, "steps": steps, "timeout": timeout, **extra,
            "num_inputs": len(inputs),
            "weight_names": np.array(list(weights)),
            "read_names": np.array(read_names)}
    for i, x in enumerate(inputs):
        data["in%d" % i] = x
    for name, w in weights.items():
        data["w_" + name] = w
    np.savez(os.path.join(workdir, "inputs.npz"), **data)
    for r in range(ranks):
        path = os.path.join(workdir, "rank%d.npz" % r)
        if os.path.exists(path):
            os.remove(path)
    code, out, seconds = launch(RANK_SCRIPT, [scenario, workdir], ranks,
                                job_timeout, watch=watch)
    results = {}
    for r in range(ranks):
        path = os.path.join(workdir, "rank%d.npz" % r)
        if os.path.exists(path):
            results[r] = dict(np.load(path))
    return results, out, code, seconds


def check_dense(workdir, ranks):
    steps, per_rank = 10, 16
    so = build(MLP, "mlp", ["--data-parallel", "--bucket-bytes=4096"], workdir)
    # Buckets start early and are waited for late (grove-overlap-collectives):
    # the equality below is that path's.
    with open(so, "rb") as f:
        assert b"grove_rt_all_reduce_start_f32" in f.read(), so
    reference = Model(MLP, name="mlpref", workdir=workdir)
    weights = {n: (R.standard_normal(s) * 0.2).astype(np.float32)
               for n, s in MLP_WEIGHTS.items()}
    x = R.standard_normal((steps, ranks, per_rank, 64)).astype(np.float32)
    y = R.integers(0, 10, (steps, ranks, per_rank)).astype(np.int32)
    results, out, _, _ = run_ranks(workdir, "train", "mlp", ranks, steps,
                                   [x, y], weights, MLP_STATE)
    assert len(results) == ranks and all("error" not in r for r in results.values()), out
    for n, w in weights.items():
        reference.set_weight(n, w)
    for s in range(steps):
        reference.call("train_step", x[s].reshape(-1, 64), y[s].reshape(-1))
    worst = 0.0
    for name in MLP_STATE:
        expected = reference.get_weight(name)
        scale = float(np.abs(expected).max())
        for r, res in results.items():
            worst = max(worst, assert_close(res["p_" + name], expected,
                                            rtol=0, atol=1e-5 * scale,
                                            what=f"{name} on rank {r}") / scale)
    dense = sum(int(np.prod(s)) * 4 for s in MLP_WEIGHTS.values())
    for r, res in results.items():
        assert int(res["payload"]) == steps * dense, \
            f"rank {r} sent {res['payload']} bytes, expected {steps * dense}"
    print(f"dense, {ranks} ranks: 10 Adam steps equal one process on "
          f"{ranks}x the batch, worst {worst:.2e} of scale; "
          f"{dense} bytes a step a rank")


def check_overlap_exact(workdir, compressor, ranks=3, steps=5, per_rank=8):
    """Overlapped collectives (grove-overlap-collectives: all-reduces, and
    top-k's and sign's all-gathers, started early and waited for late)
    compute exactly what blocking ones do: the same state, bit for bit."""
    flags = ["--data-parallel", "--bucket-bytes=4096",
             f"--compressor={compressor}"]
    if compressor != "none":
        flags += ["--compress-error=feedback", "--compress-ratio=16"]
    started = {"none": b"grove_rt_all_reduce_start_f32",
               "topk": b"grove_rt_all_gather_start_f32",
               "sign": b"grove_rt_all_gather_start_i32"}[compressor]
    weights = {n: (R.standard_normal(s) * 0.2).astype(np.float32)
               for n, s in MLP_WEIGHTS.items()}
    x = R.standard_normal((steps, ranks, per_rank, 64)).astype(np.float32)
    y = R.integers(0, 10, (steps, ranks, per_rank)).astype(np.int32)
    state = {}
    for overlap in (True, False):
        name = f"ov{compressor}{int(overlap)}"
        so = build(MLP, name, flags + [f"--overlap-collectives={overlap}"],
                   workdir)
        with open(so, "rb") as f:
            assert (started in f.read()) == overlap, (so, started)
        results, out, _, _ = run_ranks(workdir, "train", name, ranks, steps,
                                       [x, y], weights, MLP_STATE)
        assert len(results) == ranks and \
            all("error" not in r for r in results.values()), out
        state[overlap] = results
    for r in range(ranks):
        for n in MLP_STATE:
            a, b = state[True][r]["p_" + n], state[False][r]["p_" + n]
            assert np.array_equal(a, b), \
                f"{compressor}: {n} on rank {r} differs when overlapped"
    print(f"{compressor}, {ranks} ranks: overlapped collectives give the "
          f"blocking ones' state bit for bit over {steps} Adam steps")


def check_grbs_feedback(workdir, ranks):
    steps, size, ratio = 6, 1000, 32
    build(linear(SGD, ["1000"]), "grbs",
          ["--data-parallel", "--compressor=grbs", "--compress-error=feedback",
           f"--compress-ratio={ratio}", "--collective-seed=11"], workdir)
    p0 = R.standard_normal(size).astype(np.float32)
    x = R.standard_normal((steps, ranks, size)).astype(np.float32)
    results, out, _, _ = run_ranks(
        workdir, "train", "grbs", ranks, steps, [x], {"p0": p0},
        ["p0", "collectives.bucket0.residual", "collectives.step"])
    assert len(results) == ranks, out
    k = grbs_block(size, ratio)
    p = p0.astype(np.float64)
    residual = np.zeros((ranks, size))
    for s in range(steps):
        e = x[s].astype(np.float64) + residual
        off = random_block(s, 11, 0, size, k)
        p[off:off + k] -= e[:, off:off + k].mean(axis=0)
        residual = e.copy()
        residual[:, off:off + k] = 0
    for r, res in results.items():
        assert_close(res["p_p0"], p, rtol=1e-5, atol=1e-5, what=f"p rank {r}")
        assert_close(res["p_collectives.bucket0.residual"], residual[r],
                     rtol=1e-5, atol=1e-5, what=f"residual rank {r}")
        assert int(res["p_collectives.step"]) == steps
        assert int(res["payload"]) == steps * k * 4 <= steps * size * 4 // 32, \
            f"GRBS payload {res['payload']} (dense {steps * size * 4})"
    print(f"GRBS 1/{ratio} + error feedback, {ranks} ranks: params and "
          f"residuals equal numpy's over {steps} steps; {k * 4} of "
          f"{size * 4} dense bytes a step")


def to_bf16(x):
    """f32 -> bf16 (nearest even), back in f32: numpy has no bf16."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def compressed_mean(kind, e, ratio, step=0, seed=0):
    """numpy models of the compressors (docs/distributed.md): the mean over
    ranks (rows of e) of what each sent, decompressed, and what each sent.
    Returns (averaged, local, payload bytes a rank)."""
    ranks, size = e.shape
    if kind in ("fp16", "bf16"):
        half = (lambda v: v.astype(np.float16).astype(np.float32)) \
            if kind == "fp16" else to_bf16
        # Each rank sends e / n in half precision; the runtime sums pairs
        # in f32, rounding each partial sum (two ranks: one rounding).
        sent = half((e / ranks).astype(np.float32))
        assert ranks == 2
        total = half(sent[0] + sent[1])
        return np.stack([total] * ranks), sent * ranks, size * 2
    if kind == "randk":
        # grove.random_indices: (o + j s) mod size, s nearest 0.618 size
        # and coprime to it, o the block draw's start with block 1.
        from math import gcd
        k = grbs_block(size, ratio)
        mid = int(0.6180339887 * size + 0.5)
        stride = next(v for d in range(size + 1) for v in (mid - d, mid + d)
                      if 1 <= v < max(size, 2) and gcd(v, size) == 1)
        start = random_block(step, seed, 0, size, 1)
        idx = (start + np.arange(k) * stride) % size
        assert len(set(idx.tolist())) == k
        local = np.zeros_like(e)
        local[:, idx] = e[:, idx]
        return np.stack([local.mean(axis=0)] * ranks), local, k * 4
    if kind == "topk":
        k = grbs_block(size, ratio)
        local = np.zeros_like(e)
        for r in range(ranks):
            top = np.argsort(-np.abs(e[r]), kind="stable")[:k]
            local[r, top] = e[r, top]
        return np.stack([local.mean(axis=0)] * ranks), local, k * 8
    if kind == "sign":
        scale = np.abs(e).mean(axis=1, keepdims=True)
        local = np.where(e < 0, -scale, scale)
        return (np.stack([local.mean(axis=0)] * ranks), local,
                4 * ((size + 31) // 32) + 4)
    if kind == "int8":
        # One scale a rank, max |e| / 127, and codes floor(e / s + 1/2), in
        # the f32 the compiled code computes them in.
        e32 = e.astype(np.float32)
        scale = np.abs(e32).max(axis=1, keepdims=True) / np.float32(127)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.floor(e32 / scale + np.float32(0.5))
        q = np.where(np.isnan(q), 0, np.clip(q, -127, 127)).astype(np.float32)
        local = (q * scale).astype(np.float64)
        return (np.stack([local.mean(axis=0)] * ranks), local,
                4 * ((size + 3) // 4) + 4)
    raise ValueError(kind)


def check_compressor(workdir, kind, ranks, feedback, steps=5, size=1000,
                     ratio=32):
    flags = ["--data-parallel", f"--compressor={kind}",
             f"--compress-ratio={ratio}", "--collective-seed=21"]
    if feedback:
        flags.append("--compress-error=feedback")
    name = f"c{kind}{int(feedback)}"
    build(linear(SGD, ["1000"]), name, flags, workdir)
    p0 = R.standard_normal(size).astype(np.float32)
    x = R.standard_normal((steps, ranks, size)).astype(np.float32)
    reads = ["p0"] + (["collectives.bucket0.residual"] if feedback else [])
    results, out, _, _ = run_ranks(workdir, "train", name, ranks, steps, [x],
                                   {"p0": p0}, reads)
    assert len(results) == ranks, out
    p = np.stack([p0.astype(np.float64)] * ranks)
    residual = np.zeros((ranks, size))
    # Half-precision rounding is a step function: e is computed in the f32
    # the compiled code uses, or a value near a tie rounds the other way.
    work = np.float32 if kind in ("fp16", "bf16", "int8") else np.float64
    for s in range(steps):
        e = (x[s].astype(work) + residual.astype(work)).astype(np.float64)
        averaged, local, payload = compressed_mean(kind, e, ratio, s, 21)
        p -= averaged
        if feedback:
            residual = e - local
    tol = 1e-5
    for r, res in results.items():
        assert_close(res["p_p0"], p[r], rtol=tol, atol=tol,
                     what=f"{kind} p rank {r}")
        if feedback:
            assert_close(res["p_collectives.bucket0.residual"], residual[r],
                         rtol=tol, atol=tol, what=f"{kind} residual rank {r}")
        assert int(res["payload"]) == steps * payload, \
            (kind, int(res["payload"]), steps * payload)
    print(f"{kind}{' + error feedback' if feedback else ''}, {ranks} ranks: "
          f"params{' and residuals' if feedback else ''} equal numpy's over "
          f"{steps} steps; {payload} of {size * 4} dense bytes a step")


def check_nonfinite_residual(workdir, ranks=2, steps=5, size=1000, ratio=32):
    """With skip_nonfinite, a NaN in one rank's gradient skips that step on
    every rank (top-k sends it: NaN ranks first). A skipped step changes no
    state, so every rank's error-feedback residual stays as it was (the
    NaN never enters one), and the later steps are taken."""
    sgd = ("grove.sgd [{names}] ({grads}) {{lr = 1.0 : f64, "
           "skip_nonfinite}} : {types}")
    build(linear(sgd, [str(size)]), "nonfinite",
          ["--data-parallel", "--compressor=topk", f"--compress-ratio={ratio}",
           "--compress-error=feedback"], workdir)
    p0 = R.standard_normal(size).astype(np.float32)
    x = R.standard_normal((steps, ranks, size)).astype(np.float32)
    x[2, ranks - 1, 7] = np.nan
    reads = ["p0", "collectives.bucket0.residual", "sgd.skipped"]
    results, out, _, _ = run_ranks(workdir, "train", "nonfinite", ranks,
                                   steps, [x], {"p0": p0}, reads)
    assert len(results) == ranks, out
    p, residual = p0.astype(np.float64), np.zeros((ranks, size))
    k = grbs_block(size, ratio)
    for s in range(steps):
        e = x[s].astype(np.float64) + residual
        local = np.zeros_like(e)
        for r in range(ranks):
            magnitude = np.where(np.isnan(e[r]), np.inf, np.abs(e[r]))
            top = np.argsort(-magnitude, kind="stable")[:k]
            local[r, top] = e[r, top]
        averaged = local.mean(axis=0)
        if not np.isfinite(averaged).all():
            continue  # skipped: no state changes
        p = p - averaged
        for r in range(ranks):
            if np.isfinite(e[r]).all():
                residual[r] = e[r] - local[r]
    for r, res in results.items():
        assert_close(res["p_p0"], p, rtol=1e-5, atol=1e-5,
                     what=f"nonfinite p rank {r}")
        assert_close(res["p_collectives.bucket0.residual"], residual[r],
                     rtol=1e-5, atol=1e-5, what=f"nonfinite residual rank {r}")
        assert float(res["p_sgd.skipped"]) == 1.0, res["p_sgd.skipped"]
    print(f"skip_nonfinite + top-k EF, {ranks} ranks: a NaN on rank "
          f"{ranks - 1} at step 2 skips that step everywhere, residuals "
          f"included; params and residuals equal numpy's over {steps} steps")


def random_uniform(shape, seed, stream):
    """grove.random_uniform (GroveCollectiveOps.td)."""
    from grove_dist import splitmix64
    key = (seed ^ (stream << 32)) & ((1 << 64) - 1)
    n = int(np.prod(shape))
    u = [(splitmix64(key ^ i) >> 11) * 2.0 ** -53 for i in range(n)]
    return (2 * np.array(u) - 1).reshape(shape)


def gram_schmidt(p, eps=1e-8):
    q = p.copy()
    for c in range(q.shape[1]):
        for j in range(c):
            q[:, c] -= (q[:, j] @ q[:, c]) * q[:, j]
        q[:, c] /= np.linalg.norm(q[:, c]) + eps
    return q


def check_powersgd(workdir, ranks, rank=2, steps=4, shape=(16, 12)):
    """PowerSGD with error feedback on one 16 x 12 gradient: P = M Q
    averaged and orthogonalised, Q = M^T P averaged (and kept for the next
    step), the average P Q^T; numpy in float64, 1e-4 relative."""
    build(linear(SGD, ["16x12"]), "psgd",
          ["--data-parallel", "--compressor=powersgd",
           f"--powersgd-rank={rank}", "--compress-error=feedback",
           "--collective-seed=3"], workdir)
    p0 = R.standard_normal(shape).astype(np.float32)
    x = R.standard_normal((steps, ranks) + shape).astype(np.float32)
    results, out, _, _ = run_ranks(workdir, "train", "psgd", ranks, steps,
                                   [x], {"p0": p0}, ["p0"])
    assert len(results) == ranks, out
    p = p0.astype(np.float64)
    residual = np.zeros((ranks,) + shape)
    q = random_uniform((shape[1], rank), 3, 0)
    for s in range(steps):
        e = x[s].astype(np.float64) + residual
        pm = gram_schmidt(np.mean([m @ q for m in e], axis=0))
        q = np.mean([m.T @ pm for m in e], axis=0)
        approx = pm @ q.T
        p -= approx
        residual = e - approx
    for r, res in results.items():
        assert_close(res["p_p0"], p, rtol=1e-4, atol=1e-4,
                     what=f"powersgd p rank {r}")
    sent = (shape[0] + shape[1]) * rank * 4
    for r, res in results.items():
        assert int(res["payload"]) == steps * sent, (res["payload"], sent)
    print(f"PowerSGD rank {rank} + error feedback, {ranks} ranks: params "
          f"equal numpy's over {steps} steps; {sent} of "
          f"{shape[0] * shape[1] * 4} dense bytes a step")


def check_cser(workdir, ranks):
    steps, shapes, c1, c2, period = 6, [(1000,), (8, 12)], 8, 2, 2
    build(linear(SGD, ["1000", "8x12"]), "cser",
          ["--data-parallel", "--compressor=grbs", "--compress-error=reset",
           f"--compress-ratio={c1}", f"--period-ratio={c2}",
           f"--sync-period={period}", "--collective-seed=5"], workdir)
    p0 = [R.standard_normal(s).astype(np.float32) for s in shapes]
    xs = [R.standard_normal((steps, ranks) + s).astype(np.float32)
          for s in shapes]
    results, out, _, _ = run_ranks(workdir, "train", "cser", ranks, steps, xs,
                                   {"p0": p0[0], "p1": p0[1]}, ["p0", "p1"])
    assert len(results) == ranks, out
    # Every rank's model, flat; local SGD steps, then the step's blocks
    # averaged (C2's on every period-th step).
    models = [np.stack([p.astype(np.float64).ravel()] * ranks) for p in p0]
    sent = 0
    for s in range(steps):
        ratio = c2 if (s + 1) % period == 0 else c1
        for i, m in enumerate(models):
            m -= xs[i][s].reshape(ranks, -1)
            k = grbs_block(m.shape[1], ratio)
            off = random_block(s, 5, i, m.shape[1], k)
            m[:, off:off + k] = m[:, off:off + k].mean(axis=0)
            sent += k * 4
    for r, res in results.items():
        for i, m in enumerate(models):
            assert_close(res["p_p%d" % i].ravel(), m[r], rtol=1e-5, atol=1e-5,
                         what=f"CSER p{i} rank {r}")
        assert int(res["payload"]) == sent, (res["payload"], sent)
    print(f"CSER (C1 1/{c1}, C2 1/{c2} every {period}), {ranks} ranks: "
          f"models equal numpy's over {steps} steps")


def check_local_adaalter(workdir, ranks, warmup=0):
    """Local AdaAlter (H = 2); with `warmup` W, the authors' --warmup-steps
    (large_word_language_model_local_hvd.py with distributed_hvd_local_sgd.py):
    the first W steps average the gradients and the denominator is the
    accumulator before each step (period 1); then local steps, the models
    and accumulators averaged every H steps counted from W."""
    shapes, period, lr, eps = [(1000,), (8, 12)], 2, 0.01, 1e-7
    # With a warm-up: W steps, two periods and one local step, so the ranks
    # end apart.
    steps = warmup + 2 * period + 1 if warmup else 6
    optimizer, name = ADAALTER, "ada"
    if warmup:
        optimizer = ADAALTER.replace(
            "period = 2", f"period = 2, sync_warmup_steps = {warmup}")
        name = f"adawarm{warmup}"
    build(linear(optimizer, ["1000", "8x12"]), name, ["--data-parallel"],
          workdir)
    p0 = [R.standard_normal(s).astype(np.float32) for s in shapes]
    xs = [R.standard_normal((steps, ranks) + s).astype(np.float32) * 0.1
          for s in shapes]
    names = ["p0", "p1", "p0.adaalter.accumulator",
             "p1.adaalter.accumulator", "p0.adaalter.denominator",
             "p1.adaalter.denominator"]
    results, out, _, _ = run_ranks(workdir, "train", name, ranks, steps, xs,
                                   {"p0": p0[0], "p1": p0[1]}, names)
    assert len(results) == ranks, out
    # Local AdaAlter: x -= lr g / sqrt(B + eps); B' += g^2; every H steps the
    # models and B' are averaged and B = B'. During the warm-up g is the
    # ranks' mean (the trainer's allreduce_ of the gradients) and B = B'
    # after every step; at W + 1 the trainer's init_states() keeps B and
    # starts B' from it, and its counter syncs at W + H, W + 2H, ...
    x = [np.stack([p.astype(np.float64).ravel()] * ranks) for p in p0]
    acc = [np.zeros_like(v) for v in x]
    den = [np.zeros_like(v) for v in x]
    for s in range(steps):
        t = s + 1
        for i in range(len(x)):
            g = xs[i][s].reshape(ranks, -1).astype(np.float64)
            if t <= warmup:
                g = np.broadcast_to(g.mean(axis=0), g.shape)
            x[i] -= lr * g / np.sqrt(den[i] + eps)
            acc[i] += g * g
            if t <= warmup:
                den[i][:] = acc[i]
            elif (t - warmup) % period == 0:
                x[i][:] = x[i].mean(axis=0)
                acc[i][:] = acc[i].mean(axis=0)
                den[i][:] = acc[i]
    for r, res in results.items():
        for i in range(len(x)):
            for name, want in ((f"p{i}", x[i]),
                               (f"p{i}.adaalter.accumulator", acc[i]),
                               (f"p{i}.adaalter.denominator", den[i])):
                assert_close(res["p_" + name].ravel(), want[r], rtol=1e-5,
                             atol=1e-5, what=f"{name} rank {r}")
    # The bytes: the gradients during the warm-up, the models and
    # accumulators where t >= W and H divides t - W (Grove also averages at
    # t = W, where the ranks already agree: the switch).
    grads = sum(int(np.prod(s)) for s in shapes) * 4
    syncs = sum(1 for t in range(1, steps + 1)
                if t >= warmup and (t - warmup) % period == 0)
    sent = min(warmup, steps) * grads + syncs * 2 * grads
    for r, res in results.items():
        assert int(res["payload"]) == sent, (r, int(res["payload"]), sent)
    print(f"Local AdaAlter (H = {period}"
          f"{f', {warmup} synchronous steps first' if warmup else ''}), "
          f"{ranks} ranks: params, accumulators and denominators equal "
          f"numpy's over {steps} steps; {sent} bytes a rank")


ELASTIC = """
module @elastic {
  grove.param @p : tensor<4xf32>
  func.func @train_step(%x: tensor<4xf32>) -> (tensor<f32>, tensor<f32>) {
    %loss, %g = grove.value_and_grad [@p] {
      %w = grove.get_param @p : tensor<4xf32>
      %m = grove.mul %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %s = grove.reduce_sum %m {axes = array<i64: 0>} : tensor<4xf32> -> tensor<f32>
      grove.yield %s : tensor<f32>
    } : tensor<f32>, tensor<4xf32>
    %base = grove.constant dense<0.1> : tensor<f32>
    %lr = grove.elastic_lr %base {base_world = 1, ramp_steps = RAMP} : tensor<f32>
    grove.sgd [@p] (%g) lr(%lr : tensor<f32>) : tensor<4xf32>
    return %loss, %lr : tensor<f32>, tensor<f32>
  }
}
"""


def check_elastic(workdir, ramp):
    """2 ranks for 3 steps, checkpoint, then 3 ranks from it: the rate is
    0.1 x 2 and then ramps to 0.1 x 3 over `ramp` steps (jumps if 0); the
    params move by the averaged gradient times that rate."""
    name = f"elastic{ramp}"
    build(ELASTIC.replace("RAMP", str(ramp)), name, ["--data-parallel"],
          workdir)
    p0 = R.standard_normal(4).astype(np.float32)
    ck = os.path.join(workdir, name + ".safetensors")
    lrs, p = [], p0.astype(np.float64)
    for ranks, steps, extra in ((2, 3, {"save": ck}), (3, 6, {"load": ck})):
        x = R.standard_normal((steps, ranks, 4)).astype(np.float32)
        results, out, _, _ = run_ranks(workdir, "train", name, ranks, steps,
                                       [x], {"p": p0}, ["p"], num_outputs=2,
                                       **extra)
        assert len(results) == ranks, out
        got = [float(l[1]) for l in results[0]["losses"]]
        lrs += got
        for s in range(steps):
            p -= got[s] * x[s].astype(np.float64).mean(axis=0)
        for r, res in results.items():
            assert_close(res["p_p"], p, rtol=1e-5, atol=1e-6,
                         what=f"elastic p rank {r}")
    worlds = [2, 2, 2] + [2 + min(1.0, s / ramp) if ramp else 3.0
                          for s in range(6)]
    assert_close(np.array(lrs), 0.1 * np.array(worlds), rtol=1e-6, atol=0,
                 what=f"elastic rates, ramp {ramp}")
    print(f"elastic, ramp {ramp}: 2 ranks then 3 from the checkpoint, rates "
          + " ".join(f"{v:.4g}" for v in lrs))


def check_fault(workdir, scenario, ranks=3, timeout=5.0):
    steps, per_rank = 6, 8
    weights = {n: (R.standard_normal(s) * 0.2).astype(np.float32)
               for n, s in MLP_WEIGHTS.items()}
    x = R.standard_normal((steps, ranks, per_rank, 64)).astype(np.float32)
    y = R.integers(0, 10, (steps, ranks, per_rank)).astype(np.int32)
    survivors = list(range(ranks - 1))

    def end_stopped_victim():
        # Once every survivor has reported, the stopped rank would keep
        # mpirun waiting: end it (not before, or they would see it exited).
        victim = os.path.join(workdir, "victim.pid")
        if scenario == "stall" and os.path.exists(victim) and all(
                os.path.exists(os.path.join(workdir, "rank%d.npz" % r))
                for r in survivors):
            with open(victim) as f:
                try:
                    os.kill(int(f.read()), 9)
                except (ProcessLookupError, ValueError):
                    pass

    if os.path.exists(os.path.join(workdir, "victim.pid")):
        os.remove(os.path.join(workdir, "victim.pid"))
    results, out, _, seconds = run_ranks(
        workdir, scenario, "mlp", ranks, steps, [x, y], weights, MLP_STATE,
        timeout=timeout, job_timeout=120, watch=end_stopped_victim)
    # The failed step was abandoned before its state writes: the survivors
    # hold the model of the 3 steps all ranks took, one process on 3x the
    # batch.
    reference = Model(MLP, name="mlpref", workdir=workdir)
    for n, w in weights.items():
        reference.set_weight(n, w)
    for s in range(3):
        reference.call("train_step", x[s].reshape(-1, 64), y[s].reshape(-1))
    with open(os.path.join(workdir, "victim.pid")) as f:
        victim = int(f.read())
    state = "exited" if scenario == "kill" else "stopped"
    for r in survivors:
        res = results.get(r)
        assert res is not None and "error" in res, \
            f"rank {r} reported no error:\n{out}"
        message = str(res["error"])
        assert int(res["error_status"]) == GROVE_ERROR_PEER, message
        assert f"rank {ranks - 1} (pid {victim}) has {state}" in message, \
            message
        assert int(res["step"]) == 3, message
        assert float(res["seconds"]) <= timeout + 10, res["seconds"]
        again = str(res["again"])
        assert "the communicator failed before: rank" in again, again
        assert float(res["again_seconds"]) < 1.0, res["again_seconds"]
        for name in MLP_STATE:
            expected = reference.get_weight(name)
            assert_close(res["p_" + name], expected, rtol=0,
                         atol=1e-5 * float(np.abs(expected).max()),
                         what=f"{scenario}: {name} on rank {r} after the "
                              "failed step")
    print(f"{scenario}: rank {ranks - 1} {state} at step 3; ranks "
          f"{survivors} failed with GROVE_ERROR_PEER naming it after "
          f"{max(float(results[r]['seconds']) for r in survivors):.1f} s "
          f"(timeout {timeout} s), their state that of the 3 steps before: "
          f"{results[0]['error']}")


def main():
    workdir = tempfile.mkdtemp(prefix="grove-dist-")
    check_dense(workdir, 2)
    check_dense(workdir, 4)
    for compressor in ("none", "topk", "sign"):
        check_overlap_exact(workdir, compressor)
    check_grbs_feedback(workdir, 3)
    check_nonfinite_residual(workdir)
    check_compressor(workdir, "fp16", 2, feedback=False)
    check_compressor(workdir, "bf16", 2, feedback=True)
    check_compressor(workdir, "topk", 3, feedback=True)
    check_compressor(workdir, "topk", 2, feedback=False)
    check_compressor(workdir, "sign", 3, feedback=True)
    check_compressor(workdir, "randk", 3, feedback=True)
    check_compressor(workdir, "int8", 3, feedback=True)
    check_compressor(workdir, "int8", 2, feedback=False)
    check_powersgd(workdir, 3)
    check_cser(workdir, 2)
    check_local_adaalter(workdir, 2)
    check_local_adaalter(workdir, 3, warmup=3)
    check_elastic(workdir, 4)
    check_elastic(workdir, 0)
    check_fault(workdir, "kill")
    check_fault(workdir, "stall")


if __name__ == "__main__":
    main()
