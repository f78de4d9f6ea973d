"""Helpers for Grove's integration tests: compile a grove module with grovec,
link it into a shared object with libgrove_rt, and call its entry points
through the runtime's generic C API (grove_invoke) with numpy arrays passed as
DLPack DLTensors.

Every comparison is against an independent reference computed by the test
itself (numpy or PyTorch), on fresh random inputs, with a stated tolerance.
"""
import ctypes
import os
import subprocess
import sys
import tempfile

import numpy as np

GROVE_BIN = os.environ.get("GROVE_BIN", "")
GROVE_LIB = os.environ.get("GROVE_LIB", "")
CC = os.environ.get("CC", "cc")

kDLCPU = 1
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
_DL_TO_NP = {v: k for k, v in _NP_TO_DL.items()}


class GroveError(RuntimeError):
    def __init__(self, status, message):
        super().__init__(f"status {status}: {message}")
        self.status = status
        self.message = message


def dltensor(array, keep):
    """A DLTensor viewing `array` (C-contiguous); `keep` holds the ctypes
    buffers alive for the duration of the call."""
    array = np.ascontiguousarray(array)
    shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
    code, bits = _NP_TO_DL[array.dtype]
    t = DLTensor(array.ctypes.data_as(ctypes.c_void_p), DLDevice(kDLCPU, 0),
                 array.ndim, DLDataType(code, bits, 1), shape, None, 0)
    keep.extend([array, shape, t])
    return t


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n"
                           f"{proc.stdout}{proc.stderr}")
    return proc


def tool(name):
    return os.path.join(GROVE_BIN, name) if GROVE_BIN else name


class Model:
    """A grove module compiled with grovec and loaded through ctypes."""

    def __init__(self, source, name="m", grovec_flags=(), workdir=None):
        self.workdir = workdir or tempfile.mkdtemp(prefix="grove-test-")
        path = source
        if not os.path.exists(str(source)):
            path = os.path.join(self.workdir, name + ".mlir")
            with open(path, "w") as f:
                f.write(source)
        out = os.path.join(self.workdir, "out")
        run([tool("grovec"), path, "-o", out, "--name=" + name,
             *grovec_flags])
        so = os.path.join(self.workdir, "lib%s.so" % name)
        libdir = GROVE_LIB
        run([CC, "-shared", "-o", so, "-Wl,--whole-archive",
             os.path.join(out, "lib%s.a" % name), "-Wl,--no-whole-archive",
             "-L" + libdir, "-Wl,-rpath," + libdir, "-lgrove_rt", "-lm"])
        self.name = name
        self.lib = ctypes.CDLL(so)
        self._bind()
        self.model_def = ctypes.c_char.in_dll(self.lib, name + "_model")
        self.ctx = ctypes.c_void_p()
        self._check(self.lib.grove_context_create(
            ctypes.byref(self.model_def), ctypes.byref(self.ctx)))

    def _bind(self):
        L = self.lib
        L.grove_last_error.restype = ctypes.c_char_p
        L.grove_context_create.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        L.grove_context_destroy.argtypes = [ctypes.c_void_p]
        L.grove_context_set_weight.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(DLTensor)]
        L.grove_context_load_weights.argtypes = [ctypes.c_void_p,
                                                 ctypes.c_char_p]
        L.grove_invoke.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p,
            ctypes.POINTER(ctypes.POINTER(DLTensor)), ctypes.c_size_t,
            ctypes.POINTER(ctypes.POINTER(DLManagedTensor)), ctypes.c_size_t]

    def _check(self, status):
        if status != 0:
            raise GroveError(status, self.lib.grove_last_error().decode())

    def set_weight(self, name, array):
        keep = []
        t = dltensor(array, keep)
        self._check(self.lib.grove_context_set_weight(
            self.ctx, name.encode(), ctypes.byref(t)))

    def load_weights(self, path):
        self._check(self.lib.grove_context_load_weights(self.ctx,
                                                        path.encode()))

    def call(self, entry, *arrays, num_outputs=1):
        """Calls `entry`; returns the outputs as numpy arrays (copies)."""
        keep = []
        tensors = [dltensor(a, keep) for a in arrays]
        ins = (ctypes.POINTER(DLTensor) * max(len(tensors), 1))(
            *[ctypes.pointer(t) for t in tensors])
        outs = (ctypes.POINTER(DLManagedTensor) * max(num_outputs, 1))()
        self._check(self.lib.grove_invoke(self.ctx, entry.encode(), ins,
                                          len(tensors), outs, num_outputs))
        results = []
        for i in range(num_outputs):
            m = outs[i].contents
            t = m.dl_tensor
            shape = tuple(t.shape[d] for d in range(t.ndim))
            dtype = _DL_TO_NP[(t.dtype.code, t.dtype.bits)]
            count = int(np.prod(shape)) if shape else 1
            buf = (ctypes.c_char * (count * dtype.itemsize)).from_address(
                t.data + t.byte_offset) if count else b""
            results.append(np.frombuffer(bytes(buf), dtype=dtype)
                           .reshape(shape).copy())
            m.deleter(outs[i])
        return results

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
