"""GPU benchmarks for scripts/gpu-check.sh (run on a machine with a GPU).

Times, with CUDA events on one stream, Grove models compiled for the CUDA
target against PyTorch on the same GPU:
  * every shipped model (models/mlp) vs PyTorch eager and torch.compile;
  * fused memory-bound kernels (bias+GELU+mul, softmax) in GB/s against a
    measured device-to-device copy (and PyTorch eager / torch.compile);
  * GEMMs against cuBLAS (torch.mm, TF32 off for f32 as in Grove).
Every Grove result is first checked against PyTorch on the same inputs.
Prints a table and writes it, with date and device, to --out (markdown).

  python bench/gpu/run.py --bundle gpu-bundle --out results.md [--quick]
"""
import argparse
import ctypes
import datetime
import os
import platform
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
from grove_testing import DLDataType, DLDevice, DLManagedTensor, DLTensor  # noqa: E402

kDLCUDA = 2
DL = {torch.float32: (2, 32), torch.bfloat16: (4, 16), torch.float16: (2, 16)}


class Options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("device_id", ctypes.c_int32),
                ("stream", ctypes.c_void_p), ("flags", ctypes.c_uint32)]


class Grove:
    """A model library from the bundle, its context on torch's stream."""

    def __init__(self, so, name, asynchronous=False):
        self.lib = L = ctypes.CDLL(so)
        L.grove_last_error.restype = ctypes.c_char_p
        L.grove_invoke.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p,
            ctypes.POINTER(ctypes.POINTER(DLTensor)), ctypes.c_size_t,
            ctypes.POINTER(ctypes.POINTER(DLManagedTensor)), ctypes.c_size_t]
        L.grove_context_set_weight.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                               ctypes.POINTER(DLTensor)]
        model = ctypes.c_char.in_dll(L, name + "_model")
        opts = Options()
        L.grove_context_options_init(ctypes.byref(opts))
        opts.stream = torch.cuda.current_stream().cuda_stream
        opts.flags = 1 if asynchronous else 0  # GROVE_CONTEXT_ASYNC
        self.ctx = ctypes.c_void_p()
        self.check(L.grove_context_create_with_options(
            ctypes.byref(model), ctypes.byref(opts), ctypes.byref(self.ctx)))

    def check(self, status):
        if status != 0:
            raise RuntimeError(self.lib.grove_last_error().decode())

    def set_weight(self, name, array):
        array = np.ascontiguousarray(array, dtype=np.float32)
        shape = (ctypes.c_int64 * array.ndim)(*array.shape)
        t = DLTensor(array.ctypes.data_as(ctypes.c_void_p), DLDevice(1, 0),
                     array.ndim, DLDataType(2, 32, 1), shape, None, 0)
        self.check(self.lib.grove_context_set_weight(self.ctx, name.encode(),
                                                     ctypes.byref(t)))

    def prepare(self, entry, inputs, num_outputs=1):
        """A no-argument call of `entry` on the torch tensors `inputs` (kept
        alive), returning the first output as a torch tensor view that is
        valid until the next call."""
        keep, ptrs = [], []
        for x in inputs:
            assert x.is_cuda and x.is_contiguous()
            shape = (ctypes.c_int64 * max(x.dim(), 1))(*x.shape)
            code, bits = DL[x.dtype]
            t = DLTensor(ctypes.c_void_p(x.data_ptr()), DLDevice(kDLCUDA, 0),
                         x.dim(), DLDataType(code, bits, 1), shape, None, 0)
            keep += [x, shape, t]
            ptrs.append(ctypes.pointer(t))
        ins = (ctypes.POINTER(DLTensor) * len(ptrs))(*ptrs)
        outs = (ctypes.POINTER(DLManagedTensor) * num_outputs)()
        name, lib, ctx = entry.encode(), self.lib, self.ctx
        state = {"last": None}

        def call():
            if state["last"] is not None:
                for k in range(num_outputs):
                    outs[k].contents.deleter(outs[k])
            status = lib.grove_invoke(ctx, name, ins, len(ptrs), outs,
                                      num_outputs)
            if status != 0:
                raise RuntimeError(lib.grove_last_error().decode())
            state["last"] = outs
        call.keep = (keep, ins, outs)

        def result(dtype):
            t = outs[0].contents.dl_tensor
            shape = [t.shape[d] for d in range(t.ndim)]
            n = int(np.prod(shape))
            out = torch.empty(shape, dtype=dtype, device="cuda")
            torch.cuda.synchronize()
            err = cudart.cudaMemcpy(ctypes.c_void_p(out.data_ptr()),
                                    ctypes.c_void_p(t.data),
                                    n * out.element_size(), 3)
            if err != 0:
                raise RuntimeError(f"cudaMemcpy failed: {err}")
            return out
        call.result = result
        return call


def load_cudart():
    for n in ("libcudart.so.13", "libcudart.so",
              os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"),
                           "lib64", "libcudart.so")):
        try:
            lib = ctypes.CDLL(n)
            lib.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                       ctypes.c_size_t, ctypes.c_int]
            return lib
        except OSError:
            pass
    raise RuntimeError("no libcudart")


cudart = None


def timed(fn, iters, warmup=5):
    """Mean microseconds per call, CUDA events around `iters` calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000.0 / iters


def check(name, got, want, rtol, atol):
    err = (got.float() - want.float()).abs()
    bound = atol + rtol * want.float().abs()
    if not bool((err <= bound).all()):
        raise AssertionError(f"{name}: Grove differs from PyTorch by "
                             f"{err.max().item():.3g} (atol {atol}, rtol {rtol})")
    return err.max().item()


def main():
    global cudart
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    cudart = load_cudart()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    dev = torch.cuda.get_device_name()
    iters = 20 if args.quick else 100
    rows = []  # (workload, size, metric, grove, eager, compiled, reference)

    def compiled(fn, *example):
        """torch.compile'd fn, compiled now (not inside the timing); None
        (reported, shown as nan) if torch.compile fails here."""
        try:
            c = torch.compile(fn)
            with torch.no_grad():
                c(*example)
            return c
        except Exception as e:  # noqa: BLE001 - report, do not hide
            print(f"torch.compile failed: {e}", file=sys.stderr)
            return None

    models = os.path.join(args.bundle, "models")
    # -- every shipped model: the MLP ---------------------------------------
    mlp = Grove(os.path.join(models, "libmlp.so"), "mlp")
    mlp_async = Grove(os.path.join(models, "libmlp.so"), "mlp",
                      asynchronous=True)
    torch_mlp = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                    torch.nn.Linear(128, 10)).cuda().eval()
    for name, p in zip(["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"],
                       torch_mlp.parameters()):
        mlp.set_weight(name, p.detach().cpu().numpy())
        mlp_async.set_weight(name, p.detach().cpu().numpy())
    mlp_c = compiled(torch_mlp, torch.randn(8, 64, device="cuda"))
    for batch in (1, 64, 1024, 16384):
        x = torch.randn(batch, 64, device="cuda")
        call = mlp.prepare("forward", [x])
        call_async = mlp_async.prepare("forward", [x])
        call()
        call_async()
        with torch.no_grad():
            ref = torch_mlp(x)
            check(f"mlp b={batch}", call.result(torch.float32), ref, 1e-4, 1e-4)
            check(f"mlp async b={batch}", call_async.result(torch.float32),
                  ref, 1e-4, 1e-4)
            t_g = timed(call, iters)
            t_a = timed(call_async, iters)
            t_e = timed(lambda: torch_mlp(x), iters)
            t_c = timed(lambda: mlp_c(x), iters) if mlp_c else float("nan")
        rows.append(("MLP forward (f32), grove_invoke synchronous",
                     f"batch {batch}", "µs", t_g, t_e, t_c, None))
        rows.append(("MLP forward (f32), GROVE_CONTEXT_ASYNC",
                     f"batch {batch}", "µs", t_a, t_e, t_c, None))

    # -- fused memory-bound kernels vs a device-to-device copy -----------------
    k = Grove(os.path.join(models, "libgpukernels.so"), "gpukernels")
    n_rows, n_cols = (8192, 4096) if args.quick else (32768, 4096)
    for t, dtype, tol in (("f32", torch.float32, 1e-5),
                          ("bf16", torch.bfloat16, 2e-2)):
        x = torch.randn(n_rows, n_cols, device="cuda", dtype=dtype)
        b = torch.randn(n_cols, device="cuda", dtype=dtype)
        nbytes = 2 * x.numel() * x.element_size()  # read x, write y
        y = torch.empty_like(x)
        t_copy = timed(lambda: y.copy_(x), iters)
        copy_gbs = nbytes / t_copy / 1e3

        def chain(x, b):
            return torch.nn.functional.gelu(x + b) * x
        chain_c = compiled(chain, x, b)
        call = k.prepare(f"chain_{t}", [x, b])
        call()
        check(f"chain_{t}", call.result(dtype), chain(x, b), tol, tol)
        g = nbytes / timed(call, iters) / 1e3
        e = nbytes / timed(lambda: chain(x, b), iters) / 1e3
        c = nbytes / timed(lambda: chain_c(x, b), iters) / 1e3 if chain_c \
            else float("nan")
        rows.append((f"bias+GELU+mul ({t})", f"{n_rows}x{n_cols}", "GB/s", g, e,
                     c, copy_gbs))

        soft_c = compiled(lambda x: torch.softmax(x, dim=1), x)
        call = k.prepare(f"softmax_{t}", [x])
        call()
        check(f"softmax_{t}", call.result(dtype), torch.softmax(x, dim=1), tol,
              tol)
        g = nbytes / timed(call, iters) / 1e3
        e = nbytes / timed(lambda: torch.softmax(x, dim=1), iters) / 1e3
        c = nbytes / timed(lambda: soft_c(x), iters) / 1e3 if soft_c \
            else float("nan")
        rows.append((f"softmax rows ({t})", f"{n_rows}x{n_cols}", "GB/s", g, e,
                     c, copy_gbs))
        del x, y

    # -- GEMMs vs cuBLAS ------------------------------------------------------
    for t, dtype, size, tol in (("f32", torch.float32, 4096, 1e-3),
                                ("bf16", torch.bfloat16, 8192, 3e-2)):
        if args.quick:
            size //= 2
        a = torch.randn(size, size, device="cuda", dtype=dtype) / 8
        bm = torch.randn(size, size, device="cuda", dtype=dtype) / 8
        flops = 2.0 * size ** 3
        call = k.prepare(f"gemm_{t}", [a, bm])
        call()
        check(f"gemm_{t}", call.result(dtype), a @ bm, tol, tol * 4)
        g = flops / timed(call, max(iters // 5, 5)) / 1e6
        e = flops / timed(lambda: a @ bm, max(iters // 5, 5)) / 1e6
        rows.append((f"GEMM ({t})", f"{size}^3", "TFLOP/s", g, e, float("nan"),
                     e))

    # -- report ---------------------------------------------------------------
    head = ("| workload | size | metric | Grove | PyTorch eager | torch.compile "
            "| reference | Grove / reference |")
    lines = [head, "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for w, size, metric, g, e, c, ref in rows:
        if metric == "µs":
            best = min(e, c) if c == c else e
            ratio = f"{best / g:.2f}x faster than best PyTorch" if g < best \
                else f"{g / best:.2f}x slower than best PyTorch"
            refcol = "PyTorch best"
        elif metric == "GB/s":
            ratio = f"{100 * g / ref:.0f}% of copy"
            refcol = f"copy {ref:.0f}"
        else:
            ratio = f"{100 * g / ref:.0f}% of cuBLAS"
            refcol = f"cuBLAS {ref:.1f}"
        lines.append(f"| {w} | {size} | {metric} | {g:.3g} | {e:.3g} | {c:.3g} "
                     f"| {refcol} | {ratio} |")
    table = "\n".join(lines)
    print(table)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")
    with open(args.out, "w") as f:
        f.write(f"## GPU benchmarks, {stamp}\n\n")
        f.write(f"Device: {dev}; torch {torch.__version__}; CUDA "
                f"{torch.version.cuda}; host {platform.node()}. Mean of "
                f"{iters} calls per cell, CUDA events, TF32 off.\n\n")
        f.write(table + "\n")


if __name__ == "__main__":
    # One stream for everything: PyTorch's work, Grove's contexts (given it
    # through grove_context_options.stream) and the timing events. (The
    # default stream's handle is 0, which Grove would read as "none".)
    with torch.cuda.stream(torch.cuda.Stream()):
        main()
