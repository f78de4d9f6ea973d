# RUN: %python %s
# ResNeSt end to end against an independent PyTorch implementation written
# here from the paper's description (seed-papers §1, the authors' splat.py /
# resnet.py structure), with random weights exported to safetensors and
# loaded by the runtime: the tiny variant at 32x32 and ResNeSt-50 at 64x64,
# each from the frontend's unfused form (models/resnest/generate.py), which
# grovec fuses (16 split attentions in ResNeSt-50).
# Tolerance: max |grove - torch| <= 1e-4 * max |torch logits| (f32).
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.numpy import save_file
from grove_testing import Model, rng

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "models", "resnest"))
import generate  # noqa: E402


def conv(p, name, x, stride=1, pad=0, groups=1):
    return F.conv2d(x, p[f"{name}.weight"], p.get(f"{name}.bias"), stride,
                    pad, 1, groups)


def bn(p, name, x):
    return F.batch_norm(x, p[f"{name}.running_mean"], p[f"{name}.running_var"],
                        p[f"{name}.weight"], p[f"{name}.bias"], False, 0.0,
                        1e-5)


def splat(p, name, x, channels, stride, radix, card):
    """SplAtConv2d: grouped conv, BN, ReLU, then split attention."""
    x = F.relu(bn(p, f"{name}.bn0",
                  conv(p, f"{name}.conv", x, stride, 1, card * radix)))
    b = x.shape[0]
    splits = torch.split(x, channels, dim=1) if radix > 1 else [x]
    gap = F.adaptive_avg_pool2d(sum(splits), 1)
    gap = F.relu(bn(p, f"{name}.bn1", conv(p, f"{name}.fc1", gap,
                                           groups=card)))
    att = conv(p, f"{name}.fc2", gap, groups=card)
    if radix > 1:
        att = F.softmax(att.view(b, card, radix, -1).transpose(1, 2), dim=1)
        att = att.reshape(b, -1, 1, 1)
        return sum(a * s for a, s in zip(torch.split(att, channels, dim=1),
                                         splits))
    return torch.sigmoid(att) * x


def resnest(p, x, depth):
    layers, widths, radix, card, stem, _ = generate.CONFIGS[depth]
    x = F.relu(bn(p, "conv1.1", conv(p, "conv1.0", x, 2, 1)))
    x = F.relu(bn(p, "conv1.4", conv(p, "conv1.3", x, 1, 1)))
    x = F.relu(bn(p, "bn1", conv(p, "conv1.6", x, 1, 1)))
    x = F.max_pool2d(x, 3, 2, 1)
    inplanes = stem * 2
    for li, (blocks, planes) in enumerate(zip(layers, widths)):
        for bi in range(blocks):
            stride = (1 if li == 0 else 2) if bi == 0 else 1
            name = f"layer{li + 1}.{bi}"
            width = planes * card
            avd = stride > 1 or (bi == 0 and li > 0)
            out = F.relu(bn(p, f"{name}.bn1", conv(p, f"{name}.conv1", x)))
            out = splat(p, f"{name}.conv2", out, width, 1 if avd else stride,
                        radix, card)
            if avd:
                out = F.avg_pool2d(out, 3, stride, 1)
            out = bn(p, f"{name}.bn3", conv(p, f"{name}.conv3", out))
            residual = x
            if bi == 0 and (stride != 1 or inplanes != planes * 4):
                if stride > 1:
                    residual = F.avg_pool2d(x, stride, stride, ceil_mode=True,
                                            count_include_pad=False)
                residual = bn(p, f"{name}.downsample.2",
                              conv(p, f"{name}.downsample.1", residual))
            x = F.relu(out + residual)
            inplanes = planes * 4
    x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
    return x @ p["fc.weight"].T + p["fc.bias"]


def random_params(params, g):
    """Weights that keep activations O(1) through the depth."""
    out = {}
    for name, shape in params:
        leaf = name.rsplit(".", 1)[1]
        if leaf == "weight" and len(shape) >= 2:
            fan_in = int(np.prod(shape[1:]))
            v = g.standard_normal(shape) * np.sqrt(1.0 / fan_in)
        elif leaf == "running_var":
            v = g.uniform(0.5, 1.5, shape)
        elif leaf == "weight":  # BN scale
            v = g.uniform(0.5, 1.0, shape)
        else:  # biases, BN shift and mean
            v = 0.1 * g.standard_normal(shape)
        out[name] = v.astype(np.float32)
    return out


g = rng()
# Build every model first: on a GPU machine without grovec the libraries come
# prepared (scripts/gpu-check.sh), and there grove-opt is not available.
models = []
for depth, image, batch in (("tiny", 32, 3), ("50", 64, 2)):
    text, params = generate.generate(depth, image, "unfused")
    work = tempfile.mkdtemp(prefix="grove-resnest-")
    path = os.path.join(work, f"resnest{depth}.mlir")
    with open(path, "w") as f:
        f.write(text)
    layers = generate.CONFIGS[depth][0]
    if not os.environ.get("GROVE_TEST_BUNDLE"):
        fused = subprocess.run(
            [os.path.join(os.environ.get("GROVE_BIN", ""), "grove-opt"), path,
             "--grove-fuse-split-attention"], capture_output=True, text=True,
            check=True).stdout.count("grove.split_attention ")
        assert fused == sum(layers), f"fused {fused} of {sum(layers)} blocks"
    model = Model(path, name=f"resnest{depth}", workdir=work)
    models.append((depth, image, batch, params, work, model))

for depth, image, batch, params, work, model in models:
    p = random_params(params, g)
    weights = os.path.join(work, "weights.safetensors")
    save_file(p, weights)
    model.load_weights(weights)
    x = g.standard_normal((batch, 3, image, image)).astype(np.float32)
    with torch.no_grad():
        ref = resnest({k: torch.from_numpy(v) for k, v in p.items()},
                      torch.from_numpy(x), depth).numpy()
    (got,) = model.call("forward", x)
    scale = np.abs(ref).max()
    err = np.abs(got - ref).max()
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert err <= 1e-4 * scale, f"resnest{depth}: max error {err} > 1e-4 * {scale}"
    print(f"resnest{depth} at {image}x{image} on {model.target}: max |err| "
          f"{err:.3g} = {err / scale:.2g} of max |logit| {scale:.3g}")
