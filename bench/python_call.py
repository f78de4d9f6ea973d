#!/usr/bin/env python3
"""Per-call overhead from Python: the grove package against the same call
from C, and against ONNX Runtime's, IREE's and TVM's Python calls and a
PyTorch eager op, in one run.

    .venv/bin/python bench/python_call.py           # ~1 min; writes docs/perf.md's section
    .venv/bin/python bench/python_call.py --quick   # smoke run, docs untouched

The call: c = a + b on two 4-element float32 vectors, three tensors a call,
so the time is the call's own cost. Each peer in its best configuration for
this (the note of each row says which); the Python peers take and give numpy
arrays unless the row says otherwise. Time per call: the best over rounds of
the mean of a loop of calls (one process, one thread: GROVE and OpenMP
threads at 1, ONNX Runtime's intra-op threads at 1). The goal (issue 36):
Grove from Python within 1.5 us of Grove from C.
"""
import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from run import machine_info  # noqa: E402  (bench/run.py: one definition)
from timing import write_perf_section  # noqa: E402

N = 4
GROVE_SRC = f"""module @add3 {{
  func.func @f(%a: tensor<{N}xf32>, %b: tensor<{N}xf32>) -> tensor<{N}xf32> {{
    %c = grove.add %a, %b : (tensor<{N}xf32>, tensor<{N}xf32>) -> tensor<{N}xf32>
    return %c : tensor<{N}xf32>
  }}
}}"""
C_DRIVER = r"""
#include "add3.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
  int rounds = atoi(argv[1]), calls = atoi(argv[2]);
  grove_context *ctx;
  if (grove_context_create(&add3_model, &ctx) != GROVE_OK)
    return 1;
  float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  int64_t shape[1] = {4};
  DLTensor ta = {a, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor tb = {b, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    double t0 = now();
    for (int i = 0; i < calls; ++i) {
      DLManagedTensor *out;
      if (add3_f(ctx, &ta, &tb, &out) != GROVE_OK)
        return 1;
      out->deleter(out);
    }
    double t = (now() - t0) / calls;
    best = t < best ? t : best;
  }
  printf("%.9f\n", best);
  grove_context_destroy(ctx);
  return 0;
}
"""

# A train step from C: the digits MLP's (models/mlp_train) at batch 32 on
# fixed data, weights set once, the loss freed each step.
C_STEP_DRIVER = r"""
#include "mlp_train.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void set(grove_context *ctx, const char *name, int64_t rows,
                int64_t cols) {
  int64_t shape[2] = {rows, cols};
  float *w = malloc(sizeof(float) * rows * (cols ? cols : 1));
  for (int64_t i = 0; i < rows * (cols ? cols : 1); ++i)
    w[i] = 0.01f * (float)((i * 7919) % 101 - 50);
  DLTensor t = {w, {kDLCPU, 0}, cols ? 2 : 1, {kDLFloat, 32, 1}, shape, NULL,
                0};
  grove_context_set_weight(ctx, name, &t);
  free(w);
}

int main(int argc, char **argv) {
  int rounds = atoi(argv[1]), steps = atoi(argv[2]);
  grove_context *ctx;
  if (grove_context_create(&mlp_train_model, &ctx) != GROVE_OK)
    return 1;
  set(ctx, "fc1.weight", 128, 64);
  set(ctx, "fc1.bias", 128, 0);
  set(ctx, "fc2.weight", 10, 128);
  set(ctx, "fc2.bias", 10, 0);
  float x[32 * 64];
  int32_t y[32];
  for (int i = 0; i < 32 * 64; ++i)
    x[i] = (float)(i % 17) / 17.0f;
  for (int i = 0; i < 32; ++i)
    y[i] = i % 10;
  int64_t xs[2] = {32, 64}, ys[1] = {32};
  DLTensor tx = {x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, xs, NULL, 0};
  DLTensor ty = {y, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, ys, NULL, 0};
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    double t0 = now();
    for (int i = 0; i < steps; ++i) {
      DLManagedTensor *loss;
      if (mlp_train_train_step(ctx, &tx, &ty, &loss) != GROVE_OK)
        return 1;
      loss->deleter(loss);
    }
    double t = (now() - t0) / steps;
    best = t < best ? t : best;
  }
  printf("%.9f\n", best);
  grove_context_destroy(ctx);
  return 0;
}
"""


def best_mean(call, rounds, calls):
    """The best over `rounds` of the mean time of `calls` calls."""
    call()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def c_time(work, driver, lib, rounds, calls):
    """Builds `driver` against lib<lib>.so in `work` and the runtime the
    package loaded (both sides call the same code); its time a call."""
    import grove
    exe = work / f"{lib}_driver"
    (work / f"{lib}_driver.c").write_text(driver)
    rt = Path(grove._core.runtime_library())
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-o", str(exe),
                    str(work / f"{lib}_driver.c"), "-I" + str(work),
                    "-I" + str(ROOT / "runtime" / "include"), "-L" + str(work),
                    "-Wl,-rpath," + str(work), "-l" + lib, "-L" + str(rt.parent),
                    "-Wl,-rpath," + str(rt.parent), "-l:" + rt.name, "-lm"],
                   check=True)
    return float(subprocess.run([str(exe), str(rounds), str(calls)],
                                check=True, capture_output=True,
                                text=True).stdout)


def step_rows(work, rounds, steps):
    """The digits MLP's train step at batch 32, from C and from Python."""
    import grove
    lib = grove.compile(ROOT / "models" / "mlp_train" / "mlp_train.mlir",
                        output_dir=str(work))
    c = c_time(work, C_STEP_DRIVER, "mlp_train", rounds, steps)
    m = grove.load(lib)
    for p in m.params:
        if p.kind == "weight":
            n = int(np.prod(p.shape))
            m[p.name] = (0.01 * ((np.arange(n) * 7919) % 101 - 50)).reshape(
                p.shape).astype(np.float32)
    x = ((np.arange(32 * 64) % 17) / 17).astype(np.float32).reshape(32, 64)
    y = (np.arange(32) % 10).astype(np.int32)
    py = best_mean(lambda: m.train_step(x, y), rounds, steps)
    with tempfile.TemporaryDirectory() as tmp:
        with grove.trace(os.path.join(tmp, "trace.json")):
            traced = best_mean(lambda: m.train_step(x, y), rounds, steps)
    return c, py, traced


def grove_rows(work, rounds, calls):
    import grove
    lib = grove.compile(GROVE_SRC, output_dir=str(work))
    c_time_ = c_time(work, C_DRIVER, "add3", rounds, calls)
    rows = [("Grove, C (typed wrapper)", c_time_, "add3_f(ctx, &a, &b, &out), "
             "output freed")]
    a = np.arange(N, dtype=np.float32)
    b = np.ones(N, np.float32)
    m = grove.load(lib)
    rows.append(("Grove, Python", best_mean(lambda: m.f(a, b), rounds, calls),
                 "model.f(a, b): numpy in, numpy out"))
    try:
        import torch
        mt = grove.load(lib, framework="torch")
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        rows.append(("Grove, Python (torch)", best_mean(
            lambda: mt.f(ta, tb), rounds, calls),
            "torch tensors in, a torch tensor out"))
    except ImportError:
        pass
    return rows


def ort_rows(work, rounds, calls):
    try:
        import onnx
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError:
        return [("ONNX Runtime", None, "not installed")]
    vec = [N]
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["c"])], "add3",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, vec),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, vec)],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, vec)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("",
                                                                        17)])
    path = work / "add3.onnx"
    onnx.save(model, str(path))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(path), opts,
                                providers=["CPUExecutionProvider"])
    a = np.arange(N, dtype=np.float32)
    b = np.ones(N, np.float32)
    feeds = {"a": a, "b": b}
    run = best_mean(lambda: sess.run(None, feeds), rounds, calls)
    binding = sess.io_binding()
    binding.bind_cpu_input("a", a)
    binding.bind_cpu_input("b", b)
    binding.bind_output("c")

    def bound():
        sess.run_with_iobinding(binding)
        return binding.copy_outputs_to_cpu()
    io = best_mean(bound, rounds, calls)
    if run <= io:
        return [("ONNX Runtime", run, "sess.run(None, feeds): numpy in and "
                 f"out (IOBinding: {io * 1e6:.2f} us)")]
    return [("ONNX Runtime", io, "IOBinding, outputs copied to numpy "
             f"(sess.run: {run * 1e6:.2f} us)")]


def iree_rows(work, rounds, calls):
    try:
        import iree.compiler as ireec
        import iree.runtime as ireert
    except ImportError:
        return [("IREE", None, "not installed (GROVE_BENCH=1 installs it)")]
    src = f"""func.func @f(%a: tensor<{N}xf32>, %b: tensor<{N}xf32>) -> tensor<{N}xf32> {{
  %c = arith.addf %a, %b : tensor<{N}xf32>
  return %c : tensor<{N}xf32>
}}"""
    vmfb = ireec.compile_str(src, target_backends=["llvm-cpu"],
                             extra_args=["--iree-llvmcpu-target-cpu=host"])
    config = ireert.Config("local-sync")
    ctx = ireert.SystemContext(config=config)
    ctx.add_vm_module(ireert.VmModule.copy_buffer(ctx.instance, vmfb))
    f = ctx.modules.module["f"]
    a = np.arange(N, dtype=np.float32)
    b = np.ones(N, np.float32)
    device = best_mean(lambda: f(a, b), rounds, calls)
    host = best_mean(lambda: f(a, b).to_host(), rounds, calls)
    return [("IREE", host, "local-sync driver, numpy in, .to_host() out "
             f"(a DeviceArray out: {device * 1e6:.2f} us)")]


def tvm_rows(work, rounds, calls):
    try:
        import tvm
        from tvm import te
    except ImportError:
        return [("TVM", None, "not installed (GROVE_BENCH=1 installs it)")]
    A = te.placeholder((N,), name="A")
    B = te.placeholder((N,), name="B")
    C = te.compute((N,), lambda i: A[i] + B[i], name="C")
    f = tvm.compile(te.create_prim_func([A, B, C]), target="llvm")
    dev = tvm.cpu()
    a = np.arange(N, dtype=np.float32)
    b = np.ones(N, np.float32)
    ta, tb = tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev)
    tc = tvm.runtime.tensor(np.empty(N, np.float32), dev)
    pre = best_mean(lambda: f(ta, tb, tc), rounds, calls)

    def from_numpy():
        out = tvm.runtime.tensor(np.empty(N, np.float32), dev)
        f(tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), out)
        return out.numpy()
    full = best_mean(from_numpy, rounds, calls)
    return [("TVM", pre, "f(a, b, c) on TVM tensors allocated once "
             f"(destination passing; from numpy and back: {full * 1e6:.2f} "
             "us)")]


def torch_rows(rounds, calls):
    try:
        import torch
    except ImportError:
        return [("PyTorch eager", None, "not installed")]
    torch.set_num_threads(1)
    ta = torch.arange(N, dtype=torch.float32)
    tb = torch.ones(N)
    return [("PyTorch eager", best_mean(lambda: torch.add(ta, tb), rounds,
                                         calls),
             f"torch.add(a, b), torch {torch.__version__}")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--write", default=str(ROOT / "docs" / "perf.md"))
    a = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"
    rounds, calls = (3, 2000) if a.quick else (7, 50000)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows = grove_rows(work, rounds, calls)
        rows += ort_rows(work, rounds, calls)
        rows += iree_rows(work, rounds, calls)
        rows += tvm_rows(work, rounds, calls)
        rows += torch_rows(rounds, calls)
        step_c, step_py, step_traced = step_rows(work, rounds,
                                                 max(calls // 50, 200))
    c_time = rows[0][1]
    py_time = rows[1][1]
    lines = ["<!-- python-call: written by bench/python_call.py -->", "",
             "## Python call overhead", "",
             f"{time.strftime('%Y-%m-%d')}, {machine_info()}, Python "
             f"{platform.python_version()}. " + " ".join(
                 __doc__.split("\n\n")[2].split()), "",
             "| peer | us a call | vs Grove from Python | how |",
             "| --- | --- | --- | --- |"]
    for name, t, how in rows:
        if t is None:
            lines.append(f"| {name} | - | - | {how} |")
            continue
        lines.append(f"| {name} | {t * 1e6:.2f} | {t / py_time:.2f}x | "
                     f"{how} |")
    over = (py_time - c_time) * 1e6
    lines += ["", f"Grove from Python costs {over:.2f} us a call above the "
              f"same call from C (goal: at most 1.5 us: "
              f"{'met' if over <= 1.5 else 'not met'}).", "",
              "A training loop's step: the digits MLP's `train_step` "
              "(models/mlp_train, forward, backward and Adam) at batch 32, "
              "the same library called from C (typed wrapper) and from "
              f"Python (numpy arrays): {step_c * 1e6:.1f} us and "
              f"{step_py * 1e6:.1f} us, {(step_py - step_c) * 1e6:.2f} us "
              "more a step from Python "
              f"({100 * (step_py / step_c - 1):.1f}%). Traced "
              "(grove.trace: a span for the call and one for each of its "
              f"GEMMs and generated loops): {step_traced * 1e6:.1f} us "
              f"({100 * (step_traced / step_py - 1):+.1f}%).", "",
              "<!-- /python-call -->"]
    section = "\n".join(lines)
    print(section)
    if not a.quick:
        write_perf_section(a.write, "python-call", section)


if __name__ == "__main__":
    main()
