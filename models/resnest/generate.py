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
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import grove_path  # noqa: E402,F401  (grove: installed, else the tree's)
from grove import ir, nn  # noqa: E402

CONFIGS = {
    # layers, widths, radix, cardinality, stem width, classes
    "50": ([3, 4, 6, 3], [64, 128, 256, 512], 2, 1, 32, 1000),
    "tiny": ([1, 1], [16, 32], 2, 2, 8, 10),
}

# train_step's optimizer (PyTorch's torch.optim.SGD with these arguments).
SGD = {"lr": 0.05, "momentum": 0.9, "weight_decay": 1e-4}


class Bottleneck(nn.Block):
    """The authors' Bottleneck: 1x1 conv, SplAtConv2d, avd avg pool, 1x1
    conv (expansion 4), and an avg-down shortcut where shapes change."""

    def __init__(self, planes, stride, is_first, radix, card, downsample,
                 fused):
        super().__init__()
        width = planes * card
        self.avd = stride > 1 or is_first
        self.stride = stride
        self.conv1 = nn.Conv2D(width, 1)
        self.bn1 = nn.BatchNorm()
        self.conv2 = nn.SplitAttentionConv2D(
            width, strides=1 if self.avd else stride, radix=radix,
            cardinality=card, fused=fused)
        self.conv3 = nn.Conv2D(planes * 4, 1)
        self.bn3 = nn.BatchNorm()
        self.downsample = None
        if downsample:
            pool = nn.AvgPool2D(stride, stride, ceil_mode=True,
                                count_include_pad=False) if stride > 1 \
                else nn.Identity()
            self.downsample = nn.Sequential(pool, nn.Conv2D(planes * 4, 1),
                                            nn.BatchNorm())

    def forward(self, b, x):
        out = b.relu(self.bn1(b, self.conv1(b, x)))
        out = self.conv2(b, out)
        if self.avd:
            out = b.pool2d("avg", out, (3, 3), (self.stride,) * 2, [1] * 4)
        out = self.bn3(b, self.conv3(b, out))
        residual = self.downsample(b, x) if self.downsample else x
        return b.relu(b.add(out, residual))


class ResNeSt(nn.Block):
    """Deep stem, four (or two) stages of Bottlenecks, GAP, fc; names as the
    authors' resnest50 state_dict."""

    def __init__(self, depth, fused):
        super().__init__()
        layers, widths, radix, card, stem, classes = CONFIGS[depth]
        self.conv1 = nn.Sequential(
            nn.Conv2D(stem, 3, 2, 1), nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(stem, 3, 1, 1), nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(stem * 2, 3, 1, 1))
        self.bn1 = nn.BatchNorm()
        inplanes = stem * 2
        for li, (blocks, planes) in enumerate(zip(layers, widths)):
            stage = nn.Sequential()
            for bi in range(blocks):
                s = (1 if li == 0 else 2) if bi == 0 else 1
                stage.add(Bottleneck(
                    planes, s, bi == 0 and li > 0, radix, card,
                    bi == 0 and (s != 1 or inplanes != planes * 4), fused))
                inplanes = planes * 4
            setattr(self, f"layer{li + 1}", stage)
        self.stages = len(layers)
        self.fc = nn.Dense(classes)

    def forward(self, b, x):
        x = b.relu(self.bn1(b, self.conv1(b, x)))
        x = b.pool2d("max", x, (3, 3), (2, 2), [1] * 4)
        for li in range(self.stages):
            x = getattr(self, f"layer{li + 1}")(b, x)
        return self.fc(b, b.flatten(b.global_avg_pool(x)))


def trainable(params):
    """The params train_step updates: all but the BN statistics."""
    return [(n, s) for n, s in params if not n.endswith(("running_mean",
                                                          "running_var"))]


def generate(depth, image, form, dtype="f32", train=False):
    """(module text, [(param name, shape)] in declaration order)."""
    classes = CONFIGS[depth][5]
    name = f"resnest{depth}" + ("" if dtype == "f32" else f"_{dtype}")
    flags = f"--depth {depth} --image {image} --form {form}" + (
        "" if dtype == "f32" else f" --dtype {dtype}") + (
        " --train" if train else "")
    m = ir.Module(name + ("_train" if train else ""), dtype=dtype,
                  header=f"Generated by models/resnest/generate.py {flags}; "
                  "do not edit.")
    net = ResNeSt(depth, form == "fused")
    image_arg = [("image", (None, 3, image, image))]
    logits = [("logits", (None, classes))]
    f = m.function("forward", image_arg, logits)
    f.builder.ret(net(f.builder, f.args[0]))
    params = [(p.name, list(p.shape)) for p in m.params.values()]
    if train:
        t = m.function("logits_train", image_arg, [logits[0][1]],
                       private=True, training=True)
        t.builder.ret(net(t.builder, t.args[0]))
        wrt = [p for p in m.params.values() if p.trainable]
        s = m.function("train_step", image_arg +
                       [("labels", ir.TensorType((None,), "i32"))],
                       [("loss", ())])
        b = s.builder
        loss, grads = b.value_and_grad(wrt, lambda r: r.softmax_cross_entropy(
            r.call("logits_train", [s.args[0]], [logits[0][1]], name="z"),
            s.args[1], name="l"))
        b.optimizer("sgd", wrt, grads, **SGD)
        b.ret(loss)
    return m.text(), params


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
