# REQUIRES: mpi
# RUN: %python %s
# Ranks that disagree fail together, at once, with a message naming what
# differs (docs/distributed.md, "Agreement"), on 3 ranks under mpirun:
#  * rank 2 runs a wider model, or the same model compiled with another
#    compressor (fp16): Open MPI used to end the job (MPI_ERR_TRUNCATE
#    through its fatal handler, or a crash in the f16 sum); now every
#    rank's call fails with GROVE_ERROR_PEER naming the differing weight
#    or option, long before the communicator's deadline;
#  * rank 2 feeds a smaller batch: every rank fails naming the shapes; the
#    communicator stays usable, the failed call wrote nothing (the next,
#    equal batches give the one-process step on their concatenation);
#  * the same on Local AdaAlter's first step, which runs no collective:
#    the ranks agree while it computes, and its state writes wait for them;
#  * rank 2 refuses its own call (a label out of range): it fails with its
#    own status and message, the others with GROVE_ERROR_PEER quoting it;
#  * the application's grove_comm_all_reduce with 4 elements on two ranks
#    and 5 on the third fails on all of them; then an equal one sums;
#  * rank 2 calls grove_comm_all_reduce while ranks 0-1 call train_step,
#    or agrees on its first call only (GROVE_COMM_AGREE=first): every
#    rank fails at once, told what each is doing;
#  * rank 2 runs the model compiled without --data-parallel: it has no
#    collective to agree on, so ranks 0-1 wait for it until the deadline
#    and fail with GROVE_ERROR_PEER (the one disagreement only a deadline
#    finds), and no process dies.
import json
import os
import tempfile

import numpy as np
from grove_dist import launch
from grove_testing import Model, assert_close, rng

HERE = os.path.dirname(os.path.abspath(__file__))
RANK_SCRIPT = os.path.join(HERE, "Inputs", "agreement_rank.py")
GROVE_ERROR_PEER = 9
GROVE_ERROR_INVALID_ARGUMENT = 1
R = rng()
RANKS, ROWS, TIMEOUT = 3, 8, 20.0


SGD = "grove.sgd [{names}] ({grads}) {{lr = 0.1 : f64}}"
LOCAL_ADAALTER = ("grove.adaalter [{names}] ({grads}) "
                  "{{lr = 0.1 : f64, period = 4}}")


def mlp(hidden, optimizer=SGD):
    step = optimizer.format(names="@fc1.weight, @fc1.bias, @fc2.weight",
                            grads="%g#0, %g#1, %g#2")
    return f"""
module @mlp {{
  grove.param @fc1.weight : tensor<{hidden}x64xf32>
  grove.param @fc1.bias : tensor<{hidden}xf32>
  grove.param @fc2.weight : tensor<10x{hidden}xf32>
  func.func @train_step(%x: tensor<?x64xf32> {{grove.name = "x"}},
                        %y: tensor<?xi32> {{grove.name = "y"}}) -> tensor<f32> {{
    %loss, %g:3 = grove.value_and_grad [@fc1.weight, @fc1.bias, @fc2.weight] {{
      %w1 = grove.get_param @fc1.weight : tensor<{hidden}x64xf32>
      %b1 = grove.get_param @fc1.bias : tensor<{hidden}xf32>
      %w2 = grove.get_param @fc2.weight : tensor<10x{hidden}xf32>
      %h = grove.matmul %x, %w1 {{transpose_rhs}} : (tensor<?x64xf32>, tensor<{hidden}x64xf32>) -> tensor<?x{hidden}xf32>
      %hb = grove.add %h, %b1 : (tensor<?x{hidden}xf32>, tensor<{hidden}xf32>) -> tensor<?x{hidden}xf32>
      %a = grove.relu %hb : tensor<?x{hidden}xf32>
      %z = grove.matmul %a, %w2 {{transpose_rhs}} : (tensor<?x{hidden}xf32>, tensor<10x{hidden}xf32>) -> tensor<?x10xf32>
      %l = grove.softmax_cross_entropy %z, %y : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
      grove.yield %l : tensor<f32>
    }} : tensor<f32>, tensor<{hidden}x64xf32>, tensor<{hidden}xf32>, tensor<10x{hidden}xf32>
    {step}
        : tensor<{hidden}x64xf32>, tensor<{hidden}xf32>, tensor<10x{hidden}xf32>
    return %loss : tensor<f32>
  }}
}}
"""


def shapes(hidden):
    return {"fc1.weight": (hidden, 64), "fc1.bias": (hidden,),
            "fc2.weight": (10, hidden)}


def build(workdir, variant, hidden, flags, optimizer=SGD):
    """Module `mlp` compiled into WORKDIR/<variant>/libmlp.so."""
    where = os.path.join(workdir, variant)
    os.makedirs(where, exist_ok=True)
    Model(mlp(hidden, optimizer), name="mlp", workdir=where,
          grovec_flags=flags)
    weights = {n: (R.standard_normal(s) * 0.2).astype(np.float32)
               for n, s in shapes(hidden).items()}
    np.savez(os.path.join(workdir, variant + ".npz"), **weights)
    return os.path.join(where, "libmlp.so")


def run(workdir, ranks_plan, steps=1):
    batches = {}
    for s in range(steps):
        batches["x%d" % s] = R.standard_normal(
            (RANKS, ROWS, 64)).astype(np.float32)
        batches["y%d" % s] = R.integers(0, 10, (RANKS, ROWS)).astype(np.int32)
    np.savez(os.path.join(workdir, "batches.npz"), **batches)
    with open(os.path.join(workdir, "plan.json"), "w") as f:
        json.dump({"timeout": TIMEOUT, "ranks": ranks_plan}, f)
    for r in range(RANKS):
        path = os.path.join(workdir, "rank%d.json" % r)
        if os.path.exists(path):
            os.remove(path)
    code, out, _ = launch(RANK_SCRIPT, [workdir], RANKS, 4 * TIMEOUT + 60)
    assert code == 0 and "MPI_ERRORS_ARE_FATAL" not in out, out
    results = []
    for r in range(RANKS):
        with open(os.path.join(workdir, "rank%d.json" % r)) as f:
            results.append(json.load(f))
    return results, batches


def plan(lib, variant, rows=(ROWS,), **extra):
    return {"library": lib, "module": "mlp", "weights": variant + ".npz",
            "rows": list(rows), **extra}


def expect_all_fail(results, call, status, *needles):
    for r, res in enumerate(results):
        c = res["calls"][call]
        assert c["status"] == status, (r, c)
        for needle in needles:
            assert needle in c["message"], (r, needle, c["message"])
        # Agreement, not the deadline, ended the call.
        assert c["seconds"] < TIMEOUT / 2, (r, c)


def check_models(workdir, dense, wide, fp16):
    results, _ = run(workdir, [plan(dense, "dense"), plan(dense, "dense"),
                               plan(wide, "wide")])
    expect_all_fail(results, 0, GROVE_ERROR_PEER, "the ranks disagree on "
                    "the model", "ranks 0, 1: 'fc1.weight f32[32, 64]'",
                    "rank 2: 'fc1.weight f32[40, 64]'", "before any "
                    "collective ran")
    print("wider model on rank 2:", results[0]["calls"][0]["message"])
    results, _ = run(workdir, [plan(dense, "dense"), plan(dense, "dense"),
                               plan(fp16, "dense")])
    expect_all_fail(results, 0, GROVE_ERROR_PEER, "data-parallel options",
                    "ranks 0, 1: 'compressor=none'", "rank 2: "
                    "'compressor=fp16'")
    print("fp16 on rank 2:", results[0]["calls"][0]["message"])


def check_rows(workdir, dense):
    short = plan(dense, "dense", rows=(5, ROWS))
    results, batches = run(workdir, [plan(dense, "dense", rows=(ROWS, ROWS)),
                                     plan(dense, "dense", rows=(ROWS, ROWS)),
                                     short], steps=2)
    expect_all_fail(results, 0, GROVE_ERROR_PEER, "the shapes of the inputs",
                    "ranks 0, 1: 'x f32[8, 64]'", "rank 2: 'x f32[5, 64]'",
                    "batch of one size")
    # The failed call wrote nothing: the second call is the first step.
    reference = Model(mlp(32), name="mlpref", workdir=workdir)
    initial = np.load(os.path.join(workdir, "dense.npz"))
    for n in initial.files:
        reference.set_weight(n, initial[n])
    reference.call("train_step", batches["x1"].reshape(-1, 64),
                   batches["y1"].reshape(-1))
    for r, res in enumerate(results):
        assert res["calls"][1]["status"] == 0, (r, res["calls"][1])
        for n in initial.files:
            expected = reference.get_weight(n)
            assert_close(np.array(res["weights"][n], np.float32), expected,
                         rtol=0, atol=1e-5 * float(np.abs(expected).max()),
                         what=f"{n} on rank {r}")
    print("5 rows on rank 2:", results[0]["calls"][0]["message"])


def check_local_steps(workdir, local):
    """Local AdaAlter's first step runs no collective (it averages every
    4th): the disagreement still fails it on every rank, before its state
    writes."""
    results, _ = run(workdir, [plan(local, "local"), plan(local, "local"),
                               plan(local, "local", rows=(5,))])
    expect_all_fail(results, 0, GROVE_ERROR_PEER, "the shapes of the inputs",
                    "rank 2: 'x f32[5, 64]'")
    initial = np.load(os.path.join(workdir, "local.npz"))
    for r, res in enumerate(results):
        for n in initial.files:
            assert np.array_equal(np.array(res["weights"][n], np.float32),
                                  initial[n]), f"{n} changed on rank {r}"
    print("Local AdaAlter's local step, 5 rows on rank 2: every rank failed, "
          "no state written")


def check_refusal(workdir, dense):
    bad = plan(dense, "dense", bad_label_at=[0])
    results, _ = run(workdir, [plan(dense, "dense"), plan(dense, "dense"),
                               bad])
    expect_all_fail(results[:2], 0, GROVE_ERROR_PEER, "whether each rank "
                    "accepted its call", "rank 2: 'refused it:", "12")
    own = results[2]["calls"][0]
    assert own["status"] == GROVE_ERROR_INVALID_ARGUMENT, own
    assert "12" in own["message"] and "so no rank runs the call" in \
        own["message"], own
    print("label 12 on rank 2:", results[0]["calls"][0]["message"])


def check_app_collective(workdir, dense):
    ranks = [plan(dense, "dense", rows=(), app_all_reduce=[4, 4]),
             plan(dense, "dense", rows=(), app_all_reduce=[4, 4]),
             plan(dense, "dense", rows=(), app_all_reduce=[5, 4])]
    results, _ = run(workdir, ranks)
    expect_all_fail(results, 0, GROVE_ERROR_PEER, "the collective each rank "
                    "called", "'all_reduce sum f32[4]'", "'all_reduce sum "
                    "f32[5]'")
    expected = sum(np.arange(4, dtype=np.float32) + r for r in range(RANKS))
    for r, res in enumerate(results):
        assert res["calls"][1]["status"] == 0, res["calls"][1]
        assert np.array_equal(res["calls"][1]["values"], expected), res
    print("grove_comm_all_reduce of 4 and 5:",
          results[0]["calls"][0]["message"])


def check_operations(workdir, dense):
    """Ranks doing different things, or agreeing on different calls
    (GROVE_COMM_AGREE=first on one rank), are told so at once."""
    results, _ = run(workdir, [plan(dense, "dense"), plan(dense, "dense"),
                               plan(dense, "dense", rows=(),
                                    app_all_reduce=[4])])
    expect_all_fail(results, 0, GROVE_ERROR_PEER, "what each rank is doing",
                    "ranks 0, 1: 'a call of entry 'train_step'",
                    "rank 2: 'grove_comm_all_reduce'")
    print("train_step on ranks 0-1, grove_comm_all_reduce on rank 2:",
          results[0]["calls"][0]["message"])
    results, _ = run(workdir, [plan(dense, "dense"), plan(dense, "dense"),
                               plan(dense, "dense", agree="first")])
    expect_all_fail(results, 0, GROVE_ERROR_PEER, "what each rank is doing",
                    "rank 2: 'a call of entry 'train_step', agreeing before "
                    "its first call only")


def check_no_collectives(workdir, dense, plain):
    global TIMEOUT
    TIMEOUT, saved = 3.0, TIMEOUT
    try:
        results, _ = run(workdir, [plan(dense, "dense"), plan(dense, "dense"),
                                   plan(plain, "dense")])
    finally:
        TIMEOUT = saved
    for r in (0, 1):
        c = results[r]["calls"][0]
        assert c["status"] == GROVE_ERROR_PEER and "within 3 s" in \
            c["message"], c
    assert results[2]["calls"][0]["status"] == 0, results[2]
    print("rank 2 without --data-parallel: ranks 0-1 after the deadline:",
          results[0]["calls"][0]["message"])


def main():
    workdir = tempfile.mkdtemp(prefix="grove-agree-")
    dp = ["--data-parallel"]
    dense = build(workdir, "dense", 32, dp)
    wide = build(workdir, "wide", 40, dp)
    fp16 = build(workdir, "fp16", 32, dp + ["--compressor=fp16"])
    plain = build(workdir, "plain", 32, [])
    local = build(workdir, "local", 32, dp, LOCAL_ADAALTER)
    check_models(workdir, dense, wide, fp16)
    check_rows(workdir, dense)
    check_local_steps(workdir, local)
    check_refusal(workdir, dense)
    check_app_collective(workdir, dense)
    check_operations(workdir, dense)
    check_no_collectives(workdir, dense, plain)


if __name__ == "__main__":
    main()
