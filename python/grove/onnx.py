"""grove.onnx: imports an ONNX model as a grove module and its weights.

    imp = grove.onnx.import_model("model.onnx")
    lib = grove.compile(imp.text)
    model = grove.load(lib)
    model.load_state_dict(imp.weights)
    y = model.forward(x)

or from a shell, `grove-import-onnx model.onnx -o model.mlir --weights
model.safetensors` (docs/onnx.md). The graph becomes one `func.func
@forward`: its inputs the arguments, its outputs the results, each named at
the ABI after the ONNX name. Initializers a runtime op reads become
`grove.param`s, their values the weights. Everything computable at import
time (Constant nodes, shape arithmetic such as torch.onnx.export's
Shape -> Gather -> Unsqueeze -> Concat -> Reshape, any node whose inputs are
all constants) is folded in numpy, so the grove ops see static shapes.

An op grove cannot express faithfully is never approximated: the import
fails with an UnsupportedError that lists every such node.
"""
import argparse
import os
import sys
from collections import Counter

import numpy as np

from . import ir

MIN_OPSET = 13  # older models are converted up to it first
OPTIMIZERS = ("sgd", "adam", "adagrad", "lamb", "lans", "adaalter")
CONST_LIMIT = 1024  # folded constants above this many elements are params
# Element types grove has, and those its arithmetic takes.
GROVE_DTYPES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
                np.dtype(np.float16): "f16", np.dtype(np.int32): "i32",
                np.dtype(np.int64): "i64", np.dtype(np.int8): "i8",
                np.dtype(np.bool_): "i1"}
try:  # onnx reads bfloat16 tensors as ml_dtypes' type, as grove does
    import ml_dtypes
    GROVE_DTYPES[np.dtype(ml_dtypes.bfloat16)] = "bf16"
except ImportError:
    pass
FLOATS = tuple(t for t, name in GROVE_DTYPES.items() if name[0] == "f"
               or name == "bf16")
# Nodes never folded although their inputs are constants: they draw
# random numbers, so each run differs.
RANDOM_OPS = {"RandomNormal", "RandomNormalLike", "RandomUniform",
              "RandomUniformLike", "Multinomial", "Bernoulli"}
END = 2 ** 62  # a Slice end at or past this is "to the end"


class OnnxImportError(ValueError):
    """The file is not a model that can be imported: unreadable, invalid
    (onnx.checker), or an input no node, initializer or argument gives."""


class UnsupportedError(ImportError):
    """Nodes grove cannot express. `problems` lists each as a Problem; the
    message names every node as `node '<name>' (<OpType>): <why>`."""

    def __init__(self, problems):
        self.problems = list(problems)
        lines = [str(p) for p in self.problems]
        super().__init__(f"{len(lines)} unsupported node(s):\n  " +
                         "\n  ".join(lines))


class Problem:
    """One unsupported node (or graph input/output): `kind` is "op" (no
    mapping), "dtype" (an element type grove's op does not take),
    "attribute" (a mapped op with a setting grove cannot express) or
    "internal" (the importer failed on it: a bug to report)."""

    __slots__ = ("what", "name", "op", "reason", "kind")

    def __init__(self, what, name, op, reason, kind):
        self.what, self.name, self.op = what, name, op
        self.reason, self.kind = reason, kind

    def __str__(self):
        return f"{self.what} '{self.name}' ({self.op}): {self.reason}"

    __repr__ = __str__


class _Unsupported(Exception):
    """Raised inside a converter; becomes a Problem for its node."""

    def __init__(self, reason, kind="attribute"):
        super().__init__(reason)
        self.kind = kind


class Imported:
    """What import_model returns.

    text: the grove module; weights: {param name: numpy array};
    param_names: {ONNX initializer or value name: grove param name};
    inputs / outputs: [(ONNX name, ABI name)] in order; unsupported: the
    Problems (empty unless strict=False found some, and then text is None);
    opset: the default domain's opset the graph was read at (after any
    conversion), converted_from: the file's opset when it was converted."""

    def __init__(self, text, weights, param_names, inputs, outputs,
                 unsupported, opset, converted_from, module=None):
        self.module = module  # the grove.ir.Module behind `text`
        self.demoted = []  # ONNX int64 inputs taken as int32
        self.text = text
        self.weights = weights
        self.param_names = param_names
        self.inputs = inputs
        self.outputs = outputs
        self.unsupported = unsupported
        self.opset = opset
        self.converted_from = converted_from

    def save_weights(self, path):
        """Writes the weights as safetensors, the checkpoint format
        grove_context_load_weights and Model.load read."""
        from safetensors.numpy import save_file
        save_file({k: np.ascontiguousarray(v)
                   for k, v in self.weights.items()}, os.fspath(path))

    def save(self, path):
        with open(path, "w") as f:
            f.write(self.text)

    def add_train_step(self, optimizer="adam", loss="softmax_cross_entropy",
                       name="train_step", **optimizer_attrs):
        """Adds `train_step(inputs..., labels) -> loss` to the module (and
        `text`): `loss` of @forward's one output against the labels
        (softmax_cross_entropy: i32 class ids; mse_loss: a target of the
        output's type), its gradient with respect to every imported weight,
        and one step of any grove optimizer (`sgd`, `adam`, `adagrad`,
        `lamb`, `lans`, `adaalter`) with `optimizer_attrs` (lr=...), all in
        one call. Compile it with grovec's --data-parallel and
        --compressor options for the compressed data-parallel step.
        Returns self, so an import and its train step are one line."""
        from . import nn
        if self.module is None:
            raise ValueError("the import found unsupported nodes "
                             "(Imported.unsupported): nothing to train")
        if any(f.name == name for f in self.module.functions):
            raise ValueError(f"the module already has @{name}")
        forward = next((f for f in self.module.functions
                        if f.name == "forward"), None)
        if forward is None or len(forward.result_types) != 1:
            n = len(forward.result_types) if forward else 0
            raise ValueError(f"a train step needs a model with one output "
                             f"(this one has {n})")
        # The imported weights, not params made of folded constants.
        weights = {v for k, v in self.param_names.items()
                   if not v.startswith("const.")}
        params = [p for p in self.module.params.values() if p.name in weights
                  and p.type.dtype in ("f32", "f64")]
        if not params:
            raise ValueError("the model has no float weights to train")
        if loss not in ("softmax_cross_entropy", "mse_loss"):
            raise ValueError(f"loss {loss!r}: softmax_cross_entropy or "
                             "mse_loss")
        nn.train_step(self.module, forward, optimizer, loss=loss,
                      params=params, name=name, **optimizer_attrs)
        self.text = self.module.text()
        return self


# ---- names ------------------------------------------------------------------

def _symbol(name, used, allow="._"):
    """`name` as a grove symbol (letters, digits and `allow`), unique in
    `used`: ONNX names may hold '/', ':' or start with a digit."""
    text = "".join(c if c.isalnum() and c.isascii() or c in allow else "_"
                   for c in name)
    if not text or not (text[0].isalpha() or text[0] == "_"):
        text = "v_" + text
    base, k = text, 0
    while text in used:
        k += 1
        text = f"{base}_{k}"
    used.add(text)
    return text


def _ssa_hint(name):
    """An SSA name hint that cannot meet grove.ir's numbered names (%v7)."""
    return name + "_" if name[:1] == "v" and name[1:].isdigit() else name


def _c_name(name, used):
    """An ABI name: grove requires C identifiers for arguments/results."""
    return _symbol(name, used, allow="_")


# ---- values -----------------------------------------------------------------

class Tensor:
    """A run-time value: its SSA value, its shape (ints, and strings for
    dynamic sizes: one string names one size, so equal strings are equal
    sizes), its ONNX element type, and `mask`: a bool value held as f32
    0/1 (grove has no bool arithmetic, but grove.select takes such masks)."""

    __slots__ = ("v", "shape", "dtype", "mask")

    def __init__(self, v, shape, dtype, mask=False):
        self.v, self.shape, self.dtype = v, tuple(shape), dtype
        self.mask = mask

    @property
    def rank(self):
        return len(self.shape)

    @property
    def static(self):
        return all(isinstance(d, int) for d in self.shape)


class Partial:
    """A 1-D int64 value known at import time except for some entries,
    dynamic sizes (strings): what Shape gives for a tensor with a dynamic
    dimension, as it flows through Gather/Concat/... to a Reshape."""

    __slots__ = ("arr",)

    def __init__(self, arr):
        self.arr = arr  # numpy object array of ints and strings


def _partial(arr):
    """An object array as a Partial, or as int64 when fully known."""
    arr = np.asarray(arr, dtype=object)
    if all(isinstance(v, (int, np.integer)) for v in arr.flat):
        return arr.astype(np.int64)
    return Partial(arr)


def _grove_type(shape, dtype, mask=False):
    if mask:
        gdt = "f32"
    else:
        gdt = GROVE_DTYPES.get(np.dtype(dtype))
        if gdt is None:
            raise _Unsupported(f"{np.dtype(dtype)} tensors have no grove "
                               "type", "dtype")
    return ir.TensorType([d if isinstance(d, int) else None for d in shape],
                         gdt)


def _bshape(*shapes):
    """numpy broadcasting over shapes with dynamic sizes: a dynamic size
    meets 1 or itself (grove never stretches a dynamic dimension)."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        big = [d for d in dims if d != 1]
        static = {d for d in big if isinstance(d, int)}
        if len(static) > 1:
            raise _Unsupported(f"shapes {shapes} do not broadcast")
        out.append(static.pop() if static else big[0] if big else 1)
    return tuple(out)


# ---- the importer -----------------------------------------------------------

class _Graph:
    """Imports one graph into one function, node by node."""

    def __init__(self, model, name, batch_dynamic, constants,
                 demote_int64=True):
        self.model = model
        self.demote_int64 = demote_int64
        self.demoted = []      # int64 inputs taken as int32
        self.constants = dict(constants or {})
        self.graph = model.graph
        self.opset = _opset(model)
        self.module = ir.Module(name)
        self.batch_dynamic = batch_dynamic
        self.env = {}          # ONNX value name -> ndarray | Partial | Tensor
        self.inits = {}        # initializer name -> ndarray
        self.runtime = {}      # ONNX value name -> Tensor made from a constant
        self.weights = {}
        self.param_names = {}
        self.used_params = set()
        self.dims = {}         # symbol -> (Tensor, axis) that has that size
        self.index_cache = {}  # symbol -> SSA name of its index value
        self.problems = []
        self.poisoned = set()
        self.b = None

    # ---- emission ----------------------------------------------------------
    def wrap(self, value, shape, dtype, mask=False):
        t = Tensor(value, shape, np.dtype(dtype), mask)
        for axis, d in enumerate(t.shape):
            if isinstance(d, str) and d not in self.dims:
                self.dims[d] = (t, axis)
        return t

    def custom(self, head, sig, shape, dtype, mask=False):
        """`%r = head : sig`: an op in its own assembly format."""
        type_ = _grove_type(shape, dtype, mask)
        name = self.b.names.fresh(None)
        self.b.line(f"{name} = {head}", sig)
        return self.wrap(ir.Value(name, type_), shape, dtype, mask)

    def op(self, opname, operands, shape, dtype=None, attrs=None,
           mask=False):
        """A grove op in the functional form `op %a, %b {..} : (A, B) -> R`."""
        dtype = operands[0].dtype if dtype is None else dtype
        v = self.b.op(opname, [t.v for t in operands],
                      [_grove_type(shape, dtype, mask)], attrs)
        return self.wrap(v, shape, dtype, mask)

    def same(self, kind, x, attrs=None):
        """`grove.<kind> %x {attrs} : T`, the result x's type."""
        return self.wrap(self.b._same(f"grove.{kind}", x.v, attrs), x.shape,
                         x.dtype, x.mask)

    def arrow(self, head, x, shape, extra=""):
        """`head %x extra : X -> R`."""
        v = self.b._arrow(head, x.v, _grove_type(shape, x.dtype, x.mask),
                          extra=extra)
        return self.wrap(v, shape, x.dtype, x.mask)

    def binary(self, kind, a, b, mask=False):
        shape = _bshape(a.shape, b.shape)
        return self.op(f"grove.{kind}", [a, b], shape, mask=mask)

    def scalar(self, value, like):
        """A rank-0 constant of `like`'s float type."""
        return self.constant(np.array(value, like.dtype if not like.mask
                                      else np.float32))

    def constant(self, arr, mask=False):
        arr = np.asarray(arr)
        gdt = "f32" if mask else GROVE_DTYPES.get(arr.dtype)
        if gdt is None:
            raise _Unsupported(f"{arr.dtype} constants have no grove type",
                               "dtype")
        v = self.b.constant(arr, _grove_type(arr.shape, arr.dtype, mask))
        return self.wrap(v, arr.shape,
                         np.bool_ if mask else arr.dtype, mask)

    def param(self, arr, onnx_name):
        """A grove.param holding `arr` (named after the ONNX value)."""
        arr = np.ascontiguousarray(arr)
        if arr.dtype not in GROVE_DTYPES:
            raise _Unsupported(f"{arr.dtype} initializers have no grove type",
                               "dtype")
        if onnx_name not in self.param_names:
            pname = _symbol(onnx_name, self.used_params)
            self.param_names[onnx_name] = pname
            self.weights[pname] = arr
            self.module.param(pname, _grove_type(arr.shape, arr.dtype))
        p = self.module.params[self.param_names[onnx_name]]
        v = self.b.get_param(p, name=_ssa_hint(p.name.replace(".", "_")))
        return self.wrap(v, arr.shape, arr.dtype)

    def materialize(self, name, arr):
        """A run-time value for the constant `name`: initializers become
        params (as the ONNX file names them), small folded values
        grove.constants, large folded ones params too."""
        if name in self.runtime:
            return self.runtime[name]
        if name in self.inits and self.inits[name] is arr:
            t = self.param(arr, name)
        elif arr.size > CONST_LIMIT:
            t = self.param(arr, "const." + name)
        else:
            t = self.constant(arr)
        self.runtime[name] = t
        return t

    def index(self, sym):
        """The SSA index value of the dynamic size `sym` (tensor.dim)."""
        if sym not in self.index_cache:
            if sym not in self.dims:
                raise _Unsupported("a dynamic size computed from others "
                                   "(grove takes sizes of tensors)")
            t, axis = self.dims[sym]
            c = self.b.names.fresh(None)
            d = self.b.names.fresh(None)
            self.b.raw(f"{c} = arith.constant {axis} : index")
            self.b.raw(f"{d} = tensor.dim {t.v}, {c} : {t.v.type}")
            self.index_cache[sym] = d
        return self.index_cache[sym]

    def broadcast(self, x, shape):
        """grove.broadcast_to x to `shape` (sizes of dynamic dimensions
        from the tensors that have them)."""
        shape = tuple(shape)
        if x.shape == shape:
            return x
        dyn = [self.index(d) for d in shape if isinstance(d, str)]
        extra = f" ({', '.join(dyn)})" if dyn else ""
        return self.arrow("grove.broadcast_to", x, shape, extra)

    def reshape(self, x, shape):
        shape = tuple(shape)
        if shape == x.shape:
            return x
        if sum(isinstance(d, str) for d in shape) > 1:
            raise _Unsupported(f"a reshape to {_fmt(shape)}: grove.reshape "
                               "takes at most one dynamic size")
        return self.arrow("grove.reshape", x, shape)

    def transpose(self, x, perm):
        perm = list(perm)
        if perm == list(range(x.rank)):
            return x
        shape = [x.shape[p] for p in perm]
        return self.arrow("grove.transpose", x, shape,
                          " [" + ", ".join(map(str, perm)) + "]")

    def slice(self, x, starts, limits, strides):
        """grove.slice with static bounds (limit -1: a dynamic end)."""
        shape = []
        for d, s, lim, st in zip(x.shape, starts, limits, strides):
            if lim == -1:
                shape.append(d if s == 0 and st == 1 else
                             _fresh(f"{d}[{s}::{st}]"))
            else:
                shape.append(max(0, -(-(lim - s) // st)))
        if tuple(shape) == x.shape and all(s == 0 for s in starts):
            return x
        extra = "".join(" [" + ", ".join(map(str, v)) + "]"
                        for v in (starts, limits, strides))
        return self.arrow("grove.slice", x, shape, extra)

    def reverse(self, x, axes):
        return self.same_text(f"grove.reverse {x.v} [" +
                              ", ".join(map(str, axes)) + "]", x)

    def same_text(self, head, x):
        return self.custom(head, str(x.v.type), x.shape, x.dtype, x.mask)

    def reduce(self, kind, x, axes, keepdims):
        axes = sorted(a % x.rank for a in axes) if x.rank else []
        if not axes:
            return x
        shape = [1 if i in axes else d for i, d in enumerate(x.shape)
                 if keepdims or i not in axes]
        attrs = {"axes": axes, "keepdims": bool(keepdims)}
        return self.arrow(f"grove.reduce_{kind}", x, shape,
                          ir.format_attrs(attrs))

    def concat(self, xs, axis):
        if len(xs) == 1:
            return xs[0]
        total = 0
        for x in xs:
            d = x.shape[axis]
            total = d + total if isinstance(d, int) and \
                isinstance(total, int) else _fresh("concat")
        shape = list(_bshape(*[x.shape[:axis] + (1,) + x.shape[axis + 1:]
                               for x in xs]))
        for x in xs:
            if len(x.shape) != len(shape):
                raise _Unsupported("concat of different ranks")
        shape[axis] = total
        return self.op("grove.concat", xs, shape, attrs={"axis": axis},
                       mask=xs[0].mask)

    def convert(self, x, dtype):
        dtype = np.dtype(dtype)
        if x.dtype == dtype:
            return x
        type_ = _grove_type(x.shape, dtype)
        return self.custom(f"grove.convert {x.v}", f"{x.v.type} -> {type_}",
                           x.shape, dtype)

    # ---- the graph ---------------------------------------------------------
    def run(self):
        """Converts the graph into @forward; returns the (ONNX, ABI) names
        of its inputs and outputs."""
        for init in self.graph.initializer:
            from onnx import numpy_helper
            try:
                arr = numpy_helper.to_array(init)
            except Exception as e:  # external data missing, bad raw data
                raise OnnxImportError(f"initializer '{init.name}': {e}")
            self.inits[init.name] = arr
            self.env[init.name] = arr
        args, arg_names = self._inputs()
        self.abi_names = [abi for _, abi in arg_names]
        specs = [(_ssa_hint(abi), type_, {"grove.name": abi})
                 for _, abi, type_, _, _ in args]
        # The body is written before the results are known: into a draft
        # whose lines move to the real function once they are.
        draft = self.module.function("forward", args=specs)
        self.b = draft.builder
        for (onnx_name, _, _, shape, dtype), v in zip(args, draft.args):
            self.env[onnx_name] = self.wrap(v, shape, dtype)
        for i, node in enumerate(self.graph.node):
            self._node(i, node)
        results, values, outputs = self._outputs()
        self.module.functions.remove(draft)
        f = self.module.function("forward", args=specs, results=results)
        f.lines[:] = draft.lines
        f.builder.ret(*values)
        return arg_names, outputs

    def _inputs(self):
        used = set()
        args, names = [], []
        for vi in self.graph.input:
            if vi.name in self.inits:
                continue  # an initializer listed as an input (IR < 4)
            if vi.name in self.constants:
                self.env[vi.name] = self._bound(vi)
                continue
            shape, dtype = self._input_type(vi)
            if dtype is None:
                self.poisoned.add(vi.name)
                continue
            abi = _c_name(vi.name, used)
            names.append((vi.name, abi))
            args.append((vi.name, abi, _grove_type(shape, dtype), shape,
                         dtype))
        return args, names

    def _bound(self, vi):
        """An input given a value at import time (constants=)."""
        from onnx import helper
        value = np.asarray(self.constants[vi.name])
        elem = vi.type.tensor_type.elem_type
        want = np.dtype(helper.tensor_dtype_to_np_dtype(elem))
        if value.dtype != want:
            raise OnnxImportError(f"constant for input '{vi.name}' is "
                                  f"{value.dtype}, the input {want}")
        return value

    def _input_type(self, vi):
        from onnx import helper
        t = vi.type
        if t.WhichOneof("value") != "tensor_type":
            self._problem("input", vi.name, t.WhichOneof("value") or "?",
                          "not a tensor", "dtype")
            return None, None
        try:
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(
                t.tensor_type.elem_type))
        except Exception:
            dtype = None
        if dtype == np.dtype(np.int64) and self.demote_int64:
            # Ids and indices: i32 at the ABI, as grove's index ops take
            # them (IREE's demote-i64-to-i32 does the same).
            dtype = np.dtype(np.int32)
            self.demoted.append(vi.name)
        if dtype not in GROVE_DTYPES:
            self._problem("input", vi.name,
                          _type_name(t.tensor_type.elem_type),
                          "grove has no such element type", "dtype")
            return None, None
        if not t.tensor_type.HasField("shape"):
            self._problem("input", vi.name, "tensor", "its rank is unknown",
                          "attribute")
            return None, None
        shape = []
        for axis, d in enumerate(t.tensor_type.shape.dim):
            if d.HasField("dim_value"):
                shape.append(int(d.dim_value))
            elif axis == 0 and not self.batch_dynamic:
                shape.append(1)
            else:
                shape.append(d.dim_param or f"{vi.name}:{axis}")
        return tuple(shape), dtype

    def _outputs(self):
        """The results' (ABI name, type), their values, and the (ONNX, ABI)
        names of the graph outputs."""
        used = set(self.abi_names)
        outs, results, values = [], [], []
        for vi in self.graph.output:
            if vi.name in self.poisoned:
                continue
            if vi.name not in self.env:
                raise OnnxImportError(f"graph output '{vi.name}' is not "
                                      "computed by any node")
            val = self.env[vi.name]
            try:
                if isinstance(val, Partial):
                    raise _Unsupported("a value computed from a dynamic size")
                t = val if isinstance(val, Tensor) else \
                    self.materialize(vi.name, val)
                if t.mask:
                    raise _Unsupported("a bool tensor computed at run time "
                                       "(grove holds masks as floats)",
                                       "dtype")
            except _Unsupported as e:
                self._problem("output", vi.name, str(_dtype_of(val)), str(e),
                              e.kind)
                continue
            abi = _c_name(vi.name, used)
            outs.append((vi.name, abi))
            results.append((abi, t.v.type))
            values.append(t.v)
        return results, values, outs

    def _problem(self, what, name, op, reason, kind):
        self.problems.append(Problem(what, name, op, reason, kind))

    def _node(self, index, node):
        name = node.name or f"#{index} {node.output[0] if node.output else ''}"
        op = node.op_type if node.domain in ("", "ai.onnx") else \
            f"{node.domain}.{node.op_type}"
        for i in node.input:
            if i and i not in self.env and i not in self.poisoned:
                raise OnnxImportError(f"node '{name}' ({op}): input '{i}' is "
                                      "not a graph input, an initializer or "
                                      "an earlier node's output")
        if any(i in self.poisoned for i in node.input):
            if op not in CONVERTERS:
                self._problem("node", name, op, "no grove mapping", "op")
            self.poisoned.update(node.output)
            return
        if op == "Identity" and node.input and node.input[0] in self.inits:
            # torch.onnx.export writes one for each weight whose value
            # equals another's (fresh LayerNorm scales are all ones): a
            # weight of its own, named as the model names it, so that
            # training does not tie them.
            src, out = node.input[0], node.output[0]
            self.inits[out] = self.env[out] = self.inits[src]
            return
        ins = [self.env[i] if i else None for i in node.input]
        try:
            outs = self._convert(node, op, ins)
        except _Unsupported as e:
            self._problem("node", name, op, str(e), e.kind)
            self.poisoned.update(node.output)
            return
        except Exception as e:  # noqa: BLE001 - a bug here, said so
            self._problem("node", name, op, "internal error in the "
                          f"importer: {type(e).__name__}: {e}", "internal")
            self.poisoned.update(node.output)
            return
        for o, v in zip(node.output, outs):
            if o:
                self.env[o] = v

    def _convert(self, node, op, ins):
        if node.domain not in ("", "ai.onnx"):
            raise _Unsupported("no grove mapping for this domain", "op")
        consts = all(x is None or isinstance(x, np.ndarray) for x in ins)
        # Float initializers are weights: ops on them run at run time (a
        # slice of the position embeddings stays a slice of a param), so
        # that they stay trainable and shared.
        weights = any(i in self.inits and self.inits[i].dtype.kind == "f"
                      for i in node.input)
        if consts and not weights and _foldable(node):
            return _fold(node, ins, self.opset)
        n = _Node(self, node, ins)
        if any(isinstance(x, Partial) for x in ins) and \
                op in SHAPE_FOLDERS and \
                all(not isinstance(x, Tensor) for x in ins):
            outs = SHAPE_FOLDERS[op](n)
        elif op in CONVERTERS:
            outs = CONVERTERS[op](n)
        else:
            raise _Unsupported("no grove mapping", "op")
        return outs if isinstance(outs, (list, tuple)) else [outs]


def _fmt(shape):
    return "[" + ", ".join("?" if isinstance(d, str) else str(d)
                           for d in shape) + "]"


_FRESH = [0]


def _fresh(hint):
    """A new dynamic size (one no other size is known to equal)."""
    _FRESH[0] += 1
    return f"?{_FRESH[0]}:{hint}"


def _dtype_of(val):
    if isinstance(val, Tensor):
        return val.dtype
    if isinstance(val, np.ndarray):
        return val.dtype
    return "int64"


def _type_name(elem_type):
    from onnx import TensorProto
    try:
        return TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"type {elem_type}"


def _opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


def _foldable(node):
    return node.op_type not in RANDOM_OPS and \
        node.domain in ("", "ai.onnx")


def _fold(node, ins, opset):
    """Evaluates a node whose inputs are all known, with onnx's reference
    implementation (the semantics the node tests are written against)."""
    from onnx.reference import ReferenceEvaluator
    feeds = {i: v for i, v in zip(node.input, ins) if i}
    try:
        outs = ReferenceEvaluator(node, opsets={"": opset}).run(None, feeds)
    except Exception as e:
        raise _Unsupported(f"constant folding failed: {e}", "op")
    result = []
    for o in outs:
        if not isinstance(o, np.ndarray):
            if np.isscalar(o):
                o = np.array(o)
            else:
                raise _Unsupported("a non-tensor value (a sequence or map)",
                                   "op")
        result.append(o)
    return result


# ---- a node's view ----------------------------------------------------------

class _Node:
    """What a converter sees: the node's inputs (constants, partial shapes,
    run-time tensors) and attributes, and the graph to emit into."""

    def __init__(self, g, node, ins):
        from onnx import helper
        self.g = g
        self.node = node
        self.ins = ins
        self.op = node.op_type
        self.opset = g.opset
        self.attrs = {a.name: helper.get_attribute_value(a)
                      for a in node.attribute}
        for k, v in self.attrs.items():
            if isinstance(v, bytes):
                self.attrs[k] = v.decode()

    def attr(self, name, default=None):
        return self.attrs.get(name, default)

    def has(self, i):
        return i < len(self.ins) and self.ins[i] is not None

    def wants(self, i):
        """Whether output i is used (named)."""
        return i < len(self.node.output) and bool(self.node.output[i])

    def t(self, i):
        """Input i as a run-time Tensor."""
        x = self.ins[i]
        if isinstance(x, Tensor):
            return x
        if isinstance(x, Partial):
            raise _Unsupported("a value computed from a dynamic size used as "
                               "data")
        return self.g.materialize(self.node.input[i], x)

    def f(self, i):
        """Input i as a run-time float Tensor (grove's arithmetic is float)."""
        x = self.t(i)
        if x.mask or x.dtype not in FLOATS:
            dt = "bool" if x.mask else x.dtype
            raise _Unsupported(f"{dt} operands: grove's arithmetic takes "
                               "floats (f32, f64, f16, bf16)", "dtype")
        return x

    def mask(self, i):
        """Input i (bool) as a float 0/1 mask."""
        x = self.ins[i]
        if isinstance(x, Tensor):
            if not x.mask:
                raise _Unsupported(f"a {x.dtype} run-time value as a "
                                   "condition: grove has no i1 arithmetic "
                                   "(the masks it computes are floats)",
                                   "dtype")
            return x
        if isinstance(x, Partial):
            raise _Unsupported("a value computed from a dynamic size")
        key = self.node.input[i] + ":mask"
        if key not in self.g.runtime:
            self.g.runtime[key] = self.g.constant(
                np.asarray(x).astype(np.float32), mask=True)
        return self.g.runtime[key]

    def const(self, i, what):
        """Input i, which must be known at import time."""
        x = self.ins[i]
        if isinstance(x, np.ndarray):
            return x
        raise _Unsupported(f"{what} computed at run time (grove needs it "
                           "known when the model is compiled)")

    def ints(self, i, what):
        return [int(v) for v in np.asarray(self.const(i, what)).reshape(-1)]

    def dims(self, i, what):
        """A 1-D shape input: ints, and strings for dynamic sizes."""
        x = self.ins[i]
        if isinstance(x, Partial):
            return [v if isinstance(v, str) else int(v) for v in x.arr]
        return self.ints(i, what)

    def axes(self, attr_until, i=1, default=None):
        """`axes`: an attribute before opset `attr_until`, input i after."""
        if self.opset < attr_until:
            return self.attr("axes", default)
        if self.has(i):
            return self.ints(i, "axes")
        return default


def _need(cond, reason, kind="attribute"):
    if not cond:
        raise _Unsupported(reason, kind)


def _norm_axis(axis, rank):
    _need(-rank <= axis < max(rank, 1), f"axis {axis} out of range")
    return axis % rank if rank else 0


# ---- elementwise ------------------------------------------------------------

def _binary(kind):
    def convert(n):
        return n.g.binary(kind, n.f(0), n.f(1))
    return convert


def _variadic(kind):
    def convert(n):
        xs = [n.f(i) for i in range(len(n.ins))]
        y = xs[0]
        for x in xs[1:]:
            y = n.g.binary(kind, y, x)
        return y
    return convert


def _mean(n):
    y = _variadic("add")(n)
    if len(n.ins) == 1:
        return y
    return n.g.binary("div", y, n.g.scalar(len(n.ins), y))


def _unary(kind):
    def convert(n):
        return n.g.same(kind, n.f(0))
    return convert


def _neg(g, x):
    return g.binary("mul", x, g.scalar(-1, x))


def _abs(g, x):
    return g.binary("max", x, _neg(g, x))


def _select(g, m, a, b):
    """grove.select: a where m > 0, else b (a NaN mask picks b)."""
    shape = _bshape(m.shape, a.shape, b.shape)
    a, b = g.broadcast(a, shape), g.broadcast(b, shape)
    if m.mask:  # grove.select takes a mask of the values' type
        m = g.convert(g.wrap(m.v, m.shape, np.float32), a.dtype)
    return g.op("grove.select", [m, a, b], shape, a.dtype)


def _positive(g, x):
    """A mask: 1 where x > 0 (grove.step)."""
    m = g.same("step", x)
    if x.dtype != np.dtype(np.float32):  # masks are f32; 0 and 1 are exact
        m = g.convert(m, np.float32)
    return g.wrap(m.v, m.shape, np.bool_, mask=True)


def _ceil(n):
    g, x = n.g, n.f(0)
    return _neg(g, g.same("floor", _neg(g, x)))


def _reciprocal(n):
    x = n.f(0)
    return n.g.binary("div", n.g.scalar(1, x), x)


def _leaky_relu(n):
    g, x = n.g, n.f(0)
    alpha = g.scalar(n.attr("alpha", 0.01), x)
    return _select(g, x, x, g.binary("mul", x, alpha))


def _prelu(n):
    g, x, slope = n.g, n.f(0), n.f(1)
    neg = g.binary("mul", x, slope)
    return _select(g, x, g.broadcast(x, neg.shape), neg)


def _exp_minus_one(g, x, alpha):
    e = g.same("exp", x)
    return g.binary("mul", g.binary("sub", e, g.scalar(1, x)),
                    g.scalar(alpha, x))


def _elu(n):
    g, x = n.g, n.f(0)
    return _select(g, x, x, _exp_minus_one(g, x, n.attr("alpha", 1.0)))


def _selu(n):
    g, x = n.g, n.f(0)
    alpha = n.attr("alpha", 1.67326319217681884765625)
    gamma = n.attr("gamma", 1.05070102214813232421875)
    y = _select(g, x, x, _exp_minus_one(g, x, alpha))
    return g.binary("mul", y, g.scalar(gamma, x))


def _celu(n):
    g, x = n.g, n.f(0)
    alpha = n.attr("alpha", 1.0)
    e = g.same("exp", g.binary("div", x, g.scalar(alpha, x)))
    neg = g.binary("mul", g.binary("sub", e, g.scalar(1, x)),
                   g.scalar(alpha, x))
    return g.binary("add", g.same("relu", x),
                    g.binary("min", g.scalar(0, x), neg))


def _hard_sigmoid_of(g, x, alpha, beta):
    y = g.binary("add", g.binary("mul", x, g.scalar(alpha, x)),
                 g.scalar(beta, x))
    return g.binary("min", g.binary("max", y, g.scalar(0, x)),
                    g.scalar(1, x))


def _hard_sigmoid(n):
    return _hard_sigmoid_of(n.g, n.f(0), n.attr("alpha", 0.2),
                            n.attr("beta", 0.5))


def _hard_swish(n):
    g, x = n.g, n.f(0)
    return g.binary("mul", x, _hard_sigmoid_of(g, x, 1 / 6, 0.5))


def _softplus_of(g, x):
    """log(1 + exp(x)) as relu(x) + log(1 + exp(-|x|)): no overflow."""
    t = g.same("exp", _neg(g, _abs(g, x)))
    return g.binary("add", g.same("relu", x),
                    g.same("log", g.binary("add", t, g.scalar(1, x))))


def _softplus(n):
    return _softplus_of(n.g, n.f(0))


def _softsign(n):
    g, x = n.g, n.f(0)
    return g.binary("div", x, g.binary("add", _abs(g, x), g.scalar(1, x)))


def _mish(n):
    g, x = n.g, n.f(0)
    return g.binary("mul", x, g.same("tanh", _softplus_of(g, x)))


def _thresholded_relu(n):
    g, x = n.g, n.f(0)
    over = g.binary("sub", x, g.scalar(n.attr("alpha", 1.0), x))
    return _select(g, over, x, g.broadcast(g.scalar(0, x), x.shape))


def _shrink(n):
    g, x = n.g, n.f(0)
    lambd, bias = n.attr("lambd", 0.5), n.attr("bias", 0.0)
    zero = g.broadcast(g.scalar(0, x), x.shape)
    low = g.binary("sub", _neg(g, x), g.scalar(lambd, x))  # x < -lambd
    high = g.binary("sub", x, g.scalar(lambd, x))          # x > lambd
    y = _select(g, low, g.binary("add", x, g.scalar(bias, x)), zero)
    return _select(g, high, g.binary("sub", x, g.scalar(bias, x)), y)


def _sign(n):
    g, x = n.g, n.f(0)
    return g.binary("sub", g.same("step", x), g.same("step", _neg(g, x)))


def _abs_op(n):
    return _abs(n.g, n.f(0))


def _neg_op(n):
    return _neg(n.g, n.f(0))


def _tan(n):
    g, x = n.g, n.f(0)
    return g.binary("div", g.same("sin", x), g.same("cos", x))


def _gelu(n):
    kind = {"none": "gelu", "tanh": "gelu_tanh"}.get(
        n.attr("approximate", "none"))
    _need(kind, f"approximate={n.attr('approximate')!r}")
    return n.g.same(kind, n.f(0))


def _swish(n):
    g, x = n.g, n.f(0)
    ax = g.binary("mul", x, g.scalar(n.attr("alpha", 1.0), x))
    return g.binary("mul", x, g.same("sigmoid", ax))


def _pow(n):
    """Pow by a constant exponent, an integer up to 4 in magnitude or
    +-1/2: multiplications, a division, a square root (of x + 0, so that
    -0 gives +0, and -inf mapped to +inf, as pow does)."""
    g, x = n.g, n.f(0)
    e = n.const(1, "an exponent")
    flat = np.asarray(e, np.float64).reshape(-1)
    _need(flat.size and (flat == flat[0]).all(),
          "an exponent that differs by element")
    k = float(flat[0])
    shape = _bshape(x.shape, np.shape(e))
    _need(np.isfinite(k) and (k == int(k) and abs(k) <= 4 or abs(k) == 0.5),
          f"exponent {k}: integers up to 4 and +-1/2 map to grove ops "
          "exactly")
    if abs(k) == 0.5:
        root = g.same("sqrt", g.binary("add", x, g.scalar(0.0, x)))
        big = g.scalar(_max_finite(x.dtype), x)
        minus_inf = _positive(g, g.binary("sub", _neg(g, x), big))
        y = _select(g, minus_inf, g.broadcast(g.scalar(np.inf, x), x.shape),
                    root)
    else:
        y = g.scalar(1, x)
        for i in range(int(abs(k))):
            y = x if i == 0 else g.binary("mul", y, x)
    if k < 0:
        y = g.binary("div", g.scalar(1, x), y)
    return g.broadcast(y, shape)


def _max_finite(dtype):
    try:
        return float(np.finfo(dtype).max)
    except ValueError:  # bfloat16: ml_dtypes has its own finfo
        import ml_dtypes
        return float(ml_dtypes.finfo(dtype).max)


def _clip(n):
    g, x = n.g, n.f(0)
    y = x
    if n.has(1):
        y = g.binary("max", y, n.f(1))
    if n.has(2):
        y = g.binary("min", y, n.f(2))
    return y


# ---- masks (bool values held as 0/1 floats) ---------------------------------

def _less(n):
    g = n.g
    return _positive(g, g.binary("sub", n.f(1), n.f(0)))


def _greater(n):
    g = n.g
    return _positive(g, g.binary("sub", n.f(0), n.f(1)))


def _not_nan(g, x):
    """A mask: 1 where x is not NaN (x*x + 1 > 0 holds for infinities)."""
    sq = g.binary("add", g.binary("mul", x, x), g.scalar(1, x))
    return _positive(g, sq)


def _equal_of(g, a, b):
    """a == b: neither less nor greater, and neither NaN (inf == inf)."""
    lt = _positive(g, g.binary("sub", b, a))
    gt = _positive(g, g.binary("sub", a, b))
    one = g.scalar(1, lt)
    eq = g.binary("mul", g.binary("sub", one, lt, mask=True),
                  g.binary("sub", one, gt, mask=True), mask=True)
    eq = g.binary("mul", eq, _not_nan(g, a), mask=True)
    return g.binary("mul", eq, _not_nan(g, b), mask=True), lt, gt


def _equal(n):
    return _equal_of(n.g, n.f(0), n.f(1))[0]


def _less_or_equal(n):
    eq, lt, _ = _equal_of(n.g, n.f(0), n.f(1))
    return n.g.binary("max", lt, eq, mask=True)


def _greater_or_equal(n):
    eq, _, gt = _equal_of(n.g, n.f(0), n.f(1))
    return n.g.binary("max", gt, eq, mask=True)


def _trilu(n):
    """select(a constant triangle, x, 0)."""
    g, x = n.g, n.f(0)
    _need(x.rank >= 2 and all(isinstance(d, int) for d in x.shape[-2:]),
          "a rank < 2 input or dynamic matrix sizes")
    k = n.ints(1, "the diagonal k")[0] if n.has(1) else 0
    rows, cols = x.shape[-2:]
    diff = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    keep = diff >= k if n.attr("upper", 1) else diff <= k
    mask = g.constant(keep.astype(np.float32), mask=True)
    return _select(g, mask, x, g.broadcast(g.scalar(0, x), x.shape))


def _not(n):
    g, m = n.g, n.mask(0)
    return g.binary("sub", g.scalar(1, m), m, mask=True)


def _and(n):
    return n.g.binary("mul", n.mask(0), n.mask(1), mask=True)


def _or(n):
    return n.g.binary("max", n.mask(0), n.mask(1), mask=True)


def _xor(n):
    g, a, b = n.g, n.mask(0), n.mask(1)
    return g.binary("max", g.binary("sub", a, b, mask=True),
                    g.binary("sub", b, a, mask=True), mask=True)


def _where(n):
    g, m = n.g, n.mask(0)
    return _select(g, m, n.f(1), n.f(2))


# ---- linear algebra ---------------------------------------------------------

def _matmul_of(g, a, b):
    """numpy's matmul over grove.matmul (2x2, 3x3 with one batch, 3x2):
    vectors promoted, batch dimensions broadcast and flattened into one."""
    va, vb = a.rank == 1, b.rank == 1
    _need(a.rank and b.rank, "a rank-0 matmul operand")
    if va:
        a = g.reshape(a, (1,) + a.shape)
    if vb:
        b = g.reshape(b, b.shape + (1,))
    m, n_ = a.shape[-2], b.shape[-1]
    if a.rank == 2 and b.rank == 2:
        y = g.op("grove.matmul", [a, b], (m, n_))
    elif b.rank == 2:
        batch = a.shape[:-2]
        a3 = g.reshape(a, (_prod(batch),) + a.shape[-2:]) \
            if a.rank != 3 else a
        y3 = g.op("grove.matmul", [a3, b], (a3.shape[0], m, n_))
        y = g.reshape(y3, batch + (m, n_))
    else:
        batch = _bshape(a.shape[:-2], b.shape[:-2])
        a = g.broadcast(a, batch + a.shape[-2:])
        b = g.broadcast(b, batch + b.shape[-2:])
        flat = _prod(batch)
        a3 = g.reshape(a, (flat,) + a.shape[-2:])
        b3 = g.reshape(b, (flat,) + b.shape[-2:])
        y3 = g.op("grove.matmul", [a3, b3], (a3.shape[0], m, n_))
        y = g.reshape(y3, batch + (m, n_))
    if va:
        y = g.reshape(y, y.shape[:-2] + y.shape[-1:])
    if vb:
        y = g.reshape(y, y.shape[:-1])
    return y


def _prod(dims):
    dyn = [d for d in dims if isinstance(d, str)]
    if not dyn:
        return int(np.prod(dims, dtype=np.int64))
    static = int(np.prod([d for d in dims if isinstance(d, int)],
                         dtype=np.int64))
    return dyn[0] if len(dyn) == 1 and static == 1 else \
        "*".join(map(str, dims))


def _matmul(n):
    return _matmul_of(n.g, n.f(0), n.f(1))


def _gemm(n):
    g, a, b = n.g, n.f(0), n.f(1)
    _need(a.rank == 2 and b.rank == 2, "Gemm of non-matrices")
    ta, tb = bool(n.attr("transA", 0)), bool(n.attr("transB", 0))
    m = a.shape[1] if ta else a.shape[0]
    k = b.shape[0] if tb else b.shape[1]
    y = g.op("grove.matmul", [a, b], (m, k),
             attrs={"transpose_lhs": ta, "transpose_rhs": tb})
    alpha, beta = n.attr("alpha", 1.0), n.attr("beta", 1.0)
    if alpha != 1.0:
        y = g.binary("mul", y, g.scalar(alpha, y))
    if n.has(2):
        c = n.f(2)
        if beta != 1.0:
            c = g.binary("mul", c, g.scalar(beta, c))
        y = g.binary("add", y, c)
    return y


def _heads(g, x, heads):
    """[B, S, heads*D] as [B, heads, S, D]."""
    _need(isinstance(x.shape[2], int) and heads and
          x.shape[2] % heads == 0, f"{x.shape[2]} features in {heads} heads")
    y = g.reshape(x, x.shape[:2] + (heads, x.shape[2] // heads))
    return g.transpose(y, [0, 2, 1, 3])


def _repeat_heads(g, x, times):
    """[B, H, S, D] as [B, H*times, S, D], each head repeated in place."""
    if times == 1:
        return x
    b, h, s, d = x.shape
    y = g.reshape(x, (b, h, 1, s, d))
    y = g.broadcast(y, (b, h, times, s, d))
    return g.reshape(y, (b, h * times, s, d))


def _attention_bias(n, g, dtype):
    """The attn_mask as an additive bias (a bool mask, True attending, as
    0 / -inf): a numpy array when known, else a run-time Tensor."""
    m = n.ins[3]
    if isinstance(m, np.ndarray):
        if m.dtype == np.bool_:
            return np.where(m, 0.0, -np.inf).astype(dtype)
        return m.astype(dtype)
    if isinstance(m, Tensor) and m.mask:
        zero = g.broadcast(g.constant(np.array(0, dtype)), m.shape)
        ninf = g.broadcast(g.constant(np.array(-np.inf, dtype)), m.shape)
        return _select(g, m, zero, ninf)
    return n.f(3)


def _rank4(g, x):
    """A mask of rank <= 4 with leading 1s to rank 4."""
    _need(len(x.shape) <= 4, "a mask of rank > 4")
    shape = (1,) * (4 - len(x.shape)) + tuple(x.shape)
    return x.reshape(shape) if isinstance(x, np.ndarray) else \
        g.reshape(x, shape)


def _attention(n):
    """ONNX Attention (opset 23) as grove.attention: 3-D inputs split into
    heads, grouped key/value heads repeated, past keys and values
    concatenated before (present_key/present_value are the results). The
    causal mask is offset by the past's length (bottom-right aligned); a
    query row with every key masked gives 0, as ONNX says, not NaN."""
    g = n.g
    q, k, v = n.f(0), n.f(1), n.f(2)
    _need(not n.attr("softcap", 0.0), "softcap (grove.attention does not "
          "cap scores)")
    _need(not n.wants(3), "the qk_matmul_output output (grove.attention "
          "never forms all the scores)")
    _need(not n.has(6), "nonpad_kv_seqlen (per-batch key lengths)")
    _need(n.attr("left_window_size", -1) == -1 and
          n.attr("right_window_size", -1) == -1,
          "a sliding window (left/right_window_size)")
    three_d = q.rank == 3
    if three_d:
        q = _heads(g, q, n.attr("q_num_heads"))
        k = _heads(g, k, n.attr("kv_num_heads"))
        v = _heads(g, v, n.attr("kv_num_heads"))
    _need(q.rank == 4 and k.rank == 4 and v.rank == 4, "inputs of rank "
          "other than 3 or 4")
    past = n.f(4).shape[2] if n.has(4) else 0
    if n.has(4):
        k = g.concat([n.f(4), k], 2)
    if n.has(5):
        v = g.concat([n.f(5), v], 2)
    present = [k, v]
    hq, hkv = q.shape[1], k.shape[1]
    _need(isinstance(hq, int) and isinstance(hkv, int) and hq % hkv == 0,
          f"{hq} query heads over {hkv} key/value heads")
    k, v = _repeat_heads(g, k, hq // hkv), _repeat_heads(g, v, hq // hkv)
    bias = _rank4(g, _attention_bias(n, g, q.dtype)) if n.has(3) else None
    causal = bool(n.attr("is_causal", 0))
    tri = None
    if causal:
        sq, sk = q.shape[2], k.shape[2]
        _need(isinstance(sq, int) and isinstance(sk, int),
              "a causal mask over dynamic sequence lengths")
        allowed = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + past
        tri = np.where(allowed, 0.0, -np.inf).astype(q.dtype)[None, None]
        if past and isinstance(bias, np.ndarray):
            bias, causal = bias + tri, False
        elif past:
            bias = g.binary("add", bias, g.constant(tri)) if bias is not None \
                else tri
            causal = False
    text = f"grove.attention {q.v}, {k.v}, {v.v}"
    if bias is not None:
        m = g.constant(bias) if isinstance(bias, np.ndarray) else bias
        text += f" mask({m.v} : {m.v.type})"
    attrs = {"causal": causal}
    if n.attr("scale") is not None:
        attrs["scale"] = float(n.attr("scale"))
    shape = q.shape[:3] + v.shape[3:]
    type_ = _grove_type(shape, q.dtype)
    y = g.custom(text + ir.format_attrs(attrs),
                 f"({q.v.type}, {k.v.type}, {v.v.type}) -> {type_}", shape,
                 q.dtype)
    if bias is not None:
        y = _zero_dead_rows(g, y, bias, tri if causal else None)
    if three_d:
        y = g.transpose(y, [0, 2, 1, 3])
        y = g.reshape(y, y.shape[:2] + (_prod(y.shape[2:]),))
    return [y] + present


def _zero_dead_rows(g, y, bias, tri):
    """Zeros where a query row's bias is -inf for every key."""
    if isinstance(bias, np.ndarray):
        total = bias + tri if tri is not None else bias
        alive = total.max(axis=-1, keepdims=True) > -np.inf
        if alive.all():
            return y
        ok = g.constant(alive.astype(np.float32), mask=True)
    else:
        total = g.binary("add", bias, g.constant(tri)) if tri is not None \
            else bias
        top = g.reduce("max", total, [3], True)
        ok = _positive(g, g.binary("add", top, g.scalar(np.inf, top)))
    return _select(g, ok, y, g.broadcast(g.scalar(0, y), y.shape))


# ---- convolution and pooling ------------------------------------------------

def _same_pads(size, k, s, d, lower):
    """auto_pad SAME_UPPER/SAME_LOWER: output ceil(size / s)."""
    _need(isinstance(size, int), "auto_pad SAME over a dynamic size")
    out = -(-size // s)
    total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
    small = total // 2
    return (total - small, small) if lower else (small, total - small)


def _window_pads(n, spatial, kernel, strides, dilations):
    """[begin..., end...] pads from `pads` or `auto_pad`."""
    auto = n.attr("auto_pad", "NOTSET")
    rank = len(kernel)
    if auto in ("NOTSET", ""):
        pads = list(n.attr("pads", [0] * (2 * rank)))
        _need(all(p >= 0 for p in pads), "negative pads")
        return pads
    if auto == "VALID":
        return [0] * (2 * rank)
    _need(auto in ("SAME_UPPER", "SAME_LOWER"), f"auto_pad {auto}")
    pairs = [_same_pads(spatial[i], kernel[i], strides[i], dilations[i],
                        auto == "SAME_LOWER") for i in range(rank)]
    return [p[0] for p in pairs] + [p[1] for p in pairs]


def _to_2d(g, x):
    """[N, C, L] as [N, C, 1, L]: a 1-D window op as a 2-D one."""
    return g.reshape(x, x.shape[:2] + (1,) + x.shape[2:])


def _conv(n):
    g, x, w = n.g, n.f(0), n.f(1)
    _need(x.rank in (3, 4), f"Conv over {x.rank - 2} spatial dimensions "
          "(grove.conv2d is 2-D; 1-D maps to it)")
    _need(w.static, "a weight of dynamic shape")
    one_d = x.rank == 3
    kernel = list(w.shape[2:])
    _need(list(n.attr("kernel_shape", kernel)) == kernel,
          "kernel_shape that differs from the weight's")
    rank = len(kernel)
    strides = list(n.attr("strides", [1] * rank))
    dil = list(n.attr("dilations", [1] * rank))
    pads = _window_pads(n, x.shape[2:], kernel, strides, dil)
    groups = n.attr("group", 1)
    if one_d:
        x, w = _to_2d(g, x), _to_2d(g, w)
        kernel, strides, dil = [1] + kernel, [1] + strides, [1] + dil
        pads = [0, pads[0], 0, pads[1]]
    ops = [x, w] + ([n.f(2)] if n.has(2) else [])
    shape = (x.shape[0], w.shape[0]) + tuple(
        _conv_size(x.shape[2 + i], pads[i], pads[2 + i], kernel[i],
                   strides[i], dil[i]) for i in range(2))
    y = g.op("grove.conv2d", ops, shape,
             attrs={"groups": groups, "strides": strides, "padding": pads,
                    "dilations": dil})
    return g.reshape(y, y.shape[:2] + y.shape[3:]) if one_d else y


def _conv_size(d, lo, hi, k, s, dil):
    if not isinstance(d, int):
        return _fresh("conv")
    return (d + lo + hi - dil * (k - 1) - 1) // s + 1


def _pool_size(d, lo, hi, k, s, ceil_mode):
    """grove's (PyTorch's) rule: with ceil_mode the last window must start
    inside the input or the leading padding."""
    if not isinstance(d, int):
        return _fresh("pool")
    span = d + lo + hi - k
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= d + lo:
        out -= 1
    return out


def _pool_attrs(n, spatial):
    """kernel, strides, dilations and [begin..., end...] pads."""
    kernel = list(n.attr("kernel_shape"))
    rank = len(kernel)
    _need(rank == len(spatial), "kernel_shape of another rank than the "
          "input's spatial dimensions")
    strides = list(n.attr("strides", [1] * rank))
    dil = list(n.attr("dilations", [1] * rank))
    pads = _window_pads(n, spatial, kernel, strides, dil)
    return kernel, strides, dil, pads


def _pool(kind):
    def convert(n):
        g, x = n.g, n.f(0)
        _need(not n.wants(1), "the Indices output (grove.max_pool2d gives "
              "only values)")
        _need(x.rank >= 3, "pooling a rank < 3 input")
        kernel, strides, dil, pads = _pool_attrs(n, x.shape[2:])
        ceil_mode = bool(n.attr("ceil_mode", 0))
        include = bool(n.attr("count_include_pad", 0))
        native = x.rank in (3, 4) and all(d == 1 for d in dil) and \
            all(p <= kernel[i % len(kernel)] // 2 for i, p in enumerate(pads))
        if not native:
            return _pool_by_slices(g, x, kind, kernel, strides, pads, dil,
                                   ceil_mode, include)
        one_d = x.rank == 3
        if one_d:
            x = _to_2d(g, x)
            kernel, strides, pads = [1] + kernel, [1] + strides, \
                [0, pads[0], 0, pads[1]]
        shape = x.shape[:2] + tuple(
            _pool_size(x.shape[2 + i], pads[i], pads[2 + i], kernel[i],
                       strides[i], ceil_mode) for i in range(2))
        attrs = {"kernel": kernel, "strides": strides, "padding": pads,
                 "ceil_mode": ceil_mode}
        if kind == "avg":
            attrs["count_include_pad"] = include
        y = g.op(f"grove.{kind}_pool2d", [x], shape, attrs=attrs)
        return g.reshape(y, y.shape[:2] + y.shape[3:]) if one_d else y
    return convert


def _pool_by_slices(g, x, kind, kernel, strides, pads, dil, ceil_mode,
                    include):
    """A pool as the max (or the sum, over its divisor) of one strided slice
    per kernel offset: the dilated, 3-D or widely padded windows grove's
    pool ops do not take. The input is padded explicitly (-inf for max)."""
    import itertools
    rank = len(kernel)
    spatial = x.shape[2:]
    _need(all(isinstance(d, int) for d in spatial), "pooling over dynamic "
          "sizes with dilations, 3-D windows or wide pads")
    _need(int(np.prod(kernel)) <= 64, f"a {kernel} window with dilations, "
          "3 spatial dimensions or wide pads (built from one slice per "
          "window element, at most 64)")
    eff = [(k - 1) * d + 1 for k, d in zip(kernel, dil)]
    lo = pads[:rank]
    outs = [_pool_size(spatial[i], lo[i], pads[rank + i], eff[i],
                       strides[i], ceil_mode) for i in range(rank)]
    hi = [max(0, (o - 1) * s + e - lw - d)
          for o, s, e, lw, d in zip(outs, strides, eff, lo, spatial)]
    fill = -np.inf if kind == "max" else 0.0
    for i in range(rank):
        x = _pad_axis(g, x, 2 + i, lo[i], hi[i], "constant", fill)
    region = np.zeros(x.shape[2:])
    region[tuple(slice(0, lw + d + pads[rank + i]) if include else
                 slice(lw, lw + d)
                 for i, (lw, d) in enumerate(zip(lo, spatial)))] = 1
    total, count = None, 0
    axes = list(range(2, 2 + rank))
    for offset in itertools.product(*[range(k) for k in kernel]):
        starts = [o * d for o, d in zip(offset, dil)]
        ends = [b + (o - 1) * s + 1 for b, o, s in zip(starts, outs, strides)]
        part = _slice_of(g, x, starts, ends, axes, strides)
        count = count + region[tuple(slice(b, e, s) for b, e, s in
                                     zip(starts, ends, strides))]
        total = part if total is None else \
            g.binary("max" if kind == "max" else "add", total, part)
    if kind == "max":
        return total
    return g.binary("div", total, g.constant(count.astype(x.dtype)))


def _lp_pool(n):
    """(sum over the window of |x|^p)^(1/p): the window sums a depthwise
    grove.conv2d of ones; powers are exp(p log|x|), exact at 0."""
    g, x = n.g, n.f(0)
    _need(x.rank in (3, 4) and isinstance(x.shape[1], int),
          "an LpPool over other than 1 or 2 spatial dimensions or dynamic "
          "channels")
    _need(not n.attr("ceil_mode", 0), "ceil_mode")
    kernel, strides, dil, pads = _pool_attrs(n, x.shape[2:])
    p = float(n.attr("p", 2))
    _need(p > 0, f"p={p}")
    one_d = x.rank == 3
    if one_d:
        x = _to_2d(g, x)
        kernel, strides, dil = [1] + kernel, [1] + strides, [1] + dil
        pads = [0, pads[0], 0, pads[1]]
    if p == 2:
        powered = g.binary("mul", x, x)
    elif p == 1:
        powered = _abs(g, x)
    else:
        powered = _power(g, _abs(g, x), p)
    c = x.shape[1]
    ones = g.constant(np.ones((c, 1) + tuple(kernel), x.dtype))
    shape = x.shape[:2] + tuple(
        _conv_size(x.shape[2 + i], pads[i], pads[2 + i], kernel[i],
                   strides[i], dil[i]) for i in range(2))
    s = g.op("grove.conv2d", [powered, ones], shape,
             attrs={"groups": c, "strides": strides, "padding": pads,
                    "dilations": dil})
    y = s if p == 1 else g.same("sqrt", s) if p == 2 else \
        _power(g, s, 1 / p)
    return g.reshape(y, y.shape[:2] + y.shape[3:]) if one_d else y


def _power(g, x, p):
    """x^p for x >= 0 as exp(p log x) (0 stays 0 for p > 0)."""
    return g.same("exp", g.binary("mul", g.same("log", x), g.scalar(p, x)))


def _conv_transpose(n):
    """The transposed convolution as grove.conv2d of the input with s - 1
    zeros between its elements, the kernel flipped and its channel axes
    swapped (per group), padded by k_eff - 1 - pads."""
    g, x, w = n.g, n.f(0), n.f(1)
    _need(x.rank in (3, 4), f"ConvTranspose over {x.rank - 2} spatial "
          "dimensions (grove.conv2d is 2-D)")
    _need(w.static and all(isinstance(d, int) for d in x.shape[1:]),
          "a ConvTranspose of dynamic spatial size")
    one_d = x.rank == 3
    if one_d:
        x, w = _to_2d(g, x), _to_2d(g, w)
    rank = 2
    kernel = list(w.shape[2:])
    strides = _lift(n.attr("strides"), one_d, 1, rank)
    dil = _lift(n.attr("dilations"), one_d, 1, rank)
    outpad = _lift(n.attr("output_padding"), one_d, 0, rank)
    pads = n.attr("pads")
    pads = [0, pads[0], 0, pads[1]] if one_d and pads else \
        list(pads) if pads else None
    out_shape = n.attr("output_shape")
    if out_shape is not None:
        out_shape = list(out_shape[-(rank - one_d):])
        out_shape = [1] + out_shape if one_d else out_shape
    auto = n.attr("auto_pad", "NOTSET")
    groups = n.attr("group", 1)
    spatial = x.shape[2:]
    eff = [(k - 1) * d + 1 for k, d in zip(kernel, dil)]
    natural = [s * (i - 1) + op + e for s, i, op, e in
               zip(strides, spatial, outpad, eff)]
    if auto in ("SAME_UPPER", "SAME_LOWER") and pads is None:
        out = out_shape or [i * s for i, s in zip(spatial, strides)]
        total = [nat - o for nat, o in zip(natural, out)]
        first = [t // 2 if auto == "SAME_UPPER" else t - t // 2
                 for t in total]
        begin, end = first, [t - f for t, f in zip(total, first)]
    else:
        pads = pads or [0] * (2 * rank)
        begin = pads[:rank]
        end = [nat - b - o for nat, b, o in zip(natural, begin, out_shape)] \
            if out_shape else pads[rank:]
    cin, cout_g = w.shape[0], w.shape[1]
    wt = g.reshape(w, (groups, cin // groups, cout_g) + tuple(kernel))
    wt = g.transpose(wt, [0, 2, 1, 3, 4])
    wt = g.reshape(wt, (groups * cout_g, cin // groups) + tuple(kernel))
    wt = g.reverse(wt, [2, 3])
    u = x
    for i, s in enumerate(strides):
        u = _spread(g, u, 2 + i, s)
    top = [e - 1 - b for e, b in zip(eff, begin)]
    bottom = [e - 1 - en + op for e, en, op in zip(eff, end, outpad)]
    for i in range(rank):
        d = u.shape[2 + i]
        cut_lo, cut_hi = max(0, -top[i]), max(0, -bottom[i])
        if cut_lo or cut_hi:
            u = _slice_of(g, u, [cut_lo], [d - cut_hi], [2 + i], [1])
    padding = [max(0, t) for t in top] + [max(0, b) for b in bottom]
    ops = [u, wt] + ([n.f(2)] if n.has(2) else [])
    shape = (x.shape[0], groups * cout_g) + tuple(
        _conv_size(u.shape[2 + i], padding[i], padding[2 + i], kernel[i], 1,
                   dil[i]) for i in range(rank))
    y = g.op("grove.conv2d", ops, shape,
             attrs={"groups": groups, "strides": [1, 1], "padding": padding,
                    "dilations": dil})
    return g.reshape(y, y.shape[:2] + y.shape[3:]) if one_d else y


def _lift(values, one_d, default, rank):
    """A per-spatial-dimension attribute, with a leading 1-D entry."""
    if values is None:
        return [default] * rank
    values = list(values)
    return ([1 if default == 1 else 0] + values) if one_d else values


def _spread(g, x, axis, s):
    """s - 1 zeros after each element along `axis` (none after the last)."""
    if s == 1:
        return x
    d = x.shape[axis]
    col = g.reshape(x, x.shape[:axis + 1] + (1,) + x.shape[axis + 1:])
    zeros = g.broadcast(g.scalar(0, x), col.shape[:axis + 1] + (s - 1,) +
                        col.shape[axis + 2:])
    both = g.concat([col, zeros], axis + 1)
    flat = g.reshape(both, x.shape[:axis] + (d * s,) + x.shape[axis + 1:])
    return _slice_of(g, flat, [0], [(d - 1) * s + 1], [axis], [1])


def _global_pool(kind):
    def convert(n):
        g, x = n.g, n.f(0)
        _need(x.rank >= 3, "a global pool of a rank < 3 input")
        if kind == "mean" and x.rank == 4:
            return g.op("grove.global_avg_pool", [x], x.shape[:2] + (1, 1))
        return g.reduce(kind, x, list(range(2, x.rank)), True)
    return convert


# ---- normalisations ---------------------------------------------------------

def _batch_norm(n):
    g, x = n.g, n.f(0)
    _need(not n.attr("training_mode", 0), "training_mode=1 (batch "
          "statistics; the import is for inference)")
    _need(x.rank >= 2, "a rank < 2 input")
    ops = [x] + [n.f(i) for i in range(1, 5)]
    return g.op("grove.batch_norm", ops, x.shape,
                attrs={"epsilon": float(n.attr("epsilon", 1e-5))})


def _moments(g, x, axes):
    """Mean and biased variance over axes, kept as size 1."""
    mean = g.reduce("mean", x, axes, True)
    d = g.binary("sub", x, mean)
    var = g.reduce("mean", g.binary("mul", d, d), axes, True)
    return mean, d, var


def _layer_norm(n):
    """grove.layer_norm normalises the trailing dimensions its scale has
    (at least one leading row dimension: axis 0 gets a leading 1)."""
    g, x = n.g, n.f(0)
    axis = _norm_axis(n.attr("axis", -1), x.rank)
    inner = x.shape[axis:]
    _need(all(isinstance(d, int) for d in inner),
          "normalising over a dynamic dimension")
    eps = float(n.attr("epsilon", 1e-5))
    scale = g.broadcast(n.f(1), inner)
    bias = g.broadcast(n.f(2), inner) if n.has(2) else \
        g.broadcast(g.scalar(0, x), inner)
    rows = x if axis else g.reshape(x, (1,) + x.shape)
    y = g.op("grove.layer_norm", [rows, scale, bias], rows.shape,
             attrs={"epsilon": eps})
    outs = [g.reshape(y, x.shape)]
    if n.wants(1) or n.wants(2):
        axes = list(range(axis, x.rank))
        mean, _, var = _moments(g, x, axes)
        inv = g.binary("div", g.scalar(1, x), g.same(
            "sqrt", g.binary("add", var, g.scalar(eps, x))))
        outs += [mean, inv]
    return outs


def _normalize(g, x, axes, eps):
    _, d, var = _moments(g, x, axes)
    return g.binary("div", d, g.same("sqrt", g.binary(
        "add", var, g.scalar(eps, x))))


def _channel_param(g, p, rank):
    """A [C] scale or bias as [C, 1, ...] against an N x C x ... input."""
    return g.reshape(p, p.shape + (1,) * (rank - 2))


def _instance_norm(n):
    g, x = n.g, n.f(0)
    _need(x.rank >= 3, "a rank < 3 input")
    y = _normalize(g, x, list(range(2, x.rank)),
                   float(n.attr("epsilon", 1e-5)))
    y = g.binary("mul", y, _channel_param(g, n.f(1), x.rank))
    return g.binary("add", y, _channel_param(g, n.f(2), x.rank))


def _group_norm(n):
    g, x = n.g, n.f(0)
    groups = n.attr("num_groups")
    _need(x.rank >= 3 and isinstance(x.shape[1], int), "a rank < 3 input or "
          "dynamic channels")
    _need(n.opset >= 21, "opset < 21 (scale and bias per group)")
    c = x.shape[1]
    grouped = g.reshape(x, (x.shape[0], groups,
                            _prod((c // groups,) + x.shape[2:])))
    y = _normalize(g, grouped, [2], float(n.attr("epsilon", 1e-5)))
    y = g.reshape(y, x.shape)
    y = g.binary("mul", y, _channel_param(g, n.f(1), x.rank))
    return g.binary("add", y, _channel_param(g, n.f(2), x.rank))


def _mvn(n):
    g, x = n.g, n.f(0)
    axes = [a % x.rank for a in n.attr("axes", [0, 2, 3])]
    mean = g.reduce("mean", x, axes, True)
    d = g.binary("sub", x, mean)
    var = g.reduce("mean", g.binary("mul", d, d), axes, True)
    return g.binary("div", d, g.binary("add", g.same("sqrt", var),
                                       g.scalar(1e-9, x)))


def _rms_norm(n):
    g, x = n.g, n.f(0)
    axis = _norm_axis(n.attr("axis", -1), x.rank)
    axes = list(range(axis, x.rank))
    ms = g.reduce("mean", g.binary("mul", x, x), axes, True)
    r = g.same("sqrt", g.binary("add", ms, g.scalar(
        float(n.attr("epsilon", 1e-5)), x)))
    return g.binary("mul", g.binary("div", x, r), n.f(1))


def _lp_norm(n):
    g, x = n.g, n.f(0)
    axis = _norm_axis(n.attr("axis", -1), x.rank)
    p = n.attr("p", 2)
    _need(p in (1, 2), f"p={p}")
    if p == 1:
        norm = g.reduce("sum", _abs(g, x), [axis], True)
    else:
        norm = g.same("sqrt", g.reduce("sum", g.binary("mul", x, x), [axis],
                                       True))
    one = g.broadcast(g.scalar(1, x), norm.shape)
    return g.binary("div", x, _select(g, norm, norm, one))


def _lrn(n):
    """x / (bias + alpha/size * sum of x^2 over `size` channels)^beta: the
    channel window sum is an avg_pool2d over channels (counting padding,
    times the window), the power exp(beta log(.)) of a positive base."""
    g, x = n.g, n.f(0)
    _need(x.rank == 4 and isinstance(x.shape[1], int), "a rank-4 input "
          "with static channels")
    size = n.attr("size")
    alpha, beta = n.attr("alpha", 1e-4), n.attr("beta", 0.75)
    bias = n.attr("bias", 1.0)
    _need(bias > 0 and alpha >= 0, "bias <= 0 or alpha < 0 (the base may "
          "not be positive)")
    nb, c = x.shape[0], x.shape[1]
    sq = g.binary("mul", x, x)
    rest = _prod(x.shape[2:])
    col = g.reshape(sq, (nb, 1, c, rest))
    lo = (size - 1) // 2
    hi = size - 1 - lo
    s = g.op("grove.avg_pool2d", [col], (nb, 1, c, rest),
             attrs={"kernel": [size, 1], "strides": [1, 1],
                    "padding": [lo, 0, hi, 0], "ceil_mode": False,
                    "count_include_pad": True})
    s = g.reshape(s, x.shape)
    base = g.binary("add", g.binary("mul", s, g.scalar(alpha, x)),
                    g.scalar(bias, x))
    power = g.same("exp", g.binary("mul", g.same("log", base),
                                   g.scalar(beta, x)))
    return g.binary("div", x, power)


def _softmax(kind):
    def convert(n):
        x = n.f(0)
        axis = _norm_axis(n.attr("axis", -1), x.rank)
        return n.g.same(kind, x, {"axis": axis})
    return convert


# ---- reductions -------------------------------------------------------------

def _reduce_axes(n, x):
    """The axes to reduce (None: nothing to do) from the attribute or, from
    opset 18 (13 for ReduceSum), the optional second input."""
    until = 13 if n.op == "ReduceSum" else 18
    axes = n.axes(until, 1, None)
    if not axes:
        if n.attr("noop_with_empty_axes", 0):
            return None
        axes = list(range(x.rank))
    return [_norm_axis(a, x.rank) for a in axes]


def _reduce(fn):
    def convert(n):
        g, x = n.g, n.f(0)
        axes = _reduce_axes(n, x)
        if axes is None:
            return x
        return fn(g, x, axes, bool(n.attr("keepdims", 1)))
    return convert


def _r_sum(g, x, axes, keep):
    return g.reduce("sum", x, axes, keep)


def _r_mean(g, x, axes, keep):
    return g.reduce("mean", x, axes, keep)


def _r_max(g, x, axes, keep):
    return g.reduce("max", x, axes, keep)


def _r_min(g, x, axes, keep):
    return _neg(g, g.reduce("max", _neg(g, x), axes, keep))


def _r_sum_square(g, x, axes, keep):
    return g.reduce("sum", g.binary("mul", x, x), axes, keep)


def _r_l1(g, x, axes, keep):
    return g.reduce("sum", _abs(g, x), axes, keep)


def _r_l2(g, x, axes, keep):
    return g.same("sqrt", _r_sum_square(g, x, axes, keep))


def _r_log_sum(g, x, axes, keep):
    return g.same("log", g.reduce("sum", x, axes, keep))


def _r_log_sum_exp(g, x, axes, keep):
    """max + log(sum(exp(x - max))): no overflow; an all -inf row stays
    -inf, as log(sum(exp(x))) gives."""
    m = g.reduce("max", x, axes, True)
    inf = g.binary("sub", m, m)  # NaN where the max is infinite
    finite = g.binary("add", g.binary("mul", inf, inf), g.scalar(1, m))
    safe = _select(g, finite, m, g.broadcast(g.scalar(0, m), m.shape))
    s = g.reduce("sum", g.same("exp", g.binary("sub", x, safe)), axes, keep)
    shift = safe if keep else g.reshape(safe, s.shape)
    return g.binary("add", g.same("log", s), shift)


# ---- data movement ----------------------------------------------------------

def _identity(n):
    return n.ins[0]


def _dropout(n):
    if n.has(2):
        training = n.ins[2]
        _need(isinstance(training, np.ndarray) and not training.any(),
              "training_mode true or computed at run time")
    x = _identity(n)
    outs = [x]
    if n.wants(1):
        _need(x.static, "the mask of a dynamic shape")
        outs.append(np.ones(x.shape, np.bool_))
    return outs


def _cast(n):
    """Constants cast in numpy; at run time only between float types
    (grove.convert); a mask cast to float32 is the mask's own storage."""
    from onnx import helper
    x = n.ins[0]
    to = np.dtype(helper.tensor_dtype_to_np_dtype(n.attr("to"))) \
        if n.op == "Cast" else _dtype_of(n.ins[1])
    if isinstance(x, Partial):
        _need(to.kind in "iu", "a size cast to a non-integer")
        return x
    if isinstance(x, np.ndarray) and not _is_weight(n, 0):
        return x.astype(to)
    if isinstance(x, np.ndarray):  # a weight: cast at run time, trainable
        x = n.t(0)
    if x.mask:
        _need(to == np.dtype(np.bool_) or to == np.dtype(np.float32),
              f"a bool value cast to {to} at run time", "dtype")
        return x if to == np.dtype(np.bool_) else \
            n.g.wrap(x.v, x.shape, np.float32)
    if x.dtype == to:
        return x
    if n.g.demote_int64 and {x.dtype, to} <= {np.dtype(np.int32),
                                              np.dtype(np.int64)}:
        return x  # run-time integers are int32 (demoted inputs)
    _need(x.dtype in FLOATS and to in FLOATS,
          f"a cast from {x.dtype} to {to} at run time (grove.convert is "
          "between floats)", "dtype")
    return n.g.convert(x, to)


def _is_weight(n, i):
    """Whether input i is a float initializer: a weight, which stays a
    param (docs/onnx.md, "Weights")."""
    name = n.node.input[i] if i < len(n.node.input) else ""
    return name in n.g.inits and n.g.inits[name].dtype.kind == "f"


def _reshape_target(x_shape, spec, allowzero):
    """The result shape of Reshape: 0 copies the input's size (unless
    allowzero), -1 is what the element count leaves; a dynamic -1 (or a
    dynamic size named in the spec) is the one dynamic size grove.reshape
    works out from the count."""
    out = []
    for i, d in enumerate(spec):
        if d == 0 and not allowzero:
            _need(i < len(x_shape), "a 0 past the input's rank")
            d = x_shape[i]
        out.append(d)
    _need(out.count(-1) <= 1, "more than one -1 in a shape")
    if -1 in out:
        k = out.index(-1)
        rest = out[:k] + out[k + 1:]
        in_syms = Counter(d for d in x_shape if isinstance(d, str))
        t_syms = Counter(d for d in rest if isinstance(d, str))
        in_static = int(np.prod([d for d in x_shape if isinstance(d, int)],
                                dtype=np.int64))
        t_static = int(np.prod([d for d in rest if isinstance(d, int)],
                               dtype=np.int64))
        if in_syms == t_syms:
            _need(t_static and in_static % t_static == 0,
                  f"a reshape of {_fmt(x_shape)} to {spec}")
            out[k] = in_static // t_static
        elif not t_syms:
            out[k] = _fresh("reshape")
        else:
            raise _Unsupported(f"a reshape of {_fmt(x_shape)} to {spec} "
                               "with several dynamic sizes")
    elif all(isinstance(d, int) for d in x_shape + tuple(out)):
        _need(np.prod(out) == np.prod(x_shape),
              f"a reshape of {_fmt(x_shape)} to {spec}")
    return tuple(out)


def _reshape(n):
    x = n.t(0)
    spec = n.dims(1, "a Reshape shape")
    return n.g.reshape(x, _reshape_target(x.shape, spec,
                                          n.attr("allowzero", 0)))


def _flatten(n):
    x = n.t(0)
    axis = n.attr("axis", 1)
    axis = axis + x.rank if axis < 0 else axis
    _need(0 <= axis <= x.rank, f"axis {axis} out of range")
    shape = (_prod(x.shape[:axis]), _prod(x.shape[axis:]))
    return n.g.reshape(x, _simplify(x.shape, shape))


def _simplify(in_shape, shape):
    """Names a product of sizes with one dynamic size as that size's own
    dynamic symbol when it is the input's only one (so it can be found)."""
    return tuple(d if isinstance(d, int) or d in in_shape else
                 _fresh("flat") for d in shape)


def _squeeze(n):
    x = n.t(0)
    axes = n.axes(13, 1, None)
    if axes is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    axes = {_norm_axis(a, x.rank) for a in axes}
    for a in axes:
        _need(x.shape[a] == 1 or isinstance(x.shape[a], str),
              f"squeezing axis {a} of size {x.shape[a]}")
    shape = [d for i, d in enumerate(x.shape) if i not in axes]
    return n.g.reshape(x, shape)


def _unsqueeze(n):
    x = n.t(0)
    axes = n.axes(13, 1, [])
    rank = x.rank + len(axes)
    axes = sorted(_norm_axis(a, rank) for a in axes)
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return n.g.reshape(x, shape)


def _transpose(n):
    x = n.t(0)
    perm = n.attr("perm", list(range(x.rank))[::-1])
    return n.g.transpose(x, [p % x.rank for p in perm])


def _concat(n):
    xs = [n.t(i) for i in range(len(n.ins)) if n.has(i)]
    axis = _norm_axis(n.attr("axis"), xs[0].rank)
    if any(x.mask for x in xs):
        xs = [n.mask(i) for i in range(len(n.ins)) if n.has(i)]
    return n.g.concat(xs, axis)


def _slice_bounds(d, start, end, step):
    """ONNX Slice bounds on a static size, as numpy clamps them."""
    if start < 0:
        start += d
    if end < 0:
        end += d
    if step > 0:
        return min(max(start, 0), d), min(max(end, 0), d)
    return min(max(start, -1), d - 1), min(max(end, -1), d - 1)


def _slice_of(g, x, starts, ends, axes, steps):
    """Slice with constant bounds: a negative step reverses the axis."""
    begin = [0] * x.rank
    limit = list(x.shape)
    stride = [1] * x.rank
    flip = []
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = _norm_axis(a, x.rank)
        _need(st != 0, "step 0")
        d = x.shape[a]
        if isinstance(d, str):
            _need(st > 0 and s >= 0 and e >= END,
                  "a slice of a dynamic dimension that does not run to its "
                  "end from a non-negative start")
            begin[a], limit[a], stride[a] = s, -1, st
            continue
        s, e = _slice_bounds(d, s, e, st)
        if st < 0:
            flip.append(a)
            s, e, st = d - 1 - s, d - 1 - e, -st
        begin[a], limit[a], stride[a] = s, max(e, s), st
    if flip:
        x = g.reverse(x, sorted(flip))
    limit = [lim if isinstance(lim, int) else -1 for lim in limit]
    return g.slice(x, begin, limit, stride)


def _slice(n):
    x = n.t(0)
    starts = n.ints(1, "Slice starts")
    ends = n.ints(2, "Slice ends")
    axes = n.ints(3, "Slice axes") if n.has(3) else list(range(len(starts)))
    steps = n.ints(4, "Slice steps") if n.has(4) else [1] * len(starts)
    return _slice_of(n.g, x, starts, ends, axes, steps)


def _split(n):
    x = n.t(0)
    axis = _norm_axis(n.attr("axis", 0), x.rank)
    d = x.shape[axis]
    _need(isinstance(d, int), "splitting a dynamic dimension")
    count = len(n.node.output)
    if n.has(1):
        sizes = n.ints(1, "split sizes")
    elif n.attr("split") is not None and n.opset < 13:
        sizes = list(n.attr("split"))
    else:
        parts = n.attr("num_outputs", count)
        chunk = -(-d // parts)
        sizes = [min(chunk, d - i * chunk) for i in range(parts)]
    _need(sum(sizes) == d and len(sizes) == count, f"split sizes {sizes}")
    outs, at = [], 0
    for s in sizes:
        outs.append(_slice_of(n.g, x, [at], [at + s], [axis], [1]))
        at += s
    return outs


def _gather(n):
    g = n.g
    data = n.t(0)
    axis = _norm_axis(n.attr("axis", 0), data.rank)
    idx = n.ins[1]
    if isinstance(idx, np.ndarray):
        return _gather_const(g, data, idx, axis)
    idx = n.t(1)
    _need(idx.dtype == np.dtype(np.int32), f"{idx.dtype} indices computed "
          "at run time (grove.gather takes i32 and has no integer "
          "conversion)", "dtype")
    return _gather_rows(g, data, idx, axis)


def _gather_const(g, data, idx, axis):
    """Gather by indices known at import time: a slice for one index, else
    grove.gather by the (wrapped) indices as i32."""
    d = data.shape[axis]
    if idx.ndim == 0 and isinstance(d, int):
        i = int(idx) + d if int(idx) < 0 else int(idx)
        _need(0 <= i < d, f"index {int(idx)} out of range")
        y = _slice_of(g, data, [i], [i + 1], [axis], [1])
        return g.reshape(y, y.shape[:axis] + y.shape[axis + 1:])
    _need(isinstance(d, int), "a gather along a dynamic dimension")
    wrapped = np.where(idx < 0, idx + d, idx)
    _need(((wrapped >= 0) & (wrapped < d)).all(), "indices out of range")
    return _gather_rows(g, data, g.constant(wrapped.astype(np.int32)), axis)


def _gather_rows(g, data, idx, axis):
    """grove.gather takes rows (axis 0) by a 1-D index: move the axis to
    the front and the indices' shape flat, then back."""
    perm = [axis] + [i for i in range(data.rank) if i != axis]
    front = g.transpose(data, perm)
    flat = g.reshape(idx, (_prod(idx.shape),))
    rows = g.custom(f"grove.gather {front.v}, {flat.v}",
                    f"({front.v.type}, {flat.v.type}) -> " +
                    str(_grove_type((flat.shape[0],) + front.shape[1:],
                                    front.dtype)),
                    (flat.shape[0],) + front.shape[1:], front.dtype)
    y = g.reshape(rows, idx.shape + front.shape[1:])
    k = idx.rank
    back = list(range(k, k + axis)) + list(range(k)) + \
        list(range(k + axis, y.rank))
    return g.transpose(y, back)


def _expand(n):
    x = n.t(0)
    shape = n.dims(1, "an Expand shape")
    return n.g.broadcast(x, _bshape(x.shape, tuple(shape)))


def _tile(n):
    g, x = n.g, n.t(0)
    reps = n.ints(1, "Tile repeats")
    for axis, r in enumerate(reps):
        _need(r >= 1, f"repeats {r}")
        if r > 1:
            x = g.concat([x] * r, axis)
    return x


def _constant_of_shape(n):
    g = n.g
    dims = n.dims(0, "a shape")
    value = n.attr("value")
    from onnx import numpy_helper
    v = numpy_helper.to_array(value).reshape(()) if value is not None \
        else np.array(0, np.float32)
    return g.broadcast(g.constant(v), tuple(dims))


def _pad(n):
    g, x = n.g, n.f(0)
    mode = n.attr("mode", "constant")
    pads = n.ints(1, "pads")
    value = float(n.const(2, "a pad value")) if n.has(2) else 0.0
    axes = n.ints(3, "pad axes") if n.has(3) else list(range(x.rank))
    k = len(axes)
    for a, lo, hi in zip(axes, pads[:k], pads[k:]):
        a = _norm_axis(a, x.rank)
        x = _pad_axis(g, x, a, lo, hi, mode, value)
    return x


def _pad_axis(g, x, a, lo, hi, mode, value):
    d = x.shape[a]
    if lo < 0 or hi < 0:
        _need(isinstance(d, int), "cropping a dynamic dimension")
        x = _slice_of(g, x, [max(-lo, 0)], [d - max(-hi, 0)], [a], [1])
        lo, hi, d = max(lo, 0), max(hi, 0), x.shape[a]
    if not lo and not hi:
        return x
    _need(isinstance(d, int), "padding a dynamic dimension")
    parts = []
    for side, width in (("lo", lo), ("hi", hi)):
        if not width:
            parts.append(None)
            continue
        if mode == "constant":
            shape = x.shape[:a] + (width,) + x.shape[a + 1:]
            block = g.broadcast(g.scalar(value, x), shape)
        elif mode == "edge":
            i = 0 if side == "lo" else d - 1
            edge = _slice_of(g, x, [i], [i + 1], [a], [1])
            block = g.broadcast(edge, x.shape[:a] + (width,) +
                                x.shape[a + 1:])
        elif mode == "reflect":
            _need(width < d, "reflecting further than the size")
            s, e = (1, width + 1) if side == "lo" else (d - 1 - width, d - 1)
            block = g.reverse(_slice_of(g, x, [s], [e], [a], [1]), [a])
        elif mode == "wrap":
            _need(width <= d, "wrapping further than the size")
            s, e = (d - width, d) if side == "lo" else (0, width)
            block = _slice_of(g, x, [s], [e], [a], [1])
        else:
            raise _Unsupported(f"mode {mode!r}")
        parts.append(block)
    xs = [p for p in (parts[0], x, parts[1]) if p is not None]
    return g.concat(xs, a)


def _depth_to_space(n):
    g, x = n.g, n.t(0)
    _need(x.rank == 4 and x.static, "a rank-4 static input")
    b = n.attr("blocksize")
    nb, c, h, w = x.shape
    if n.attr("mode", "DCR") == "DCR":
        y = g.reshape(x, (nb, b, b, c // (b * b), h, w))
        y = g.transpose(y, [0, 3, 4, 1, 5, 2])
    else:
        y = g.reshape(x, (nb, c // (b * b), b, b, h, w))
        y = g.transpose(y, [0, 1, 4, 2, 5, 3])
    return g.reshape(y, (nb, c // (b * b), h * b, w * b))


def _space_to_depth(n):
    g, x = n.g, n.t(0)
    _need(x.rank == 4 and x.static, "a rank-4 static input")
    b = n.attr("blocksize")
    nb, c, h, w = x.shape
    y = g.reshape(x, (nb, c, h // b, b, w // b, b))
    perm = [0, 3, 5, 1, 2, 4] if n.attr("mode", "DCR") == "DCR" else \
        [0, 1, 3, 5, 2, 4]
    y = g.transpose(y, perm)
    return g.reshape(y, (nb, c * b * b, h // b, w // b))


# ---- shapes known at import time --------------------------------------------

def _shape(n):
    x = n.ins[0]
    shape = x.shape if isinstance(x, Tensor) else np.shape(x) \
        if isinstance(x, np.ndarray) else (len(x.arr),)
    rank = len(shape)
    start = n.attr("start", 0)
    end = n.attr("end", rank)
    start, end = (max(0, min(rank, v + rank if v < 0 else v))
                  for v in (start, end))
    return _partial(list(shape[start:end]))


def _size(n):
    x = n.t(0)
    _need(x.static, "the size of a dynamic tensor used as data")
    return np.array(int(np.prod(x.shape, dtype=np.int64)), np.int64)


def _sym_arith(op):
    """Elementwise arithmetic on partial shapes: known entries computed, a
    dynamic one named by its expression (equal expressions, equal sizes)."""
    sym = {"Add": "+", "Sub": "-", "Mul": "*", "Div": "/"}[op]
    fn = {"Add": lambda a, b: a + b, "Sub": lambda a, b: a - b,
          "Mul": lambda a, b: a * b, "Div": lambda a, b: a // b}[op]

    def fold(n):
        a, b = (x.arr if isinstance(x, Partial) else np.asarray(x, object)
                for x in n.ins)
        a, b = np.broadcast_arrays(a, b)
        out = [fn(int(p), int(q)) if not isinstance(p, str) and
               not isinstance(q, str) else f"({p}{sym}{q})"
               for p, q in zip(a.reshape(-1), b.reshape(-1))]
        return _partial(np.array(out, object).reshape(a.shape))
    return fold


def _object_fold(fn):
    """A data-movement node applied to a partial shape as an object array."""
    def fold(n):
        ins = [x.arr if isinstance(x, Partial) else x for x in n.ins]
        return _partial(fn(n, ins))
    return fold


def _f_gather(n, ins):
    return np.take(ins[0], np.asarray(ins[1], np.int64),
                   axis=n.attr("axis", 0))


def _f_concat(n, ins):
    return np.concatenate([np.asarray(x, object).reshape(-1) if x.ndim == 0
                           else np.asarray(x, object) for x in ins if x is
                           not None], axis=n.attr("axis", 0))


def _f_unsqueeze(n, ins):
    x = np.asarray(ins[0], object)
    axes = n.axes(13, 1, [])
    for a in sorted(a % (x.ndim + len(axes)) for a in axes):
        x = np.expand_dims(x, a)
    return x


def _f_squeeze(n, ins):
    x = np.asarray(ins[0], object)
    axes = n.axes(13, 1, None)
    return np.squeeze(x, axis=tuple(axes) if axes is not None else None)


def _f_slice(n, ins):
    x = np.asarray(ins[0], object)
    starts, ends = ins[1], ins[2]
    axes = ins[3] if len(ins) > 3 and ins[3] is not None else [0]
    steps = ins[4] if len(ins) > 4 and ins[4] is not None else [1]
    _need(list(axes) in ([0], [-1]), "a slice of a shape on another axis")
    return x[slice(int(starts[0]), int(min(ends[0], END)), int(steps[0]))]


def _f_identity(n, ins):
    return ins[0]


def _f_reshape(n, ins):
    return np.asarray(ins[0], object).reshape([int(v) for v in ins[1]])


SHAPE_FOLDERS = {
    "Gather": _object_fold(_f_gather),
    "Concat": _object_fold(_f_concat),
    "Unsqueeze": _object_fold(_f_unsqueeze),
    "Squeeze": _object_fold(_f_squeeze),
    "Slice": _object_fold(_f_slice),
    "Identity": _object_fold(_f_identity),
    "Cast": _cast,
    "Reshape": _object_fold(_f_reshape),
    "Shape": _shape,
    "Add": _sym_arith("Add"), "Sub": _sym_arith("Sub"),
    "Mul": _sym_arith("Mul"), "Div": _sym_arith("Div"),
}


# ---- the op table -----------------------------------------------------------

CONVERTERS = {
    # elementwise
    "Add": _binary("add"), "Sub": _binary("sub"), "Mul": _binary("mul"),
    "Div": _binary("div"), "Max": _variadic("max"), "Min": _variadic("min"),
    "Sum": _variadic("add"), "Mean": _mean,
    "Relu": _unary("relu"), "Sigmoid": _unary("sigmoid"),
    "Tanh": _unary("tanh"), "Exp": _unary("exp"), "Log": _unary("log"),
    "Sqrt": _unary("sqrt"), "Erf": _unary("erf"), "Sin": _unary("sin"),
    "Cos": _unary("cos"), "Tan": _tan, "Floor": _unary("floor"),
    "Ceil": _ceil, "Neg": _neg_op, "Abs": _abs_op, "Sign": _sign,
    "Reciprocal": _reciprocal, "Pow": _pow, "Clip": _clip,
    "LeakyRelu": _leaky_relu, "PRelu": _prelu, "Elu": _elu, "Selu": _selu,
    "Celu": _celu, "HardSigmoid": _hard_sigmoid, "HardSwish": _hard_swish,
    "Softplus": _softplus, "Softsign": _softsign, "Mish": _mish,
    "ThresholdedRelu": _thresholded_relu, "Shrink": _shrink, "Gelu": _gelu,
    "Swish": _swish,
    # masks
    "Less": _less, "Greater": _greater, "Equal": _equal,
    "LessOrEqual": _less_or_equal, "GreaterOrEqual": _greater_or_equal,
    "Not": _not, "And": _and,
    "Or": _or, "Xor": _xor, "Where": _where,
    # linear algebra, convolution, pooling
    "MatMul": _matmul, "Gemm": _gemm, "Conv": _conv,
    "ConvTranspose": _conv_transpose, "Attention": _attention,
    "LpPool": _lp_pool,
    "MaxPool": _pool("max"), "AveragePool": _pool("avg"),
    "GlobalAveragePool": _global_pool("mean"),
    "GlobalMaxPool": _global_pool("max"),
    # normalisations
    "BatchNormalization": _batch_norm, "LayerNormalization": _layer_norm,
    "InstanceNormalization": _instance_norm,
    "GroupNormalization": _group_norm,
    "MeanVarianceNormalization": _mvn, "RMSNormalization": _rms_norm,
    "LpNormalization": _lp_norm, "LRN": _lrn,
    "Softmax": _softmax("softmax"), "LogSoftmax": _softmax("log_softmax"),
    # reductions
    "ReduceSum": _reduce(_r_sum), "ReduceMean": _reduce(_r_mean),
    "ReduceMax": _reduce(_r_max), "ReduceMin": _reduce(_r_min),
    "ReduceSumSquare": _reduce(_r_sum_square), "ReduceL1": _reduce(_r_l1),
    "ReduceL2": _reduce(_r_l2), "ReduceLogSum": _reduce(_r_log_sum),
    "ReduceLogSumExp": _reduce(_r_log_sum_exp),
    # data movement and shapes
    "Identity": _identity, "Dropout": _dropout, "Cast": _cast,
    "CastLike": _cast, "Reshape": _reshape, "Flatten": _flatten,
    "Squeeze": _squeeze, "Unsqueeze": _unsqueeze, "Transpose": _transpose,
    "Concat": _concat, "Slice": _slice, "Split": _split, "Gather": _gather,
    "Expand": _expand, "Tile": _tile, "Pad": _pad,
    "ConstantOfShape": _constant_of_shape,
    "DepthToSpace": _depth_to_space, "SpaceToDepth": _space_to_depth,
    "Shape": _shape, "Size": _size, "Trilu": _trilu,
}


# ---- entry points -----------------------------------------------------------

def load(model_or_path):
    """An onnx.ModelProto from a path, bytes or a ModelProto, checked; a
    bad file is an OnnxImportError, never a parser traceback."""
    import onnx
    if isinstance(model_or_path, onnx.ModelProto):
        model = model_or_path
    else:
        try:
            if isinstance(model_or_path, (bytes, bytearray)):
                model = onnx.load_model_from_string(bytes(model_or_path))
            else:
                model = onnx.load(os.fspath(model_or_path))
        except FileNotFoundError as e:
            raise OnnxImportError(f"{e.filename}: no such file") from None
        except Exception as e:
            raise OnnxImportError(f"not a readable ONNX model: "
                                  f"{type(e).__name__}: {e}") from None
    if not model.HasField("graph") or not model.opset_import:
        raise OnnxImportError("not an ONNX model (no graph or no opset)")
    try:
        onnx.checker.check_model(model)
    except Exception as e:
        raise OnnxImportError(f"invalid model: {_first_line(e)}") from None
    return model


def _first_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _upgrade(model):
    """Converts a model below opset 13 with onnx.version_converter (the
    converters are written against opset 13 and later)."""
    version = _opset(model)
    if version is None:
        raise OnnxImportError("the model imports no default-domain opset")
    if version >= MIN_OPSET:
        return model, None
    from onnx import version_converter
    try:
        return version_converter.convert_version(model, MIN_OPSET), version
    except Exception as e:
        raise OnnxImportError(f"converting opset {version} to {MIN_OPSET} "
                              f"failed: {_first_line(e)}") from None


def import_model(model_or_path, *, name=None, batch_dynamic=True,
                 constants=None, strict=True, demote_int64=True):
    """Imports an ONNX model (a path, bytes or onnx.ModelProto).

    name: the module's (and the compiled library's) name, by default the
    graph's or the file's, as a C identifier. batch_dynamic: a symbolic
    leading input dimension (torch's dynamic_axes) stays dynamic (`?`);
    False fixes it to 1, so that shape arithmetic on it folds. Other
    symbolic dimensions are always dynamic. constants: {input name: array}
    fixes graph inputs at import time (they leave the signature): inputs
    that are really parameters, such as a Reshape's shape or a Slice's
    bounds (parameter_inputs lists them). strict: raise UnsupportedError
    for unsupported nodes (False: return an Imported with `.unsupported`
    and no text). demote_int64: int64 inputs (token ids, indices) are
    int32 arguments, and run-time casts between int32 and int64 keep
    int32 (`Imported.demoted` names them; values must fit in 32 bits);
    False reports them as unsupported."""
    model = load(model_or_path)
    model, converted_from = _upgrade(model)
    if name is None:
        name = model.graph.name or (
            os.path.splitext(os.path.basename(os.fspath(model_or_path)))[0]
            if isinstance(model_or_path, (str, os.PathLike)) else "model")
    name = _c_name(name, set()) or "model"
    unknown = set(constants or ()) - {i.name for i in model.graph.input}
    if unknown:
        raise OnnxImportError(f"constants for inputs the graph does not "
                              f"have: {sorted(unknown)}")
    g = _Graph(model, name, batch_dynamic, constants, demote_int64)
    arg_names, outputs = g.run()
    if g.problems:
        if strict:
            raise UnsupportedError(g.problems)
        return Imported(None, g.weights, g.param_names, arg_names, outputs,
                        g.problems, g.opset, converted_from)
    header = f"Imported from ONNX (opset {g.opset}" + (
        f", converted from {converted_from}" if converted_from else "") + \
        ") by grove.onnx."
    g.module.header = header
    imported = Imported(g.module.text(), g.weights, g.param_names,
                        arg_names, outputs, [], g.opset, converted_from,
                        g.module)
    imported.demoted = list(g.demoted)
    return imported


# Inputs (by position) that must be known when the model is compiled: shapes,
# axes, bounds, sizes. ONNX lets them be computed, grove takes them as
# attributes or static types.
PARAMETER_SLOTS = {
    "Reshape": {1}, "Slice": {1, 2, 3, 4}, "Squeeze": {1}, "Unsqueeze": {1},
    "Tile": {1}, "Split": {1}, "Expand": {1}, "Pad": {1, 2, 3},
    "ConstantOfShape": {0}, "Dropout": {1, 2}, "Trilu": {1},
    **{op: {1} for op in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                          "ReduceSumSquare", "ReduceL1", "ReduceL2",
                          "ReduceLogSum", "ReduceLogSumExp")},
}


def parameter_inputs(model):
    """The graph inputs that feed a PARAMETER_SLOTS position: what
    import_model's `constants` must give for the model to import."""
    graph = model.graph
    inputs = {i.name for i in graph.input} - \
        {i.name for i in graph.initializer}
    found = []
    for node in graph.node:
        for k in sorted(PARAMETER_SLOTS.get(node.op_type, ())):
            if k < len(node.input) and node.input[k] in inputs and \
                    node.input[k] not in found:
                found.append(node.input[k])
    return found


def supported_ops():
    """The ONNX op types with a converter (others fold when constant)."""
    return sorted(CONVERTERS)


def main(argv=None):
    """grove-import-onnx: the command line (docs/onnx.md)."""
    p = argparse.ArgumentParser(
        prog="grove-import-onnx",
        description="Import an ONNX model as a grove module and weights.")
    p.add_argument("model", help="the .onnx file")
    p.add_argument("-o", "--output", default="-",
                   help="the grove MLIR file to write (default: stdout)")
    p.add_argument("--weights", help="the safetensors file for the weights "
                   "(default: the output's name with .safetensors)")
    p.add_argument("--name", help="the module's name (a C identifier)")
    p.add_argument("--static-batch", action="store_true",
                   help="fix a symbolic leading input dimension to 1")
    p.add_argument("--train-step", metavar="OPTIMIZER", choices=OPTIMIZERS,
                   help="add train_step(inputs..., labels) -> loss with this "
                   f"grove optimizer ({', '.join(OPTIMIZERS)})")
    p.add_argument("--loss", default="softmax_cross_entropy",
                   choices=["softmax_cross_entropy", "mse_loss"])
    p.add_argument("--lr", type=float, default=1e-3,
                   help="the train step's learning rate")
    args = p.parse_args(argv)
    try:
        import onnx  # noqa: F401  (both needed: fail before writing)
        import safetensors.numpy  # noqa: F401
    except ImportError as e:
        print(f"grove-import-onnx: error: {e} (pip install 'grove[onnx]')",
              file=sys.stderr)
        return 1
    try:
        imp = import_model(args.model, name=args.name,
                           batch_dynamic=not args.static_batch)
        if args.train_step:
            imp.add_train_step(args.train_step, loss=args.loss, lr=args.lr)
        weights = args.weights
        if weights is None and imp.weights and args.output != "-":
            weights = os.path.splitext(args.output)[0] + ".safetensors"
        if imp.weights and weights is None:
            raise OnnxImportError("the model has weights: name a file for "
                                  "them with --weights")
        if args.output == "-":
            sys.stdout.write(imp.text)
        else:
            imp.save(args.output)
        if weights and imp.weights:
            imp.save_weights(weights)
    except (OnnxImportError, UnsupportedError, OSError, ValueError) as e:
        print(f"grove-import-onnx: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
