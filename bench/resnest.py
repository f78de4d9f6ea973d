#!/usr/bin/env python3
"""ResNeSt-50 forward on the host: Grove against PyTorch, ONNX Runtime and IREE.

    .venv/bin/python bench/resnest.py            # ~10 min the first time (compiles), ~7 min after;
                                                 # prints a table, writes its section of docs/perf.md
    .venv/bin/python bench/resnest.py --quick --batches 1 --no-write     # smoke test

ResNeSt-50 (2s1x64d) at 224x224, batch 1 and 16 (--batches), random weights from a fixed seed
(models/resnest/reference.py: random_params), one worker process per peer variant, all in one run:
  * Grove         the fused model of models/resnest/generate.py (what grovec compiles, dynamic
                  batch), grovec --cpu=native, linked into a shared object with libgrove_rt and
                  called through the test harness (test/lib/grove_testing.py: grove_invoke via
                  ctypes); its GEMMs run on oneDNN with OpenMP, OMP_NUM_THREADS=2.
  * PyTorch       the functional reference (models/resnest/reference.py), eager, inference_mode,
                  set_num_threads(2) (the ratios' baseline) and set_num_threads(1).
  * ONNX Runtime  torch.onnx.export of that reference with the same weights (opset 17, dynamic
                  batch), CPU EP, intra-op 2 threads, ORT_ENABLE_ALL.
  * IREE          the same export with the batch fixed (one module per batch size: IREE's best
                  configuration) -> iree-import-onnx -> iree-compile (llvm-cpu, target-cpu=host);
                  local-task with 2 workers, and local-sync.
Every worker first runs a fresh random input whose float64 PyTorch logits the coordinator computed
(three calls; the third's logits count); the report gives max |logits - reference| / max |reference|
(flagged above 1e-3). Then --rounds interleaved rounds, the worker order rotating from round to round;
one sample = median per-call time over --seconds after two warm-up calls. Reported: medians over rounds, and the median of the per-round
ratios to PyTorch on 2 threads (paired).

Compiled artefacts (Grove library, ONNX files, IREE modules) are cached in build-bench/resnest/ under
a hash of what they are built from. Every worker runs with GLIBC_TUNABLES (bench/run.py; without them
glibc maps and unmaps big buffers on every call) and OPENBLAS_NUM_THREADS=1 (OpenBLAS's threads
otherwise fight OpenMP's). A peer that is missing or fails shows as "n/a (reason)".
"""
import argparse
import datetime
import hashlib
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _p in (ROOT / "bench", ROOT / "models" / "resnest", ROOT / "test" / "lib"):
    sys.path.insert(0, str(_p))
# bench/run.py (the MLP benchmark) owns the worker protocol, the worker environment and the
# machine/version descriptions; both reports use the same ones.
from run import (BIN_DIR, FOREIGN_LIMIT, GLIBC_TUNABLES, IREE_FLAGS, Worker, ort_session,  # noqa: E402
                 cpu_busy_seconds, first_error, importable, log, machine_info,
                 own_cpu_seconds, proc_cpu_seconds, rel, sh, versions, worker_env)

DEPTH, IMAGE, NAME = "50", 224, "resnest50"
GROVEC_FLAGS = ["--target=host", "-O3", "--cpu=native"]
OPSET = 17
ERR_LIMIT = 1e-3  # max |error| / max |logit| above which a peer's result is flagged
MARK_BEGIN = "<!-- resnest: written by bench/resnest.py -->"
MARK_END = "<!-- /resnest -->"
# key, peer, configuration (the first is the ratios' baseline)
VARIANTS = [
    ("torch", "PyTorch", "eager, 2 threads"),
    ("torch-1", "PyTorch", "eager, 1 thread"),
    ("grove", "Grove", "oneDNN GEMMs and convolutions (weights kept prepared), 2 OpenMP threads"),
    # only with --baseline-build: another build's compiler and runtime (an A/B of two Groves)
    ("grove-base", "Grove (baseline)", "the same, compiled and run by --baseline-build"),
    ("ort", "ONNX Runtime", "CPU EP, intra-op 2 threads"),
    ("iree-task", "IREE", "local-task, 2 workers"),
    ("iree-sync", "IREE", "local-sync (1 thread)"),  # only with --iree-sync: see its help
]
PEER_OF = {"torch": "torch", "torch-1": "torch", "grove": "grove", "grove-base": "grove", "ort": "ort",
           "iree-task": "iree", "iree-sync": "iree"}


# --------------------------------------------------------------------------- workers
def torch_peer(a, threads):
    import torch
    from safetensors.torch import load_file
    from reference import resnest
    torch.set_num_threads(threads)
    p = load_file(a.weights)

    def forward(x):
        with torch.inference_mode():
            return resnest(p, torch.from_numpy(x), DEPTH).numpy()
    return forward, f"torch {torch.__version__}, eager, inference_mode, set_num_threads({torch.get_num_threads()})"


def grove_peer(a):
    from grove_testing import Model
    model = Model(a.grove_mlir, name=NAME, library=a.grove_lib,
                  workdir=str(Path(a.grove_lib).parent))
    model.load_weights(a.weights)

    def forward(x):
        return model.call("forward", x)[0]
    return forward, (f"{rel(a.grove_lib)} via grove_invoke (ctypes), "
                     f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')}")


def ort_peer(a):
    import onnxruntime as ort
    sess = ort_session(a.onnx)
    name = sess.get_inputs()[0].name

    def forward(x):
        return sess.run(None, {name: x})[0]
    return forward, f"onnxruntime {ort.__version__}, CPU EP, intra-op 2, ORT_ENABLE_ALL, sequential"


def iree_peer(a, driver):
    import iree.runtime as rt
    import iree.runtime.version as irv
    if driver == "local-task":
        rt.flags.parse_flags("--task_topology_group_count=2")
    cfg = rt.Config(driver)
    fns = {}
    for item in a.vmfb.split(","):  # "B=path,...": one module per batch size
        b, path = item.split("=", 1)
        ctx = rt.SystemContext(config=cfg)
        ctx.add_vm_module(rt.VmModule.mmap(cfg.vm_instance, path))
        fns[int(b)] = ctx.modules.module[a.iree_function]

    def forward(x):
        if len(x) not in fns:
            raise ValueError(f"no module compiled for batch {len(x)}")
        return fns[len(x)](x).to_host()
    return forward, (f"iree.runtime {irv.VERSION}, {driver}" + (" (2 workers)" if driver == "local-task" else "")
                     + ", batch-specialised modules")


PEERS = {
    "torch": lambda a: torch_peer(a, 2),
    "torch-1": lambda a: torch_peer(a, 1),
    "grove": grove_peer,
    "ort": ort_peer,
    "iree-task": lambda a: iree_peer(a, "local-task"),
    "iree-sync": lambda a: iree_peer(a, "local-sync"),
}


def serve(kind, a):
    """A worker process: builds its peer, then answers on stdin
         check IN.npy OUT.npy   -> ok              (logits of IN's third call written to OUT)
         run IN.npy SECS REPS   -> res N MEDIAN_NS MIN_NS MAX_NS   (N calls after two warm-up calls:
                                   >= REPS and >= SECS, or 1 after one if a warm-up call took SECS)
         mem                    -> mem PEAK_RSS_KB  (the process's peak resident set so far)
         quit"""
    import numpy as np
    forward, info = PEERS[kind](a)
    print(f"ready {info}", flush=True)
    inputs = {}
    for line in sys.stdin:
        cmd, *args = line.split() or [""]
        try:
            if cmd == "quit":
                break
            if cmd == "mem":
                # VmHWM, not getrusage: ru_maxrss survives execve, so a worker would
                # report the coordinator's peak at the time it was started.
                hwm = next(int(line.split()[1]) for line in open("/proc/self/status")
                           if line.startswith("VmHWM:"))
                print(f"mem {hwm}", flush=True)
                continue
            if args and args[0] not in inputs:
                inputs[args[0]] = np.load(args[0])
            if cmd == "check":
                # The third call's logits: a peer may change how it computes after the first
                # (Grove prepares its convolution weights on the second call).
                for _ in range(3):
                    y = forward(inputs[args[0]])
                np.save(args[1], np.asarray(y, dtype=np.float32))
                print("ok", flush=True)
            elif cmd == "run":
                x, seconds, reps = inputs[args[0]], float(args[1]), int(args[2])
                t0 = time.perf_counter()
                forward(x)  # warm-up: lazy initialisation, first touch of the buffers
                warm_up = time.perf_counter() - t0
                if warm_up < seconds:  # and a second one: Grove prepares its weights then
                    forward(x)
                ts, end = [], time.perf_counter() + seconds
                if warm_up >= seconds:  # calls of many seconds (IREE at batch 16): one call,
                    reps, end = 1, 0    # the rounds give the repeats
                while len(ts) < reps or time.perf_counter() < end:
                    t0 = time.perf_counter_ns()
                    forward(x)
                    ts.append(time.perf_counter_ns() - t0)
                print(f"res {len(ts)} {int(statistics.median(ts))} {min(ts)} {max(ts)}", flush=True)
            else:
                print(f"error unknown command {cmd!r}", flush=True)
        except Exception as e:  # keep serving; the coordinator records the error
            print(f"error {type(e).__name__}: {e}".replace("\n", " ")[:300], flush=True)
    return 0


# --------------------------------------------------------------------------- artefacts (cached)
def digest(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 24), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def build_grove(a, out, mlir_text):
    """grovec + link into a shared object, cached under a hash of the model, the flags and the grovec
    binary. Returns (dir, meta, error)."""
    grovec, libdir = Path(a.build) / "bin" / "grovec", Path(a.build) / "lib"
    if not grovec.exists():
        return None, None, f"n/a ({rel(grovec)} not built)"
    if not (libdir / "libgrove_rt.so").exists():
        return None, None, f"n/a ({rel(libdir)}/libgrove_rt.so not built)"
    d = out / f"grove-{digest(mlir_text, GROVEC_FLAGS, file_digest(grovec))}"
    meta_path = d / "meta.json"
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
        log(f"grove: cached {rel(d)} (compiled in {meta['compile_s']:.1f} s on {meta['date']})")
        return d, dict(meta, cached=True), None
    d.mkdir(parents=True, exist_ok=True)
    mlir = d / f"{NAME}.mlir"
    mlir.write_text(mlir_text)
    t0 = time.time()
    ok, text = sh([grovec, mlir, "-o", d / "out", f"--name={NAME}", *GROVEC_FLAGS])
    compile_s = time.time() - t0
    if not ok:
        return None, None, f"n/a (grovec failed: {first_error(text)})"
    # the link test/lib/grove_testing.py does for its Models (which load it here through library=)
    ok, text = sh([os.environ.get("CC", "cc"), "-shared", "-o", d / f"lib{NAME}.so", "-Wl,--whole-archive",
                   d / "out" / f"lib{NAME}.a", "-Wl,--no-whole-archive", f"-L{libdir}",
                   f"-Wl,-rpath,{libdir.resolve()}", "-lgrove_rt", "-lm"])
    if not ok:
        return None, None, f"n/a (linking the grovec output failed: {first_error(text)})"
    meta = {"compile_s": compile_s, "date": now(), "flags": GROVEC_FLAGS, "load": os.getloadavg()[0]}
    meta_path.write_text(json.dumps(meta))
    return d, dict(meta, cached=False), None


def exportable(params):
    """The functional reference as an nn.Module whose buffers are the weights, so that
    torch.onnx.export stores them as initializers."""
    import torch
    from reference import resnest

    class ResNeSt(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.names = list(params)
            for k, v in params.items():  # buffer names cannot contain dots
                self.register_buffer(k.replace(".", "_"), v)

        def forward(self, image):
            return resnest({k: getattr(self, k.replace(".", "_")) for k in self.names}, image, DEPTH)
    return ResNeSt().eval()


def export_onnx(out, weights_path, weights_key, batch):
    """The reference exported to ONNX (batch None: dynamic). Returns (path, error)."""
    import torch
    from safetensors.torch import load_file
    ref_src = (ROOT / "models" / "resnest" / "reference.py").read_text()
    path = out / f"{NAME}_{'dyn' if batch is None else f'b{batch}'}_" \
                 f"{digest(weights_key, ref_src, torch.__version__, OPSET)}.onnx"
    if path.exists():
        log(f"onnx: cached {rel(path)}")
        return path, None
    tmp = path.with_suffix(".tmp")
    try:
        import warnings
        with warnings.catch_warnings():  # the tracer's notes about shape arithmetic
            warnings.simplefilter("ignore")
            torch.onnx.export(
                exportable(load_file(str(weights_path))), torch.zeros(batch or 1, 3, IMAGE, IMAGE),
                str(tmp), input_names=["image"], output_names=["logits"], opset_version=OPSET,
                dynamic_axes=None if batch else {"image": {0: "batch"}, "logits": {0: "batch"}})
    except Exception as e:
        return None, f"n/a (ONNX export failed: {type(e).__name__}: {str(e)[:100]})"
    tmp.rename(path)
    return path, None


def build_iree(out, onnx_path, batch, timeout):
    """iree-import-onnx + iree-compile, cached under a hash of the ONNX file, the flags and the IREE
    version. Returns (vmfb, meta, error); deterministic failures are cached too (timeouts are not:
    they may come from other load on the machine)."""
    import importlib.metadata
    imp, comp = BIN_DIR / "iree-import-onnx", BIN_DIR / "iree-compile"
    if not imp.exists() or not comp.exists():
        return None, None, "n/a (not installed: GROVE_BENCH=1 scripts/setup.sh)"
    key = digest(file_digest(onnx_path), IREE_FLAGS, importlib.metadata.version("iree-base-compiler"))
    vmfb = out / f"iree_b{batch}_{key}.vmfb"
    meta_path, failed = vmfb.with_suffix(".json"), vmfb.with_suffix(".failed")
    if meta_path.exists() and vmfb.exists():
        meta = json.loads(meta_path.read_text())
        log(f"iree: cached {rel(vmfb)}")
        return vmfb, dict(meta, cached=True), None
    if failed.exists():
        return None, None, f"{failed.read_text().strip()} (cached: delete {rel(failed)} to retry)"
    mlir = vmfb.with_suffix(".mlir")
    t0 = time.time()
    try:
        ok, text = sh([imp, onnx_path, "-o", mlir], timeout=timeout)
        if not ok:
            failed.write_text(f"n/a (iree-import-onnx failed: {first_error(text)})")
            return None, None, failed.read_text()
        m = re.search(r"func\.func @(\w+)\(", mlir.read_text(errors="replace")[:1 << 20])
        ok, text = sh([comp, mlir, *IREE_FLAGS, "-o", vmfb.with_suffix(".tmp")],
                      timeout=max(timeout - (time.time() - t0), 1))
        if not ok:
            failed.write_text(f"n/a (iree-compile failed: {first_error(text)})")
            return None, None, failed.read_text()
    except subprocess.TimeoutExpired:
        return None, None, f"n/a (IREE import + compile took more than {timeout:.0f} s)"
    finally:
        mlir.unlink(missing_ok=True)  # hundreds of MB of hex-encoded weights
    vmfb.with_suffix(".tmp").rename(vmfb)
    meta = {"function": m.group(1) if m else "main_graph", "compile_s": time.time() - t0, "date": now()}
    meta_path.write_text(json.dumps(meta))
    return vmfb, dict(meta, cached=False), None


# --------------------------------------------------------------------------- report helpers
def calls_parallel_for(archive):
    """Whether grovec's output hands loops to the runtime's thread team (newer builds do)."""
    p = subprocess.run(["nm", "-u", str(archive)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return "grove_rt_parallel_for" in p.stdout


def now():
    return datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")


def dnnl_version():
    import ctypes

    class V(ctypes.Structure):
        _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int),
                    ("hash", ctypes.c_char_p)]
    try:
        lib = ctypes.CDLL("libdnnl.so.2")
        lib.dnnl_version.restype = ctypes.POINTER(V)
        v = lib.dnnl_version().contents
        return f"{v.major}.{v.minor}.{v.patch}"
    except (OSError, AttributeError):
        return "?"


def grove_revision():
    def git(*args):
        return subprocess.run(["git", "-C", str(ROOT), *args], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True).stdout.strip()
    rev = git("rev-parse", "--short", "HEAD") or "?"
    return rev + (" + uncommitted changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def fmt_err(e):
    if e is None:
        return ""
    return f"{e:.1e}" + (" ⚠" if e > ERR_LIMIT else "")


def pkg_version(name):
    import importlib.metadata
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def md_table(header, rows):
    def cell(c):  # error messages may contain pipes
        return str(c).replace("|", "\\|")
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    return "\n".join(out + ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows])


def write_section(path, section):
    """Replaces this benchmark's marked section of `path`, or appends it."""
    text = path.read_text() if path.exists() else ""
    pattern = re.compile(re.escape(MARK_BEGIN) + ".*?" + re.escape(MARK_END), re.S)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else \
        text.rstrip() + ("\n\n" if text.strip() else "") + section + "\n"
    path.write_text(text)


# --------------------------------------------------------------------------- coordinator
def busy_process():
    """One process spinning on CPU 0 until killed: a competing job on a shared machine."""
    return subprocess.Popen([sys.executable, "-c",
                             "import os\nos.sched_setaffinity(0, {0})\nwhile True: pass"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", default="1,16", help="batch sizes (default 1,16)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--seconds", type=float, default=2.0,
                    help="time per sample, after a warm-up call (default 2 s; at least --reps calls)")
    ap.add_argument("--reps", type=int, default=3, help="calls per sample at least (default 3)")
    ap.add_argument("--gap", type=float, default=0.3,
                    help="idle seconds before each sample, so that the previous worker's spinning "
                         "threads sleep (default 0.3)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: 1 round, one timed call per sample (combine with --no-write)")
    ap.add_argument("--no-write", action="store_true", help="print the report, leave docs/perf.md alone")
    ap.add_argument("--peers", default="grove,torch,ort,iree", help="subset of grove,torch,ort,iree")
    ap.add_argument("--iree-sync", action="store_true",
                    help="also IREE on local-sync (one thread): 1.5x slower than local-task, and at batch 16 "
                         "a call takes ~30 s, which doubles the run")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random weights (default 0)")
    ap.add_argument("--load", action="store_true",
                    help="also measure every sample again beside one busy process on CPU 0 (a shared "
                         "machine), and report loaded ÷ idle")
    ap.add_argument("--input-seed", type=int, default=None,
                    help="seed of the check inputs (default: fresh, printed)")
    ap.add_argument("--iree-timeout", type=float, default=600,
                    help="seconds allowed for importing + compiling one IREE module (default 600)")
    ap.add_argument("--build", default=str(ROOT / "build"), help="Grove build directory (default build/)")
    ap.add_argument("--baseline-build", default=None,
                    help="another Grove build directory (e.g. of an older commit) measured beside --build "
                         "in the same rounds: an A/B of two compilers and runtimes")
    ap.add_argument("--out", default=str(ROOT / "build-bench" / "resnest"),
                    help="artefact cache (default build-bench/resnest/, gitignored)")
    ap.add_argument("--write", default=str(ROOT / "docs" / "perf.md"), help="report (default docs/perf.md)")
    for hidden in ("--worker", "--weights", "--onnx", "--vmfb", "--iree-function", "--grove-lib",
                   "--grove-mlir"):
        ap.add_argument(hidden, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return serve(a.worker, a)
    if a.quick:
        a.rounds, a.seconds, a.reps, a.gap = 1, 0.0, 1, 0.1

    import numpy as np
    import torch
    from safetensors.numpy import save_file
    import generate
    from reference import random_params, resnest

    started, date, load_before = time.time(), now(), os.getloadavg()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    batches = [int(b) for b in a.batches.split(",")]
    peers = set(a.peers.split(","))
    variants = [v for v in VARIANTS if PEER_OF[v[0]] in peers and (v[0] != "iree-sync" or a.iree_sync)
                and (v[0] != "grove-base" or a.baseline_build)]
    unavailable = {}  # variant -> "n/a (reason)"
    bad = {}  # (variant, batch) -> why it has no result there
    notes = {}  # peer -> build details for the report

    # ---- the model and its weights
    mlir_text, params = generate.generate(DEPTH, IMAGE, "fused")
    weights = random_params(params, np.random.default_rng(a.seed))
    weights_path = out / f"weights_seed{a.seed}.safetensors"
    save_file(weights, str(weights_path))
    weights_key = file_digest(weights_path)
    log(f"{len(params)} parameters, {sum(v.size for v in weights.values()) / 1e6:.1f} M values, "
        f"seed {a.seed}: {rel(weights_path)}")

    # ---- build every peer; failures become n/a cells
    me = [sys.executable, str(Path(__file__).resolve()), "--weights", str(weights_path)]
    commands = {}  # variant -> (command, environment)
    if "torch" in peers:
        for k, t in (("torch", 2), ("torch-1", 1)):
            commands[k] = (me + ["--worker", k], worker_env(1, t))
    if "grove" in peers:
        d, meta, err = build_grove(a, out, mlir_text)
        if err:
            unavailable["grove"] = err
        else:
            notes["grove"] = dict(meta, parallel_loops=calls_parallel_for(d / "out" / f"lib{NAME}.a"))
            commands["grove"] = (me + ["--worker", "grove", "--grove-lib", str(d / f"lib{NAME}.so"),
                                       "--grove-mlir", str(d / f"{NAME}.mlir")], worker_env(1, 2))
    if "grove" in peers and a.baseline_build:
        base = argparse.Namespace(**{**vars(a), "build": a.baseline_build})
        d, meta, err = build_grove(base, out, mlir_text)
        if err:
            unavailable["grove-base"] = err
        else:
            commands["grove-base"] = (me + ["--worker", "grove", "--grove-lib", str(d / f"lib{NAME}.so"),
                                            "--grove-mlir", str(d / f"{NAME}.mlir")], worker_env(1, 2))
    if "ort" in peers:
        path, err = export_onnx(out, weights_path, weights_key, None) if importable("onnxruntime") else \
            (None, "n/a (onnxruntime not installed)")
        if err:
            unavailable["ort"] = err
        else:
            commands["ort"] = (me + ["--worker", "ort", "--onnx", str(path)], worker_env(1))
    if "iree" in peers:
        vmfbs, fn, missing, times = {}, None, {}, []  # missing: batch -> why there is no module
        if not importable("iree.runtime"):
            missing = dict.fromkeys(batches, "n/a (not installed: GROVE_BENCH=1 scripts/setup.sh)")
        for b in batches:
            if b in missing:
                continue
            path, err = export_onnx(out, weights_path, weights_key, b)
            if not err:
                vmfb, meta, err = build_iree(out, path, b, a.iree_timeout)
            if err:
                missing[b] = err
                if "took more than" in err:  # the larger batches would time out as well
                    missing.update({c: f"n/a (not compiled: batch {b} timed out)" for c in batches if c > b})
                continue
            vmfbs[b], fn = vmfb, meta["function"]
            times.append(f"batch {b}: {meta['compile_s']:.0f} s" + (" (cached)" if meta["cached"] else ""))
        notes["iree"] = times
        for k in ("iree-task", "iree-sync") if a.iree_sync else ("iree-task",):
            if not vmfbs:
                unavailable[k] = missing[batches[0]]
                continue
            commands[k] = (me + ["--worker", k, "--iree-function", fn,
                                 "--vmfb", ",".join(f"{b}={v}" for b, v in vmfbs.items())], worker_env(1))
            bad.update({(k, b): why for b, why in missing.items()})

    # ---- float64 reference logits on fresh random inputs
    input_seed = a.input_seed if a.input_seed is not None else int(np.random.SeedSequence().entropy % 2**32)
    log(f"input seed {input_seed} (--input-seed reproduces the check inputs)")
    g = np.random.default_rng(input_seed)
    torch.set_num_threads(2)
    p64 = {k: torch.from_numpy(v.astype(np.float64)) for k, v in weights.items()}
    inputs, refs = {}, {}
    for b in batches:
        x = g.standard_normal((b, 3, IMAGE, IMAGE)).astype(np.float32)
        inputs[b] = out / f"input_b{b}.npy"
        np.save(inputs[b], x)
        t0 = time.time()
        with torch.inference_mode():
            refs[b] = resnest(p64, torch.from_numpy(x.astype(np.float64)), DEPTH).numpy()
        log(f"float64 reference at batch {b}: {time.time() - t0:.1f} s, max |logit| {np.abs(refs[b]).max():.3g}")
    del p64, weights

    # ---- start the workers, check each against the reference
    workers = []
    for k, _, _ in variants:
        if k in commands:
            wk = Worker(k, *commands[k], out)
            if wk.error:
                unavailable[k] = f"n/a ({wk.error[:100]})"
            else:
                workers.append(wk)
    errs = {}  # (variant, batch) -> max error / max |logit|
    for wk in workers:
        for b in batches:
            if (wk.name, b) in bad:
                continue
            got_path = out / f"logits_{wk.name}_b{b}.npy"
            r = wk.ask(f"check {inputs[b]} {got_path}")
            if r != "ok":
                bad[(wk.name, b)] = f"check failed: {(r or wk.error or 'no answer').removeprefix('error ')[:100]}"
                continue
            got = np.load(got_path)
            if got.shape != refs[b].shape:
                bad[(wk.name, b)] = f"check failed: logits of shape {got.shape}, want {refs[b].shape}"
                continue
            err = float(np.abs(got.astype(np.float64) - refs[b]).max() / np.abs(refs[b]).max())
            errs[(wk.name, b)] = err if np.isfinite(err) else float("inf")
            log(f"{wk.name} batch {b}: max error / max |logit| = {err:.2e}")

    # ---- interleaved rounds
    samples = {}  # (variant, batch) -> {round: median ns}
    loaded = {}  # the same beside a busy process (--load)
    foreign_load = []  # other processes' cores during each sample
    for r in range(a.rounds):
        for bi, b in enumerate(batches):
            live = [wk for wk in workers if wk.p is not None and (wk.name, b) not in bad]
            k = (r + bi) % len(live) if live else 0
            for wk in live[k:] + live[:k]:
                time.sleep(a.gap)
                b0, w0, o0, t0 = cpu_busy_seconds(), proc_cpu_seconds(wk), own_cpu_seconds(), time.time()
                res = wk.ask(f"run {inputs[b]} {a.seconds} {a.reps}")
                if res and res.startswith("res "):
                    samples.setdefault((wk.name, b), {})[r] = int(res.split()[2])
                    if b0 is not None:
                        foreign_load.append(((cpu_busy_seconds() - b0) - (proc_cpu_seconds(wk) - w0)
                                             - (own_cpu_seconds() - o0)) / max(time.time() - t0, 1e-3))
                else:
                    bad[(wk.name, b)] = f"error: {(res or wk.error or 'no answer').removeprefix('error ')[:100]}"
                    log(f"{wk.name} batch {b}: {bad[(wk.name, b)]}")
                    continue
                if a.load:  # the same sample beside a busy process on CPU 0
                    hog = busy_process()
                    try:
                        time.sleep(a.gap)
                        res = wk.ask(f"run {inputs[b]} {a.seconds} {a.reps}")
                    finally:
                        hog.kill()
                        hog.wait()
                    if res and res.startswith("res "):
                        loaded.setdefault((wk.name, b), {})[r] = int(res.split()[2])
        log(f"round {r + 1}/{a.rounds} done")
    peak_rss = {}  # variant -> MB: framework, weights and the largest batch's buffers
    for wk in workers:
        res = wk.ask("mem")
        if res and res.startswith("mem "):
            peak_rss[wk.name] = int(res.split()[1]) / 1024
        wk.close()
    infos = {wk.name: wk.info for wk in workers}

    # ---- aggregate
    def med(k, b):
        s = samples.get((k, b))
        return statistics.median(s.values()) if s else None

    def ratio(k, b):  # median over the rounds that measured both of (k / PyTorch 2 threads)
        s, t = samples.get((k, b), {}), samples.get(("torch", b), {})
        paired = [s[r] / t[r] for r in s if r in t]
        return statistics.median(paired) if paired else None

    rows = []
    for b in batches:
        for k, peer, conf in variants:
            m = med(k, b)
            if m is None:
                why = unavailable.get(k) or bad.get((k, b)) or "n/a"
                rows.append([b, peer, conf, why, "", "", fmt_err(errs.get((k, b)))])
                continue
            rt = ratio(k, b)
            rows.append([b, peer, conf, f"{m / 1e6:.1f}", f"{b / m * 1e9:.1f}",
                         "1 (baseline)" if k == "torch" else ("—" if rt is None else f"{rt:.2f}×"),
                         fmt_err(errs.get((k, b)))])
    table = md_table(["batch", "peer", "configuration", "ms per batch", "images/s", "time ÷ PyTorch 2 t",
                      "error"], rows)
    def loaded_row(k, b):  # median of the per-round loaded ÷ idle ratios
        s, l = samples.get((k, b), {}), loaded.get((k, b), {})
        paired = [l[r] / s[r] for r in l if r in s]
        return (statistics.median(l.values()) if l else None,
                statistics.median(paired) if paired else None)

    load_rows = []
    for b in batches:
        for k, peer, conf in variants:
            m, (lm, lr) = med(k, b), loaded_row(k, b)
            if m is not None and lm is not None:
                load_rows.append([b, peer, conf, f"{m / 1e6:.1f}", f"{lm / 1e6:.1f}", f"{lr:.2f}×"])
    load_table = md_table(["batch", "peer", "configuration", "idle ms", "loaded ms", "loaded ÷ idle"],
                          load_rows) if load_rows else ""
    memory = md_table(["peer", "configuration", "peak resident set (MB)"],
                      [[peer, conf, f"{peak_rss[k]:.0f}"] for k, peer, conf in variants
                       if k in peak_rss])
    flagged = sorted({k for (k, _), e in errs.items() if e > ERR_LIMIT})

    # ---- report
    elapsed = time.time() - started
    v = versions()
    v["iree-base-compiler"] = pkg_version("iree-base-compiler")
    v["oneDNN"] = dnnl_version()
    grove_meta = notes.get("grove")
    grove_compile = "n/a" if not grove_meta else (
        f"{grove_meta['compile_s']:.1f} s (`grovec {' '.join(GROVEC_FLAGS)}`, measured {grove_meta['date']}"
        f" at load average {grove_meta['load']:.2f}" + (", cached since" if grove_meta["cached"] else "") + ")")
    foreign = (f"{statistics.mean(foreign_load):.2f} cores on average during the samples, "
               f"{sum(f > FOREIGN_LIMIT for f in foreign_load)} of {len(foreign_load)} samples above "
               f"{FOREIGN_LIMIT} cores") if foreign_load else "unknown"
    cmdline = ".venv/bin/python bench/resnest.py " + " ".join(shlex.quote(x) for x in sys.argv[1:])
    conf_lines = {
        "grove": (f"**Grove** ({grove_revision()}): `generate.generate(\"50\", 224, \"fused\")` (= "
                  f"`models/resnest/resnest50.mlir`, dynamic batch: one library for every batch size), "
                  f"`grovec {' '.join(GROVEC_FLAGS)}`, linked with `build/lib/libgrove_rt.so`, called through "
                  f"`test/lib/grove_testing.py` (`grove_invoke` via ctypes; it allocates the output, which is "
                  f"then copied to numpy); the 1×1 convolutions on images over 7×7 and the FCs as GEMMs on "
                  f"oneDNN {v['oneDNN']} (`dnnl_sgemm`); the other convolutions, whose weights the forward only "
                  f"reads, on oneDNN's convolution with the weights reordered once and kept across calls (from "
                  f"the second call on: the timed calls; docs/abi.md): its Winograd kernels for the 3×3 ones on "
                  f"outputs of 14×14 and more, a group at a time, its blocked direct kernels for the rest "
                  f"(layer4's 3×3 and 1×1 ones, the stem's strided one); with OpenMP, "
                  f"OMP_NUM_THREADS=2; the generated loops "
                  + ("run on the same OpenMP team (`grove_rt_parallel_for`)"
                     if grove_meta and grove_meta["parallel_loops"] else "run on the calling thread")
                  + f". Compile time: {grove_compile}."),
        "torch": ("**PyTorch**: torch " + v["torch"] + " CPU (Debian), the functional reference "
                  "`models/resnest/reference.py` (the weights as tensors; `F.conv2d`, `F.batch_norm`, ...), "
                  "eager, `inference_mode`, `set_num_threads(2)` (its best configuration here) and "
                  "`set_num_threads(1)`."),
        "ort": (f"**ONNX Runtime** {v['onnxruntime']}: `torch.onnx.export` of that reference with the same "
                f"weights (opset {OPSET}, dynamic batch), CPU EP, `intra_op_num_threads=2`, `ORT_ENABLE_ALL`, "
                "sequential execution."),
        "iree": (f"**IREE** {v['iree-base-compiler']}: the same export with the batch dimension fixed (one module "
                 f"per batch size, IREE's best configuration: it specialises on static shapes) → "
                 f"`iree-import-onnx` → `iree-compile {' '.join(IREE_FLAGS[1:])}`; compile time "
                 f"{', '.join(notes.get('iree') or ['n/a'])}; `iree.runtime` on local-task with 2 workers "
                 "(`--task_topology_group_count=2`)" + (" and on local-sync (the calling thread)" if a.iree_sync
                                                         else "") +
                 ". Its time goes mostly to the 16 grouped 3×3 convolutions (bench/README.md, Caveats)."),
    }
    section = "\n".join([
        MARK_BEGIN,
        "## ResNeSt-50 forward (2s1x64d, 224×224), host: Grove vs PyTorch, ONNX Runtime, IREE",
        "",
        f"Generated by `{cmdline.strip()}` on {date} ({elapsed:.0f} s). Numbers drift 10–30% between runs "
        "on these shared VMs: compare ratios within one run.",
        "",
        f"* **Machine:** {machine_info()}",
        f"* **Versions:** {', '.join(f'{k} {val}' for k, val in v.items())}; Grove {grove_revision()}",
        f"* **Environment (every worker):** `GLIBC_TUNABLES={GLIBC_TUNABLES}`, OPENBLAS_NUM_THREADS=1, "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}",
        f"* **Other processes during the run:** {foreign} (from /proc/stat minus this run's own CPU time); "
        f"load average (1 min) {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after",
        f"* **Model:** random weights (`reference.random_params`, seed {a.seed}); error = max |logits − "
        f"reference| / max |reference| on a fresh standard-normal input (seed {input_seed}), the reference "
        f"being the same PyTorch code in float64; above {ERR_LIMIT:g} it is flagged ⚠.",
        f"* **Method:** one worker process per row; {a.rounds} round(s); in each round every batch size is "
        f"measured by every worker, in an order that rotates from round to round; one sample = median time "
        f"per call over ≥ {a.seconds:g} s and ≥ {a.reps} calls after two warm-up calls (a peer may prepare "
        "on its second call, as Grove does its convolution weights; one call and one warm-up call when a "
        "warm-up call alone took that long). The table gives the median over rounds and the median of the "
        "per-round ratios to PyTorch on 2 threads (paired; < 1× is faster than PyTorch).",
        "",
        table,
        "",
        *(["On a shared machine (`--load`): every sample again beside one busy process pinned to CPU 0 "
           "(a Python loop), paired with the idle sample of the same round; the fair share of two cores "
           "with a third runnable thread is about 1.5–2× the idle time:", "", load_table, ""]
          if load_table else []),
        "Peak resident set of each worker process at the end of the run (its runtime and libraries, the "
        f"weights, and the buffers of the largest batch, {max(batches)}; Grove's includes its cache of "
        "large blocks, runtime/src/host/Memory.cpp):",
        "",
        memory,
        "",
        *(f"* {conf_lines[p]}" for p in ("grove", "torch", "ort", "iree") if p in peers),
        *([f"* ⚠ **Numerics:** {', '.join(flagged)} exceed {ERR_LIMIT:g} relative error."] if flagged else []),
        MARK_END,
    ])
    print(section)
    for k, info in infos.items():
        log(f"{k}: {info}")
    log(f"done in {elapsed:.0f} s")
    if not a.no_write:
        write_section(Path(a.write), section)
        log(f"wrote its section of {a.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
