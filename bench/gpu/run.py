"""GPU benchmarks for scripts/gpu-check.sh (run on a machine with a GPU).

Times, with CUDA events on one stream, Grove models compiled for the CUDA
target against PyTorch on the same GPU:
  * every shipped model (models/mlp) vs PyTorch eager and torch.compile;
  * fused memory-bound kernels (bias+GELU+mul, softmax) in GB/s against a
    measured device-to-device copy (and PyTorch eager / torch.compile);
  * GEMMs against cuBLAS (torch.mm, TF32 off for f32 as in Grove);
  * split attention (the part of SplAtConv2d after the grouped conv + BN +
    ReLU) for every ResNeSt-50 block shape at batch 1, 16 and 64: Grove's
    fused op and its unfused decomposition vs PyTorch eager's same ops
    (bench/split_attention.py's functions and weights);
  * Tree-LSTM on stdlib syntax trees, forward and Adam train step at batch
    25 and 256, vs PyTorch hand-batched by level (bench/gpu/treelstm_gpu.py);
  * ResNeSt-50 at 224x224, batch 1 and 64, f32 and bf16, in images/s vs
    PyTorch eager and torch.compile running the functional reference
    (models/resnest/reference.py) on the same weights (random, generated
    here from a seed: bench/gpu/resnest50.py).
Every Grove result is first checked against PyTorch on the same inputs
(ResNeSt-50 also against the host backend's logits recorded by prepare).
Prints a table and writes it, with date and device, to --out (markdown),
after every section. A section that fails is reported as FAILED there, with
the reason, and the others still run; the exit status is 1 if anything
failed (including without a GPU, which is reported the same way).

  python bench/gpu/run.py --bundle gpu-bundle --out results.md [--quick]
"""
import argparse
import ctypes
import datetime
import os
import platform
import sys
import tempfile
import time
import traceback

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
from grove_testing import DLDataType, DLDevice, DLManagedTensor, DLTensor  # noqa: E402

kDLCUDA = 2
DL = {torch.float32: (2, 32), torch.bfloat16: (4, 16), torch.float16: (2, 16),
      torch.int32: (0, 32)}


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
        L.grove_context_load_weights.argtypes = [ctypes.c_void_p,
                                                 ctypes.c_char_p]

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

    def load_weights(self, path):
        """A safetensors file (uploaded to the device in the stream's order)."""
        self.check(self.lib.grove_context_load_weights(self.ctx, path.encode()))

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


def timed_for(fn, seconds, most=200):
    """(mean microseconds per call, calls): as timed, with as many calls as
    fit in about `seconds` (at least 3, at most `most`), after 2 warm-up
    calls and one timed call that sizes the run."""
    once = timed(fn, 1, warmup=2)
    n = max(3, min(most, int(seconds * 1e6 / max(once, 1.0))))
    return timed(fn, n, warmup=0), n


def check(name, got, want, rtol, atol):
    err = (got.float() - want.float()).abs()
    bound = atol + rtol * want.float().abs()
    if not bool((err <= bound).all()):
        raise AssertionError(f"{name}: Grove differs from PyTorch by "
                             f"{err.max().item():.3g} (atol {atol}, rtol {rtol})")
    return err.max().item()


PROFILE = None  # --profile: where profile_calls appends its tables

# ResNeSt-50 numerics (max |Grove - reference| / max |reference logit|):
# * f32: against PyTorch f32 on the GPU (TF32 off) and against Grove's host
#   backend (logits recorded by gpu-check.sh prepare): 1e-4, as in
#   test/Integration/resnest.py (different summation orders in cuBLAS,
#   cuDNN and the host BLAS, over ~50 layers).
# * bf16: against PyTorch f32 on the same bf16-rounded weights and image,
#   at most max(RESNEST_BF16_REL, 4 x the error of PyTorch's own bf16
#   forward measured in the same run). Every op rounds its output to bf16
#   (relative 2^-8; the weights and image are rounded too) and the errors
#   compound through ~50 layers and 16 split attentions: measured on the CPU
#   (PyTorch 1.13, ResNeSt-50 at 224x224, two seeds) PyTorch's bf16 forward
#   is 0.45% of max |logit| off its f32 forward on the same bf16 weights, and
#   an emulation of Grove's bf16 lowering of the time 0.7% (its pooled sums
#   then accumulated in bf16; they accumulate in f32 now). 2e-2 is ~4x
#   that: room for another rounding order, not for a wrong kernel (off by
#   O(1)). Measured on the H200: Grove 0.0042-0.0053, PyTorch 0.0042-0.0044.

RESNEST_F32_REL = 1e-4
RESNEST_BF16_REL = 2e-2
RESNEST_BATCHES = (1, 64)


def main():
    global cudart
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--resnest-compile-budget", type=float, default=180,
                    help="seconds torch.compile may spend on the four "
                    "ResNeSt-50 variants; a variant not compiled in time is "
                    "reported FAILED (default 180)")
    ap.add_argument("--profile", metavar="FILE",
                    help="append per-kernel GPU time tables (torch.profiler) "
                    "of ResNeSt-50 at the largest batch, Grove and PyTorch "
                    "eager, to FILE")
    args = ap.parse_args()
    global PROFILE
    PROFILE = args.profile
    iters = 20 if args.quick else 100
    rows = []  # (workload, size, metric, grove, eager, compiled, reference)
    numerics = []  # lines of the numerics list
    failures = []  # (what, why): each one a FAILED line in the report
    done = []  # sections finished
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")

    def fail(what, why):
        print(f"FAILED: {what}: {why}", file=sys.stderr)
        failures.append((what, str(why).strip().replace("\n", " ")[:400]))

    def write_report(running=None, final=False):
        """The whole report so far, rewritten after every section (a run cut
        short still leaves what it measured)."""
        head = ("| workload | size | metric | Grove | PyTorch eager | "
                "torch.compile | reference | Grove / reference |")
        lines = [head, "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for w, size, metric, g, e, c, ref in rows:
            if metric == "µs":
                best = min(e, c) if c == c else e
                ratio = f"{best / g:.2f}x faster than best PyTorch" if g < best \
                    else f"{g / best:.2f}x slower than best PyTorch"
                refcol = "PyTorch best"
            elif metric == "images/s":
                refcol = "PyTorch eager"
                ratio = (f"{g / e:.2f}x eager" if g == g and e == e
                         else "n/a (FAILED, below)")
                if c == c and g == g:
                    ratio += f", {g / c:.2f}x torch.compile"
            elif metric == "µs (vs eager)":
                ratio = f"{e / g:.2f}x faster than eager" if g < e \
                    else f"{g / e:.2f}x slower than eager"
                refcol = "PyTorch eager"
            elif metric == "GB/s":
                ratio = f"{100 * g / ref:.0f}% of copy"
                refcol = f"copy {ref:.0f}"
            else:
                ratio = f"{100 * g / ref:.0f}% of cuBLAS"
                refcol = f"cuBLAS {ref:.1f}"
            lines.append(f"| {w} | {size} | {metric} | {g:.3g} | {e:.3g} | "
                         f"{c:.3g} | {refcol} | {ratio} |")
        table = "\n".join(lines)
        try:
            dev = torch.cuda.get_device_name()
        except Exception as e:  # noqa: BLE001 - no GPU: say so
            dev = f"none ({type(e).__name__}: {e})"
        with open(args.out, "w") as f:
            f.write(f"## GPU benchmarks, {stamp}\n\n")
            f.write(f"Device: {dev}; torch {torch.__version__}; CUDA "
                    f"{torch.version.cuda}; host {platform.node()}. Mean of "
                    f"{iters} calls per cell (ResNeSt-50: as many as fit in "
                    "about a second, at least 3), CUDA events on one stream, "
                    "TF32 off; nan: not measured (see FAILED).\n\n")
            f.write(table + "\n")
            if numerics:
                f.write("\nNumerics (max |Grove - reference| / max |reference "
                        "logit|):\n\n")
                f.write("".join(f"* {n}\n" for n in numerics))
            if running:
                f.write(f"\nINCOMPLETE: stopped during {running} (sections "
                        f"done: {', '.join(done) or 'none'}).\n")
            if failures:
                f.write("\n")
                f.write("".join(f"* FAILED: {w}: {why}\n"
                                for w, why in failures))
            else:
                f.write(f"\nAll {len(done)} sections passed their checks.\n")
        if final:
            print(table)
            print("".join(f"FAILED: {w}: {why}\n" for w, why in failures))

    if not torch.cuda.is_available():
        fail("setup", f"PyTorch sees no CUDA device (torch {torch.__version__},"
             f" built for CUDA {torch.version.cuda}): nothing was measured; "
             "run on the GPU machine (scripts/gpu-check.sh run)")
        write_report(final=True)
        return 1
    try:
        cudart = load_cudart()
    except Exception as e:  # noqa: BLE001
        fail("setup", f"cannot load cudart: {e}")
        write_report(final=True)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)

    def compiled(fn, *example, what="torch.compile"):
        """torch.compile'd fn, compiled now (not inside the timing); None
        (reported FAILED, shown as nan) if torch.compile fails here."""
        try:
            c = torch.compile(fn)
            with torch.no_grad():
                c(*example)
            return c
        except Exception as e:  # noqa: BLE001 - report, do not hide
            fail(f"torch.compile of {what}", f"{type(e).__name__}: {e}")
            return None

    models = os.path.join(args.bundle, "models")

    # -- every shipped model: the MLP ---------------------------------------
    def mlp_section():
        mlp = Grove(os.path.join(models, "libmlp.so"), "mlp")
        mlp_async = Grove(os.path.join(models, "libmlp.so"), "mlp",
                          asynchronous=True)
        torch_mlp = torch.nn.Sequential(
            torch.nn.Linear(64, 128), torch.nn.ReLU(),
            torch.nn.Linear(128, 10)).cuda().eval()
        for name, p in zip(["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"],
                           torch_mlp.parameters()):
            mlp.set_weight(name, p.detach().cpu().numpy())
            mlp_async.set_weight(name, p.detach().cpu().numpy())
        mlp_c = compiled(torch_mlp, torch.randn(8, 64, device="cuda"),
                         what="the MLP")
        for batch in (1, 64, 1024, 16384):
            x = torch.randn(batch, 64, device="cuda")
            call = mlp.prepare("forward", [x])
            call_async = mlp_async.prepare("forward", [x])
            call()
            call_async()
            with torch.no_grad():
                ref = torch_mlp(x)
                check(f"mlp b={batch}", call.result(torch.float32), ref, 1e-4,
                      1e-4)
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
    def kernels_section():
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
            chain_c = compiled(chain, x, b, what=f"bias+GELU+mul ({t})")
            call = k.prepare(f"chain_{t}", [x, b])
            call()
            check(f"chain_{t}", call.result(dtype), chain(x, b), tol, tol)
            g = nbytes / timed(call, iters) / 1e3
            e = nbytes / timed(lambda: chain(x, b), iters) / 1e3
            c = nbytes / timed(lambda: chain_c(x, b), iters) / 1e3 if chain_c \
                else float("nan")
            rows.append((f"bias+GELU+mul ({t})", f"{n_rows}x{n_cols}", "GB/s",
                         g, e, c, copy_gbs))

            soft_c = compiled(lambda x: torch.softmax(x, dim=1), x,
                              what=f"softmax ({t})")
            call = k.prepare(f"softmax_{t}", [x])
            call()
            check(f"softmax_{t}", call.result(dtype), torch.softmax(x, dim=1),
                  tol, tol)
            g = nbytes / timed(call, iters) / 1e3
            e = nbytes / timed(lambda: torch.softmax(x, dim=1), iters) / 1e3
            c = nbytes / timed(lambda: soft_c(x), iters) / 1e3 if soft_c \
                else float("nan")
            rows.append((f"softmax rows ({t})", f"{n_rows}x{n_cols}", "GB/s",
                         g, e, c, copy_gbs))
            del x, y

    # -- GEMMs vs cuBLAS ------------------------------------------------------
    def gemm_section():
        k = Grove(os.path.join(models, "libgpukernels.so"), "gpukernels")
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
            rows.append((f"GEMM ({t})", f"{size}^3", "TFLOP/s", g, e,
                         float("nan"), e))

    # -- split attention, fused and unfused, vs PyTorch eager --------------------
    def split_attention_section():
        sys.path.insert(0, os.path.join(ROOT, "bench"))
        import split_attention as SA
        fused = Grove(os.path.join(models, "libsa_fused.so"), "sa_fused")
        plain = Grove(os.path.join(models, "libsa_plain.so"), "sa_plain")
        # The fused form again with 32-bit kernel indices
        # (--cuda-narrow-indices), when the bundle has it.
        narrow = None
        try:
            narrow = Grove(os.path.join(models, "libsa_fused_narrow.so"),
                           "sa_fused_narrow")
        except Exception as e:  # noqa: BLE001
            fail("split attention: libsa_fused_narrow.so",
                 f"{type(e).__name__}: {e}")
        g = np.random.default_rng(0)
        for n, (layer, c, hw, i) in enumerate(SA.SHAPES):
            p = {k: torch.from_numpy(v).cuda()
                 for k, v in SA.random_params(g, c, i).items()}
            for batch in (1, 16, 64):
                u = torch.relu(torch.randn(batch, c * SA.R, hw, hw,
                                           device="cuda"))
                args = [u] + [p[k] for k in SA.PARAMS]
                with torch.no_grad():
                    ref = SA.torch_attention(u, p)
                    tol = 1e-4 * ref.abs().max().item()
                    calls = {}
                    forms = [("fused", fused, f"fused{n}"),
                             ("unfused", plain, f"unfused{n}")]
                    if narrow is not None:
                        forms.append(("fused, 32-bit indices", narrow,
                                      f"fused{n}"))
                    for what, m, entry in forms:
                        call = m.prepare(entry, args)
                        call()
                        check(f"split attention {what} {layer} b={batch}",
                              call.result(torch.float32), ref, 0, tol)
                        calls[what] = call
                    t_f = timed(calls["fused"], iters)
                    t_u = timed(calls["unfused"], iters)
                    t_n = (timed(calls["fused, 32-bit indices"], iters)
                           if narrow is not None else float("nan"))
                    t_e = timed(lambda: SA.torch_attention(u, p), iters)
                size = f"{layer} C={c} {hw}x{hw} batch {batch}"
                nan = float("nan")
                rows.append(("split attention, Grove fused", size,
                             "µs (vs eager)", t_f, t_e, nan, None))
                rows.append(("split attention, Grove unfused", size,
                             "µs (vs eager)", t_u, t_e, nan, None))
                if narrow is not None:
                    rows.append(("split attention, Grove fused, 32-bit "
                                 "indices", size, "µs (vs eager)", t_n, t_e,
                                 nan, None))

    # -- ResNeSt-50 -------------------------------------------------------------
    def treelstm_section():
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from treelstm_gpu import treelstm_bench  # bench/gpu/treelstm_gpu.py
        treelstm_bench(models, os.path.join(args.bundle, "data"), rows,
                       numerics, fail, Grove, timed_for, check)

    def resnest_section():
        resnest50_bench(args, models, rows, numerics, fail)

    for name, section in (("MLP", mlp_section), ("fused kernels", kernels_section),
                          ("GEMMs", gemm_section),
                          ("split attention", split_attention_section),
                          ("Tree-LSTM", treelstm_section),
                          ("ResNeSt-50", resnest_section)):
        print(f"run.py: -- {name}", file=sys.stderr)
        write_report(running=name)
        try:
            section()
        except Exception as e:  # noqa: BLE001 - report it, run the others
            traceback.print_exc()
            fail(f"{name} section", f"{type(e).__name__}: {e}")
        done.append(name)
        torch.cuda.empty_cache()
    write_report(final=True)
    return 1 if failures else 0


# Library suffixes of the ResNeSt-50 variants gpu-check.sh prepares, with
# what the report calls them.
RESNEST_VARIANTS = (
    ("_cudnn", "convolutions on cuDNN (grovec --conv-library)"),
    ("_cudnn_narrow", "cuDNN + 32-bit kernel indices (--conv-library "
     "--cuda-narrow-indices)"),
)


def resnest50_bench(args, models, rows, numerics, fail):
    """ResNeSt-50 at 224x224: Grove's CUDA libraries (f32, bf16; one each,
    dynamic batch) vs the functional PyTorch reference, eager and
    torch.compile, on the same seeded weights. Each step fails on its own
    (reported through `fail`); the cells it leaves unmeasured are nan."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import resnest50 as R  # bench/gpu/resnest50.py (puts models/resnest on the path)
    from reference import resnest
    nan = float("nan")
    seconds = 0.3 if args.quick else 1.0
    tdtypes = {"f32": torch.float32, "bf16": torch.bfloat16}
    t0 = time.time()
    w = R.weights()
    x_all = R.images(max(RESNEST_BATCHES))
    print(f"run.py: ResNeSt-50 weights and images (seed {R.SEED}) in "
          f"{time.time() - t0:.1f} s", file=sys.stderr)

    # The host backend's f32 logits for the first image (prepare).
    host = None
    host_path = os.path.join(args.bundle, "data", R.HOST_RESULT)
    try:
        with np.load(host_path) as f:
            want, got = str(f["fingerprint"]), R.fingerprint(w, x_all[:1])
            if want != got:
                raise RuntimeError(
                    f"the weights or image generated here (fingerprint {got})"
                    f" differ from the preparing machine's ({want}): numpy "
                    "versions differ? the host result cannot be compared")
            host = f["logits_f32"].astype(np.float64)
    except RuntimeError as e:
        fail("ResNeSt-50 f32 GPU vs host", str(e))
    except Exception as e:  # noqa: BLE001
        fail("ResNeSt-50 f32 GPU vs host", f"no host result in the bundle "
             f"({type(e).__name__}: {e}): rerun scripts/gpu-check.sh prepare")
    numerics.append("ResNeSt-50 bf16: no GPU-vs-host comparison (prepare "
                    "records none; the host's bf16 GEMMs, loops rather than "
                    "BLAS, accumulate in f32 since grove-widen-loop-"
                    "accumulators, but round each product to bf16, which "
                    "cuBLAS does not)")

    work = tempfile.mkdtemp(prefix="grove-resnest50-")
    cells = {}  # (dtype, batch) -> [grove, eager, compiled] images/s
    # Variants of the same model (scripts/gpu-check.sh prepare), beside the
    # default: convolutions on cuDNN instead of im2col + cuBLAS, and with
    # kernels that delinearize in 32 bits too.
    variant_cells = {}  # (suffix, dtype, batch) -> [grove, eager, nan]
    later = []  # (dtype, batch, fwd, x): torch.compile, timed last
    for dtype, tdtype in tdtypes.items():
        name, _ = R.MODELS[dtype]
        what = f"ResNeSt-50 {dtype}"
        # One weights file per dtype, loaded by the default library and by
        # each variant; a library that fails to load is reported alone.
        path = os.path.join(work, f"{name}.safetensors")
        try:
            R.save_weights(w, dtype, path)
        except Exception as e:  # noqa: BLE001
            fail(f"{what}: weights", f"{type(e).__name__}: {e}")

        def load(lib):
            try:
                m = Grove(os.path.join(models, f"lib{lib}.so"), lib,
                          asynchronous=True)
                m.load_weights(path)
                return m
            except Exception as e:  # noqa: BLE001
                fail(f"{what}: Grove library {models}/lib{lib}.so",
                     f"{type(e).__name__}: {e}")
                return None

        grove = load(name)
        variants = {suffix: load(f"{name}{suffix}")
                    for suffix, _ in RESNEST_VARIANTS}
        variants = {k: v for k, v in variants.items() if v is not None}
        if os.path.exists(path):
            os.unlink(path)
        # The weights in the model's dtype on the GPU, and the same values
        # in f32 for the reference.
        p = {k: torch.from_numpy(v).cuda().to(tdtype) for k, v in w.items()}
        p32 = p if dtype == "f32" else {k: v.float() for k, v in p.items()}

        def fwd(x, p=p):
            return resnest(p, x, R.DEPTH)

        for batch in RESNEST_BATCHES:
            cell = f"{what} batch {batch}"
            row = cells.setdefault((dtype, batch), [nan, nan, nan])
            x = torch.from_numpy(x_all[:batch]).cuda().to(tdtype).contiguous()
            with torch.no_grad():
                resnest50_cell(cell, dtype, batch, x, grove, fwd, p32, host,
                               row, numerics, fail, seconds)
            for suffix, label in RESNEST_VARIANTS:
                if suffix not in variants:
                    continue
                vrow = variant_cells.setdefault((suffix, dtype, batch),
                                                [nan, nan, nan])
                with torch.no_grad():
                    resnest50_cell(f"{cell}, {label}", dtype, batch, x,
                                   variants[suffix], None, p32, host, vrow,
                                   numerics, fail, seconds)
            later.append((dtype, batch, fwd, x))

    # torch.compile last (its compile time is the largest cost here): one
    # compiled function per dtype, specialized per batch (dynamic=False).
    spent = 0.0
    compiled_fns = {}
    for dtype, batch, fwd, x in later:
        cell = f"ResNeSt-50 {dtype} batch {batch}"
        if spent > args.resnest_compile_budget:
            fail(f"{cell}: torch.compile", "not compiled: the "
                 f"--resnest-compile-budget of {args.resnest_compile_budget:g} s"
                 f" was spent ({spent:.0f} s) on the variants before")
            continue
        try:
            with torch.no_grad():
                if dtype not in compiled_fns:
                    compiled_fns[dtype] = torch.compile(fwd, dynamic=False)
                c = compiled_fns[dtype]
                t0 = time.time()
                c(x)
                torch.cuda.synchronize()
                took = time.time() - t0
                spent += took
                t, n = timed_for(lambda: c(x), seconds)
            cells[(dtype, batch)][2] = batch * 1e6 / t
            print(f"run.py: {cell}: torch.compile {t / 1e3:.2f} ms ({n} calls;"
                  f" compiled in {took:.0f} s)", file=sys.stderr)
        except Exception as e:  # noqa: BLE001
            fail(f"{cell}: torch.compile", f"{type(e).__name__}: {e}")
    for (dtype, batch), (g, e, c) in cells.items():
        rows.append((f"ResNeSt-50 forward 224x224 ({dtype})", f"batch {batch}",
                     "images/s", g, e, c, e))
        for suffix, label in RESNEST_VARIANTS:
            if (suffix, dtype, batch) in variant_cells:
                rows.append((f"ResNeSt-50 forward 224x224 ({dtype}), {label}",
                             f"batch {batch}", "images/s",
                             variant_cells[(suffix, dtype, batch)][0], e, c,
                             e))


def profile_calls(what, fn, calls=3):
    """Appends to PROFILE the GPU time of each kernel over `calls` calls of
    fn: CUPTI sees every kernel of the process, Grove's (named after their
    model and function) as well as PyTorch's."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    averages = prof.key_averages()
    for key in ("self_device_time_total", "self_cuda_time_total"):
        try:
            table = averages.table(sort_by=key, row_limit=40,
                                   max_name_column_width=90)
            break
        except Exception:  # noqa: BLE001 - the other spelling of the key
            table = None
    with open(PROFILE, "a") as f:
        f.write(f"## {what}, {calls} calls\n\n{table}\n\n")


def resnest50_cell(cell, dtype, batch, x, grove, fwd, p32, host, row,
                   numerics, fail, seconds):
    """One (dtype, batch) of resnest50_bench: the f32 reference, Grove's
    numerics and speed, PyTorch eager's speed (with `fwd` None, Grove's
    alone: a variant of the same model); each step fails on its own."""
    import resnest50 as R
    from reference import resnest
    ref = out = call = None
    bound, note = RESNEST_F32_REL, ""
    try:
        ref = resnest(p32, x.float(), R.DEPTH).double()
        scale = ref.abs().max().item()
        if dtype != "f32" and fwd is not None:
            own = (fwd(x).double() - ref).abs().max().item() / scale
            bound = max(RESNEST_BF16_REL, 4 * own)
            note = f"; PyTorch's own bf16 forward: {own:.2g}"
    except Exception as e:  # noqa: BLE001
        fail(f"{cell}: PyTorch f32 reference", f"{type(e).__name__}: {e}")
    if grove is not None:
        try:
            call = grove.prepare("forward", [x])
            call()
            out = call.result(x.dtype).double()
            if tuple(out.shape) != (batch, 1000):
                raise AssertionError(f"logits of shape {tuple(out.shape)}, "
                                     f"want {(batch, 1000)}")
        except Exception as e:  # noqa: BLE001
            fail(f"{cell}: Grove", f"{type(e).__name__}: {e}")
            call = out = None
    if out is not None and ref is not None:
        err = (out - ref).abs().max().item() / scale
        ok = err <= bound  # False for nan
        numerics.append(f"{cell}: Grove vs PyTorch f32 on the GPU: {err:.2g} "
                        f"(bound {bound:.2g}{note}): "
                        f"{'PASS' if ok else 'FAILED'}")
        if not ok:
            fail(f"{cell} numerics", f"Grove's logits differ from PyTorch f32 "
                 f"by {err:.3g} of max |logit| {scale:.3g} (bound {bound:.2g})")
    if out is not None and dtype == "f32" and host is not None:
        herr = np.abs(out[0].cpu().numpy() - host[0]).max() / \
            np.abs(host[0]).max()
        hok = herr <= RESNEST_F32_REL
        numerics.append(f"{cell}: Grove GPU vs Grove host (image 0, recorded "
                        f"by prepare): {herr:.2g} (bound {RESNEST_F32_REL:g}):"
                        f" {'PASS' if hok else 'FAILED'}")
        if not hok:
            fail(f"{cell} GPU vs host", f"image 0's logits differ by "
                 f"{herr:.3g} of max |host logit|")
    # Timed even when the numerics failed (the report says FAILED).
    eager = (lambda: fwd(x)) if fwd is not None else None
    for col, who, fn in ((0, "Grove", call), (1, "PyTorch eager", eager)):
        if fn is None:
            continue
        try:
            t, n = timed_for(fn, seconds)
            row[col] = batch * 1e6 / t
            print(f"run.py: {cell}: {who} {t / 1e3:.2f} ms per batch ({n} "
                  "calls)", file=sys.stderr)
        except Exception as e:  # noqa: BLE001
            fail(f"{cell}: timing {who}", f"{type(e).__name__}: {e}")
    if PROFILE and batch == max(RESNEST_BATCHES):
        for who, fn in (("Grove", call), ("PyTorch eager", eager)):
            if fn is not None:
                try:
                    profile_calls(f"{cell}: {who}", fn)
                except Exception as e:  # noqa: BLE001
                    fail(f"{cell}: profile of {who}",
                         f"{type(e).__name__}: {e}")


def run():
    if not torch.cuda.is_available():
        return main()  # reports the missing GPU as FAILED in --out
    # One stream for everything: PyTorch's work, Grove's contexts (given it
    # through grove_context_options.stream) and the timing events. (The
    # default stream's handle is 0, which Grove would read as "none".)
    with torch.cuda.stream(torch.cuda.Stream()):
        return main()


if __name__ == "__main__":
    sys.exit(run())
