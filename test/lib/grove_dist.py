"""Multi-process helpers for Grove's data-parallel tests and benchmarks.

`launch` runs a Python script on N ranks under Open MPI's mpirun
(--oversubscribe: more ranks than cores; --enable-recovery: a rank that
dies does not make mpirun kill the others, so they can report the error
themselves, which is what the fault tests check). `Comm` wraps the
runtime's grove_comm (runtime.h) through a loaded Model's library. The
numpy models of the compressors live here too, so that tests compare the
compiled collectives against an independent transcription.
"""
import ctypes
import os
import shutil
import subprocess
import sys
import time


GROVE_ERROR_PEER = 9


def mpirun_available():
    return shutil.which("mpirun") is not None


def launch(script, args, ranks, timeout, env=None, watch=None):
    """Runs the Python `script args` on `ranks` processes; returns
    (returncode, output, seconds). Raises on a timeout after killing the
    job. `watch`, if given, is called every 0.2 s while the job runs (a
    fault test ends a stopped rank from there)."""
    return launch_command([sys.executable, script, *args], ranks, timeout,
                          env, watch)


def launch_command(argv, ranks, timeout, env=None, watch=None):
    """As launch, for any program."""
    cmd = ["mpirun", "--oversubscribe", "--enable-recovery", "-np",
           str(ranks), "--mca", "btl", "self,vader,tcp"]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    cmd += list(argv)
    full_env = dict(os.environ)
    full_env.update(env or {})
    # One OpenMP/BLAS thread a rank: the ranks share the cores.
    full_env.setdefault("OMP_NUM_THREADS", "1")
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=full_env,
                            start_new_session=True)
    try:
        if watch:
            while proc.poll() is None and time.monotonic() - start < timeout:
                watch()
                time.sleep(0.2)
        out, _ = proc.communicate(
            timeout=max(1.0, timeout - (time.monotonic() - start)))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, _ = proc.communicate()
        raise AssertionError(f"mpirun {' '.join(map(str, argv))} did not "
                             f"finish within {timeout} s:\n{out}")
    return proc.returncode, out, time.monotonic() - start


NETNS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                     "scripts", "netns.sh")


def netns_mpirun(argv, ranks, extra_env=()):
    """The command and environment that run `argv` on `ranks` ranks in the
    namespaces of scripts/netns.sh: Open MPI's TCP transport over the
    shaped links (not shared memory), mpirun's PMIx server reached through
    the bridge (a namespace's loopback is its own); the variables named in
    `extra_env` are passed on to the ranks."""
    env = dict(os.environ, PMIX_MCA_ptl_tcp_if_include="grovebr0",
               OMP_NUM_THREADS="1")
    cmd = ["mpirun", "--oversubscribe", "--enable-recovery", "-np",
           str(ranks), "--mca", "btl", "self,tcp", "--mca",
           "btl_tcp_if_include", "10.77.0.0/24", "--mca",
           "oob_tcp_if_include", "grovebr0", "-x", "OMP_NUM_THREADS"]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    for name in extra_env:
        cmd += ["-x", name]
    return cmd + [NETNS, "exec", *argv], env


class CommOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t),
                ("timeout_seconds", ctypes.c_double)]


class CommStats(ctypes.Structure):
    _fields_ = [("payload_bytes", ctypes.c_uint64),
                ("collectives", ctypes.c_uint64),
                ("wait_seconds", ctypes.c_double)]


class Comm:
    """grove_comm_create over MPI_COMM_WORLD, through `lib` (a Model's)."""

    def __init__(self, lib, timeout=None):
        self.lib = lib
        lib.grove_comm_create.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.grove_comm_rank.argtypes = [ctypes.c_void_p]
        lib.grove_comm_size.argtypes = [ctypes.c_void_p]
        lib.grove_comm_destroy.argtypes = [ctypes.c_void_p]
        lib.grove_comm_get_stats.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.grove_comm_barrier.argtypes = [ctypes.c_void_p]
        lib.grove_context_set_comm.argtypes = [ctypes.c_void_p,
                                               ctypes.c_void_p]
        options = CommOptions()
        lib.grove_comm_options_init(ctypes.byref(options))
        if timeout:
            options.timeout_seconds = timeout
        self.handle = ctypes.c_void_p()
        status = lib.grove_comm_create(ctypes.byref(options),
                                       ctypes.byref(self.handle))
        if status:
            raise RuntimeError(lib.grove_last_error().decode())
        self.rank = lib.grove_comm_rank(self.handle)
        self.size = lib.grove_comm_size(self.handle)

    def attach(self, model):
        status = self.lib.grove_context_set_comm(model.ctx, self.handle)
        if status:
            raise RuntimeError(self.lib.grove_last_error().decode())

    def stats(self):
        s = CommStats()
        self.lib.grove_comm_get_stats(self.handle, ctypes.byref(s))
        return s.payload_bytes, s.collectives, s.wait_seconds

    def device_transport(self):
        """How the device collectives move memory ("nccl", "staged: why"),
        "" before the first one."""
        self.lib.grove_comm_device_transport.argtypes = [ctypes.c_void_p]
        self.lib.grove_comm_device_transport.restype = ctypes.c_char_p
        return self.lib.grove_comm_device_transport(self.handle).decode()

    def all_reduce(self, array, op=0):
        """grove_comm_all_reduce of `array` in place (op 0 sum, 1 mean);
        raises GroveError on failure."""
        from grove_testing import GroveError, dltensor
        keep = []
        t = dltensor(array, keep)
        self.lib.grove_comm_all_reduce.argtypes = [
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        status = self.lib.grove_comm_all_reduce(self.handle, ctypes.byref(t),
                                                op)
        if status:
            raise GroveError(status, self.lib.grove_last_error().decode())
        return array

    def barrier(self):
        status = self.lib.grove_comm_barrier(self.handle)
        if status:
            raise RuntimeError(self.lib.grove_last_error().decode())

    def destroy(self):
        if self.handle:
            self.lib.grove_comm_destroy(self.handle)
            self.handle = ctypes.c_void_p()


MASK = (1 << 64) - 1


def splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def random_block(counter, seed, stream, extent, block):
    """grove.random_block's offset (GroveCollectiveOps.td)."""
    key = (seed ^ (stream << 32)) & MASK
    h = splitmix64((counter & MASK) ^ key)
    blocks = (extent + block - 1) // block
    return min((h % blocks) * block, extent - block)


def grbs_block(size, ratio):
    """GRBS's block length: floor(size / ratio), at least 1."""
    return max(1, size // ratio)
