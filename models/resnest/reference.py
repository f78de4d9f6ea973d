"""ResNeSt in functional PyTorch: the reference the Grove models are checked
and benchmarked against.

Written independently of generate.py from the paper's description (the
authors' splat.py / resnet.py structure); only the configuration table is
shared. Parameters are a dict named like the authors' state_dict (e.g.
`layer2.0.conv2.fc1.weight`), the names generate.py gives its grove.params.

Importers put models/resnest on sys.path (as for generate.py):
    sys.path.insert(0, "models/resnest"); from reference import resnest
Used by test/Integration/resnest.py, bench/resnest.py,
bench/split_attention.py and bench/gpu/run.py.
"""
import numpy as np
import torch
import torch.nn.functional as F

import generate


def conv(p, name, x, stride=1, pad=0, groups=1):
    return F.conv2d(x, p[f"{name}.weight"], p.get(f"{name}.bias"), stride,
                    pad, 1, groups)


def bn(p, name, x, training=False):
    """BatchNorm2d; `training`: by batch statistics, updating the running
    ones in place (momentum 0.1), as torch's train mode does."""
    return F.batch_norm(x, p[f"{name}.running_mean"], p[f"{name}.running_var"],
                        p[f"{name}.weight"], p[f"{name}.bias"], training, 0.1,
                        1e-5)


def splat(p, name, x, channels, stride, radix, card, training=False):
    """SplAtConv2d: grouped conv, BN, ReLU, then split attention (whose BN
    stays in inference form when training: generate.py's --train)."""
    x = F.relu(bn(p, f"{name}.bn0",
                  conv(p, f"{name}.conv", x, stride, 1, card * radix),
                  training))
    return split_attention(p, name, x, channels, radix, card)


def split_attention(p, name, x, channels, radix, card):
    """The attention part of SplAtConv2d on U = x (B, radix * channels, H, W):
    sum of the radix splits, global pool, fc1 + bn1 + ReLU, fc2, rSoftMax
    (sigmoid for radix 1), weighted sum. Also what bench/split_attention.py
    and bench/gpu/run.py time as PyTorch eager."""
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


def resnest(p, x, depth, training=False):
    """Logits of ResNeSt `depth` ("50" or "tiny") for images x (B, 3, H, W),
    with the parameters `p` (name -> tensor of x's dtype). `training`: the
    forward of generate.py's train_step (BN by batch statistics outside the
    split attentions)."""
    layers, widths, radix, card, stem, _ = generate.CONFIGS[depth]

    def norm(name, x):
        return bn(p, name, x, training)
    x = F.relu(norm("conv1.1", conv(p, "conv1.0", x, 2, 1)))
    x = F.relu(norm("conv1.4", conv(p, "conv1.3", x, 1, 1)))
    x = F.relu(norm("bn1", conv(p, "conv1.6", x, 1, 1)))
    x = F.max_pool2d(x, 3, 2, 1)
    inplanes = stem * 2
    for li, (blocks, planes) in enumerate(zip(layers, widths)):
        for bi in range(blocks):
            stride = (1 if li == 0 else 2) if bi == 0 else 1
            name = f"layer{li + 1}.{bi}"
            width = planes * card
            avd = stride > 1 or (bi == 0 and li > 0)
            out = F.relu(norm(f"{name}.bn1", conv(p, f"{name}.conv1", x)))
            out = splat(p, f"{name}.conv2", out, width, 1 if avd else stride,
                        radix, card, training)
            if avd:
                out = F.avg_pool2d(out, 3, stride, 1)
            out = norm(f"{name}.bn3", conv(p, f"{name}.conv3", out))
            residual = x
            if bi == 0 and (stride != 1 or inplanes != planes * 4):
                if stride > 1:
                    residual = F.avg_pool2d(x, stride, stride, ceil_mode=True,
                                            count_include_pad=False)
                residual = norm(f"{name}.downsample.2",
                                conv(p, f"{name}.downsample.1", residual))
            x = F.relu(out + residual)
            inplanes = planes * 4
    x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
    return x @ p["fc.weight"].T + p["fc.bias"]


def random_params(params, g):
    """Weights that keep activations O(1) through the depth, for the
    (name, shape) list generate.generate returns; g: a numpy Generator."""
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
