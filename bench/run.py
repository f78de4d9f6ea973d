#!/usr/bin/env python3
"""Grove benchmarks: the reference MLP against its peers, and GEMM throughput.

    GROVE_BENCH=1 scripts/setup.sh        # once: .venv with torch, onnxruntime, IREE
    .venv/bin/python bench/run.py         # ~2 min; prints tables, writes docs/perf.md

Part 1, MLP forward (models/mlp, 64 -> 128 -> 10, ReLU) at batch 1, 64, 1024, one worker
process per peer, all driven in one run:
  * Grove      bench/mlp_bench.c linked with the grovec output (libmlp.a) and libgrove_rt,
               timing `mlp_forward` from C; once with OpenBLAS on 1 thread, once on 2.
  * PyTorch    Debian's torch 1.13 CPU, eager, inference_mode, set_num_threads(2),
               OPENBLAS_NUM_THREADS=1 (its best configuration here: OpenBLAS's threads
               otherwise fight OpenMP's).
  * ONNX Runtime  the same torch model exported to ONNX, CPU EP, intra-op threads 2,
               ORT_ENABLE_ALL, sequential.
  * IREE       the ONNX file through iree-import-onnx + iree-compile (llvm-cpu, target-cpu=host),
               iree.runtime from Python on local-sync and on local-task (2 workers), plus
               iree-benchmark-module (C, no Python) on the better of the two drivers.
Each worker first runs the 450 held-out digits once; its logits are compared with a float64
NumPy reference and its accuracy is reported. Then R rounds: in each round every batch size
is measured by every worker in a rotating order (paired / interleaved), one sample = median
per-call time over ~S seconds. Reported: median over rounds of the sample medians, and the
median over rounds of the per-round ratio to PyTorch (paired ratio).

Part 2, GEMM (bench/gemm_bench.c): OpenBLAS cblas_sgemm vs Grove's matmul (bench/gemm.mlir
compiled by grovec; skipped with a note when absent) for the MLP's GEMM shapes and 1024^3,
OpenBLAS on 1 and 2 threads (Grove calls the same OpenBLAS through its runtime).

Every worker runs with GLIBC_TUNABLES (below: without them glibc maps and unmaps big buffers on
every call). A peer that is not installed or fails to build shows as "n/a (...)" instead of
stopping the run.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
MLP_DIR = ROOT / "models" / "mlp"
GLIBC_TUNABLES = ("glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:"
                  "glibc.malloc.trim_threshold=4294967296")
BIN_DIR = Path(sys.executable).parent  # venv bin: iree-compile, iree-import-onnx, ...
# (key, group, variant label, timed from)
VARIANTS = [
    ("torch", "torch", "eager, 2 threads", "py"),
    ("torch-1", "torch", "eager, 1 thread", "py"),
    ("grove-1", "grove", "1 GEMM thread", "C"),
    ("grove-2", "grove", "2 GEMM threads", "C"),
    ("ort", "ort", "intra-op 2 threads", "py"),
    ("iree-dyn-sync", "iree", "dynamic, local-sync", "py"),
    ("iree-dyn-task", "iree", "dynamic, local-task", "py"),
    ("iree-static-sync", "iree", "static, local-sync", "py"),
    ("iree-static-task", "iree", "static, local-task", "py"),
    ("iree-c-dyn-sync", "iree", "dynamic, local-sync", "C"),
    ("iree-c-dyn-task", "iree", "dynamic, local-task", "C"),
    ("iree-c-static-sync", "iree", "static, local-sync", "C"),
    ("iree-c-static-task", "iree", "static, local-task", "C"),
]
GROUPS = ["torch", "grove", "ort", "iree"]
GROUP_LABEL = {"torch": "PyTorch", "grove": "Grove", "ort": "ONNX Runtime", "iree": "IREE"}
IREE_FLAGS = ["--iree-input-type=onnx", "--iree-hal-target-device=local",
              "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]


# --------------------------------------------------------------------------- helpers
def log(msg):
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def sh(cmd, **kw):
    """Run a command; return (ok, combined output)."""
    log("$ " + " ".join(shlex.quote(str(c)) for c in cmd))
    try:
        p = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, **kw)
    except OSError as e:
        return False, str(e)
    return p.returncode == 0, p.stdout


def rel(path):
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


HEADER_NOTES = []  # problems met while building the Grove drivers, reported in the markdown
GROVE_BUILD = {}  # how the Grove drivers were linked, reported in the markdown


def first_error(text, limit=160):
    """The first compiler/linker error line of `text` (else its first line)."""
    for line in text.splitlines():
        if "error" in line and not line.startswith("[bench]"):
            return line.strip()[:limit]
    return first_line(text, limit)


def first_line(text, limit=120):
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("[bench]"):
            return line[:limit]
    return "no output"


def load_digits_bin(path):
    import numpy as np
    b = Path(path).read_bytes()
    if b[:4] != b"GRVD":
        raise ValueError(f"{path}: bad magic")
    _, n, d = np.frombuffer(b[4:16], "<u4")
    x = np.frombuffer(b, "<f4", n * d, 16).reshape(n, d)
    y = np.frombuffer(b, "<i4", n, 16 + 4 * n * d)
    return x, y


def tiled(x, b):
    import numpy as np
    reps = -(-b // len(x))
    return np.ascontiguousarray(np.tile(x, (reps, 1))[:b], dtype=np.float32)


def worker_env(openblas_threads=1, omp_threads=None):
    env = dict(os.environ)
    env["GLIBC_TUNABLES"] = GLIBC_TUNABLES
    env["OPENBLAS_NUM_THREADS"] = str(openblas_threads)
    if omp_threads is not None:
        env["OMP_NUM_THREADS"] = str(omp_threads)
    return env


# --------------------------------------------------------------------------- python workers
def ort_session(onnx_path):
    """ONNX Runtime in its best configuration here: CPU EP, 2 intra-op
    threads, sequential, every graph optimisation."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(onnx_path, so,
                                providers=["CPUExecutionProvider"])


def python_worker(kind, a):
    """A worker process: builds its peer, then serves `run`/`check`/`quit` on stdin."""
    import numpy as np
    x_all, y_all = load_digits_bin(a.digits)

    if kind in ("torch", "torch-1"):
        import torch
        from safetensors.torch import load_file
        torch.set_num_threads(1 if kind == "torch-1" else 2)
        w = load_file(a.weights)
        fc1 = torch.nn.Linear(64, 128)
        fc2 = torch.nn.Linear(128, 10)
        with torch.no_grad():
            fc1.weight.copy_(w["fc1.weight"]); fc1.bias.copy_(w["fc1.bias"])
            fc2.weight.copy_(w["fc2.weight"]); fc2.bias.copy_(w["fc2.bias"])
        model = torch.nn.Sequential(fc1, torch.nn.ReLU(), fc2).eval()

        def make(x):
            t = torch.from_numpy(x)

            def call():
                with torch.inference_mode():
                    return model(t)
            return call, lambda: call().numpy()
        info = f"torch {torch.__version__}, threads {torch.get_num_threads()}"
    elif kind == "ort":
        import onnxruntime as ort
        sess = ort_session(a.onnx)
        in_name = sess.get_inputs()[0].name
        out_names = [o.name for o in sess.get_outputs()]

        def make(x):
            feed = {in_name: x}

            def call():
                return sess.run(out_names, feed)
            return call, lambda: call()[0]
        info = f"onnxruntime {ort.__version__}, intra-op 2, ORT_ENABLE_ALL"
    elif kind.startswith("iree-"):
        # iree-{dyn,static}-{sync,task}; --vmfb is "B=path,..." (static: one module per batch size,
        # key 0 = dynamic batch)
        import iree.runtime as rt
        import iree.runtime.version as irv
        if kind.endswith("-task"):
            rt.flags.parse_flags("--task_topology_group_count=2")
            cfg = rt.Config("local-task")
        else:
            cfg = rt.Config("local-sync")
        fns = {}
        for item in a.vmfb.split(","):
            bsz, path = item.split("=", 1)
            ctx = rt.SystemContext(config=cfg)
            ctx.add_vm_module(rt.VmModule.mmap(cfg.vm_instance, path))
            fns[int(bsz)] = ctx.modules.module[a.iree_function]

        def make(x):
            fn = fns.get(len(x)) or fns.get(0)
            if fn is None:
                raise ValueError(f"no module compiled for batch {len(x)}")

            def call():
                return fn(x).to_host()
            return call, call
        info = (f"iree.runtime {irv.VERSION}, {cfg.device}" + (" (2 workers)" if kind.endswith("-task") else "")
                + (", batch-specialised modules" if "-static-" in kind else ", dynamic batch"))
    else:
        raise SystemExit(f"unknown worker {kind}")

    print(f"ready {info}", flush=True)
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        try:
            if parts[0] == "quit":
                break
            if parts[0] == "check":
                _, get = make(np.ascontiguousarray(x_all))
                logits = np.asarray(get(), dtype=np.float32)
                logits.tofile(parts[1])
                acc = float((logits.argmax(1) == y_all).mean())
                print(f"ok {len(y_all)} {acc:.6f}", flush=True)
            elif parts[0] == "run":
                b, secs = int(parts[1]), float(parts[2])
                call, _ = make(tiled(x_all, b))
                ts = time_calls(call, secs)
                ts.sort()
                n = len(ts)
                print(f"res {b} {n} {ts[n // 2]} {ts[0]} {ts[n // 10]} {ts[n * 9 // 10]}", flush=True)
            else:
                print("error unknown command", flush=True)
        except Exception as e:  # keep serving; the coordinator records the error
            print(f"error {type(e).__name__}: {e}".replace("\n", " "), flush=True)
    return 0


def time_calls(call, seconds, min_reps=20, max_reps=2_000_000):
    pc = time.perf_counter_ns
    warm_end = pc() + int(1e9 * min(0.05, seconds / 4))
    i = 0
    while i < 3 or pc() < warm_end:
        call()
        i += 1
    ts = []
    deadline = pc() + int(seconds * 1e9)
    while True:
        t0 = pc()
        call()
        t1 = pc()
        ts.append(t1 - t0)
        if len(ts) >= max_reps or (len(ts) >= min_reps and t1 >= deadline):
            return ts


# --------------------------------------------------------------------------- coordinator side
class Worker:
    """A running worker process (Python peer or the C Grove driver)."""

    def __init__(self, name, cmd, env, logdir):
        self.name, self.error, self.info = name, None, ""
        self.logpath = Path(logdir) / f"worker_{name}.log"
        log(f"start {name}: {' '.join(shlex.quote(str(c)) for c in cmd)}")
        try:
            self.logf = open(self.logpath, "w")
            self.p = subprocess.Popen([str(c) for c in cmd], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self.logf, text=True, env=env, bufsize=1)
        except OSError as e:
            self.p, self.error = None, str(e)
            return
        line = self._readline()
        if line is None or not line.startswith("ready"):
            self.error = (line or "").removeprefix("error ").strip() or self._stderr()
            self.close()
        else:
            self.info = line[len("ready"):].strip()

    def _readline(self):
        line = self.p.stdout.readline()
        return line.strip() if line else None

    def _stderr(self):
        """Last meaningful line of the worker's stderr log."""
        try:
            if self.p is not None:
                self.p.kill()
                self.p.wait(timeout=10)
            lines = [l.strip() for l in self.logpath.read_text(errors="replace").splitlines() if l.strip()]
            return lines[-1][:160] if lines else "no output"
        except Exception:
            return "no output"

    def ask(self, cmd):
        if self.p is None:
            return None
        try:
            self.p.stdin.write(cmd + "\n")
            self.p.stdin.flush()
        except (BrokenPipeError, OSError):
            self.error = "worker died: " + self._stderr()
            self.p = None
            return None
        line = self._readline()
        if line is None:
            self.error = "worker died: " + self._stderr()
            self.p = None
        return line

    def close(self):
        if self.p is not None:
            try:
                self.p.stdin.write("quit\n")
                self.p.stdin.flush()
                self.p.wait(timeout=10)
            except Exception:
                self.p.kill()
            self.p = None


class IreeBenchModule:
    """iree-benchmark-module (C, no Python): one process per sample."""

    def __init__(self, name, tool, vmfbs, function, driver):
        self.name, self.tool, self.vmfbs, self.function, self.driver = name, tool, vmfbs, function, driver
        self.error = None
        self.info = (f"iree-benchmark-module, {driver}" + (" (2 workers)" if driver == "local-task" else "")
                     + (", batch-specialised modules" if 0 not in vmfbs else ", dynamic batch")
                     + "; input: constant 0.5")

    def ask(self, cmd):
        parts = cmd.split()
        if parts[0] != "run":
            return "error unsupported"
        b, secs = int(parts[1]), float(parts[2])
        vmfb = self.vmfbs.get(b) or self.vmfbs.get(0)
        if vmfb is None:
            return f"error no module for batch {b}"
        args = [self.tool, f"--module={vmfb}", f"--function={self.function}", f"--device={self.driver}",
                f"--input={b}x64xf32=0.5", f"--benchmark_min_time={max(secs / 3, 0.01):.3f}s",
                "--benchmark_repetitions=3", "--benchmark_format=json"]
        if self.driver == "local-task":
            args.append("--task_topology_group_count=2")
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=worker_env())
        if p.returncode != 0:
            return "error " + first_line(p.stderr or p.stdout)
        try:
            data = json.loads(p.stdout)
        except json.JSONDecodeError:
            return "error cannot parse iree-benchmark-module output"
        runs = [r for r in data.get("benchmarks", []) if r.get("run_type") == "iteration"]
        if not runs:
            return "error no benchmark results"
        unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[runs[0].get("time_unit", "ns")]
        ts = sorted(r["real_time"] * unit for r in runs)
        iters = sum(int(r.get("iterations", 1)) for r in runs)
        return f"res {b} {iters} {int(statistics.median(ts))} {int(ts[0])} {int(ts[0])} {int(ts[-1])}"

    def close(self):
        pass


def export_onnx(weights, path):
    import torch
    from safetensors.torch import load_file
    torch.set_num_threads(1)
    w = load_file(weights)
    fc1, fc2 = torch.nn.Linear(64, 128), torch.nn.Linear(128, 10)
    with torch.no_grad():
        fc1.weight.copy_(w["fc1.weight"]); fc1.bias.copy_(w["fc1.bias"])
        fc2.weight.copy_(w["fc2.weight"]); fc2.bias.copy_(w["fc2.bias"])
    model = torch.nn.Sequential(fc1, torch.nn.ReLU(), fc2).eval()
    torch.onnx.export(model, torch.zeros(1, 64), str(path), input_names=["x"], output_names=["logits"],
                      dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}}, opset_version=17)


def find_runtime_lib(build, explicit=None):
    if explicit:
        return Path(explicit) if Path(explicit).exists() else None
    for pat in ("**/libgrove_rt.a", "**/libgrove_rt.so"):
        hits = sorted(glob.glob(str(build / pat), recursive=True))
        if hits:
            return Path(hits[0])
    return None


def cc():
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or "cc"


def pc_private_libs(rt_lib):
    """Libs.private of the grove.pc next to the runtime (what a static link needs), or None."""
    for pc in (rt_lib.parent / "pkgconfig" / "grove.pc", rt_lib.parent.parent / "grove.pc",
               rt_lib.parent / "grove.pc"):
        if pc.exists():
            for line in pc.read_text().splitlines():
                if line.startswith("Libs.private:"):
                    return line.split(":", 1)[1].split()
    return None


def link_variants(rt_lib):
    """Ways to link libgrove_rt, tried in order: [(description, flags)].

    The static archive needs the runtime's own dependencies on the link line (OpenBLAS, and oneDNN
    plus OpenMP when it was built with them); grove.pc's Libs.private names them. The shared
    library carries its dependencies itself."""
    out = []
    if rt_lib.suffix == ".a":
        deps = pc_private_libs(rt_lib) or ["-lopenblas", "-lpthread", "-lm", "-lstdc++"]
        out.append(("static libgrove_rt.a + grove.pc Libs.private",
                    [str(rt_lib), *deps, "-fopenmp", "-ldl"]))
        so = rt_lib.with_suffix(".so")
        if so.exists():
            rt_lib = so
    if rt_lib.suffix == ".so":
        out.append(("shared libgrove_rt.so", [str(rt_lib), f"-Wl,-rpath,{rt_lib.parent}", "-lm"]))
    return out


def rt_gemm_backend(rt_lib):
    """'oneDNN' if the runtime calls dnnl_sgemm, else 'OpenBLAS' (read with nm)."""
    nm = shutil.which("nm")
    if nm:
        p = subprocess.run([nm, "-u"] + (["-D"] if rt_lib.suffix == ".so" else []) + [str(rt_lib)],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if "dnnl_sgemm" in p.stdout:
            return "oneDNN"
    return "OpenBLAS"


def link_c(cmd_head, objs, rt_lib, exe):
    """Compiles and links a C driver against libgrove_rt, trying each way to link. Returns
    (ok, how, first error)."""
    err = ""
    for how, flags in link_variants(rt_lib):
        ok, text = sh(cmd_head + ["-x", "none", *objs, *flags, "-o", exe])
        if ok:
            return True, how, ""
        err = err or first_error(text)
    return False, "", err


def build_grove_model(grovec, mlir, out):
    """grovec MLIR -o OUT --target=host -O3; returns (module name, error)."""
    if not grovec.exists():
        return None, f"n/a ({rel(grovec)} not built)"
    if not mlir.exists():
        return None, f"n/a ({rel(mlir)} missing)"
    out.mkdir(parents=True, exist_ok=True)
    ok, text = sh([grovec, mlir, "-o", out, "--target=host", "-O3"], cwd=ROOT)
    if not ok:
        return None, f"n/a (grovec failed: {first_error(text)})"
    libs = sorted(out.glob("lib*.a"))
    if not libs:
        return None, "n/a (grovec wrote no lib*.a)"
    return libs[0].stem[3:], None


def build_grove_mlp(a, out):
    grovec = Path(a.grovec)
    name, err = build_grove_model(grovec, Path(a.mlp_mlir), out / "mlp")
    if err:
        return None, err
    rt = find_runtime_lib(Path(a.build), a.grove_rt)
    if rt is None:
        return None, "n/a (libgrove_rt not found under build/)"
    exe = out / "mlp_bench"
    head = ["c++", "-x", "c", "-O2", "-std=c11", "-I", out / "mlp", "-I", ROOT / "runtime" / "include",
            BENCH / "mlp_bench.c"]
    ok, how, err = link_c(head, [out / "mlp" / f"lib{name}.a"], rt, exe)
    if not ok:
        # the generated header may be what fails: retry with the declarations docs/abi.md promises
        ok, how, err2 = link_c(head[:5] + ["-DMLP_BENCH_NO_HEADER"] + head[5:], [out / "mlp" / f"lib{name}.a"],
                               rt, exe)
        if not ok:
            return None, f"n/a (building mlp_bench failed: {err2 or err})"
        HEADER_NOTES.append(f"`mlp.h` generated by grovec does not compile ({err}); "
                            "mlp_bench was built with its own declarations of `mlp_model` and `mlp_forward`.")
    GROVE_BUILD["mlp"] = f"{rel(rt)} ({how}); GEMM backend: {rt_gemm_backend(rt)}"
    return exe, None


def build_gemm(a, out):
    """Builds gemm_bench, with Grove's matmul when bench/gemm.mlir compiles, and with oneDNN when
    its header is installed. Returns (exe, note)."""
    exe = out / "gemm_bench"
    dnnl = ["-DGEMM_BENCH_DNNL"] if Path("/usr/include/dnnl.h").exists() else []
    dnnl_lib = ["-ldnnl"] if dnnl else []
    head = ["c++", "-x", "c", "-O2", "-std=c11", "-fopenmp", *dnnl, "-I", ROOT / "runtime" / "include",
            BENCH / "gemm_bench.c"]
    note = None
    name, err = build_grove_model(Path(a.grovec), Path(a.gemm_mlir), out / "gemm")
    rt = find_runtime_lib(Path(a.build), a.grove_rt) if not err else None
    if err:
        note = err.replace("n/a (", "Grove column skipped (").rstrip(")") + ")"
    elif rt is None:
        note = "Grove column skipped (libgrove_rt not found under build/)"
    else:
        ok, how, err = link_c(head[:6] + [f"-DGROVE_MODEL_DEF={name}_model"] + head[6:],
                              [out / "gemm" / f"lib{name}.a", *dnnl_lib], rt, exe)
        if ok:
            GROVE_BUILD["gemm"] = f"{rel(rt)} ({how}); GEMM backend: {rt_gemm_backend(rt)}"
            return exe, None
        note = f"Grove column skipped (building gemm_bench with Grove failed: {err})"
    ok, text = sh(head + ["-o", exe, *dnnl_lib, "-lopenblas"])
    if not ok:
        return None, f"gemm_bench does not build: {first_error(text)}"
    return exe, note


def build_iree(onnx_path, out, static_batches):
    """iree-import-onnx + iree-compile. Returns ({0: dyn vmfb, B: static vmfb...}, function, error)."""
    imp, comp = BIN_DIR / "iree-import-onnx", BIN_DIR / "iree-compile"
    if not imp.exists() or not comp.exists():
        return None, None, "n/a (not installed: GROVE_BENCH=1 scripts/setup.sh)"
    mlir = out / "mlp_iree.mlir"
    ok, text = sh([imp, onnx_path, "-o", mlir])
    if not ok:
        return None, None, f"n/a (iree-import-onnx failed: {first_line(text)})"
    src = mlir.read_text()
    m = re.search(r"func\.func @(\w+)\(", src)
    fn = m.group(1) if m else "main_graph"
    vmfbs = {}
    for b in [0] + sorted(set(static_batches)):
        path = mlir
        if b:  # specialise the dynamic batch dimension: !torch.vtensor<[?,64],f32> -> [B,64]
            path = out / f"mlp_iree_b{b}.mlir"
            path.write_text(src.replace("[?,", f"[{b},"))
        vmfb = out / (f"mlp_iree_b{b}.vmfb" if b else "mlp_iree.vmfb")
        ok, text = sh([comp, path, *IREE_FLAGS, "-o", vmfb])
        if not ok:
            return None, None, f"n/a (iree-compile failed: {first_line(text)})"
        vmfbs[b] = vmfb
    return vmfbs, fn, None


def cpu_busy_seconds():
    """Busy CPU seconds of the whole machine since boot (all cores), from /proc/stat."""
    try:
        f = open("/proc/stat").readline().split()[1:]
        user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in f[:8])
        return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return None


FOREIGN_LIMIT = 0.15  # cores of other load during a sample above which it is measured again


def proc_cpu_seconds(wk):
    """CPU seconds (all threads) of a live worker process; 0 for one-shot tools."""
    p = getattr(wk, "p", None)
    if not isinstance(p, subprocess.Popen):
        return 0.0
    try:
        f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def own_cpu_seconds():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def wait_idle(limit_s, threshold=0.1):
    """Waits (up to limit_s) for a 2-second window in which the machine is < threshold busy."""
    end = time.time() + limit_s
    while True:
        b0, t0 = cpu_busy_seconds(), time.time()
        time.sleep(2)
        if b0 is None:
            return None
        busy = (cpu_busy_seconds() - b0) / (time.time() - t0) / (os.cpu_count() or 1)
        if busy < threshold or time.time() >= end:
            return busy
        log(f"machine {busy:.0%} busy; waiting for it to go idle (--wait-idle)")


def openblas_corename():
    import ctypes
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except Exception:
        return None


def importable(mod):
    import importlib.util
    return importlib.util.find_spec(mod) is not None


# --------------------------------------------------------------------------- formatting
def fmt_time(ns):
    if ns is None:
        return "—"
    us = ns / 1e3
    if us < 10:
        return f"{us:.2f} µs"
    if us < 1000:
        return f"{us:.1f} µs"
    return f"{us / 1e3:.2f} ms"


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def machine_info():
    cpu = platform.processor()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(next(l for l in open("/proc/meminfo") if l.startswith("MemTotal")).split()[1])
        mem = f"{kb / 2**20:.0f} GiB"
    except Exception:
        pass
    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    isa = "AVX-512" if "avx512f" in flags else ("AVX2" if "avx2" in flags else "")
    # What bf16 GEMMs can use: AVX512_BF16's dot products, AMX's tiles.
    bf16 = [name for flag, name in (("avx512_bf16", "AVX512_BF16"),
                                    ("amx_bf16", "AMX-BF16")) if flag in flags]
    isa += f", bf16: {' + '.join(bf16)}" if bf16 else ", no bf16 instructions"
    osr = ""
    try:
        osr = next(l for l in open("/etc/os-release") if l.startswith("PRETTY_NAME")).split("=", 1)[1].strip().strip('"')
    except Exception:
        pass
    return f"{cpu} ({isa}), {os.cpu_count()} cores, {mem}; {osr}; Linux {platform.release()}"


def versions():
    v = {"python": platform.python_version()}
    for mod, key in (("numpy", "numpy"), ("torch", "torch"), ("onnxruntime", "onnxruntime"), ("onnx", "onnx")):
        try:
            v[key] = __import__(mod).__version__
        except Exception:
            v[key] = "not installed"
    try:
        import iree.runtime.version as irv
        v["iree"] = irv.VERSION
    except Exception:
        v["iree"] = "not installed"
    return v


# --------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", default="1,64,1024")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--seconds", type=float, default=0.3, help="time per sample (default 0.3 s)")
    ap.add_argument("--gap", type=float, default=0.2,
                    help="idle seconds before each sample, so that the previous worker's spinning threads "
                         "sleep (default 0.2)")
    ap.add_argument("--gemm-seconds", type=float, default=0.1)
    ap.add_argument("--retries", type=int, default=3,
                    help="re-measure a sample up to N times when other processes used more than "
                         f"{FOREIGN_LIMIT} cores during it (default 3)")
    ap.add_argument("--wait-idle", type=float, default=0, metavar="S",
                    help="spend up to S seconds in all waiting for quiet windows: before starting, before "
                         "re-measuring a disturbed sample (<= 60 s each) and before the GEMM run "
                         "(default 0: don't wait)")
    ap.add_argument("--gemm-shapes", default=None,
                    help="MxNxK list; default: the MLP's GEMMs at each batch, and 1024x1024x1024")
    ap.add_argument("--build", default=str(ROOT / "build"), help="Grove build directory")
    ap.add_argument("--grovec", default=None, help="default: BUILD/bin/grovec")
    ap.add_argument("--grove-rt", default=None, help="libgrove_rt.a or .so (default: searched for under BUILD)")
    ap.add_argument("--out", default=str(ROOT / "build-bench"),
                    help="scratch directory for the artefacts (default: build-bench/, gitignored)")
    ap.add_argument("--peers", default="grove,torch,ort,iree",
                    help="subset of grove,torch,ort,iree (default all)")
    ap.add_argument("--no-gemm", action="store_true")
    ap.add_argument("--mlp-mlir", default=str(MLP_DIR / "mlp.mlir"), help="Grove MLP model (default models/mlp/mlp.mlir)")
    ap.add_argument("--gemm-mlir", default=str(BENCH / "gemm.mlir"), help="Grove matmul model (default bench/gemm.mlir)")
    ap.add_argument("--write", default=str(ROOT / "docs" / "perf.md"),
                    help="markdown report path ('' to skip; default docs/perf.md)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--digits", default=str(MLP_DIR / "digits_test.bin"), help=argparse.SUPPRESS)
    ap.add_argument("--weights", default=str(MLP_DIR / "mlp.safetensors"), help=argparse.SUPPRESS)
    ap.add_argument("--onnx", help=argparse.SUPPRESS)
    ap.add_argument("--vmfb", help=argparse.SUPPRESS)
    ap.add_argument("--iree-function", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return python_worker(a.worker, a)

    import numpy as np
    a.grovec = a.grovec or str(Path(a.build) / "bin" / "grovec")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    batches = [int(b) for b in a.batches.split(",")]
    peers = set(a.peers.split(","))
    idle_budget = [a.wait_idle]  # seconds of waiting for quiet windows left, for the whole run

    def wait_quiet(cap):
        if idle_budget[0] > 0:
            t0 = time.time()
            wait_idle(min(cap, idle_budget[0]))
            idle_budget[0] -= time.time() - t0

    wait_quiet(a.wait_idle)
    started = time.time()
    busy0 = cpu_busy_seconds()
    load_before = os.getloadavg()
    date = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")

    # float64 reference
    from safetensors.numpy import load_file
    w = {k: v.astype(np.float64) for k, v in load_file(a.weights).items()}
    x_all, y_all = load_digits_bin(a.digits)
    ref = np.maximum(x_all @ w["fc1.weight"].T + w["fc1.bias"], 0) @ w["fc2.weight"].T + w["fc2.bias"]

    # ---- build / set up every peer; failures become n/a cells
    me = [sys.executable, str(Path(__file__).resolve()), "--digits", a.digits, "--weights", a.weights]
    variants = [v for v in VARIANTS if v[1] in peers]
    unavailable = {}
    workers = []

    def start(key, cmd, env):
        workers.append(Worker(key, cmd, env, out))

    if "torch" in peers:
        for k in ("torch", "torch-1"):
            if importable("torch"):
                start(k, me + ["--worker", k], worker_env(1))
            else:
                unavailable[k] = "n/a (not installed)"

    if "grove" in peers:
        exe, err = build_grove_mlp(a, out)
        for t in (1, 2):
            if err:
                unavailable[f"grove-{t}"] = err
            else:
                start(f"grove-{t}", [exe, a.weights, a.digits], worker_env(t, t))

    onnx_path, onnx_err = out / "mlp.onnx", None
    if peers & {"ort", "iree"}:
        if not importable("torch"):
            onnx_err = "n/a (torch, needed for the ONNX export, is not installed)"
        else:
            try:
                export_onnx(a.weights, onnx_path)
            except Exception as e:
                onnx_err = f"n/a (ONNX export failed: {type(e).__name__}: {str(e)[:80]})"

    if "ort" in peers:
        if not importable("onnxruntime"):
            unavailable["ort"] = "n/a (not installed)"
        elif onnx_err:
            unavailable["ort"] = onnx_err
        else:
            start("ort", me + ["--worker", "ort", "--onnx", str(onnx_path)], worker_env(1))

    c_tools = []
    if "iree" in peers:
        iree_keys = [v[0] for v in variants if v[1] == "iree"]
        err, vmfbs, fn = None, None, None
        if not importable("iree.runtime"):
            err = "n/a (not installed: GROVE_BENCH=1 scripts/setup.sh)"
        elif onnx_err:
            err = onnx_err
        else:
            vmfbs, fn, err = build_iree(onnx_path, out, batches + [len(x_all)])
        if err:
            unavailable.update({k: err for k in iree_keys})
        else:
            dyn = {0: vmfbs[0]}
            static = {b: v for b, v in vmfbs.items() if b}
            for k in iree_keys:
                mods = dyn if "-dyn-" in k else static
                if k.startswith("iree-c-"):
                    tool = BIN_DIR / "iree-benchmark-module"
                    if not tool.exists():
                        unavailable[k] = "n/a (iree-benchmark-module not installed)"
                        continue
                    drv = "local-task" if k.endswith("-task") else "local-sync"
                    c_tools.append(IreeBenchModule(k, str(tool), mods, fn, drv))
                else:
                    start(k, me + ["--worker", k, "--iree-function", fn,
                                   "--vmfb", ",".join(f"{b}={v}" for b, v in mods.items())], worker_env(1))

    for wk in workers:
        if wk.error:
            unavailable[wk.name] = f"n/a ({wk.error[:100]})"
            log(f"{wk.name}: {wk.error}")
    workers = [wk for wk in workers if not wk.error]

    # ---- correctness on the held-out set
    checks = {}
    for wk in workers:
        path = out / f"logits_{wk.name}.f32"
        r = wk.ask(f"check {path}")
        if r and r.startswith("ok"):
            logits = np.fromfile(path, np.float32).reshape(-1, 10)
            checks[wk.name] = (float(r.split()[2]), float(np.abs(logits - ref).max()))
        else:
            checks[wk.name] = None
            log(f"{wk.name}: check failed: {r or wk.error}")
    infos = {wk.name: wk.info for wk in workers + c_tools}

    # ---- interleaved rounds
    samples, errors = {}, {}  # (key, batch) -> [median ns per round] / last error
    retried, contaminated = [0], []
    retries, streak = [a.retries], [0]  # retries drop to 0 after 6 disturbed samples in a row
    kept_load = [0.0, 0.0]  # other processes' CPU seconds during the kept samples, their duration
    everyone = workers + c_tools
    log(f"measuring: {len(everyone)} variants x {len(batches)} batches x {a.rounds} rounds x {a.seconds} s")
    for r in range(a.rounds):
        for bi, b in enumerate(batches):
            k = (r + bi) % len(everyone) if everyone else 0
            for wk in everyone[k:] + everyone[:k]:
                if getattr(wk, "p", True) is None:
                    continue  # died earlier
                for attempt in range(retries[0] + 1):
                    # let the previous worker's spinning threads (OpenBLAS, OpenMP, ORT) go to sleep
                    time.sleep(a.gap)
                    b0, w0, o0, t0 = cpu_busy_seconds(), proc_cpu_seconds(wk), own_cpu_seconds(), time.time()
                    res = wk.ask(f"run {b} {a.seconds}")
                    if b0 is None or not res or not res.startswith("res"):
                        break
                    dt = max(time.time() - t0, 1e-3)
                    foreign = ((cpu_busy_seconds() - b0) - (proc_cpu_seconds(wk) - w0)
                               - (own_cpu_seconds() - o0)) / dt
                    if foreign < FOREIGN_LIMIT or attempt == retries[0]:
                        kept_load[0] += max(foreign, 0.0) * dt
                        kept_load[1] += dt
                    if foreign < FOREIGN_LIMIT:
                        streak[0] = 0
                        break
                    if attempt == retries[0]:
                        contaminated.append(f"{wk.name}@{b}")
                        log(f"{wk.name} batch {b}: kept despite {foreign:.2f} cores of other load")
                        streak[0] += 1
                        if retries[0] and streak[0] >= 6:
                            retries[0] = 0
                            log("sustained load from other processes: no more re-measuring in this run")
                    else:
                        retried[0] += 1
                        log(f"{wk.name} batch {b}: other processes used {foreign:.2f} cores; measuring again")
                        wait_quiet(60)
                if res and res.startswith("res"):
                    samples.setdefault((wk.name, b), []).append(int(res.split()[3]))
                else:
                    errors[(wk.name, b)] = (res or wk.error or "no answer").removeprefix("error ")
                    log(f"{wk.name} batch {b}: {errors[(wk.name, b)]}")
        log(f"round {r + 1}/{a.rounds} done")
    for wk in everyone:
        wk.close()

    # ---- aggregate
    def med(key, b):
        s = samples.get((key, b))
        return statistics.median(s) if s else None

    def base(b):  # PyTorch's faster configuration at batch b: the ratios' baseline
        ks = [k for k in ("torch", "torch-1") if med(k, b) is not None]
        return min(ks, key=lambda k: med(k, b)) if ks else "torch"

    def ratio(key, b):
        s, t = samples.get((key, b)), samples.get((base(b), b))
        if not s or not t:
            return None
        if len(s) != len(t):  # a round is missing: not paired
            return statistics.median(s) / statistics.median(t)
        return statistics.median(x / y for x, y in zip(s, t))

    def reason(key, b):
        if key in unavailable:
            return unavailable[key]
        if (key, b) in errors:
            return f"error: {errors[(key, b)][:80]}"
        return "n/a"

    def tcell(key, b, with_ratio=True):
        m = med(key, b)
        if m is None:
            return reason(key, b)
        r = ratio(key, b) if with_ratio else None
        return fmt_time(m) + (f" ({r:.2f}×)" if r is not None and key != base(b) else "")

    groups = [g for g in GROUPS if g in peers]
    main_rows, best_of = [], {}
    for b in batches:
        row = [b]
        for g in groups:
            keys = [v[0] for v in variants if v[1] == g and med(v[0], b) is not None]
            if not keys:
                first = next(v[0] for v in variants if v[1] == g)
                row.append(reason(first, b))
                continue
            k = min(keys, key=lambda k: med(k, b))
            best_of[(g, b)] = k
            desc = next(f"{v[2]}, {v[3]}" for v in variants if v[0] == k)
            r = ratio(k, b)
            row.append(f"**{fmt_time(med(k, b))}**" + (f" ({r:.2f}×)" if k != base(b) and r else "")
                       + (f" — {desc}" if sum(v[1] == g for v in variants) > 1 else ""))
        main_rows.append(row)
    main_md = md_table(["batch"] + [GROUP_LABEL[g] for g in groups], main_rows)

    detail_rows = [[GROUP_LABEL[v[1]], v[2], v[3]] + [tcell(v[0], b) for b in batches] for v in variants]
    detail_md = md_table(["peer", "variant", "timed from"] + [f"batch {b}" for b in batches], detail_rows)
    tp_rows = [[GROUP_LABEL[v[1]], v[2]] + [(f"{b / med(v[0], b) * 1e6:.1f}" if med(v[0], b) else "—")
                                          for b in batches] for v in variants]
    tp_md = md_table(["peer", "variant"] + [f"batch {b}" for b in batches], tp_rows)

    check_rows = []
    for v in variants:
        k = v[0]
        if k in unavailable:
            check_rows.append([GROUP_LABEL[v[1]], v[2], unavailable[k], "", ""])
        elif k.startswith("iree-c-"):
            check_rows.append([GROUP_LABEL[v[1]], v[2], "(same modules as IREE py)", "", infos.get(k, "")])
        elif checks.get(k):
            acc, diff = checks[k]
            check_rows.append([GROUP_LABEL[v[1]], v[2], f"{acc:.6f}", f"{diff:.1e}", infos.get(k, "")])
        else:
            check_rows.append([GROUP_LABEL[v[1]], v[2], "check failed", "", infos.get(k, "")])
    check_md = md_table(["peer", "variant", "accuracy", "max abs diff", "configuration"], check_rows)
    ref_acc_file = MLP_DIR / "reference_accuracy.txt"
    ref_acc = ref_acc_file.read_text().strip() if ref_acc_file.exists() else "?"

    # ---- GEMM
    gemm_md, gemm_note, gemm_info = "", None, {}
    if not a.no_gemm:
        shapes = a.gemm_shapes.split(",") if a.gemm_shapes else \
            [s for b in batches for s in (f"{b}x128x64", f"{b}x10x128")] + ["1024x1024x1024"] + \
            [f"{b}x1000x2048t" for b in (8, 16, 64)]
        exe, gemm_note = build_gemm(a, out)
        gs = {}
        if exe:
            cmd = [exe, "--threads", "1,2", "--seconds", a.gemm_seconds, "--rounds", a.rounds, "--gap", a.gap,
                   *shapes]
            log("gemm: " + " ".join(map(str, cmd)))
            wait_quiet(120)
            b0, o0, t0 = cpu_busy_seconds(), own_cpu_seconds(), time.time()
            p = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=worker_env(1))
            notes = []
            if b0 is not None:
                gf = max(0.0, (cpu_busy_seconds() - b0) - (own_cpu_seconds() - o0)) / max(time.time() - t0, 1e-3)
                notes.append(f"other processes used {gf:.2f} cores on average during the GEMM run"
                             + (" — **distorted (2-thread numbers especially)**" if gf > 0.05 else ""))
            for line in p.stdout.splitlines():
                f = line.split()
                if f[:1] == ["sample"]:
                    gs.setdefault((f[1], int(f[2]), f"{f[3]}x{f[4]}x{f[5]}"), []).append(int(f[6]))
                elif f[:1] == ["info"]:
                    gemm_info[f[1]] = " ".join(f[2:])
                elif f[:1] == ["note"]:
                    notes.append(" ".join(f[1:]))
            if p.returncode != 0:
                notes.append(f"gemm_bench exited {p.returncode}: {first_line(p.stderr)}")
            gemm_note = "; ".join(([gemm_note] if gemm_note else []) + notes) or None

            def gcell(impl, t, s):
                v = gs.get((impl, t, s))
                if not v:
                    return "n/a"
                m, n, k = map(int, s.rstrip("t").split("x"))
                md = statistics.median(v)
                return f"{2 * m * n * k / md:.1f} ({fmt_time(md)})"
            has_grove = any(k[0] == "grove" for k in gs)
            has_dnnl = any(k[0] == "dnnl" for k in gs)
            gh = ["M×N×K"] + [f"OpenBLAS {t} thr" for t in (1, 2)] + \
                 ([f"oneDNN {t} thr" for t in (1, 2)] if has_dnnl else []) + \
                 ([f"Grove {t} thr" for t in (1, 2)] if has_grove else ["Grove"])
            grows = [[s.rstrip("t").replace("x", "×") + (" (Bᵀ)" if s.endswith("t") else "")] + [gcell("openblas", t, s) for t in (1, 2)] +
                     ([gcell("dnnl", t, s) for t in (1, 2)] if has_dnnl else []) +
                     ([gcell("grove", t, s) for t in (1, 2)] if has_grove else ["n/a (see note)"])
                     for s in shapes]
            gemm_md = md_table(gh, grows)
        else:
            gemm_md, gemm_note = f"Not run: {gemm_note}", None

    elapsed = time.time() - started
    load_after = os.getloadavg()
    foreign = None
    if busy0 is not None and kept_load[1] > 0:
        foreign = kept_load[0] / kept_load[1]
    if contaminated:
        log(f"warning: {len(contaminated)} sample(s) measured while other processes were busy; "
            "rerun on an idle machine (e.g. with --wait-idle 600)")
    foreign_txt = "unknown" if foreign is None else f"{foreign:.2f} cores on average during the MLP samples kept"
    foreign_txt += (f"; {retried[0]} MLP sample(s) re-measured because other processes used > {FOREIGN_LIMIT} "
                    "cores during them" + (f"; **{len(contaminated)} kept after up to {a.retries} retries, distorted**: "
                                           f"{', '.join(contaminated[:12])}" if contaminated else
                                           "; every MLP sample kept was measured with the machine otherwise idle"))
    v = versions()
    corename = gemm_info.get("openblas_corename") or openblas_corename() or "?"
    env_line = (f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')} "
                f"(OpenBLAS runs its {corename} kernels), "
                f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE', '(unset)')}, `GLIBC_TUNABLES={GLIBC_TUNABLES}`")
    cmdline = ".venv/bin/python bench/run.py " + " ".join(shlex.quote(x) for x in sys.argv[1:])

    # ---- report
    gemm_section = "" if a.no_gemm else f"""## GEMM throughput: GFLOP/s (median time per call)

C[M,N] = A[M,K] · B[K,N], f32, row-major, neither transposed, except in the "(Bᵀ)" rows, where B is stored N×K
(C = A·Bᵀ, a dense layer: `matmul_nt`). `bench/gemm_bench.c`: OpenBLAS = `cblas_sgemm`
and oneDNN = `dnnl_sgemm` called from C, with `openblas_set_num_threads(n)` and `omp_set_num_threads(n)`;
Grove = `grove_invoke` on the matmul entry that grovec compiles from `bench/gemm.mlir` (argument checks and
result allocation included), linked with {GROVE_BUILD.get("gemm", "—")}. Shapes: the MLP's
two GEMMs at each batch size (x·W1ᵀ: B×128×64, h·W2ᵀ: B×10×128), 1024³, and ResNeSt-50's classifier
(2048 → 1000) at 8, 16 and 64 images with its weights as stored: oneDNN 2.6's `dnnl_sgemm` is slow on A·Bᵀ
from 16 rows, which Grove's runtime computes transposed instead (runtime/src/host/Blas.cpp). Implementations
alternate within each round; median over {a.rounds} rounds of {a.gemm_seconds} s each.

{gemm_md}
{("" if not gemm_note else chr(10) + "Note: " + gemm_note + chr(10))}"""
    md = f"""# Grove performance

Generated by `bench/run.py` on {date} ({elapsed:.0f} s). Numbers drift 10–30% between runs on these shared
VMs: compare ratios within one run, not absolute times across runs.

* **Machine:** {machine_info()}
* **Other processes during the run:** {foreign_txt} (from /proc/stat minus this run's own CPU time); load
  average (1 min) {load_before[0]:.2f} before, {load_after[0]:.2f} after
* **Versions:** {", ".join(f"{k} {val}" for k, val in v.items())}; {gemm_info.get('openblas_config', 'OpenBLAS ?')}
* **Environment (every worker):** {env_line}
* **Commands:** `GROVE_BENCH=1 scripts/setup.sh` (once), `{cmdline.strip()}`
* **Method:** one worker process per peer variant; {a.rounds} rounds; in each round every batch size is measured
  by every variant in rotating order; one sample = median per-call time over {a.seconds} s after a warm-up.
  Tables give the median over rounds, and in parentheses the median of the per-round ratios to PyTorch in
  its faster configuration at that batch size (paired; < 1× is faster than PyTorch).

## MLP forward (models/mlp: 64 → 128 → 10, ReLU): median time per call, best variant of each peer

{main_md}

### Every variant (time per call, ratio to PyTorch)

{detail_md}

Throughput, thousand samples per second:

{tp_md}

### Configuration and correctness on the {len(y_all)} held-out digits

Accuracy of the training run (PyTorch): {ref_acc}. max abs diff = largest absolute difference of the logits from
a float64 NumPy evaluation of the same weights.

{check_md}

Notes:
{"".join(f"* **Build problem:** {n}" + chr(10) for n in HEADER_NOTES)}* **Timed from.** Grove is timed from C (`bench/mlp_bench.c`: typed `mlp_forward` + releasing its result,
  `clock_gettime`). PyTorch, ONNX Runtime and IREE "py" are timed from Python (`perf_counter_ns` around one
  call, which includes each binding's Python overhead: several µs, dominant at batch 1). IREE "C" is
  `iree-benchmark-module` (no Python; mean over its own iterations, median of 3 repetitions).
* **Grove**: `grovec models/mlp/mlp.mlir --target=host -O3`, compiled once with a dynamic batch
  (`tensor<?x64xf32>`); linked with {GROVE_BUILD.get("mlp", "—")}. Its matmuls go through
  `grove_rt_matmul_f32` to that GEMM library; "n GEMM threads" = OMP_NUM_THREADS=n and OPENBLAS_NUM_THREADS=n
  for the process (the runtime itself runs GEMMs under 1 MFLOP on one thread).
* **PyTorch**: Debian's torch 1.13 CPU, eager, `inference_mode`, OPENBLAS_NUM_THREADS=1,
  `torch.set_num_threads(2)` (its best configuration on an idle machine, per the shared toolchain notes) and
  `set_num_threads(1)` (much faster than 2 threads whenever another process holds a core: OpenMP's barrier
  then waits for a descheduled thread).
* **ONNX Runtime**: `torch.onnx.export` (opset 17, dynamic batch) of the same weights; CPU EP,
  `intra_op_num_threads=2`, `ORT_ENABLE_ALL`, sequential execution.
* **IREE**: the same ONNX file through `iree-import-onnx` and `iree-compile {" ".join(IREE_FLAGS[1:])}`.
  "dynamic" = one module with a dynamic batch (the same model as Grove's); "static" = one module per batch
  size with the batch dimension specialised (IREE's best configuration: 2–3× faster at batch 1024).
  local-task runs 2 workers (`--task_topology_group_count=2`), local-sync runs on the calling thread.

{gemm_section}"""
    print(md)
    if a.write:
        out = Path(a.write)
        out.parent.mkdir(parents=True, exist_ok=True)
        # Sections other benchmarks own (<!-- name: written by ... -->
        # ... <!-- /name -->) are carried over unchanged.
        kept = []
        if out.exists():
            kept = [m.group(0) for m in re.finditer(
                r"<!-- ([\w-]+): written by .*?<!-- /\1 -->",
                out.read_text(), re.S)]
        out.write_text(md.rstrip() + "".join("\n\n" + k for k in kept) + "\n")
        log(f"wrote {a.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
