"""grove.ir: writes grove modules as MLIR text, one op at a time.

The layer under `grove.nn` and `grove.onnx`: a `Module` holds params and
functions; a `Builder` appends ops to a function's (or a region's) body and
returns `Value`s that carry their tensor type, so callers can compute shapes
as they go. Every op is printed in its custom assembly format, with named
SSA values, so the text reads as if written by hand and parses as it is.
Nothing here needs the compiler: `grove.compile` takes the text.

    m = Module("mlp")
    w = m.param("fc.weight", (10, 64))
    f = m.function("forward", args=[("x", ("?", 64))],
                   results=[("logits", ("?", 10))])
    b = f.builder
    b.ret(b.matmul(f.args[0], b.get_param(w), transpose_rhs=True))
    print(m)
"""
import math
import re

WIDTH = 100  # columns before an op's signature wraps
DTYPES = ("f32", "f16", "bf16", "f64", "i32", "i64", "i8", "i1")


class TensorType:
    """A ranked tensor type: a shape (ints, None for a dynamic size) and an
    element type name."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype="f32"):
        if dtype not in DTYPES:
            raise ValueError(f"unknown element type {dtype!r}")
        self.shape = tuple(None if d in (None, "?") else int(d) for d in shape)
        if any(d is not None and d < 0 for d in self.shape):
            raise ValueError(f"negative size in shape {shape}")
        self.dtype = dtype

    @property
    def rank(self):
        return len(self.shape)

    def with_shape(self, shape):
        return TensorType(shape, self.dtype)

    def with_dtype(self, dtype):
        return TensorType(self.shape, dtype)

    def __eq__(self, other):
        return (isinstance(other, TensorType) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __str__(self):
        dims = "".join("?x" if d is None else f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.dtype}>"

    __repr__ = __str__


def tensor_type(spec, dtype="f32"):
    """A TensorType from a TensorType or a shape."""
    return spec if isinstance(spec, TensorType) else TensorType(spec, dtype)


class Value:
    """An SSA value: its name as printed (`%x`, `%g#1`) and its type."""

    __slots__ = ("name", "type")

    def __init__(self, name, type_):
        self.name = name
        self.type = type_

    @property
    def shape(self):
        return self.type.shape

    @property
    def dtype(self):
        return self.type.dtype

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"Value({self.name} : {self.type})"


def symbol(name):
    """`@name`, quoted where it is not a bare identifier (`@"0.weight"`)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
        return "@" + name
    return '@"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Raw(str):
    """Attribute text printed as it is (`@sym`, `#grove<...>`)."""


def _float(x):
    """Shortest round-trip text, in MLIR's float syntax (a '.' before any
    exponent: 1.0e-05)."""
    text = repr(float(x))
    if "inf" in text or "nan" in text:
        raise ValueError(f"{x} has no MLIR float literal; use a hex one")
    if "e" in text and "." not in text:
        text = text.replace("e", ".0e")
    return text


def format_attr(value):
    """A Python value as MLIR attribute text: ints are i64, floats f64,
    lists of ints i64 arrays, strings string attributes, Raw as it is."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, float):
        return f"{_float(value)} : f64"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return "array<i64" + "".join(
                f"{', ' if i else ': '}{v}" for i, v in enumerate(value)) + ">"
        if all(isinstance(v, float) for v in value):
            return "array<f64: " + ", ".join(map(_float, value)) + ">"
        return "[" + ", ".join(format_attr(v) for v in value) + "]"
    raise TypeError(f"no attribute form for {value!r}")


def format_attrs(attrs):
    """` {a = 1 : i64, flag}` (True is a unit attribute; None and False
    are left out), or "" when there are none."""
    parts = []
    for key, value in (attrs or {}).items():
        if value is None or value is False:
            continue
        parts.append(key if value is True else f"{key} = {format_attr(value)}")
    return " {" + ", ".join(parts) + "}" if parts else ""


def wrap(text, width, indent=None):
    """`text` as lines of at most `width` columns where it can be, broken
    after the commas outside string literals (a list of hundreds of params
    stays readable); every line but the first starts with `indent` (by
    default four spaces more than `text`'s own)."""
    if indent is None:
        indent = " " * (len(text) - len(text.lstrip(" ")) + 4)
    if len(text) <= width:
        return [text]
    pieces, start, quoted = [], 0, False
    for i, ch in enumerate(text):
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            quoted = not quoted
        elif ch == "," and not quoted and text[i + 1:i + 2] == " ":
            pieces.append(text[start:i + 1])
            start = i + 2
    pieces.append(text[start:])
    lines = [pieces[0]]
    for piece in pieces[1:]:
        if len(lines[-1]) + 1 + len(piece) > width:
            lines.append(indent + piece)
        else:
            lines[-1] += " " + piece
    return lines


def broadcast_shapes(*shapes):
    """numpy's broadcasting over shapes with None for dynamic sizes."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise ValueError(f"shapes {shapes} do not broadcast")
        if known:
            out.append(known.pop())
        elif all(d == 1 for d in dims):
            out.append(1)
        else:
            out.append(None)
    return tuple(out)


class _Names:
    """SSA names in one isolated-from-above scope; the numbering of
    unnamed values runs through the whole function."""

    def __init__(self, counter=None):
        self.used = set()
        self.counter = counter if counter is not None else [0]

    def fresh(self, hint=None):
        if hint is None:  # the next number no hint has taken
            self.counter[0] += 1
            name = f"v{self.counter[0]}"
            while name in self.used:
                self.counter[0] += 1
                name = f"v{self.counter[0]}"
        else:
            name = "".join(c if (c.isascii() and c.isalnum()) or c in "_$."
                           else "_" for c in str(hint))
            if not name or name[0].isdigit():
                name = "v_" + name
            base, k = name, 0
            while name in self.used:
                k += 1
                name = f"{base}_{k}"
        self.used.add(name)
        return "%" + name

    def scope(self):
        """A region's scope: it sees the names defined so far around it
        (a nested region may not redefine them), its own die with it
        (sibling regions may reuse them), and numbering runs on."""
        inner = _Names(self.counter)
        inner.used = set(self.used)
        return inner


def _types(values):
    return ", ".join(str(v.type) for v in values)


def _names(values):
    return ", ".join(str(v) for v in values)


class Builder:
    """Appends ops to one block. Methods named after grove ops emit that op
    and return its result(s); `name=` gives a result its SSA name."""

    def __init__(self, lines, indent, names, module=None, training=False):
        self.lines = lines
        self.indent = indent
        self.names = names
        self.module = module  # where blocks (grove.nn) declare their params
        self.training = training  # blocks emit their training form
        self.on_return = None  # the function's check of `ret`

    def nested(self, indent=2, names=None):
        """A builder for a region `indent` deeper, in the same mode."""
        return Builder(self.lines, self.indent + indent, names or self.names,
                       self.module, self.training)

    # ---- emission -------------------------------------------------------
    def raw(self, text):
        """A line as it is (a comment, or an op this class does not know)."""
        self.lines.append(" " * self.indent + text if text else "")

    def comment(self, text):
        for line in text.splitlines():
            self.raw("// " + line)

    def line(self, head, sig):
        """`head : sig`, the signature on a line of its own (indented
        four more) when the whole would pass the width; in a module made
        with `wrap_lists`, a part still too long breaks after commas."""
        text = f"{head} : {sig}"
        if len(text) + self.indent <= WIDTH:
            self.raw(text)
            return
        attrs = head.rfind(" {")
        if len(head) + self.indent > WIDTH and attrs > 0 and \
                head.endswith("}"):  # the attributes on a line of their own
            parts = [head[:attrs], "    " + head[attrs + 1:]]
        else:
            parts = [head]
        for part in parts + [f"    : {sig}"]:
            for piece in self._wrapped(part):
                self.raw(piece)

    def _wrapped(self, text):
        """[text], or its lines by wrap() in a `wrap_lists` module."""
        if getattr(self.module, "wrap_lists", False):
            return wrap(text, WIDTH - self.indent)
        return [text]

    def _emit(self, head, sig, result_types, name=None):
        """`%r = head : sig` for one result, `%r:n = ...` for several."""
        types = [tensor_type(t) for t in result_types]
        if not types:
            self.line(head, sig)
            return None
        base = self.names.fresh(name)
        if len(types) == 1:
            self.line(f"{base} = {head}", sig)
            return Value(base, types[0])
        self.line(f"{base}:{len(types)} = {head}", sig)
        return tuple(Value(f"{base}#{i}", t) for i, t in enumerate(types))

    def op(self, opname, operands, results, attrs=None, name=None):
        """Any op in the functional form `op %a, %b {attrs} : (A, B) -> R`
        (the format of most grove ops)."""
        results = [tensor_type(r) for r in results]
        res = results[0] if len(results) == 1 else \
            "(" + ", ".join(map(str, results)) + ")"
        return self._emit(f"{opname} {_names(operands)}{format_attrs(attrs)}",
                          f"({_types(operands)}) -> {res}", results, name)

    def _same(self, opname, x, attrs=None, name=None, result=None):
        """`op %x {attrs} : T` (the result's type)."""
        result = tensor_type(result or x.type)
        return self._emit(f"{opname} {x}{format_attrs(attrs)}", str(result),
                          [result], name)

    def _arrow(self, opname, x, result, attrs=None, name=None, extra=""):
        """`op %x extra {attrs} : X -> R`."""
        result = tensor_type(result, x.dtype)
        return self._emit(f"{opname} {x}{extra}{format_attrs(attrs)}",
                          f"{x.type} -> {result}", [result], name)

    # ---- state ----------------------------------------------------------
    def get_param(self, param, name=None):
        """The value of a `grove.param` (a Param of the module)."""
        return self._emit(f"grove.get_param {symbol(param.name)}",
                          str(param.type),
                          [param.type], name or param.default_value_name)

    def set_param(self, param, value):
        self.raw(f"grove.set_param {symbol(param.name)} = {value} : "
                 f"{value.type}")

    def constant(self, value, type_, name=None):
        """`grove.constant dense<value> : T`: value a scalar (splat) or a
        nested list / numpy array."""
        type_ = tensor_type(type_)
        return self._emit(f"grove.constant {dense(value, type_)}", str(type_),
                          [type_], name)

    # ---- elementwise ----------------------------------------------------
    def _binary(self, opname, a, b, name):
        shape = broadcast_shapes(a.shape, b.shape)
        return self.op(opname, [a, b], [a.type.with_shape(shape)], name=name)

    def add(self, a, b, name=None):
        return self._binary("grove.add", a, b, name)

    def sub(self, a, b, name=None):
        return self._binary("grove.sub", a, b, name)

    def mul(self, a, b, name=None):
        return self._binary("grove.mul", a, b, name)

    def div(self, a, b, name=None):
        return self._binary("grove.div", a, b, name)

    def maximum(self, a, b, name=None):
        return self._binary("grove.max", a, b, name)

    def minimum(self, a, b, name=None):
        return self._binary("grove.min", a, b, name)

    def unary(self, kind, x, name=None, **attrs):
        """grove.<kind> for the elementwise unary ops (relu, sigmoid, tanh,
        exp, log, sqrt, gelu, gelu_tanh, erf, sin, cos, floor, step)."""
        return self._same(f"grove.{kind}", x, attrs, name)

    def relu(self, x, name=None):
        return self.unary("relu", x, name)

    def sigmoid(self, x, name=None):
        return self.unary("sigmoid", x, name)

    def tanh(self, x, name=None):
        return self.unary("tanh", x, name)

    def convert(self, x, dtype, name=None):
        return self._arrow("grove.convert", x, x.type.with_dtype(dtype),
                           name=name)

    def select(self, mask, a, b, name=None):
        shape = broadcast_shapes(mask.shape, a.shape, b.shape)
        return self.op("grove.select", [mask, a, b],
                       [a.type.with_shape(shape)],
                       name=name)

    # ---- linear algebra and reductions ------------------------------------
    def matmul(self, a, b, transpose_lhs=False, transpose_rhs=False,
               name=None):
        """grove.matmul: [.., m, k] x [.., k, n] (rank 2 or batched rank 3,
        either side transposed)."""
        m = a.shape[-1] if transpose_lhs else a.shape[-2]
        n = b.shape[-2] if transpose_rhs else b.shape[-1]
        ka = a.shape[-2] if transpose_lhs else a.shape[-1]
        kb = b.shape[-1] if transpose_rhs else b.shape[-2]
        if None not in (ka, kb) and ka != kb:
            raise ValueError(f"matmul of {a.type} and {b.type}: inner sizes "
                             f"{ka} and {kb} differ")
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        return self.op("grove.matmul", [a, b],
                       [a.type.with_shape(batch + (m, n))],
                       {"transpose_lhs": transpose_lhs,
                        "transpose_rhs": transpose_rhs}, name)

    def softmax(self, x, axis=None, name=None):
        return self._same("grove.softmax", x, {"axis": axis}, name)

    def log_softmax(self, x, axis=None, name=None):
        return self._same("grove.log_softmax", x, {"axis": axis}, name)

    def reduce(self, kind, x, axes, keepdims=False, name=None):
        """grove.reduce_<kind> (sum, mean, max) over `axes`."""
        axes = sorted(a % x.type.rank for a in axes)
        shape = [1 if i in axes else d for i, d in enumerate(x.shape)
                 if keepdims or i not in axes]
        return self._arrow(f"grove.reduce_{kind}", x, shape,
                           {"axes": axes, "keepdims": keepdims}, name)

    # ---- shapes ---------------------------------------------------------
    def reshape(self, x, shape, name=None):
        return self._arrow("grove.reshape", x, shape, name=name)

    def transpose(self, x, perm, name=None):
        shape = [x.shape[p] for p in perm]
        return self._arrow("grove.transpose", x, shape, name=name,
                           extra=" [" + ", ".join(map(str, perm)) + "]")

    def slice(self, x, starts, limits, strides=None, name=None):
        """grove.slice: limit -1 is the end of a dynamic dimension."""
        strides = strides or [1] * len(starts)
        shape = []
        for d, s, l, st in zip(x.shape, starts, limits, strides):
            if l == -1:
                l = d
            shape.append(None if l is None else -(-(l - s) // st))
        extra = "".join(" [" + ", ".join(map(str, v)) + "]"
                        for v in (starts, limits, strides))
        return self._arrow("grove.slice", x, shape, name=name, extra=extra)

    def concat(self, xs, axis, name=None):
        total = 0
        for x in xs:
            total = None if total is None or x.shape[axis] is None else \
                total + x.shape[axis]
        shape = list(xs[0].shape)
        shape[axis] = total
        return self.op("grove.concat", list(xs),
                       [xs[0].type.with_shape(shape)],
                       {"axis": axis}, name)

    def flatten(self, x, axis=1, name=None):
        """[d0.. d(axis-1), the product of the rest]."""
        def prod(dims):
            return None if None in dims else math.prod(dims)
        shape = (prod(x.shape[:axis]), prod(x.shape[axis:])) if axis != 1 \
            else (x.shape[0], prod(x.shape[1:]))
        return self.op("grove.flatten", [x], [x.type.with_shape(shape)],
                       {"axis": axis}, name)

    def broadcast_to(self, x, shape, name=None):
        return self._arrow("grove.broadcast_to", x, shape, name=name)

    def gather(self, x, indices, name=None):
        """grove.gather: rows of `x` (along its first axis) by i32
        `indices`; the result is indices' shape then x's row shape."""
        shape = list(indices.shape) + list(x.shape[1:])
        result = x.type.with_shape(shape)
        return self._emit(f"grove.gather {x}, {indices}",
                          f"({x.type}, {indices.type}) -> {result}", [result],
                          name)

    # ---- networks -------------------------------------------------------
    def conv2d(self, x, weight, bias=None, strides=(1, 1),
               padding=(0, 0, 0, 0),
               dilations=(1, 1), groups=1, name=None):
        """grove.conv2d, NCHW / OIHW; padding is [top, left, bottom, right]."""
        n, _, h, w = x.shape
        o, _, kh, kw = weight.shape
        top, left, bottom, right = padding

        def size(d, lo, hi, k, s, dil):
            if d is None:
                return None
            return (d + lo + hi - dil * (k - 1) - 1) // s + 1
        out = (n, o, size(h, top, bottom, kh, strides[0], dilations[0]),
               size(w, left, right, kw, strides[1], dilations[1]))
        operands = [x, weight] + ([bias] if bias is not None else [])
        return self.op("grove.conv2d", operands, [x.type.with_shape(out)],
                       {"groups": groups, "strides": list(strides),
                        "padding": list(padding),
                        "dilations": list(dilations)}, name)

    def batch_norm(self, x, scale, bias, mean, var, epsilon=1e-5, name=None):
        return self.op("grove.batch_norm", [x, scale, bias, mean, var],
                       [x.type], {"epsilon": float(epsilon)}, name)

    def batch_norm_training(self, x, scale, bias, running_mean, running_var,
                            name=None, **attrs):
        """By batch statistics; the running ones (Params) are updated."""
        attrs = {"running_mean": Raw(symbol(running_mean.name)),
                 "running_var": Raw(symbol(running_var.name)), **attrs}
        return self.op("grove.batch_norm_training", [x, scale, bias], [x.type],
                       attrs, name)

    def pool2d(self, kind, x, kernel, strides, padding=(0, 0, 0, 0),
               ceil_mode=False, count_include_pad=True, name=None):
        """grove.max_pool2d / grove.avg_pool2d (kind "max" / "avg")."""
        n, c, h, w = x.shape

        def size(d, lo, hi, k, s):
            if d is None:
                return None
            span = d + lo + hi - k
            out = (-(-span // s) if ceil_mode else span // s) + 1
            if ceil_mode and (out - 1) * s >= d + lo:
                out -= 1
            return out
        out = (n, c, size(h, padding[0], padding[2], kernel[0], strides[0]),
               size(w, padding[1], padding[3], kernel[1], strides[1]))
        attrs = {"kernel": list(kernel), "strides": list(strides),
                 "padding": list(padding), "ceil_mode": ceil_mode,
                 "count_include_pad": kind == "avg" and count_include_pad}
        return self.op(f"grove.{kind}_pool2d", [x], [x.type.with_shape(out)],
                       attrs, name)

    def global_avg_pool(self, x, name=None):
        return self.op("grove.global_avg_pool", [x],
                       [x.type.with_shape(x.shape[:2] + (1, 1))], name=name)

    def split_attention(self, x, operands, radix, cardinality, epsilon=1e-5,
                        name=None):
        """grove.split_attention over x [B, radix*C, H, W]: operands are
        fc1 weight and bias, the BN's four, fc2 weight and bias."""
        b, rc, h, w = x.shape
        return self.op("grove.split_attention", [x] + list(operands),
                       [x.type.with_shape((b, rc // radix, h, w))],
                       {"radix": radix, "cardinality": cardinality,
                        "epsilon": float(epsilon)}, name)

    def layer_norm(self, x, scale, bias, epsilon=1e-5, name=None):
        return self.op("grove.layer_norm", [x, scale, bias], [x.type],
                       {"epsilon": float(epsilon)}, name)

    def embedding(self, table, ids, name=None):
        shape = tuple(ids.shape) + (table.shape[1],)
        return self.op("grove.embedding", [table, ids],
                       [table.type.with_shape(shape)], name=name)

    def attention(self, q, k, v, mask=None, name=None, **attrs):
        text = f"grove.attention {q}, {k}, {v}"
        if mask is not None:
            text += f" mask({mask} : {mask.type})"
        return self._emit(text + format_attrs(attrs),
                          f"({q.type}, {k.type}, {v.type}) -> {q.type}",
                          [q.type], name)

    def dropout(self, x, name=None, **attrs):
        return self._same("grove.dropout", x, attrs, name)

    def one_hot(self, labels, classes, dtype="f32", name=None):
        return self._arrow("grove.one_hot", labels,
                           TensorType(labels.shape + (classes,), dtype),
                           name=name)

    # ---- training -------------------------------------------------------
    def softmax_cross_entropy(self, logits, labels, name=None):
        return self.op("grove.softmax_cross_entropy", [logits, labels],
                       [TensorType((), logits.dtype)], name=name)

    def mse_loss(self, prediction, target, name=None):
        return self.op("grove.mse_loss", [prediction, target],
                       [TensorType((), prediction.dtype)], name=name)

    def value_and_grad(self, params, body, name="loss", grads_name="g"):
        """grove.value_and_grad over `params` (Params): `body(builder)`
        builds the loss in the region and returns it. Returns (loss, grads)."""
        head = len(self.lines)
        self.raw("")  # the op's first line, written once the region is
        inner = self.nested()
        loss = body(inner)
        inner.raw(f"grove.yield {loss} : {loss.type}")
        lname = self.names.fresh(name)
        gname = self.names.fresh(grads_name) if params else None
        wrt = ", ".join(symbol(p.name) for p in params)
        results = lname + (f", {gname}:{len(params)}" if len(params) > 1
                           else f", {gname}" if params else "")
        self.lines[head] = "\n".join(
            " " * self.indent + part for part in
            self._wrapped(f"{results} = grove.value_and_grad [{wrt}] {{"))
        types = ", ".join([str(loss.type)] + [str(p.type) for p in params])
        if getattr(self.module, "wrap_lists", False):
            for part in self._wrapped(f"}} : {types}"):
                self.raw(part)
        else:
            self.line("}", types)
        grads = tuple(Value(f"{gname}#{i}", p.type)
                      for i, p in enumerate(params)) if len(params) > 1 else \
            tuple(Value(gname, p.type) for p in params)
        return Value(lname, loss.type), grads

    def optimizer(self, kind, params, grads, lr=None, **attrs):
        """grove.<kind> (sgd, adam, lamb, lans, adaalter, ...) over params
        with their gradients; `lr` a tensor value, else an attribute."""
        text = f"grove.{kind} [" + \
            ", ".join(symbol(p.name) for p in params) + \
            f"] ({_names(grads)})"
        if isinstance(lr, Value):
            text += f" lr({lr} : {lr.type})"
        elif lr is not None:
            attrs = {"lr": float(lr), **attrs}
        self.line(text + format_attrs(attrs), _types(grads))

    def lr_schedule(self, kind, step, dtype="f32", name=None, **attrs):
        return self._emit(f"grove.lr_schedule {kind} {step}"
                          f"{format_attrs(attrs)}",
                          f"{step.type} -> tensor<{dtype}>",
                          [TensorType((), dtype)], name)

    # ---- trees ----------------------------------------------------------
    def tree_fold(self, forest, inputs, captures, node, state_types,
                  edge=None, arity=0, states=2, name=None):
        """grove.tree_fold over `forest` (offsets, children, roots): `node`
        (and `edge` for child-sum) build the cells. Each gets a Builder and
        its block arguments: node(b, x, *child states, *captures) and
        edge(b, x_parent, *child state, *captures); both return the states
        to yield. Returns the op's results: every node's states, then the
        roots'."""
        state_types = [tensor_type(t) for t in state_types]
        results = state_types * 2
        head = len(self.lines)
        self.raw("")
        base = self.names.fresh(name)

        def region(keyword, builder_fn, arg_names):
            scope = self.names.scope()
            args = [Value(scope.fresh(n), t) for n, t in arg_names]
            caps = [Value(scope.fresh("c_" + _hint(c)), c.type)
                    for c in captures]
            sig = ", ".join(f"{a}: {a.type}" for a in args + caps)
            self.raw(f"  {keyword} {{" if keyword == "edge" or edge is None
                     else "  } node {")
            self.raw(f"  ^bb0({sig}):")
            inner = self.nested(4, scope)
            outs = builder_fn(inner, *(args + caps))
            inner.raw(f"grove.yield {_names(outs)} : {_types(outs)}")

        x_types = [(f"x{i}" if len(inputs) > 1 else "x", v.type)
                   for i, v in enumerate(inputs)]
        st_names = ["h", "c"] if states == 2 else [f"s{i}" for i in
                                                   range(states)]
        if edge is not None:
            region("edge", edge, [("xp", t) for _, t in x_types] +
                   [(n + "k", t) for n, t in zip(st_names, state_types)])
            node_args = x_types + [(n + "s", t) for n, t in
                                   zip(st_names, state_types)]
        else:
            node_args = x_types + [(f"{n}{k}", t) for k in range(arity)
                                   for n, t in zip(st_names, state_types)]
        region("node", node, node_args)
        self.raw("  }")
        ins = f" inputs({_names(inputs)} : {_types(inputs)})" if inputs else ""
        caps = f" captures({_names(captures)} : {_types(captures)})" \
            if captures else ""
        forest_types = ", ".join(str(v.type) for v in forest)
        self.lines[head] = " " * self.indent + \
            f"{base}:{len(results)} = grove.tree_fold {_names(forest)}{ins}" \
            f"{caps} {{arity = {arity} : i64}} : ({forest_types}) -> " \
            f"({', '.join(map(str, results))})"
        return tuple(Value(f"{base}#{i}", t) for i, t in enumerate(results))

    # ---- functions ------------------------------------------------------
    def call(self, callee, operands, results, name=None):
        """func.call @callee; results are types."""
        results = [tensor_type(r) for r in results]
        res = results[0] if len(results) == 1 else \
            "(" + ", ".join(map(str, results)) + ")"
        return self._emit(f"func.call {symbol(callee)}({_names(operands)})",
                          f"({_types(operands)}) -> {res}", results, name)

    def ret(self, *values):
        """`return`: in a function's body, the values must have its
        declared result types (or give them, where it declared none)."""
        if self.on_return is not None:
            self.on_return(values)
        if values:
            self.raw(f"return {_names(values)} : {_types(values)}")
        else:
            self.raw("return")


def _hint(value):
    """A value's name without % and #, as a hint for related names."""
    return value.name.lstrip("%").replace("#", "_")


# Bit layouts of the float types, for non-finite elements in hex.
_FLOAT_BITS = {"f64": ("d", "Q", 64), "f32": ("f", "I", 32),
               "f16": ("e", "H", 16)}


def _hex_float(v, dtype):
    """An IEEE value as MLIR's hex literal of `dtype`'s bits (the only way
    to write inf and NaN)."""
    import struct
    if dtype == "bf16":  # the top half of the f32
        return f"0x{struct.unpack('>I', struct.pack('>f', v))[0] >> 16:04X}"
    fmt, ifmt, bits = _FLOAT_BITS[dtype]
    word = struct.unpack(">" + ifmt, struct.pack(">" + fmt, v))[0]
    return f"0x{word:0{bits // 4}X}"


def dense(value, type_):
    """`dense<...>` text for a scalar, nested list or numpy array: one
    value where all are equal (a splat), non-finite floats as hex bit
    patterns (MLIR has no literal for them), i1 as true/false. Needs no
    numpy (model generators run on a bare python3)."""
    def elem(v):
        if type_.dtype == "i1":
            return "true" if v else "false"
        if type_.dtype.startswith("i"):
            return str(int(v))
        v = float(v)
        return _float(v) if math.isfinite(v) else _hex_float(v, type_.dtype)

    def nested(v):  # lists of Python scalars (an array's tolist())
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(nested(x) for x in v) + "]"
        return elem(v)

    def flat(v):
        if isinstance(v, (list, tuple)):
            for x in v:
                yield from flat(x)
        else:
            yield v
    value = value.tolist() if hasattr(value, "tolist") else value
    first = next(flat(value), None)
    if first is not None and all(x == first for x in flat(value)):
        return f"dense<{elem(first)}>"  # NaN != NaN: never a NaN splat
    return f"dense<{nested(value)}>"


class Param:
    """A `grove.param` of a module: name, type, an initialiser (a callable
    (numpy Generator, shape) -> array, used by Module.init_weights) and
    whether it is trained (optimizers and value_and_grad take trained ones)."""

    def __init__(self, name, type_, init=None, trainable=True, initial=None,
                 comment=None):
        self.name = name
        self.type = type_
        self.init = init
        self.trainable = trainable
        self.initial = initial  # a grove.param initial value, e.g. 0.0
        self.comment = comment  # `//` lines printed above the declaration
        self.owner = None  # the block that declared it (grove.nn)

    @property
    def shape(self):
        return self.type.shape

    @property
    def default_value_name(self):
        return self.name.replace(".", "_")

    def __repr__(self):
        return f"Param(@{self.name} : {self.type})"


class Function:
    """A func.func being written: `args` are its Values, `builder` its
    body. `args`/`results` are (name, shape or type[, attrs]) tuples; the
    name becomes the ABI name (grove.name) unless `abi_names=False`.
    `comment`: `//` lines printed above the function. `results=None`
    takes the result types from the body's `ret`."""

    def __init__(self, module, name, args, results, private, dtype,
                 abi_names, training=False, comment=None):
        self.module = module
        self.name = name
        self.private = private
        self.comment = comment
        self.lines = []
        names = _Names()
        self.args = []
        self.arg_specs = []  # (name, type, attrs) as given: to call it with
        self._arg_text = []
        for spec in args:
            aname, shape = spec[0], spec[1]
            attrs = dict(spec[2]) if len(spec) > 2 else {}
            value = Value(names.fresh(aname), tensor_type(shape, dtype))
            self.arg_specs.append((aname, value.type, dict(attrs)))
            if abi_names and not private:
                attrs = {"grove.name": aname, **attrs}
            self.args.append(value)
            self._arg_text.append(f"{value}: {value.type}" +
                                  format_attrs(attrs))
        self._res_text = []
        self.result_types = []
        if results is None:  # the types of what the body returns
            self._res_text = self.result_types = None
        for spec in results or ():
            if isinstance(spec, (TensorType, list)) or (
                    isinstance(spec, tuple) and
                    (not spec or not isinstance(spec[0], str) or
                     spec[0] == "?")):  # a bare shape, not (name, shape)
                spec = (None, spec)
            rname, shape = spec[0], spec[1]
            attrs = dict(spec[2]) if len(spec) > 2 else {}
            rtype = tensor_type(shape, dtype)
            if abi_names and rname and not private:
                attrs = {"grove.name": rname, **attrs}
            self.result_types.append(rtype)
            self._res_text.append(str(rtype) + format_attrs(attrs))
        self.builder = Builder(self.lines, 4, names, module, training)
        self.builder.on_return = self._returned

    def _returned(self, values):
        if self.result_types is None:
            self.result_types = [v.type for v in values]
            self._res_text = [str(v.type) for v in values]
        elif [v.type for v in values] != self.result_types:
            raise ValueError(f"@{self.name} returns "
                             f"({_types(values)}), declared "
                             f"({', '.join(map(str, self.result_types))})")

    def text(self):
        if self.result_types is None:
            raise ValueError(f"@{self.name} has no return yet")
        vis = "private " if self.private else ""
        res = ", ".join(self._res_text)
        if len(self._res_text) != 1 or "{" in res:
            res = f"({res})"
        head = f"  func.func {vis}{symbol(self.name)}(" \
            f"{', '.join(self._arg_text)})" \
            f" -> {res} {{"
        if len(head) > WIDTH:  # the results on a line of their own
            head = f"  func.func {vis}{symbol(self.name)}(" \
                f"{', '.join(self._arg_text)})\n      -> {res} {{"
        if max(map(len, head.splitlines())) > WIDTH:  # and an argument a line
            args = ",\n      ".join(self._arg_text)
            head = f"  func.func {vis}{symbol(self.name)}(\n      {args})\n" \
                f"      -> {res} {{"
        notes = ["  // " + line for line in (self.comment or "").splitlines()]
        return "\n".join(notes + [head] + self.lines + ["  }"])


class Module:
    """A grove module: params, then functions, printed in that order.
    `wrap_lists`: ops still past WIDTH once their signature has a line of
    its own break after commas too (long param and operand lists)."""

    def __init__(self, name, header=None, attrs=None, dtype="f32",
                 wrap_lists=False):
        self.name = name
        self.header = header
        self.attrs = attrs or {}
        self.dtype = dtype
        self.wrap_lists = wrap_lists
        self.params = {}
        self.functions = []

    def param(self, name, shape, dtype=None, init=None, trainable=True,
              initial=None, comment=None, owner=None):
        """Declares `grove.param @name` (or returns the one declared with the
        same name and type by the same `owner`, a block: two blocks never
        share a param by accident of naming); `comment` is printed above
        it."""
        type_ = tensor_type(shape, dtype or self.dtype)
        if name in self.params:
            old = self.params[name]
            if old.type != type_:
                raise ValueError(f"param {name} declared as {old.type} and "
                                 f"{type_}")
            if owner is not None and old.owner is not None and \
                    old.owner is not owner:
                raise ValueError(
                    f"param {name} is declared by two blocks: give them a "
                    "common parent (or with_prefix) so their names differ")
            return old
        p = Param(name, type_, init, trainable, initial, comment)
        p.owner = owner
        self.params[name] = p
        return p

    def trainable_params(self):
        return [p for p in self.params.values() if p.trainable]

    def function(self, name, args=(), results=(), private=False,
                 abi_names=True, training=False, comment=None):
        """A new func.func; `training` makes the blocks built in it emit
        their training form (batch statistics, dropout); `comment` is
        printed above it."""
        f = Function(self, name, args, results, private, self.dtype,
                     abi_names, training, comment)
        self.functions.append(f)
        return f

    def init_weights(self, seed=0):
        """{name: numpy array} from each param's initialiser (zeros where
        it has none), drawn in declaration order from one seeded generator."""
        import numpy as np
        rng = np.random.default_rng(seed)
        out = {}
        for p in self.params.values():
            np_dtype = {"f32": np.float32, "f64": np.float64,
                        "i32": np.int32, "i64": np.int64}.get(p.type.dtype)
            if np_dtype is None:
                continue
            if p.initial is not None:  # state: its declared start
                value = np.full(p.shape, p.initial)
            else:
                value = p.init(rng, p.shape) if p.init else \
                    np.zeros(p.shape)
            out[p.name] = np.ascontiguousarray(value, dtype=np_dtype)
        return out

    def text(self):
        lines = []
        if self.header:
            lines += ["// " + line if line else "//"
                      for line in self.header.splitlines()]
        attrs = format_attrs(self.attrs)
        lines.append(f"module {symbol(self.name)}" +
                     (f" attributes{attrs}" if attrs else "") + " {")
        # Weights first, then state (params with an initial value).
        params = sorted(self.params.values(), key=lambda p: p.initial
                        is not None)
        for p in params:
            init = "" if p.initial is None else \
                f" = {dense(p.initial, p.type)[6:-1]} : {p.type.dtype}"
            lines += ["  // " + line
                      for line in (p.comment or "").splitlines()]
            lines.append(f"  grove.param {symbol(p.name)} : {p.type}{init}")
        for f in self.functions:
            lines += ["", f.text()]
        lines.append("}")
        return "\n".join(lines) + "\n"

    __str__ = text
