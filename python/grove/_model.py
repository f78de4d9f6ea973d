"""grove.load: a compiled library as a Python object with typed methods."""
import functools
import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Tuple

from . import _core

# DLPack (code, bits) -> dtype name, as numpy (and ml_dtypes) spell it.
_DTYPES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32",
           (0, 64): "int64", (1, 8): "uint8", (2, 16): "float16",
           (2, 32): "float32", (2, 64): "float64", (4, 16): "bfloat16",
           (6, 8): "bool"}


def _dtype_name(dl):
    code, bits, _ = dl
    return _DTYPES.get((code, bits), f"dlpack({code},{bits})")


@dataclass(frozen=True)
class TensorSpec:
    """A tensor of a signature: its name, dtype and shape (None: dynamic)."""
    name: str
    dtype: str
    shape: Tuple

    @staticmethod
    def _from(sig):
        name, dl, shape = sig
        return TensorSpec(name, _dtype_name(dl),
                          tuple(None if d < 0 else d for d in shape))


@dataclass(frozen=True)
class ParamSpec(TensorSpec):
    """A param: "weight" (loaded or set before calls) or "state" (starts at
    its initialiser: moments, counters, running statistics)."""
    kind: str = "weight"


class DLPackTensor:
    """An output for any framework's from_dlpack (once: the capsule moves
    to the consumer)."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, stream=None, **_):
        capsule, self._capsule = self._capsule, None
        if capsule is None:
            raise BufferError("this output was already taken by from_dlpack")
        return capsule

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU


class Entry(functools.partial):
    """An entry point: call it with one array-like per input (anything with
    __dlpack__ or the buffer protocol on the CPU: numpy, PyTorch, JAX);
    returns its one output, or a tuple of them. (A partial of the context's
    invoke: a call goes from the interpreter to C++ directly.)"""

    def __new__(cls, model, index, *_):
        invoke = model._ctx.invoke
        if model.framework == "dlpack":
            def invoke(i, *args, _call=model._ctx.invoke):
                out = _call(i, *args)
                if isinstance(out, tuple):
                    return tuple(DLPackTensor(t) for t in out)
                return DLPackTensor(out)
        return super().__new__(cls, invoke, index)

    def __init__(self, model, index, name, inputs, outputs, reads, writes):
        self.name = name
        self.inputs = tuple(TensorSpec._from(s) for s in inputs)
        self.outputs = tuple(TensorSpec._from(s) for s in outputs)
        self.reads, self.writes = tuple(reads), tuple(writes)
        args = ", ".join(f"{t.name}: {t.dtype}{list(t.shape)}"
                         for t in self.inputs)
        outs = ", ".join(f"{t.dtype}{list(t.shape)}" for t in self.outputs)
        self.__doc__ = (f"{name}({args}) -> ({outs})"
                        + (f"; writes {', '.join(self.writes)}"
                           if self.writes else ""))

    def __repr__(self):
        return f"<grove entry {self.__doc__}>"


# The file each loaded path had: dlopen hands back the library already
# loaded from a path even after a new one replaced the file there.
_LOADED = {}


def _fresh_path(path):
    """`path`, or a copy of its file under a new name where another file
    was loaded from that path before (a library recompiled in place)."""
    path = os.path.realpath(path)
    try:
        st = os.stat(path)
    except OSError:
        return path  # the Context reports the missing file
    key = (st.st_dev, st.st_ino, st.st_mtime_ns)
    files = _LOADED.setdefault(path, {key: path})
    if key not in files:
        from ._compile import _scratch_dir
        files[key] = os.path.join(tempfile.mkdtemp(dir=_scratch_dir()),
                                  os.path.basename(path))
        shutil.copyfile(path, files[key])
    return files[key]


class Model:
    """A compiled library's model with its own state (grove_context).

    Entries are attributes (`model.train_step(x, y)`) and `model.entries`;
    params are read and written by name (`model["fc1.weight"]` is a copy,
    `model["fc1.weight"] = array` copies in), and saved and loaded as the
    safetensors checkpoints the C API writes.
    """

    def __init__(self, path, name=None, framework="numpy"):
        path = os.path.abspath(os.fspath(path))
        if name is None:
            stem = os.path.basename(path).split(".")[0]
            name = stem[3:] if stem.startswith("lib") else stem
        self.path, self.name, self.framework = path, name, framework
        self._ctx = _core.Context(_fresh_path(path), name, framework)
        self.params = tuple(ParamSpec(n, _dtype_name(d), tuple(s), kind)
                            for n, d, s, kind in self._ctx.params())
        names = [p.name for p in self.params]
        access = self._ctx.access()
        self.entries = {}
        for i, (entry, ins, outs) in enumerate(self._ctx.entries()):
            row = access[i]
            e = Entry(self, i, entry, ins, outs,
                      [n for n, a in zip(names, row) if a == 1],
                      [n for n, a in zip(names, row) if a == 2])
            self.entries[entry] = e
            if not hasattr(type(self), entry):
                setattr(self, entry, e)

    @property
    def weights(self):
        """Names of the params that must be loaded or set before calls."""
        return [p.name for p in self.params if p.kind == "weight"]

    @property
    def state(self):
        """Names of the params that start at their initialiser."""
        return [p.name for p in self.params if p.kind == "state"]

    @property
    def ready(self):
        """Whether every weight is set (calls are possible)."""
        return self._ctx.weights_ready()

    def __getitem__(self, name):
        return self._ctx.get_weight(name)

    def __setitem__(self, name, value):
        self._ctx.set_weight(name, value)

    def state_dict(self):
        """Every param that is set, by name (copies)."""
        return {p.name: self[p.name] for p in self.params}

    def load_state_dict(self, values):
        """Sets every param in `values` (each copied in)."""
        for name, value in values.items():
            self[name] = value

    def load(self, path):
        """Loads a safetensors checkpoint (all or nothing)."""
        self._ctx.load_weights(os.fspath(path))

    def save(self, path):
        """Writes every param to a safetensors checkpoint (atomically)."""
        self._ctx.save_weights(os.fspath(path))

    def __repr__(self):
        return (f"<grove.Model {self.name!r} entries="
                f"{list(self.entries)} params={len(self.params)}>")


def load(path, name=None, framework="numpy"):
    """Opens a compiled library (lib<name>.so) and creates its model.

    name: the model's C name (default: from the file name). framework: what
    outputs are returned as, without a copy: "numpy" (default), "torch",
    "jax", or "dlpack" (an object any of them takes with from_dlpack).
    """
    return Model(path, name=name, framework=framework)
