# RUN: %python %s
# ResNeSt split attention (the part of SplAtConv2d after the grouped conv +
# BN + ReLU) against an independent PyTorch implementation written from the
# paper's description (docs/dialect.md), on fresh random U and weights, for
# radix 1, 2, 4 and cardinality 1, 2: both the fused grove.split_attention
# and the primitive-op form a frontend emits (which
# grove-fuse-split-attention rewrites into the fused op).
# Tolerance: rtol 1e-4, atol 1e-5 (f32; means over H·W and two small FCs).
import numpy as np
import torch
import torch.nn.functional as F
from grove_testing import Model, assert_close, rng

H, W = 6, 5
# (radix, cardinality, channels C, inter channels I)
CONFIGS = [(1, 1, 8, 32), (2, 1, 8, 32), (4, 1, 8, 32), (2, 2, 8, 32),
           (1, 2, 8, 16), (4, 2, 16, 32)]


def reference(u, r, k, p, eps=1e-5):
    """SplAtConv2d's attention, as the ResNeSt paper and splat.py describe."""
    b, cr = u.shape[:2]
    c = cr // r
    splits = torch.split(u, c, dim=1) if r > 1 else [u]
    gap = F.adaptive_avg_pool2d(sum(splits), 1)
    gap = F.conv2d(gap, p["w1"], p["b1"], groups=k)
    gap = F.relu(F.batch_norm(gap, p["mean"], p["var"], p["scale"],
                              p["shift"], training=False, eps=eps))
    atten = F.conv2d(gap, p["w2"], p["b2"], groups=k)
    if r > 1:  # rSoftMax
        atten = F.softmax(atten.view(b, k, r, -1).transpose(1, 2), dim=1)
        atten = atten.reshape(b, -1)
    else:
        atten = torch.sigmoid(atten)
    atten = atten.view(b, -1, 1, 1)
    if r == 1:
        return atten * u
    return sum(a * s for a, s in zip(torch.split(atten, c, dim=1), splits))


def t(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def fused(name, r, k, c, i):
    u, out = t(["?", c * r, H, W]), t(["?", c, H, W])
    params = [t([i, c // k, 1, 1]), t([i])] + [t([i])] * 4 + \
        [t([c * r, i // k, 1, 1]), t([c * r])]
    args = ", ".join(f"%p{j}: {ty}" for j, ty in enumerate(params))
    return f"""
  func.func @{name}(%u: {u}, {args}) -> {out} {{
    %0 = grove.split_attention %u, {", ".join(f"%p{j}" for j in range(8))}
        {{radix = {r} : i64, cardinality = {k} : i64, epsilon = 1.0e-05 : f64}}
        : ({u}, {", ".join(params)}) -> {out}
    return %0 : {out}
  }}"""


def unfused(name, r, k, c, i):
    """What a frontend emits for SplAtConv2d's attention, op by op."""
    u, out = t(["?", c * r, H, W]), t(["?", c, H, W])
    split = t(["?", c, H, W])
    params = [t([i, c // k, 1, 1]), t([i])] + [t([i])] * 4 + \
        [t([c * r, i // k, 1, 1]), t([c * r])]
    args = ", ".join(f"%p{j}: {ty}" for j, ty in enumerate(params))
    ops = []
    for j in range(r):
        ops.append(f"%s{j} = grove.slice %u [0, {j * c}, 0, 0] "
                   f"[-1, {(j + 1) * c}, {H}, {W}] [1, 1, 1, 1] : {u} -> {split}")
    acc = "%s0"
    for j in range(1, r):
        ops.append(f"%sum{j} = grove.add {acc}, %s{j} : ({split}, {split}) "
                   f"-> {split}")
        acc = f"%sum{j}"
    if r == 1:
        acc = "%u"
    g1 = t(["?", c, 1, 1])
    ops.append(f"%gap = grove.global_avg_pool {acc} : ({split}) -> {g1}")
    ops.append(f"%fc1 = grove.conv2d %gap, %p0, %p1 {{groups = {k} : i64, "
               "strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, "
               f"dilations = array<i64: 1, 1>}} : ({g1}, {params[0]}, "
               f"{params[1]}) -> {t(['?', i, 1, 1])}")
    ops.append(f"%bn = grove.batch_norm %fc1, %p2, %p3, %p4, %p5 "
               f"{{epsilon = 1.0e-05 : f64}} : ({t(['?', i, 1, 1])}, "
               f"{', '.join(params[2:6])}) -> {t(['?', i, 1, 1])}")
    ops.append(f"%relu = grove.relu %bn : {t(['?', i, 1, 1])}")
    gr = t(["?", c * r, 1, 1])
    ops.append(f"%fc2 = grove.conv2d %relu, %p6, %p7 {{groups = {k} : i64, "
               "strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, "
               f"dilations = array<i64: 1, 1>}} : ({t(['?', i, 1, 1])}, "
               f"{params[6]}, {params[7]}) -> {gr}")
    if r == 1:
        ops.append(f"%att = grove.sigmoid %fc2 : {gr}")
        ops.append(f"%res = grove.mul %att, %u : ({gr}, {u}) -> {out}")
    else:
        v4 = t(["?", k, r, c // k])
        v4t = t(["?", r, k, c // k])
        ops.append(f"%v = grove.reshape %fc2 : {gr} -> {v4}")
        ops.append(f"%vt = grove.transpose %v [0, 2, 1, 3] : {v4} -> {v4t}")
        ops.append(f"%sm = grove.softmax %vt {{axis = 1 : i64}} : {v4t}")
        ops.append(f"%att = grove.reshape %sm : {v4t} -> {gr}")
        for j in range(r):
            ops.append(f"%a{j} = grove.slice %att [0, {j * c}, 0, 0] "
                       f"[-1, {(j + 1) * c}, 1, 1] [1, 1, 1, 1] : {gr} -> {g1}")
            ops.append(f"%m{j} = grove.mul %a{j}, %s{j} : ({g1}, {split}) "
                       f"-> {split}")
        acc = "%m0"
        for j in range(1, r):
            name_j = "%res" if j == r - 1 else f"%o{j}"
            ops.append(f"{name_j} = grove.add {acc}, %m{j} : ({split}, "
                       f"{split}) -> {split}")
            acc = name_j
    body = "\n    ".join(ops)
    return f"""
  func.func @{name}(%u: {u}, {args}) -> {out} {{
    {body}
    return %res : {out}
  }}"""


funcs = []
for n, (r, k, c, i) in enumerate(CONFIGS):
    funcs.append(fused(f"fused{n}", r, k, c, i))
    funcs.append(unfused(f"unfused{n}", r, k, c, i))
source = "module {" + "".join(funcs) + "\n}"
model = Model(source, name="splat")  # unfused* fused by the pipeline
# The primitive path itself, with the fusion pass off.
plain = Model(source, name="splat_plain",
              grovec_flags=["--fuse-split-attention=false"])

g = rng()
checked = 0
for n, (r, k, c, i) in enumerate(CONFIGS):
    for batch in (1, 3):
        u = np.maximum(g.standard_normal((batch, c * r, H, W)), 0).astype(
            np.float32)
        p = {"w1": g.standard_normal((i, c // k, 1, 1)) / np.sqrt(c // k),
             "b1": g.standard_normal(i), "scale": g.standard_normal(i),
             "shift": g.standard_normal(i), "mean": g.standard_normal(i),
             "var": g.uniform(0.5, 2.0, i),
             "w2": g.standard_normal((c * r, i // k, 1, 1)) / np.sqrt(i // k),
             "b2": g.standard_normal(c * r)}
        p = {key: v.astype(np.float32) for key, v in p.items()}
        ref = reference(torch.from_numpy(u), r, k,
                        {key: torch.from_numpy(v) for key, v in p.items()})
        args = [p[key] for key in ("w1", "b1", "scale", "shift", "mean", "var",
                                   "w2", "b2")]
        for form, m in (("fused", model), ("unfused", model),
                        ("unfused", plain)):
            (got,) = m.call(f"{form}{n}", u, *args)
            assert_close(got, ref.numpy(), 1e-4, 1e-5,
                         f"{m.name} {form} radix={r} cardinality={k} "
                         f"batch={batch}")
            checked += 1
print(f"split_attention: {checked} checks passed on {model.target}")
