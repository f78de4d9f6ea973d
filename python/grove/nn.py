"""grove.nn: composable blocks that write grove IR, in the manner of Gluon.

A block names its params after the attribute path that reaches it, as a
PyTorch state_dict does (`layer1.0.conv1.weight`; a Sequential's children
are `0`, `1`, ...), declares them in the module the first time it is
called (shapes follow from the input, as Gluon's deferred initialisation),
each with an initialiser, and emits its ops through the `grove.ir.Builder`
it is called with. A builder made with `training=True` gets the training
form: batch statistics in BatchNorm (the running ones kept as state),
dropout where it is asked for.

    from grove import ir, nn
    net = nn.Sequential(nn.Dense(128, activation="relu"), nn.Dense(10))
    m = ir.Module("mlp")
    f = m.function("forward", args=[("x", ("?", 64))],
                   results=[("logits", ("?", 10))])
    f.builder.ret(net(f.builder, f.args[0]))
    weights = m.init_weights(seed=0)       # {name: numpy array}
"""
import math

from .ir import TensorType

# ---- initialisers: (numpy Generator, shape) -> array ----------------------


def _fans(shape):
    receptive = math.prod(shape[2:]) if len(shape) > 2 else 1
    fan_in = shape[1] * receptive if len(shape) > 1 else shape[0]
    return fan_in, shape[0] * receptive


class Constant:
    def __init__(self, value):
        self.value = value

    def __call__(self, rng, shape):
        import numpy as np
        return np.full(shape, self.value)


def Zeros():
    return Constant(0.0)


def Ones():
    return Constant(1.0)


class Normal:
    def __init__(self, std=0.01, mean=0.0):
        self.std, self.mean = std, mean

    def __call__(self, rng, shape):
        return rng.normal(self.mean, self.std, shape)


class Uniform:
    """U(-scale, scale)."""

    def __init__(self, scale=0.07):
        self.scale = scale

    def __call__(self, rng, shape):
        return rng.uniform(-self.scale, self.scale, shape)


class FanInUniform:
    """U(-1/sqrt(fan_in), 1/sqrt(fan_in)), PyTorch's default for Linear and
    Conv weights and biases; `fan_in_of` is the weight's shape for a bias."""

    def __init__(self, fan_in_of=None):
        self.fan_in_of = fan_in_of

    def __call__(self, rng, shape):
        fan_in, _ = _fans(self.fan_in_of or shape)
        bound = 1.0 / math.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape)


class XavierUniform:
    def __call__(self, rng, shape):
        fan_in, fan_out = _fans(shape)
        bound = math.sqrt(6.0 / (fan_in + fan_out))
        return rng.uniform(-bound, bound, shape)


class KaimingNormal:
    """N(0, 2/fan_out) (ResNets' convolutions, mode fan_out)."""

    def __call__(self, rng, shape):
        _, fan_out = _fans(shape)
        return rng.normal(0.0, math.sqrt(2.0 / fan_out), shape)


# ---- blocks ---------------------------------------------------------------


class Block:
    """A part of a model: child blocks (attributes), params (declared on
    first call) and `forward(b, *inputs)`, which emits ops through the
    builder `b` and returns Values."""

    def __init__(self):
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "_prefix", "")
        object.__setattr__(self, "_own_prefix", None)

    def __setattr__(self, name, value):
        if isinstance(value, Block):
            self._children[name] = value
            value._set_prefix(self._child_prefix(name, value))
        object.__setattr__(self, name, value)

    def _child_prefix(self, name, child):
        own = child._own_prefix
        return self._prefix + (f"{name}." if own is None else own)

    def _set_prefix(self, prefix):
        object.__setattr__(self, "_prefix", prefix)
        for name, child in self._children.items():
            child._set_prefix(self._child_prefix(name, child))

    def with_prefix(self, prefix):
        """Names this block's params `<parent's prefix><prefix><name>`
        instead of by its attribute name (Gluon's `prefix=`); "" puts them
        beside the parent's own."""
        object.__setattr__(self, "_own_prefix", prefix)
        return self

    def children(self):
        return dict(self._children)

    def param_name(self, name):
        return self._prefix + name

    @property
    def out_name(self):
        """The SSA name of the block's output: its param prefix
        (`layer1_0_conv1`), so the IR reads like the model's code."""
        return self._prefix.rstrip(".").replace(".", "_") or None

    def param(self, b, name, shape, init=None, trainable=True, initial=None,
              dtype=None):
        """Declares this block's param `name` in b's module (once) and
        returns its value in b's function."""
        p = self.declare(b, name, shape, init, trainable, initial, dtype)
        return b.get_param(p)

    def declare(self, b, name, shape, init=None, trainable=True, initial=None,
                dtype=None):
        if b.module is None:
            raise ValueError("blocks need a builder of a grove.ir.Module's "
                             "function")
        p = b.module.param(self.param_name(name), shape, dtype, init,
                           trainable, initial, owner=self)
        if initial is not None and p.initial is None:
            p.initial = initial
            p.trainable = trainable
        return p

    def __call__(self, b, *inputs, **kwargs):
        return self.forward(b, *inputs, **kwargs)

    def forward(self, b, *inputs):
        raise NotImplementedError



class Sequential(Block):
    """Children called in order, named 0, 1, ... (nn.Sequential's names)."""

    def __init__(self, *blocks):
        super().__init__()
        for i, block in enumerate(blocks):
            self.add(block, str(i))

    def add(self, block, name=None):
        setattr(self, name or str(len(self._children)), block)
        return self

    def forward(self, b, x):
        for child in self._children.values():
            x = child(b, x)
        return x

    def __getitem__(self, i):
        return list(self._children.values())[i]

    def __len__(self):
        return len(self._children)


class Identity(Block):
    """Its input (a placeholder that keeps its siblings' indices)."""

    def forward(self, b, x):
        return x


class Activation(Block):
    """An elementwise op by name: relu, sigmoid, tanh, gelu, gelu_tanh."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    def forward(self, b, x):
        return b.unary(self.kind, x, name=self.out_name)


class Dense(Block):
    """x @ W^T + bias over the last axis; W is [units, in] (Linear's)."""

    def __init__(self, units, use_bias=True, activation=None,
                 weight_init=None, bias_init=None):
        super().__init__()
        self.units, self.use_bias = units, use_bias
        self.activation = activation
        self.weight_init, self.bias_init = weight_init, bias_init

    def forward(self, b, x):
        wshape = (self.units, x.shape[-1])
        w = self.param(b, "weight", wshape,
                       self.weight_init or FanInUniform())
        last = None if self.activation else self.out_name
        y = b.matmul(x, w, transpose_rhs=True,
                     name=None if self.use_bias else last)
        if self.use_bias:
            y = b.add(y, self.param(b, "bias", (self.units,),
                                    self.bias_init or FanInUniform(wshape)),
                      name=last)
        if self.activation:
            y = b.unary(self.activation, y, name=self.out_name)
        return y


class Conv2D(Block):
    """NCHW convolution, OIHW weights; `padding` an int or [t, l, b, r]."""

    def __init__(self, channels, kernel_size, strides=1, padding=0, groups=1,
                 dilation=1, use_bias=False, weight_init=None):
        super().__init__()
        self.channels, self.groups, self.use_bias = channels, groups, use_bias
        self.kernel = _pair(kernel_size)
        self.strides = _pair(strides)
        self.dilations = _pair(dilation)
        self.padding = [padding] * 4 if isinstance(padding, int) else \
            list(padding)
        self.weight_init = weight_init

    def forward(self, b, x):
        wshape = (self.channels, x.shape[1] // self.groups) + self.kernel
        w = self.param(b, "weight", wshape, self.weight_init or FanInUniform())
        bias = self.param(b, "bias", (self.channels,), FanInUniform(wshape)) \
            if self.use_bias else None
        return b.conv2d(x, w, bias, self.strides, self.padding, self.dilations,
                        self.groups, name=self.out_name)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


class BatchNorm(Block):
    """Over axis 1. Inference form: by the running statistics (params).
    Training form (a training builder, unless `frozen`): by the batch's,
    the running ones updated as state that starts at 0 and 1."""

    def __init__(self, epsilon=1e-5, momentum=0.1, frozen=False):
        super().__init__()
        self.epsilon, self.momentum, self.frozen = epsilon, momentum, frozen

    def forward(self, b, x):
        c = (x.shape[1],)
        scale = self.param(b, "weight", c, Ones())
        bias = self.param(b, "bias", c, Zeros())
        if b.training and not self.frozen:
            mean = self.declare(b, "running_mean", c, trainable=False,
                                initial=0.0)
            var = self.declare(b, "running_var", c, trainable=False,
                               initial=1.0)
            return b.batch_norm_training(
                x, scale, bias, mean, var, name=self.out_name,
                epsilon=float(self.epsilon), momentum=float(self.momentum))
        mean = self._stat(b, "running_mean", c, Zeros())
        var = self._stat(b, "running_var", c, Ones())
        return b.batch_norm(x, scale, bias, mean, var, self.epsilon,
                            name=self.out_name)

    def _stat(self, b, name, shape, init):
        p = self.declare(b, name, shape, init, trainable=False)
        p.init = p.init or init
        return b.get_param(p)


class _Pool(Block):
    kind = None

    def __init__(self, pool_size=2, strides=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel = _pair(pool_size)
        self.strides = _pair(strides) if strides is not None else self.kernel
        self.padding = [padding] * 4 if isinstance(padding, int) else \
            list(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, b, x):
        return b.pool2d(self.kind, x, self.kernel, self.strides, self.padding,
                        self.ceil_mode, self.count_include_pad,
                        name=self.out_name)


class MaxPool2D(_Pool):
    kind = "max"


class AvgPool2D(_Pool):
    kind = "avg"


class GlobalAvgPool2D(Block):
    def forward(self, b, x):
        return b.global_avg_pool(x, name=self.out_name)


class Flatten(Block):
    def __init__(self, axis=1):
        super().__init__()
        self.axis = axis

    def forward(self, b, x):
        return b.flatten(x, self.axis)


class Reshape(Block):
    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def forward(self, b, x):
        return b.reshape(x, self.shape)


class LayerNorm(Block):
    """Over the last axis: `weight` and `bias` of its size."""

    def __init__(self, epsilon=1e-5):
        super().__init__()
        self.epsilon = epsilon

    def forward(self, b, x):
        c = (x.shape[-1],)
        return b.layer_norm(x, self.param(b, "weight", c, Ones()),
                            self.param(b, "bias", c, Zeros()), self.epsilon,
                            name=self.out_name)


class Embedding(Block):
    """Rows of a [input_dim, output_dim] table by i32 ids."""

    def __init__(self, input_dim, output_dim, weight_init=None):
        super().__init__()
        self.shape = (input_dim, output_dim)
        self.weight_init = weight_init

    def forward(self, b, ids):
        table = self.param(b, "weight", self.shape,
                           self.weight_init or Normal(1.0))
        return b.embedding(table, ids, name=self.out_name)


class Dropout(Block):
    """Zeroes a `rate` of the elements in training (its own `stream` of the
    module's dropout generator); nothing in inference."""

    def __init__(self, rate, stream=0):
        super().__init__()
        self.rate, self.stream = rate, stream

    def forward(self, b, x, name=None):
        """`name`: the SSA name of the dropped value (a hand-written
        module names its values)."""
        if not b.training or self.rate == 0:
            return x
        return b.dropout(x, name=name, rate=float(self.rate),
                         stream=self.stream)


class MultiHeadAttention(Block):
    """Self-attention over x [B, S, H]: query/key/value Dense, heads split
    to [B, heads, S, H/heads], grove.attention (an additive `mask`
    broadcasting to [B, heads, S, S]), heads joined, output Dense."""

    def __init__(self, hidden, heads):
        super().__init__()
        if hidden % heads:
            raise ValueError(f"hidden {hidden} is not a multiple of heads "
                             f"{heads}")
        self.hidden, self.heads = hidden, heads
        self.query, self.key, self.value = (Dense(hidden) for _ in range(3))
        self.output = Dense(hidden)

    def split(self, b, x):
        bsz, s, _ = x.shape
        x = b.reshape(x, (bsz, s, self.heads, self.hidden // self.heads))
        return b.transpose(x, [0, 2, 1, 3])

    def forward(self, b, x, mask=None):
        q, k, v = (self.split(b, d(b, x))
                   for d in (self.query, self.key, self.value))
        ctx = b.attention(q, k, v, mask)
        bsz, s, _ = x.shape
        ctx = b.reshape(b.transpose(ctx, [0, 2, 1, 3]), (bsz, s, self.hidden))
        return self.output(b, ctx)


class SplitAttentionConv2D(Block):
    """ResNeSt's SplAtConv2d: a grouped 3x3 conv to radix*channels, BN,
    ReLU, then split attention over the radix splits (GAP of their sum,
    grouped fc1 + BN + ReLU, grouped fc2, rSoftMax over the radix, the
    weighted sum). `fused=False` writes the attention as the primitive ops
    a frontend emits, which grove-fuse-split-attention turns into
    grove.split_attention; `fused=True` writes that op. The attention's BN
    keeps its running statistics in training (frozen), so it still fuses.
    Params are named as the authors' (conv, bn0, fc1, bn1, fc2)."""

    def __init__(self, channels, kernel_size=3, strides=1, padding=1,
                 radix=2, cardinality=1, reduction=4, fused=False):
        super().__init__()
        self.channels, self.radix, self.card = channels, radix, cardinality
        self.reduction, self.fused = reduction, fused
        self.conv = Conv2D(channels * radix, kernel_size, strides, padding,
                           groups=cardinality * radix)
        self.bn0 = BatchNorm()
        self.bn1 = BatchNorm(frozen=True)

    def forward(self, b, x):
        inter = max(x.shape[1] * self.radix // self.reduction, 32)
        u = b.relu(self.bn0(b, self.conv(b, x)))
        c, r, card = self.channels, self.radix, self.card
        fc1 = (inter, c // card, 1, 1)
        fc2 = (c * r, inter // card, 1, 1)
        if self.fused:
            ps = [self.param(b, "fc1.weight", fc1, FanInUniform()),
                  self.param(b, "fc1.bias", (inter,), FanInUniform(fc1))]
            ps += [self.bn1._stat(b, n, (inter,), i) if n.startswith(
                "running") else self.bn1.param(b, n, (inter,), i)
                for n, i in (("weight", Ones()), ("bias", Zeros()),
                             ("running_mean", Zeros()),
                             ("running_var", Ones()))]
            ps += [self.param(b, "fc2.weight", fc2, FanInUniform()),
                   self.param(b, "fc2.bias", (c * r,), FanInUniform(fc2))]
            return b.split_attention(u, ps, r, card, name=self.out_name)
        bsz, _, h, w = u.shape
        if r > 1:
            splits = [b.slice(u, [0, j * c, 0, 0], [-1, (j + 1) * c, -1, -1])
                      for j in range(r)]
            gap_in = splits[0]
            for s in splits[1:]:
                gap_in = b.add(gap_in, s)
        else:
            splits, gap_in = [u], u
        g = b.global_avg_pool(gap_in)
        g = b.conv2d(g, self.param(b, "fc1.weight", fc1, FanInUniform()),
                     self.param(b, "fc1.bias", (inter,), FanInUniform(fc1)),
                     groups=card)
        g = b.relu(self.bn1(b, g))
        a = b.conv2d(g, self.param(b, "fc2.weight", fc2, FanInUniform()),
                     self.param(b, "fc2.bias", (c * r,), FanInUniform(fc2)),
                     groups=card)
        if r == 1:
            return b.mul(b.sigmoid(a), u)
        # rSoftMax: [B, card, radix, C/card] -> softmax over radix.
        a = b.reshape(a, (bsz, card, r, c // card))
        a = b.transpose(a, [0, 2, 1, 3])
        a = b.softmax(a, axis=1)
        a = b.reshape(a, (bsz, r * c, 1, 1))
        out = None
        for j, s in enumerate(splits):
            aj = b.slice(a, [0, j * c, 0, 0], [-1, (j + 1) * c, -1, -1])
            term = b.mul(aj, s)
            out = term if out is None else b.add(out, term)
        return out


class _TreeLSTMCell(Block):
    """A Tree-LSTM over a forest, as one grove.tree_fold."""

    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden

    def captures(self, b, embed):
        raise NotImplementedError

    def forward(self, b, forest, x):
        """forest: (child offsets, children, roots); x: [N, D] node inputs.
        Returns (every node's h [N, H], the roots' h [R, H])."""
        caps = self.captures(b, x.shape[-1])
        row = TensorType((None, self.hidden), x.dtype)
        out = b.tree_fold(forest, [x], caps, node=self.node,
                          state_types=[row, row],
                          edge=getattr(self, "edge", None), arity=self.arity)
        return out[0], out[2]


def _gates(b, x, hidden, n):
    return [b.slice(x, [0, k * hidden], [-1, (k + 1) * hidden])
            for k in range(n)]


def _affine(b, x, w, u_terms, bias):
    s = b.matmul(x, w)
    for h, u in u_terms:
        s = b.add(s, b.matmul(h, u))
    return b.add(s, bias)


class ChildSumTreeLSTM(_TreeLSTMCell):
    """Tai et al.'s child-sum cell: iou from x and the children's summed h;
    one forget gate a child, from x and that child's h (the edge region)."""

    arity = 0

    def captures(self, b, d):
        h = self.hidden
        return [self.param(b, "iou.W", (d, 3 * h), Uniform()),
                self.param(b, "iou.U", (h, 3 * h), Uniform()),
                self.param(b, "iou.b", (3 * h,), Zeros()),
                self.param(b, "f.W", (d, h), Uniform()),
                self.param(b, "f.U", (h, h), Uniform()),
                self.param(b, "f.b", (h,), Zeros())]

    def edge(self, b, xp, hk, ck, iou_w, iou_u, iou_b, f_w, f_u, f_b):
        f = b.sigmoid(_affine(b, xp, f_w, [(hk, f_u)], f_b))
        return [hk, b.mul(f, ck)]

    def node(self, b, x, hs, fcs, iou_w, iou_u, iou_b, f_w, f_u, f_b):
        gi, go, gu = _gates(b, _affine(b, x, iou_w, [(hs, iou_u)], iou_b),
                            self.hidden, 3)
        i, o, u = b.sigmoid(gi), b.sigmoid(go), b.tanh(gu)
        c = b.add(b.mul(i, u), fcs)
        return [b.mul(o, b.tanh(c)), c]


class BinaryTreeLSTM(_TreeLSTMCell):
    """The N-ary cell for N = 2: gates i, f0, f1, o, u from x and both
    children's h (absent children are zero states)."""

    arity = 2

    def captures(self, b, d):
        h = self.hidden
        return [self.param(b, "gates.W", (d, 5 * h), Uniform()),
                self.param(b, "gates.U0", (h, 5 * h), Uniform()),
                self.param(b, "gates.U1", (h, 5 * h), Uniform()),
                self.param(b, "gates.b", (5 * h,), Zeros())]

    def node(self, b, x, h0, c0, h1, c1, w, u0, u1, bias):
        s = _affine(b, x, w, [(h0, u0), (h1, u1)], bias)
        gi, gf0, gf1, go, gu = _gates(b, s, self.hidden, 5)
        i, f0, f1 = b.sigmoid(gi), b.sigmoid(gf0), b.sigmoid(gf1)
        o, u = b.sigmoid(go), b.tanh(gu)
        c = b.add(b.add(b.mul(i, u), b.mul(f0, c0)), b.mul(f1, c1))
        return [b.mul(o, b.tanh(c)), c]


class LSTM(_TreeLSTMCell):
    """The N-ary cell for N = 1: an LSTM over chains, each node's one
    child the step before it (a forest of chains is a batch of sequences;
    a chain's first node has a zero state). Gates in PyTorch's order:
    i, f, g, o = sigma, sigma, tanh, sigma(x W + h U + b), so `W`, `U` and
    `b` are torch.nn.LSTM's weight_ih.T, weight_hh.T and bias_ih + bias_hh.
    Returns (every node's h, the roots' h), as the tree cells do."""

    arity = 1

    def captures(self, b, d):
        h = self.hidden
        return [self.param(b, "W", (d, 4 * h), Uniform()),
                self.param(b, "U", (h, 4 * h), Uniform()),
                self.param(b, "b", (4 * h,), Zeros())]

    def node(self, b, x, h0, c0, w, u, bias):
        gi, gf, gg, go = _gates(b, _affine(b, x, w, [(h0, u)], bias),
                                self.hidden, 4)
        i, f, o = b.sigmoid(gi), b.sigmoid(gf), b.sigmoid(go)
        c = b.add(b.mul(i, b.tanh(gg)), b.mul(f, c0))
        return [b.mul(o, b.tanh(c)), c]


def chains(count, length):
    """The forest of `count` chains of `length` nodes (child offsets,
    children, roots as int32 numpy arrays): node t of chain j is
    j * length + t, its one child node t - 1; each chain's root is its last
    node. What nn.LSTM runs a batch of sequences over."""
    import numpy as np
    n = count * length
    first = np.zeros(n, dtype=bool)
    first[::length] = True
    offsets = np.concatenate([[0], np.cumsum(~first)]).astype(np.int32)
    children = np.arange(n, dtype=np.int32)[~first] - 1
    roots = (np.arange(count, dtype=np.int32) + 1) * length - 1
    return offsets, children.astype(np.int32), roots


# ---- training ---------------------------------------------------------------


def train_step(module, forward, optimizer="adam", loss="softmax_cross_entropy",
               params=None, name="train_step", labels=None, **optimizer_attrs):
    """Adds `name(forward's args..., labels) -> loss` to `module`: the loss
    of `forward`'s output against `labels` and its gradient with respect to
    `params` (by default every trainable param; grove.value_and_grad), then
    one step of `optimizer` (grove.sgd, adam, lamb, lans, adaalter...) with
    `optimizer_attrs` (lr=..., weight_decay=...), all in one call.
    `forward` is a grove.ir.Function of the module; `labels` is the labels'
    (name, type), i32 class ids of the batch by default."""
    from .ir import TensorType
    params = params if params is not None else module.trainable_params()
    if not forward.result_types or len(forward.result_types) != 1:
        raise ValueError(f"train_step needs @{forward.name} to have returned "
                         "one value")
    if any(f.name == name for f in module.functions):
        raise ValueError(f"the module already has @{name}")
    out = forward.result_types[0]
    if labels is None:
        labels = ("labels", TensorType(out.shape[:1], "i32")) \
            if loss == "softmax_cross_entropy" else ("target", out)
    f = module.function(name, forward.arg_specs + [labels],
                        [("loss", TensorType((), out.dtype))])
    b = f.builder
    inputs, target = f.args[:-1], f.args[-1]

    def body(r):
        z = r.call(forward.name, inputs, [out], name="z")
        return getattr(r, loss)(z, target, name="l")
    value, grads = b.value_and_grad(params, body)
    b.optimizer(optimizer, params, grads, **optimizer_attrs)
    b.ret(value)
    return f
