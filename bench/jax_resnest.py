"""ResNeSt in JAX, in the training form of generate.py --train: the peer
bench/train_step.py times against Grove's tiny-ResNeSt train_step.

A transcription of models/resnest/reference.py (training=True) to jax.lax:
batch-statistics BN on every convolution (its running statistics returned
updated, momentum 0.1, unbiased variance), the split attention's BN in
inference form. `logits(p, x, depth)` returns the logits and the new
running statistics; `p` maps the state_dict names to arrays.
"""
import jax
import jax.numpy as jnp

import generate

DIMS = ("NCHW", "OIHW", "NCHW")


def conv(p, name, x, stride=1, pad=0, groups=1):
    y = jax.lax.conv_general_dilated(
        x, p[f"{name}.weight"], (stride, stride), ((pad, pad), (pad, pad)),
        dimension_numbers=DIMS, feature_group_count=groups)
    bias = p.get(f"{name}.bias")
    return y if bias is None else y + bias[None, :, None, None]


def col(v):
    return v[None, :, None, None]


def bn_train(p, name, x, stats):
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3))
    n = x.size // x.shape[1]
    rm, rv = f"{name}.running_mean", f"{name}.running_var"
    stats[rm] = 0.9 * p[rm] + 0.1 * mean
    stats[rv] = 0.9 * p[rv] + 0.1 * var * n / (n - 1)
    xh = (x - col(mean)) / jnp.sqrt(col(var) + 1e-5)
    return xh * col(p[f"{name}.weight"]) + col(p[f"{name}.bias"])


def bn_frozen(p, name, x):
    scale = p[f"{name}.weight"] / jnp.sqrt(p[f"{name}.running_var"] + 1e-5)
    return (x - col(p[f"{name}.running_mean"])) * col(scale) + \
        col(p[f"{name}.bias"])


def avg_pool(x, k, stride, pad):
    """count_include_pad=True (torch's default); windows inside the image."""
    s = jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 1, k, k),
                              (1, 1, stride, stride),
                              ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    return s / (k * k)


def split_attention(p, name, u, channels, radix, card):
    b = u.shape[0]
    splits = jnp.split(u, radix, axis=1)
    gap = sum(splits).mean(axis=(2, 3), keepdims=True)
    h = jax.nn.relu(bn_frozen(p, f"{name}.bn1",
                              conv(p, f"{name}.fc1", gap, groups=card)))
    att = conv(p, f"{name}.fc2", h, groups=card)
    att = att.reshape(b, card, radix, -1).transpose(0, 2, 1, 3)
    att = jax.nn.softmax(att, axis=1).reshape(b, -1, 1, 1)
    return sum(a * s for a, s in zip(jnp.split(att, radix, axis=1), splits))


def logits(p, x, depth):
    layers, widths, radix, card, stem, _ = generate.CONFIGS[depth]
    stats = {}

    def norm(name, x):
        return bn_train(p, name, x, stats)
    x = jax.nn.relu(norm("conv1.1", conv(p, "conv1.0", x, 2, 1)))
    x = jax.nn.relu(norm("conv1.4", conv(p, "conv1.3", x, 1, 1)))
    x = jax.nn.relu(norm("bn1", conv(p, "conv1.6", x, 1, 1)))
    x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 3, 3),
                              (1, 1, 2, 2), ((0, 0), (0, 0), (1, 1), (1, 1)))
    inplanes = stem * 2
    for li, (blocks, planes) in enumerate(zip(layers, widths)):
        for bi in range(blocks):
            stride = (1 if li == 0 else 2) if bi == 0 else 1
            name = f"layer{li + 1}.{bi}"
            width = planes * card
            avd = stride > 1 or (bi == 0 and li > 0)
            out = jax.nn.relu(norm(f"{name}.bn1", conv(p, f"{name}.conv1", x)))
            sname = f"{name}.conv2"
            u = jax.nn.relu(norm(f"{sname}.bn0", conv(
                p, f"{sname}.conv", out, 1 if avd else stride, 1,
                card * radix)))
            out = split_attention(p, sname, u, width, radix, card)
            if avd:
                out = avg_pool(out, 3, stride, 1)
            out = norm(f"{name}.bn3", conv(p, f"{name}.conv3", out))
            residual = x
            if bi == 0 and (stride != 1 or inplanes != planes * 4):
                if stride > 1:  # even sizes here: ceil_mode changes nothing
                    residual = avg_pool(x, stride, stride, 0)
                residual = norm(f"{name}.downsample.2",
                                conv(p, f"{name}.downsample.1", residual))
            x = jax.nn.relu(out + residual)
            inplanes = planes * 4
    x = x.mean(axis=(2, 3))
    return x @ p["fc.weight"].T + p["fc.bias"], stats
