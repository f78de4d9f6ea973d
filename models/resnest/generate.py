#!/usr/bin/env python3
"""Writes ResNeSt models as grove MLIR, the way a frontend would emit them.

  generate.py [--depth 50|tiny] [--image N] [--form unfused|fused]
              [--dtype f32|bf16] [--train] > out.mlir

ResNeSt-50 ("2s1x64d", the authors' resnest50): deep stem 32/32/64 + BN +
ReLU + 3x3/2 max pool; bottleneck layers [3, 4, 6, 3] of widths 64, 128, 256,
512 (expansion 4), radix 2, cardinality 1; avd (3x3/s avg pool after the
split-attention conv) in the strided blocks; avg-down shortcuts (s x s avg
pool, ceil_mode, count_include_pad=False, then 1x1 conv + BN); global
average pool, flatten, fc to 1000 classes. `--depth tiny` is a two-stage
[1, 1] variant with widths 16/32 (radix 2, cardinality 2) for fast tests.

`--form unfused` (default) writes every split attention as the primitive
ops a frontend produces (channel slices, sums, GAP, grouped 1x1 convs, BN,
ReLU, rSoftMax as reshape/transpose/softmax, products, sum), which
`grove-fuse-split-attention` must turn into `grove.split_attention`;
`--form fused` writes the op directly.

`--dtype bf16` writes the whole model in bf16 - params, image, every
activation and the logits - as a frontend emits a model cast to bfloat16
(`model.to(torch.bfloat16)`); the module is then named resnest<depth>_bf16.

`--train` adds `train_step(image, labels) -> loss`: softmax cross-entropy
and one SGD step (momentum 0.9, weight decay 1e-4) over every weight but
the BN statistics, in one call. Its forward (the private @logits_train)
normalises the convolutions' outputs by batch statistics, their running
ones updated as state (grove.batch_norm_training, PyTorch's train mode);
the BN inside each split attention keeps its running statistics (frozen,
as detectron2's FrozenBatchNorm2d), so that the attention still fuses into
grove.split_attention and differentiates through its fused backward
(docs/training.md).

Parameters are grove.params named like the PyTorch state_dict of the
reference implementation (models/resnest/reference.py).
"""
import argparse
import sys

CONFIGS = {
    # layers, widths, radix, cardinality, stem width, classes
    "50": ([3, 4, 6, 3], [64, 128, 256, 512], 2, 1, 32, 1000),
    "tiny": ([1, 1], [16, 32], 2, 2, 8, 10),
}


def tensor(shape, dtype="f32"):
    return "tensor<" + "x".join("?" if d is None else str(d) for d in shape) + \
        f"x{dtype}>"


def arr(values):
    return "array<i64: " + ", ".join(map(str, values)) + ">"


# train_step's optimizer (PyTorch's torch.optim.SGD with these arguments).
SGD = {"lr": 0.05, "momentum": 0.9, "weight_decay": 1e-4}


class Emitter:
    def __init__(self, form, dtype="f32", training=False):
        self.form = form
        self.dtype = dtype
        self.training = training  # BN outside the attention by batch stats
        self.state = {}  # running statistics written: name -> initial value
        self.params = []  # (name, shape)
        self.lines = []
        self.n = 0

    def t(self, shape):
        """The tensor type of `shape` in the model's element type."""
        return tensor(shape, self.dtype)

    def fresh(self):
        self.n += 1
        return f"%v{self.n}"

    def param(self, name, shape):
        self.params.append((name, shape))
        v = self.fresh()
        self.lines.append(f"{v} = grove.get_param @{name} : {self.t(shape)}")
        return v

    def op(self, text, result_shape):
        v = self.fresh()
        self.lines.append(f"{v} = {text}")
        return v, result_shape

    # ---- layers -----------------------------------------------------------
    def conv(self, x, shape, name, out_c, k, stride=1, pad=0, groups=1,
             bias=False):
        b, c, h, w = shape
        wshape = [out_c, c // groups, k, k]
        weight = self.param(f"{name}.weight", wshape)
        bias_v = self.param(f"{name}.bias", [out_c]) if bias else None
        oh = (h + 2 * pad - k) // stride + 1
        ow = (w + 2 * pad - k) // stride + 1
        out = [b, out_c, oh, ow]
        operands = f"{x}, {weight}" + (f", {bias_v}" if bias else "")
        types = f"{self.t(shape)}, {self.t(wshape)}" + (
            f", {self.t([out_c])}" if bias else "")
        return self.op(
            f"grove.conv2d {operands} {{groups = {groups} : i64, strides = "
            f"{arr([stride, stride])}, padding = {arr([pad] * 4)}, dilations = "
            f"{arr([1, 1])}}} : ({types}) -> {self.t(out)}", out)

    def bn(self, x, shape, name, frozen=False):
        c = shape[1]
        if self.training and not frozen:
            ps = [self.param(f"{name}.{p}", [c]) for p in ("weight", "bias")]
            self.state[f"{name}.running_mean"] = 0.0
            self.state[f"{name}.running_var"] = 1.0
            return self.op(
                f"grove.batch_norm_training {x}, {', '.join(ps)} {{running_mean"
                f" = @{name}.running_mean, running_var = @{name}.running_var}} "
                f": ({self.t(shape)}, {self.t([c])}, {self.t([c])}) -> "
                f"{self.t(shape)}", shape)
        ps = [self.param(f"{name}.{p}", [c])
              for p in ("weight", "bias", "running_mean", "running_var")]
        return self.op(
            f"grove.batch_norm {x}, {', '.join(ps)} {{epsilon = 1.0e-05 : f64}}"
            f" : ({self.t(shape)}, {', '.join([self.t([c])] * 4)}) -> "
            f"{self.t(shape)}", shape)

    def relu(self, x, shape):
        return self.op(f"grove.relu {x} : {self.t(shape)}", shape)

    def pool(self, kind, x, shape, k, stride, pad, ceil=False, cip=True):
        b, c, h, w = shape

        def size(n):
            span = n + 2 * pad - k
            out = (-(-span // stride) if ceil else span // stride) + 1
            if ceil and (out - 1) * stride >= n + pad:
                out -= 1
            return out
        out = [b, c, size(h), size(w)]
        flags = (", ceil_mode" if ceil else "") + (
            ", count_include_pad" if kind == "avg" and cip else "")
        return self.op(
            f"grove.{kind}_pool2d {x} {{kernel = {arr([k, k])}, strides = "
            f"{arr([stride, stride])}, padding = {arr([pad] * 4)}{flags}}} : "
            f"({self.t(shape)}) -> {self.t(out)}", out)

    def add(self, a, b, shape):
        return self.op(f"grove.add {a}, {b} : ({self.t(shape)}, {self.t(shape)})"
                       f" -> {self.t(shape)}", shape)

    def splat(self, x, shape, name, channels, stride, radix, card):
        """SplAtConv2d: grouped conv + BN + ReLU, then split attention."""
        inter = max(shape[1] * radix // 4, 32)
        u, ushape = self.conv(x, shape, f"{name}.conv", channels * radix, 3,
                              stride, 1, groups=card * radix)
        u, ushape = self.bn(u, ushape, f"{name}.bn0")
        u, ushape = self.relu(u, ushape)
        b, _, h, w = ushape
        if self.form == "fused":
            ps = [self.param(f"{name}.fc1.weight", [inter, channels // card, 1, 1]),
                  self.param(f"{name}.fc1.bias", [inter])]
            ps += [self.param(f"{name}.bn1.{p}", [inter])
                   for p in ("weight", "bias", "running_mean", "running_var")]
            ps += [self.param(f"{name}.fc2.weight",
                              [channels * radix, inter // card, 1, 1]),
                   self.param(f"{name}.fc2.bias", [channels * radix])]
            types = [self.t([inter, channels // card, 1, 1])] + \
                [self.t([inter])] * 5 + \
                [self.t([channels * radix, inter // card, 1, 1]),
                 self.t([channels * radix])]
            out = [b, channels, h, w]
            return self.op(
                f"grove.split_attention {u}, {', '.join(ps)} {{radix = {radix} : "
                f"i64, cardinality = {card} : i64, epsilon = 1.0e-05 : f64}} : "
                f"({self.t(ushape)}, {', '.join(types)}) -> {self.t(out)}", out)
        split = [b, channels, h, w]
        splits = []
        if radix > 1:
            for j in range(radix):
                s, _ = self.op(
                    f"grove.slice {u} [0, {j * channels}, 0, 0] [-1, "
                    f"{(j + 1) * channels}, {h}, {w}] [1, 1, 1, 1] : "
                    f"{self.t(ushape)} -> {self.t(split)}", split)
                splits.append(s)
            gap_in = splits[0]
            for s in splits[1:]:
                gap_in, _ = self.add(gap_in, s, split)
        else:
            gap_in = u
        g, gshape = self.op(f"grove.global_avg_pool {gap_in} : "
                            f"({self.t(split)}) -> {self.t([b, channels, 1, 1])}",
                            [b, channels, 1, 1])
        g, gshape = self.conv(g, gshape, f"{name}.fc1", inter, 1, groups=card,
                              bias=True)
        g, gshape = self.bn(g, gshape, f"{name}.bn1", frozen=True)
        g, gshape = self.relu(g, gshape)
        a, ashape = self.conv(g, gshape, f"{name}.fc2", channels * radix, 1,
                              groups=card, bias=True)
        if radix == 1:
            a, _ = self.op(f"grove.sigmoid {a} : {self.t(ashape)}", ashape)
            return self.op(f"grove.mul {a}, {u} : ({self.t(ashape)}, "
                           f"{self.t(ushape)}) -> {self.t(ushape)}", ushape)
        view = [b, card, radix, channels // card]
        viewt = [b, radix, card, channels // card]
        a, _ = self.op(f"grove.reshape {a} : {self.t(ashape)} -> {self.t(view)}",
                       view)
        a, _ = self.op(f"grove.transpose {a} [0, 2, 1, 3] : {self.t(view)} -> "
                       f"{self.t(viewt)}", viewt)
        a, _ = self.op(f"grove.softmax {a} {{axis = 1 : i64}} : "
                       f"{self.t(viewt)}", viewt)
        a, _ = self.op(f"grove.reshape {a} : {self.t(viewt)} -> "
                       f"{self.t(ashape)}", ashape)
        total = None
        for j, s in enumerate(splits):
            aj, _ = self.op(
                f"grove.slice {a} [0, {j * channels}, 0, 0] [-1, "
                f"{(j + 1) * channels}, 1, 1] [1, 1, 1, 1] : {self.t(ashape)} -> "
                f"{self.t([b, channels, 1, 1])}", [b, channels, 1, 1])
            m, _ = self.op(f"grove.mul {aj}, {s} : ({self.t([b, channels, 1, 1])}"
                           f", {self.t(split)}) -> {self.t(split)}", split)
            total = m if total is None else self.add(total, m, split)[0]
        return total, split

    def bottleneck(self, x, shape, name, planes, stride, is_first, radix,
                   card, downsample):
        width = planes * card
        out, oshape = self.conv(x, shape, f"{name}.conv1", width, 1)
        out, oshape = self.bn(out, oshape, f"{name}.bn1")
        out, oshape = self.relu(out, oshape)
        avd = stride > 1 or is_first
        out, oshape = self.splat(out, oshape, f"{name}.conv2", width,
                                 1 if avd else stride, radix, card)
        if avd:
            out, oshape = self.pool("avg", out, oshape, 3, stride, 1)
        out, oshape = self.conv(out, oshape, f"{name}.conv3", planes * 4, 1)
        out, oshape = self.bn(out, oshape, f"{name}.bn3")
        residual, rshape = x, shape
        if downsample:
            if stride > 1:
                residual, rshape = self.pool("avg", x, shape, stride, stride, 0,
                                             ceil=True, cip=False)
            residual, rshape = self.conv(residual, rshape,
                                         f"{name}.downsample.1", planes * 4, 1)
            residual, rshape = self.bn(residual, rshape, f"{name}.downsample.2")
        out, oshape = self.add(out, residual, oshape)
        return self.relu(out, oshape)


def network(e, depth, image):
    """Emits the network into `e`; returns its logits and their shape."""
    layers, widths, radix, card, stem, classes = CONFIGS[depth]
    shape = [None, 3, image, image]
    x = "%image"
    x, shape = e.conv(x, shape, "conv1.0", stem, 3, 2, 1)
    x, shape = e.bn(x, shape, "conv1.1")
    x, shape = e.relu(x, shape)
    x, shape = e.conv(x, shape, "conv1.3", stem, 3, 1, 1)
    x, shape = e.bn(x, shape, "conv1.4")
    x, shape = e.relu(x, shape)
    x, shape = e.conv(x, shape, "conv1.6", stem * 2, 3, 1, 1)
    x, shape = e.bn(x, shape, "bn1")
    x, shape = e.relu(x, shape)
    x, shape = e.pool("max", x, shape, 3, 2, 1)
    inplanes = stem * 2
    for li, (blocks, planes) in enumerate(zip(layers, widths)):
        stride = 1 if li == 0 else 2
        for bi in range(blocks):
            s = stride if bi == 0 else 1
            downsample = bi == 0 and (s != 1 or inplanes != planes * 4)
            x, shape = e.bottleneck(x, shape, f"layer{li + 1}.{bi}", planes, s,
                                    is_first=bi == 0 and li > 0, radix=radix,
                                    card=card, downsample=downsample)
            inplanes = planes * 4
    x, shape = e.op(f"grove.global_avg_pool {x} : ({e.t(shape)}) -> "
                    f"{e.t([None, shape[1], 1, 1])}", [None, shape[1], 1, 1])
    x, shape = e.op(f"grove.flatten {x} {{axis = 1 : i64}} : "
                    f"({e.t(shape)}) -> {e.t([None, shape[1]])}",
                    [None, shape[1]])
    w = e.param("fc.weight", [classes, shape[1]])
    b = e.param("fc.bias", [classes])
    x, shape2 = e.op(f"grove.matmul {x}, {w} {{transpose_rhs}} : "
                     f"({e.t(shape)}, {e.t([classes, shape[1]])}) -> "
                     f"{e.t([None, classes])}", [None, classes])
    return e.op(f"grove.add {x}, {b} : ({e.t(shape2)}, {e.t([classes])}) -> "
                f"{e.t(shape2)}", shape2)


def trainable(params):
    """The params train_step updates: all but the BN statistics."""
    return [(n, s) for n, s in params if not n.endswith(("running_mean",
                                                          "running_var"))]


def train_step(e, forward_params, image, classes):
    """train_step over the private @logits_train (emitted by `e`)."""
    wrt = trainable(forward_params)
    types = ", ".join(e.t(s) for _, s in wrt)
    names = ", ".join(f"@{n}" for n, _ in wrt)
    grads = ", ".join(f"%g#{i}" for i in range(len(wrt)))
    img, logits = e.t([None, 3, image, image]), e.t([None, classes])
    sgd = ", ".join(f"{k} = {v:.1e} : f64" for k, v in SGD.items())
    return [
        f"  func.func private @logits_train(%image: {img}) -> {logits} {{",
        *[f"    {line}" for line in e.lines],
        f"    return {e.result} : {logits}", "  }",
        f"  func.func @train_step(%image: {img} {{grove.name = \"image\"}},",
        f"                        %labels: tensor<?xi32> "
        f"{{grove.name = \"labels\"}})",
        "      -> (tensor<f32> {grove.name = \"loss\"}) {",
        f"    %loss, %g:{len(wrt)} = grove.value_and_grad [{names}] {{",
        f"      %z = func.call @logits_train(%image) : ({img}) -> {logits}",
        f"      %l = grove.softmax_cross_entropy %z, %labels : ({logits}, "
        "tensor<?xi32>) -> tensor<f32>",
        "      grove.yield %l : tensor<f32>",
        f"    }} : tensor<f32>, {types}",
        f"    grove.sgd [{names}] ({grads}) {{{sgd}}} : {types}",
        "    return %loss : tensor<f32>", "  }"]


def generate(depth, image, form, dtype="f32", train=False):
    classes = CONFIGS[depth][5]
    e = Emitter(form, dtype)
    x, _ = network(e, depth, image)
    name = f"resnest{depth}" + ("" if dtype == "f32" else f"_{dtype}")
    flags = f"--depth {depth} --image {image} --form {form}" + (
        "" if dtype == "f32" else f" --dtype {dtype}") + (
        " --train" if train else "")
    out = [f"// Generated by models/resnest/generate.py {flags}; do not edit.",
           f"module @{name}{'_train' if train else ''} {{"]
    state = {}
    if train:
        t = Emitter(form, dtype, training=True)
        t.result, _ = network(t, depth, image)
        state = t.state
    for n, s in e.params:
        init = f" = {state[n]:.1f} : {dtype}" if n in state else ""
        out.append(f"  grove.param @{n} : {e.t(s)}{init}")
    out.append(f"  func.func @forward(%image: {e.t([None, 3, image, image])}"
               f" {{grove.name = \"image\"}})")
    out.append(f"      -> ({e.t([None, classes])} {{grove.name = \"logits\"}}) {{")
    out += [f"    {line}" for line in e.lines]
    out.append(f"    return {x} : {e.t([None, classes])}")
    out.append("  }")
    if train:
        out += train_step(t, e.params, image, classes)
    out.append("}")
    return "\n".join(out) + "\n", e.params


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", choices=sorted(CONFIGS), default="50")
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--form", choices=["unfused", "fused"], default="unfused")
    ap.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    ap.add_argument("--train", action="store_true",
                    help="add train_step (batch-statistics BN, SGD)")
    args = ap.parse_args()
    text, _ = generate(args.depth, args.image, args.form, args.dtype,
                       args.train)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
