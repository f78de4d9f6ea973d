"""Helpers for Grove's integration tests: compile a grove module with grovec,
link it into a shared object with libgrove_rt, and call its entry points
through the runtime's generic C API (grove_invoke) with numpy arrays passed as
DLPack DLTensors.

Every comparison is against an independent reference computed by the test
itself (numpy or PyTorch), on fresh random inputs, with a stated tolerance.

Targets: GROVE_TEST_TARGET=cuda (or Model(target="cuda")) compiles with
--target=cuda, links libgrove_rt_cuda, and moves inputs to the GPU and
outputs back with cudart, so the same test checks the GPU. With
GROVE_TEST_COMPILE_ONLY=1 (machines with the toolkit but no GPU) a CUDA
Model is compiled, linked, checked to embed sm_90 code, loaded, and its
context creation checked to fail cleanly with GROVE_ERROR_NO_DEVICE; the
script stops at its first call of such a model, saying so - nothing is
reported as having run.

GPU machines without grovec (scripts/gpu-check.sh): GROVE_TEST_BUNDLE=DIR.
With GROVE_TEST_COMPILE_ONLY=1 (preparing, here) each CUDA model's shared
object is also written to DIR/models, linked against DIR/rt's runtime; on
the GPU machine Model loads it from there instead of running grovec.
"""
import copy
import ctypes
import os
import subprocess
import sys
import tempfile

import numpy as np

GROVE_BIN = os.environ.get("GROVE_BIN", "")
GROVE_LIB = os.environ.get("GROVE_LIB", "")
CC = os.environ.get("CC", "cc")

kDLCPU, kDLCUDA = 1, 2
GROVE_ERROR_NO_DEVICE = 7
kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool = 0, 1, 2, 4, 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor)))]

_NP_TO_DL = {
    np.dtype(np.float32): (kDLFloat, 32), np.dtype(np.float64): (kDLFloat, 64),
    np.dtype(np.float16): (kDLFloat, 16), np.dtype(np.int32): (kDLInt, 32),
    np.dtype(np.int64): (kDLInt, 64), np.dtype(np.int8): (kDLInt, 8),
    np.dtype(np.bool_): (kDLBool, 8),
}
try:  # bf16 arrays (ml_dtypes is in requirements.txt)
    import ml_dtypes
    _NP_TO_DL[np.dtype(ml_dtypes.bfloat16)] = (kDLBfloat, 16)
except ImportError:
    pass
_DL_TO_NP = {v: k for k, v in _NP_TO_DL.items()}


class GroveError(RuntimeError):
    def __init__(self, status, message):
        super().__init__(f"status {status}: {message}")
        self.status = status
        self.message = message


def dltensor(array, keep, device=None):
    """A DLTensor viewing `array` (C-contiguous); `keep` holds the ctypes
    buffers alive for the duration of the call. With a CudaMemory `device`,
    the data is copied to the GPU first (freed when `keep` is released)."""
    # np.ascontiguousarray would make a rank-0 array rank 1.
    array = np.require(array, requirements="C")
    shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
    code, bits = _NP_TO_DL[array.dtype]
    data, where = array.ctypes.data_as(ctypes.c_void_p), DLDevice(kDLCPU, 0)
    if device is not None:
        buf = device.upload(array)
        keep.append(buf)
        data, where = ctypes.c_void_p(buf.ptr), DLDevice(kDLCUDA, 0)
    t = DLTensor(data, where, array.ndim, DLDataType(code, bits, 1), shape,
                 None, 0)
    keep.extend([array, shape, t])
    return t


class ContextOptions(ctypes.Structure):
    """grove_context_options (runtime.h)."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("device_id", ctypes.c_int32),
                ("stream", ctypes.c_void_p), ("flags", ctypes.c_uint32)]


class _DeviceBuffer:
    def __init__(self, mem, ptr):
        self.mem, self.ptr = mem, ptr

    def __del__(self):
        if self.ptr:
            self.mem.cudart.cudaFree(ctypes.c_void_p(self.ptr))


def load_cudart():
    """cudart from $CUDA_HOME, else wherever the loader finds it."""
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    for name in (os.path.join(home, "lib64", "libcudart.so"),
                 "libcudart.so.13", "libcudart.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    raise RuntimeError("cannot load libcudart (set CUDA_HOME)")


class CudaMemory:
    """Device buffers through cudart (the toolkit's, as the runtime uses)."""

    def __init__(self):
        self.cudart = load_cudart()
        self.cudart.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                           ctypes.c_size_t, ctypes.c_int]

    def _check(self, err, what):
        if err != 0:
            raise RuntimeError(f"{what}: cudart error {err}")

    def upload(self, array):
        ptr = ctypes.c_void_p()
        self._check(self.cudart.cudaMalloc(ctypes.byref(ptr),
                                           ctypes.c_size_t(max(array.nbytes, 1))),
                    "cudaMalloc")
        buf = _DeviceBuffer(self, ptr.value)
        if array.nbytes:
            self._check(self.cudart.cudaMemcpy(ptr, array.ctypes.data,
                                               array.nbytes, 1), "H2D copy")
        return buf

    def download(self, ptr, nbytes):
        out = ctypes.create_string_buffer(max(nbytes, 1))
        if nbytes:
            self._check(self.cudart.cudaMemcpy(out, ctypes.c_void_p(ptr),
                                               nbytes, 2), "D2H copy")
        return out.raw[:nbytes]


def hash_of(source, flags):
    """Names a prepared library after what it was compiled from."""
    import hashlib
    h = hashlib.sha256(source.encode())
    h.update(repr(tuple(flags)).encode())
    return h.hexdigest()[:16]


def test_target():
    return os.environ.get("GROVE_TEST_TARGET", "host")


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n"
                           f"{proc.stdout}{proc.stderr}")
    return proc


def tool(name):
    return os.path.join(GROVE_BIN, name) if GROVE_BIN else name


class Model:
    """A grove module compiled with grovec and loaded through ctypes.

    `library`: a shared object already compiled and linked from `source`
    (what a previous Model built in `workdir`, e.g. cached by a benchmark):
    loaded as it is, without running grovec."""

    def __init__(self, source, name="m", grovec_flags=(), workdir=None,
                 target=None, library=None):
        self.target = target or test_target()
        self.compile_log = ""
        self.workdir = workdir or tempfile.mkdtemp(prefix="grove-test-")
        path = source
        if not os.path.exists(str(source)):
            path = os.path.join(self.workdir, name + ".mlir")
            with open(path, "w") as f:
                f.write(source)
        out = os.path.join(self.workdir, "out")
        cuda = self.target == "cuda"
        bundle = os.environ.get("GROVE_TEST_BUNDLE")
        compile_only = os.environ.get("GROVE_TEST_COMPILE_ONLY") == "1"
        archive = os.path.join(out, "lib%s.a" % name)
        so = os.path.join(self.workdir, "lib%s.so" % name)
        if library:
            so = library
        elif bundle and cuda and not compile_only:
            # On the GPU machine: the library prepared by gpu-check.sh.
            so = os.path.join(bundle, "models", "lib%s.%s.so" % (name, hash_of(
                source if not os.path.exists(str(source)) else open(source).read(),
                grovec_flags)))
            if not os.path.exists(so):
                raise RuntimeError(f"{so} missing: rerun scripts/gpu-check.sh "
                                   "prepare")
        else:
            # grovec's diagnostics (remarks included) for the caller.
            self.compile_log = run([
                tool("grovec"), path, "-o", out, "--name=" + name,
                "--target=" + self.target, *grovec_flags]).stderr
            libdir = GROVE_LIB
            run([CC, "-shared", "-o", so, "-Wl,--whole-archive", archive,
                 "-Wl,--no-whole-archive", "-L" + libdir, "-Wl,-rpath," + libdir,
                 "-lgrove_rt_cuda" if cuda else "-lgrove_rt", "-lm"])
            if bundle and cuda:
                # The same archive linked against the bundle's runtime.
                os.makedirs(os.path.join(bundle, "models"), exist_ok=True)
                with open(path) as f:
                    key = hash_of(f.read(), grovec_flags)
                run([CC, "-shared", "-o", os.path.join(
                    bundle, "models", "lib%s.%s.so" % (name, key)),
                    "-Wl,--whole-archive", archive, "-Wl,--no-whole-archive",
                    "-L" + os.path.join(bundle, "rt"),
                    "-Wl,-rpath,$ORIGIN/../rt", "-lgrove_rt_cuda", "-lm"])
        self.name = name
        self.lib = ctypes.CDLL(so)
        self._bind()
        self.model_def = ctypes.c_char.in_dll(self.lib, name + "_model")
        # GROVE_TEST_ASYNC=1: calls return once queued (GROVE_CONTEXT_ASYNC);
        # outputs are read after a device synchronization.
        self.asynchronous = os.environ.get("GROVE_TEST_ASYNC") == "1"
        status = self._create_context()
        self.compile_only = cuda and compile_only
        if self.compile_only:
            self._compile_only(archive, status)
            return
        self._check(status)
        self.device = CudaMemory() if cuda else None

    def _create_context(self):
        self.ctx = ctypes.c_void_p()
        options = ContextOptions()
        self.lib.grove_context_options_init(ctypes.byref(options))
        if self.asynchronous:
            options.flags = 1
        return self.lib.grove_context_create_with_options(
            ctypes.byref(self.model_def), ctypes.byref(options),
            ctypes.byref(self.ctx))

    def another_context(self):
        """A second context of the same loaded model, with weights and state
        of its own (as an app holding two instances has): no second
        library, so it works from the GPU check's bundle too."""
        other = copy.copy(self)
        if not self.compile_only:
            other._check(other._create_context())
        return other

    def _compile_only(self, archive, status):
        """Checks what can be checked without a GPU, then ends the test."""
        images = run([sys.executable, os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
            "grove-fatbin", "grove-fatbin.py"), archive]).stdout.split("\n")
        kinds = {tuple(l.split()[3:5]) for l in images if " fatbin " in l}
        assert ("cubin", "sm_90") in kinds and ("ptx", "sm_90") in kinds, \
            f"{archive} lacks sm_90 cubin + PTX: {images}"
        message = self.lib.grove_last_error().decode()
        assert status == GROVE_ERROR_NO_DEVICE and not self.ctx, \
            f"expected GROVE_ERROR_NO_DEVICE without a GPU, got {status}: " \
            f"{message}"
        kernels = sum(1 for l in images if " cubin sm_90 " in l)
        print(f"compile-only: {self.name}: {kernels} sm_90 kernels (cubin + "
              f"PTX) linked with libgrove_rt_cuda; context creation: "
              f"{message}")
        print(f"compile-only: {self.name}: NOT RUN (no GPU here)")

    def _bind(self):
        L = self.lib
        L.grove_last_error.restype = ctypes.c_char_p
        L.grove_context_create.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        L.grove_context_create_with_options.argtypes = [
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        L.grove_context_destroy.argtypes = [ctypes.c_void_p]
        L.grove_context_set_weight.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(DLTensor)]
        L.grove_context_load_weights.argtypes = [ctypes.c_void_p,
                                                 ctypes.c_char_p]
        L.grove_context_save_weights.argtypes = [ctypes.c_void_p,
                                                 ctypes.c_char_p]
        L.grove_context_get_weight.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(DLTensor)]
        L.grove_invoke.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p,
            ctypes.POINTER(ctypes.POINTER(DLTensor)), ctypes.c_size_t,
            ctypes.POINTER(ctypes.POINTER(DLManagedTensor)), ctypes.c_size_t]

    def _check(self, status):
        if status != 0:
            raise GroveError(status, self.lib.grove_last_error().decode())

    def _stop_if_compile_only(self):
        if self.compile_only:
            # Every model the script built before using one has been
            # compiled and checked; nothing can run without a GPU.
            raise SystemExit(0)

    def set_weight(self, name, array):
        self._stop_if_compile_only()
        keep = []
        t = dltensor(array, keep)
        self._check(self.lib.grove_context_set_weight(
            self.ctx, name.encode(), ctypes.byref(t)))

    def load_weights(self, path):
        self._stop_if_compile_only()
        self._check(self.lib.grove_context_load_weights(self.ctx,
                                                        path.encode()))

    def save_weights(self, path):
        """Saves every param (weights and state) as safetensors."""
        self._stop_if_compile_only()
        self._check(self.lib.grove_context_save_weights(self.ctx,
                                                        path.encode()))

    def get_weight(self, name):
        """A copy of param `name` as the context holds it now (host)."""
        self._stop_if_compile_only()
        t = DLTensor()
        self._check(self.lib.grove_context_get_weight(
            self.ctx, name.encode(), ctypes.byref(t)))
        shape = tuple(t.shape[d] for d in range(t.ndim))
        dtype = _DL_TO_NP[(t.dtype.code, t.dtype.bits)]
        count = int(np.prod(shape)) if shape else 1
        nbytes = count * dtype.itemsize
        if self.device:
            buf = self.device.download(t.data, nbytes)
        else:
            buf = (ctypes.c_char * nbytes).from_address(t.data)
        return np.frombuffer(bytes(buf), dtype=dtype).reshape(shape).copy()

    def reopen(self):
        """Destroys the context and creates a fresh one for the model."""
        self.lib.grove_context_destroy(self.ctx)
        self.ctx = ctypes.c_void_p()
        self._check(self.lib.grove_context_create(
            ctypes.byref(self.model_def), ctypes.byref(self.ctx)))

    def _arguments(self, arrays, num_outputs):
        """grove_invoke's input descriptors (and what keeps their data alive)
        and room for its outputs."""
        keep = []
        tensors = [dltensor(a, keep, self.device) for a in arrays]
        ins = (ctypes.POINTER(DLTensor) * max(len(tensors), 1))(
            *[ctypes.pointer(t) for t in tensors])
        outs = (ctypes.POINTER(DLManagedTensor) * max(num_outputs, 1))()
        return keep, tensors, ins, outs

    def call(self, entry, *arrays, num_outputs=1):
        """Calls `entry`; returns the outputs as numpy arrays (copies)."""
        self._stop_if_compile_only()
        keep, tensors, ins, outs = self._arguments(arrays, num_outputs)
        self._check(self.lib.grove_invoke(self.ctx, entry.encode(), ins,
                                          len(tensors), outs, num_outputs))
        if self.device and self.asynchronous:
            self.device.cudart.cudaDeviceSynchronize()
        results = []
        for i in range(num_outputs):
            m = outs[i].contents
            t = m.dl_tensor
            shape = tuple(t.shape[d] for d in range(t.ndim))
            dtype = _DL_TO_NP[(t.dtype.code, t.dtype.bits)]
            count = int(np.prod(shape)) if shape else 1
            nbytes = count * dtype.itemsize
            want = kDLCUDA if self.device else kDLCPU
            assert t.device.device_type == want, \
                f"output on device type {t.device.device_type}, want {want}"
            if self.device:
                buf = self.device.download(t.data + t.byte_offset,
                                           nbytes) if count else b""
            else:
                buf = (ctypes.c_char * nbytes).from_address(
                    t.data + t.byte_offset) if count else b""
            results.append(np.frombuffer(bytes(buf), dtype=dtype)
                           .reshape(shape).copy())
            m.deleter(outs[i])
        return results

    def bind(self, entry, *arrays, num_outputs=1):
        """A callable that runs `entry` on `arrays`, for benchmarks: the input
        descriptors are built once, and the outputs (which the runtime still
        allocates and writes) are freed unread, so a call costs what an
        application's grove_invoke costs, not a conversion to numpy. Check
        results with call()."""
        self._stop_if_compile_only()
        keep, tensors, ins, outs = self._arguments(arrays, num_outputs)
        invoke, name, count = self.lib.grove_invoke, entry.encode(), len(tensors)

        def run():
            self._check(invoke(self.ctx, name, ins, count, outs, num_outputs))
            if self.device and self.asynchronous:
                self.device.cudart.cudaDeviceSynchronize()
            for i in range(num_outputs):
                outs[i].contents.deleter(outs[i])

        run.keep_alive = (arrays, keep, tensors, ins, outs)
        return run

    def __del__(self):
        if getattr(self, "ctx", None):
            self.lib.grove_context_destroy(self.ctx)


def assert_close(actual, expected, rtol, atol, what=""):
    """np.testing-style check that reports the worst element."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        raise AssertionError(f"{what}: shape {actual.shape} != {expected.shape}")
    err = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    bound = atol + rtol * np.abs(expected.astype(np.float64))
    if not np.all(err <= bound) or np.isnan(actual).any() != np.isnan(expected).any():
        idx = np.unravel_index(np.argmax(err - bound), err.shape) if err.size else ()
        raise AssertionError(
            f"{what}: max abs error {err.max() if err.size else 0:.3g} exceeds "
            f"atol={atol} rtol={rtol} at {idx}: got "
            f"{actual[idx] if err.size else None}, expected "
            f"{expected[idx] if err.size else None}")
    return float(err.max()) if err.size else 0.0


def rng():
    """Fresh random inputs every run; the seed is printed so a failure can be
    reproduced with GROVE_TEST_SEED."""
    seed = int(os.environ.get("GROVE_TEST_SEED",
                              np.random.SeedSequence().entropy % (2**32)))
    print(f"seed {seed}", file=sys.stderr)
    return np.random.default_rng(seed)
