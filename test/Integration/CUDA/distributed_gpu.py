# REQUIRES: cuda-gpu, mpi
# RUN: rm -rf %t && %python %s lit %t
"""Data-parallel train steps on the GPU: the device collectives
(runtime/src/cuda/DeviceCollectives.cpp), run by scripts/gpu-check.sh.

    distributed_gpu.py prepare BUNDLE   here (grovec, Open MPI, no GPU)
    distributed_gpu.py run BUNDLE       on the GPU machine
    distributed_gpu.py lit DIR          both, with grovec and a GPU (lit)
    distributed_gpu.py compile          without a GPU (compile.test): every
        CUDA-capable compressor compiles, links and calls the device twins
    distributed_gpu.py rank LIB NAME TARGET DATA OUT   one rank (mpirun)

prepare compiles the distributed tests' MLP (Adam) with --data-parallel
--target=cuda in every way that runs there - dense in 4 KB buckets with
its collectives started early and waited for late
(grove-overlap-collectives) and without (--overlap-collectives=false),
fp16 and bf16, GRBS 1/4, sign, int8 and PowerSGD with error feedback,
CSER, and Local AdaAlter (the MLP with AdaAlter, H = 2 after 2
synchronous steps) - into BUNDLE/models, linked against the bundle's
runtime; builds nothing else. It writes BUNDLE/data/distributed_gpu.npz:
fresh random weights and batches, and the host's results for them: the
same model without --data-parallel after the steps on the whole batch and
on rank 0's (the dense references), and each variant compiled for the
host and run on 2 ranks here (the compressed references; sign on 1 rank
too).

run (with BUNDLE/rt-mpi, the runtime built with MPI, first on the library
path) checks, on one GPU:
  * 2 processes under mpirun share the GPU, which NCCL refuses, so the
    device collectives choose the staged transport (through host memory
    and MPI) and say why; every variant's params and Adam moments after
    the steps equal the references within 1e-5 of each tensor's scale
    (Local AdaAlter: weights, accumulators and denominators);
  * 1 process with GROVE_DEVICE_COLLECTIVES=nccl: a real NCCL
    communicator (world of one) runs each dense variant's all-reduces and
    sign's started all-gathers on its own stream (the started ones beside
    the backward's kernels); each ends where the host's one process on
    rank 0's batches ends, and the two dense variants' states are equal
    bit for bit;
  * 2 processes of the dense variant, rank 1 one row short: the ranks'
    agreement (blocking on CUDA contexts) fails both calls with
    GROVE_ERROR_PEER naming the shapes.
It exits 77 (gpu-check.sh reports SKIP, with the reason) where the GPU
machine has no mpirun or cannot load Open MPI's libmpi.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "lib"))

from grove_dist import Comm, launch  # noqa: E402
from grove_testing import GroveError, Model, rng  # noqa: E402

STEPS, PER_RANK, RANKS = 5, 16, 2
VARIANTS = {
    "dpdense": ["--data-parallel", "--bucket-bytes=4096"],
    "dpblocking": ["--data-parallel", "--bucket-bytes=4096",
                   "--overlap-collectives=false"],
    "dpfp16": ["--data-parallel", "--compressor=fp16"],
    "dpgrbs": ["--data-parallel", "--compressor=grbs", "--compress-ratio=4",
               "--compress-error=feedback"],
    "dpsign": ["--data-parallel", "--compressor=sign",
               "--compress-error=feedback"],
    "dpbf16": ["--data-parallel", "--compressor=bf16"],
    "dpint8": ["--data-parallel", "--compressor=int8",
               "--compress-error=feedback"],
    "dppowersgd": ["--data-parallel", "--compressor=powersgd",
                   "--compress-error=feedback"],
    "dpcser": ["--data-parallel", "--compressor=grbs", "--compress-ratio=4",
               "--compress-error=reset", "--sync-period=2",
               "--period-ratio=2"],
    "dplocal": ["--data-parallel"],
}
# Local AdaAlter: the MLP with AdaAlter (H = 2 after 2 synchronous
# steps) instead of Adam; its state is the weights, accumulators and
# denominators.
LOCAL = ("dplocal",)
ADAM = "grove.adam"
# Also run on NCCL in a world of one. A started all-gather's result is not
# a copy of its input, so dpsign would read stale memory if the wait did
# not order the context's stream after NCCL's.
DENSE = ("dpdense", "dpblocking")
ON_NCCL = DENSE + ("dpsign",)
# What compiles for CUDA (top-k selects on the host, random-k scatters in a
# host loop): each with the device services it must call ("all_reduce_f32"
# stands for the blocking service or the split one, whichever
# grove-overlap-collectives left; "=" before a name: that one only).
COMPILED = {
    "dpdense": (VARIANTS["dpdense"], ["=all_reduce_start_f32",
                                      "=collective_wait_f32"]),
    "dpblocking": (VARIANTS["dpblocking"], ["=all_reduce_f32"]),
    "dpfp16": (VARIANTS["dpfp16"], ["all_reduce_f16"]),
    "dpsign": (VARIANTS["dpsign"], ["all_gather_i32"]),
    "dpgrbs": (VARIANTS["dpgrbs"], ["all_reduce_f32", "read_i64"]),
    "dppowersgd": (["--data-parallel", "--compressor=powersgd",
                    "--compress-error=feedback"], ["all_reduce_f32",
                                                   "read_i64"]),
    "dpcser": (["--data-parallel", "--compressor=grbs", "--compress-ratio=64",
                "--compress-error=reset", "--sync-period=8",
                "--period-ratio=8"], ["all_reduce_f32", "read_i64"]),
    "dpbf16": (["--data-parallel", "--compressor=bf16"], ["all_reduce_bf16"]),
    "dpint8": (["--data-parallel", "--compressor=int8",
                "--compress-error=feedback"], ["all_gather_i32",
                                               "all_gather_f32"]),
    "dplocal": (["--data-parallel"], ["all_reduce_f32", "read_i64"]),
}
SKIP = 77


def mlp():
    import distributed as D
    return D.MLP, D.MLP_WEIGHTS, D.MLP_STATE


def variant(name):
    """The source and the state compared of variant `name`."""
    source, weights, state = mlp()
    if name not in LOCAL:
        return source, state
    head, rest = source.split(ADAM, 1)
    names, rest = rest.split("{", 1)
    rest = rest.split("}", 1)[1]
    source = (head + "grove.adaalter" + names +
              "{lr = 5.0e-02 : f64, period = 2, sync_warmup_steps = 2}" + rest)
    return source, [n + s for n in weights
                    for s in ("", ".adaalter.accumulator",
                              ".adaalter.denominator")]


def compile_model(source, name, flags, target, workdir, rt_dir, so):
    out = os.path.join(workdir, name)
    src = os.path.join(workdir, name + ".mlir")
    with open(src, "w") as f:
        f.write(source)
    grovec = os.path.join(os.environ.get("GROVE_BIN", ""), "grovec")
    subprocess.run([grovec, src, "-o", out, "--name=" + name,
                    "--target=" + target, *flags], check=True)
    rpath = "$ORIGIN/../rt" if target == "cuda" else rt_dir
    subprocess.run(["cc", "-shared", "-o", so, "-Wl,--whole-archive",
                    os.path.join(out, "lib%s.a" % name),
                    "-Wl,--no-whole-archive", "-L" + rt_dir,
                    "-Wl,-rpath," + rpath,
                    "-lgrove_rt_cuda" if target == "cuda" else "-lgrove_rt",
                    "-lm"], check=True)


def run_job(so, name, target, data, ranks, env=None):
    """The ranks' params after the steps: {rank: {name: array}}, transport."""
    out = tempfile.mkdtemp(prefix="grove-dist-gpu-")
    code, text, _ = launch(__file__, ["rank", so, name, target, data,
                                      out], ranks, 300, env=env)
    if code:
        raise AssertionError(f"{ranks} ranks of {name} failed:\n{text}")
    results = {r: dict(np.load(os.path.join(out, "rank%d.npz" % r)))
               for r in range(ranks)}
    shutil.rmtree(out, ignore_errors=True)
    return results


def prepare(bundle):
    source, weights, state = mlp()
    R = rng()
    data = {"weights": np.array(list(weights)), "state": np.array(state),
            "x": R.standard_normal((STEPS, RANKS, PER_RANK, 64))
            .astype(np.float32),
            "y": R.integers(0, 10, (STEPS, RANKS, PER_RANK)).astype(np.int32)}
    for n, s in weights.items():
        data["w_" + n] = (R.standard_normal(s) * 0.2).astype(np.float32)
    workdir = tempfile.mkdtemp(prefix="grove-dist-gpu-prepare-")
    path = os.path.join(bundle, "data", "distributed_gpu.npz")
    np.savez(path, **data)
    # The dense references: one process, the whole batch / rank 0's.
    ref = Model(source, name="dpref", workdir=workdir, target="host")
    for reference, batch in (("whole", slice(None)), ("rank0", slice(0, 1))):
        ref.reopen()  # fresh optimizer state (Adam's moments, its count)
        for n in weights:
            ref.set_weight(n, data["w_" + n])
        for s in range(STEPS):
            ref.call("train_step", data["x"][s][batch].reshape(-1, 64),
                     data["y"][s][batch].reshape(-1))
        for n in state:
            data["%s_%s" % (reference, n)] = ref.get_weight(n)
    lib = os.environ["GROVE_LIB"]
    for name, flags in VARIANTS.items():
        source, names = variant(name)
        data["state_" + name] = np.array(names)
        compile_model(source, name, flags, "cuda", workdir,
                      os.path.join(bundle, "rt"),
                      os.path.join(bundle, "models", "lib%s.so" % name))
        host_so = os.path.join(workdir, "lib%s_host.so" % name)
        compile_model(source, name, flags, "host", workdir, lib, host_so)
        np.savez(path, **data)  # the ranks read the variant's state
        results = run_job(host_so, name, "host", path, RANKS)
        for n in names:
            data["%s_%s" % (name, n)] = results[0]["p_" + n]
        if name in ON_NCCL and name not in DENSE:  # dense: "rank0"
            alone = run_job(host_so, name, "host", path, 1)
            for n in names:
                data["%s_one_%s" % (name, n)] = alone[0]["p_" + n]
    np.savez(path, **data)
    shutil.rmtree(workdir, ignore_errors=True)
    print(f"distributed_gpu: {len(VARIANTS)} CUDA models and the host's "
          f"results in {path}")


def rank(so, name, target, data_path, out):
    data = np.load(data_path)
    model = Model("", name=name, workdir=os.path.dirname(so), library=so,
                  target=target)
    comm = Comm(model.lib, timeout=60)
    comm.attach(model)
    for n in data["weights"]:
        model.set_weight(str(n), data["w_" + str(n)])
    state = data["state_" + name] if "state_" + name in data else \
        data["state"]
    short = os.environ.get("GROVE_TEST_SHORT_RANK") == str(comm.rank)
    for s in range(STEPS):
        x, y = data["x"][s][comm.rank], data["y"][s][comm.rank]
        if short:  # one row fewer: the ranks must refuse the call
            x, y = x[:-1], y[:-1]
        try:
            model.call("train_step", x, y)
        except GroveError as e:
            np.savez(os.path.join(out, "rank%d.npz" % comm.rank),
                     status=e.status, message=e.message)
            os._exit(0)
    result = {"p_" + str(n): model.get_weight(str(n)) for n in state}
    result["transport"] = comm.device_transport()
    np.savez(os.path.join(out, "rank%d.npz" % comm.rank), **result)
    comm.barrier()
    del model
    comm.destroy()


def compare(results, data, reference, what, name):
    worst = 0.0
    state = data["state_" + name] if "state_" + name in data else \
        data["state"]
    for n in state:
        expected = data["%s_%s" % (reference, n)]
        scale = float(np.abs(expected).max())
        for r, res in results.items():
            error = float(np.abs(res["p_" + str(n)] - expected).max()) / scale
            assert error <= 1e-5, \
                f"{what}: {n} on rank {r} is {error:.2e} of scale off"
            worst = max(worst, error)
    return worst


def run(bundle):
    if not shutil.which("mpirun"):
        print("distributed_gpu: SKIPPED: no mpirun on this machine (Open MPI "
              "is needed to start the ranks)")
        return SKIP
    rt_mpi = os.path.join(bundle, "rt-mpi")
    try:
        import ctypes
        ctypes.CDLL(os.path.join(rt_mpi, "libgrove_rt_cuda.so"))
    except OSError as e:
        print(f"distributed_gpu: SKIPPED: the MPI runtime does not load "
              f"here ({e})")
        return SKIP
    env = {"LD_LIBRARY_PATH": rt_mpi + ":" + os.environ.get(
        "LD_LIBRARY_PATH", "")}
    data_path = os.path.join(bundle, "data", "distributed_gpu.npz")
    data = np.load(data_path)
    for name in VARIANTS:
        so = os.path.join(bundle, "models", "lib%s.so" % name)
        results = run_job(so, name, "cuda", data_path, RANKS, env)
        transports = {str(r["transport"]) for r in results.values()}
        assert transports == {"staged: ranks 0 and 1 share a GPU, and NCCL "
                              "needs one GPU a rank"}, transports
        reference = "whole" if name in DENSE else name
        worst = compare(results, data, reference, name, name)
        print(f"{name}: 2 processes on one GPU (staged) = {reference} "
              f"reference, worst {worst:.2e} of scale")
    on_nccl = {}
    for name in ON_NCCL:
        so = os.path.join(bundle, "models", "lib%s.so" % name)
        results = run_job(so, name, "cuda", data_path, 1,
                          dict(env, GROVE_DEVICE_COLLECTIVES="nccl"))
        assert str(results[0]["transport"]) == "nccl", results[0]["transport"]
        reference = "rank0" if name in DENSE else name + "_one"
        worst = compare(results, data, reference, f"{name} on NCCL", name)
        on_nccl[name] = results[0]
        print(f"{name}: 1 process on NCCL = the host's on rank 0's "
              f"batches, worst {worst:.2e} of scale")
    for n in data["state"]:
        key = "p_" + str(n)
        assert np.array_equal(on_nccl["dpdense"][key],
                              on_nccl["dpblocking"][key]), \
            f"overlapped and blocking NCCL steps differ in {n}"
    print("dpdense (started, waited late) = dpblocking bit for bit on NCCL")
    # Ranks of a CUDA context agree before each call too (blocking: their
    # device collectives cannot be refused): one row fewer on rank 1
    # fails both ranks' first call, naming the shapes.
    so = os.path.join(bundle, "models", "libdpdense.so")
    results = run_job(so, "dpdense", "cuda", data_path, RANKS,
                      dict(env, GROVE_TEST_SHORT_RANK="1"))
    for r, res in results.items():
        assert int(res["status"]) == 9 and "the shapes of the inputs" in \
            str(res["message"]), (r, res["message"])
    print("dpdense, rank 1 one row short: both ranks' calls fail on the GPU: "
          + str(results[0]["message"]))
    return 0


def compile_only():
    """Without a GPU: Model's compile-only path (sm_90 cubin + PTX, linked
    with libgrove_rt_cuda, context creation fails with NO_DEVICE), and the
    library's calls of the device services."""
    for name, (flags, services) in COMPILED.items():
        model = Model(variant(name)[0], name=name, grovec_flags=flags,
                      target="cuda")
        so = os.path.join(model.workdir, "lib%s.so" % name)
        undefined = subprocess.run(["nm", "-D", "--undefined-only", so],
                                   capture_output=True, text=True,
                                   check=True).stdout
        symbols = set(undefined.split())
        prefix = "_mlir_ciface_grove_rt_cuda_"
        called = []
        for service in services:
            if service.startswith("="):
                wanted = [service[1:]]
            else:
                op, suffix = service.rsplit("_", 1)
                wanted = [service, f"{op}_start_{suffix}"]
            found = [w for w in wanted if prefix + w in symbols]
            assert found, f"{name} calls none of {wanted}"
            called += found
        for started in [c for c in called if "_start_" in c]:
            wait = "collective_wait_" + started.rsplit("_", 1)[1]
            assert prefix + wait in symbols, f"{name} never calls {wait}"
            if wait not in called:
                called.append(wait)
        for host in ("_mlir_ciface_grove_rt_all_",
                     "_mlir_ciface_grove_rt_collective_"):
            assert host not in undefined, f"{name} calls a host collective"
        if "--overlap-collectives=false" in flags:
            assert not any(s.startswith(prefix) and "_start_" in s
                           for s in symbols), f"{name} starts a collective"
        print(f"compile-only: {name}: calls grove_rt_cuda_"
              + ", grove_rt_cuda_".join(called))


def lit(directory):
    """prepare + run with this build's runtime as both of the bundle's."""
    for sub in ("models", "data"):
        os.makedirs(os.path.join(directory, sub), exist_ok=True)
    for link in ("rt", "rt-mpi"):
        path = os.path.join(directory, link)
        if not os.path.exists(path):
            os.symlink(os.environ["GROVE_LIB"], path)
    prepare(directory)
    return run(directory)


def main():
    mode = sys.argv[1]
    if mode == "prepare":
        prepare(sys.argv[2])
    elif mode == "run":
        sys.exit(run(sys.argv[2]))
    elif mode == "lit":
        sys.exit(lit(sys.argv[2]))
    elif mode == "compile":
        compile_only()
    elif mode == "rank":
        rank(*sys.argv[2:7])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
