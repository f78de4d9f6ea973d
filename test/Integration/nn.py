# RUN: %python %s
# Convolution, batch norm and pooling ops (static and dynamic image sizes,
# ceil mode included) against PyTorch's functional ops on
# fresh random inputs (dynamic batch). Tolerance: rtol 1e-4, atol 1e-4 ·
# sqrt(window) for the sums over windows (f32, different summation order),
# 1e-5 for elementwise and max pooling. The convolutions run three times:
# as grovec compiles them by default (host: these images are small, at most
# 28x28 = 784 output positions, so oneDNN's convolution; cuda: im2col +
# GEMM), with --conv-library-max-positions=0 (im2col + GEMM everywhere) and
# with --conv-library (host: oneDNN's convolution, its blocked kernels from
# 2 images on, its GEMM-based one for a single image; cuda: cuDNN,
# symmetric padding folded into the call, asymmetric padding materialised).
import numpy as np
import torch
import torch.nn.functional as F
from grove_testing import GroveError, Model, assert_close, rng

# (name, N-less input shape, weight shape, groups, strides, padding
# [t, l, b, r], dilations, bias)
CONVS = [
    ("c1", (3, 9, 9), (4, 3, 3, 3), 1, (1, 1), (1, 1, 1, 1), (1, 1), True),
    ("c2", (4, 10, 8), (6, 2, 3, 3), 2, (2, 2), (1, 1, 1, 1), (1, 1), False),
    ("c3", (2, 7, 7), (2, 1, 3, 3), 2, (1, 1), (2, 2, 2, 2), (2, 2), True),
    ("c4", (8, 6, 6), (16, 8, 1, 1), 1, (1, 1), (0, 0, 0, 0), (1, 1), False),
    ("c5", (3, 8, 9), (5, 3, 2, 3), 1, (2, 1), (0, 1, 1, 0), (1, 1), True),
]
# (name, kind, input, kernel, strides, padding, ceil_mode, count_include_pad)
POOLS = [
    ("mp1", "max", (3, 8, 8), (3, 3), (2, 2), (1, 1, 1, 1), False, False),
    ("mp2", "max", (2, 7, 7), (2, 2), (2, 2), (0, 0, 0, 0), True, False),
    ("ap1", "avg", (3, 8, 8), (3, 3), (2, 2), (1, 1, 1, 1), False, True),
    ("ap2", "avg", (3, 8, 8), (3, 3), (2, 2), (1, 1, 1, 1), False, False),
    ("ap3", "avg", (2, 7, 7), (2, 2), (2, 2), (0, 0, 0, 0), True, False),
    ("ap4", "avg", (2, 6, 6), (3, 3), (2, 2), (1, 1, 1, 1), True, False),
    ("ap5", "avg", (2, 6, 6), (3, 3), (2, 2), (1, 1, 1, 1), True, True),
    # ceil mode: the first window overhangs the input (PyTorch allows less
    # than a stride), as ResNeSt's avg-down pools do on tiny images.
    ("ap6", "avg", (2, 1, 3), (2, 2), (2, 2), (0, 0, 0, 0), True, False),
    ("mp3", "max", (2, 1, 1), (2, 2), (2, 2), (0, 0, 0, 0), True, False),
]


def out_size(n, lo, hi, k, s, ceil):
    span = n + lo + hi - k
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= n + lo:
        out -= 1
    return out


def arr(a):
    return "array<i64: " + ", ".join(map(str, a)) + ">"


funcs = []
for name, ins, ws, g, st, pd, dl, bias in CONVS:
    oh = out_size(ins[1], pd[0], pd[2], dl[0] * (ws[2] - 1) + 1, st[0], False)
    ow = out_size(ins[2], pd[1], pd[3], dl[1] * (ws[3] - 1) + 1, st[1], False)
    it = f"tensor<?x{ins[0]}x{ins[1]}x{ins[2]}xf32>"
    wt = f"tensor<{ws[0]}x{ws[1]}x{ws[2]}x{ws[3]}xf32>"
    ot = f"tensor<?x{ws[0]}x{oh}x{ow}xf32>"
    args = f"%x: {it}, %w: {wt}" + (f", %b: tensor<{ws[0]}xf32>" if bias else "")
    opnds = "%x, %w" + (", %b" if bias else "")
    types = f"{it}, {wt}" + (f", tensor<{ws[0]}xf32>" if bias else "")
    funcs.append(f"""
  func.func @{name}({args}) -> {ot} {{
    %0 = grove.conv2d {opnds} {{groups = {g} : i64, strides = {arr(st)},
        padding = {arr(pd)}, dilations = {arr(dl)}}} : ({types}) -> {ot}
    return %0 : {ot}
  }}""")
for name, kind, ins, k, st, pd, ceil, cip in POOLS:
    oh = out_size(ins[1], pd[0], pd[2], k[0], st[0], ceil)
    ow = out_size(ins[2], pd[1], pd[3], k[1], st[1], ceil)
    it = f"tensor<?x{ins[0]}x{ins[1]}x{ins[2]}xf32>"
    ot = f"tensor<?x{ins[0]}x{oh}x{ow}xf32>"
    flags = (", ceil_mode" if ceil else "") + (", count_include_pad" if cip else "")
    funcs.append(f"""
  func.func @{name}(%x: {it}) -> {ot} {{
    %0 = grove.{kind}_pool2d %x {{kernel = {arr(k)}, strides = {arr(st)},
        padding = {arr(pd)}{flags}}} : ({it}) -> {ot}
    return %0 : {ot}
  }}""")
# Dynamic H and W (ceil mode pads by kernel - 1 at the end, enough for any
# size): one function per kind, called on several image sizes below.
for kind, flags in (("max", ", ceil_mode"), ("avg", ", ceil_mode"),
                    ("avg", ", ceil_mode, count_include_pad")):
    fname = f"dyn_{kind}" + ("_cip" if "count" in flags else "")
    funcs.append(f"""
  func.func @{fname}(%x: tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32> {{
    %0 = grove.{kind}_pool2d %x {{kernel = {arr((3, 2))}, strides = {arr((2, 2))},
        padding = {arr((1, 0, 1, 0))}{flags}}} : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
    return %0 : tensor<?x2x?x?xf32>
  }}""")
# A dynamic image smaller than the kernel: a run-time error, not a
# wrapped-around output size.
funcs.append("""
  func.func @dyn_conv(%x: tensor<?x2x?x?xf32>, %w: tensor<3x2x3x3xf32>)
      -> tensor<?x3x?x?xf32> {
    %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 2, 1>,
        padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
        : (tensor<?x2x?x?xf32>, tensor<3x2x3x3xf32>) -> tensor<?x3x?x?xf32>
    return %0 : tensor<?x3x?x?xf32>
  }""")
funcs.append("""
  func.func @bn(%x: tensor<?x5x4x3xf32>, %s: tensor<5xf32>, %b: tensor<5xf32>,
                %m: tensor<5xf32>, %v: tensor<5xf32>) -> tensor<?x5x4x3xf32> {
    %0 = grove.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f64}
        : (tensor<?x5x4x3xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>,
           tensor<5xf32>) -> tensor<?x5x4x3xf32>
    return %0 : tensor<?x5x4x3xf32>
  }
  func.func @gap(%x: tensor<?x6x5x7xf32>) -> tensor<?x6xf32> {
    %0 = grove.global_avg_pool %x : (tensor<?x6x5x7xf32>) -> tensor<?x6x1x1xf32>
    %1 = grove.flatten %0 {axis = 1 : i64} : (tensor<?x6x1x1xf32>) -> tensor<?x6xf32>
    return %1 : tensor<?x6xf32>
  }""")
model = Model("module {" + "".join(funcs) + "\n}", name="nn")
variants = [model,
            Model("module {" + "".join(funcs) + "\n}", name="nn_im2col",
                  grovec_flags=["--conv-library-max-positions=0"]),
            Model("module {" + "".join(funcs) + "\n}",
                  name="nn_conv_library", grovec_flags=["--conv-library"])]

r = rng()
checked = 0
t = torch.from_numpy
for n in (1, 3):
    for name, ins, ws, g, st, pd, dl, bias in CONVS:
        x = r.standard_normal((n, *ins)).astype(np.float32)
        w = r.standard_normal(ws).astype(np.float32)
        b = r.standard_normal(ws[0]).astype(np.float32)
        # PyTorch pads symmetrically: pad explicitly for [t, l, b, r].
        xp = F.pad(t(x), (pd[1], pd[3], pd[0], pd[2]))
        ref = F.conv2d(xp, t(w), t(b) if bias else None, stride=st,
                       dilation=dl, groups=g).numpy()
        window = ws[1] * ws[2] * ws[3]
        for m in variants:
            (got,) = m.call(name, x, w, *([b] if bias else []))
            assert_close(got, ref, 1e-4, 1e-4 * np.sqrt(window),
                         f"{m.name} {name} n={n}")
            checked += 1
    for name, kind, ins, k, st, pd, ceil, cip in POOLS:
        x = r.standard_normal((n, *ins)).astype(np.float32)
        # Symmetric padding in all these cases (PyTorch's only form).
        assert pd[0] == pd[2] and pd[1] == pd[3]
        if kind == "max":
            ref = F.max_pool2d(t(x), k, st, (pd[0], pd[1]), ceil_mode=ceil)
        else:
            ref = F.avg_pool2d(t(x), k, st, (pd[0], pd[1]), ceil_mode=ceil,
                               count_include_pad=cip)
        (got,) = model.call(name, x)
        assert_close(got, ref.numpy(), 1e-5, 1e-5, f"{name} n={n}")
        checked += 1
    w3 = r.standard_normal((3, 2, 3, 3)).astype(np.float32)
    x = r.standard_normal((n, 2, 7, 5)).astype(np.float32)
    for m in variants:
        (got,) = m.call("dyn_conv", x, w3)
        assert_close(got, F.conv2d(t(x), t(w3), stride=(2, 1)).numpy(), 1e-4,
                     3e-4 * np.sqrt(18), f"{m.name} dyn_conv n={n}")
        for h, wd in ((2, 5), (7, 2)):
            try:
                m.call("dyn_conv", x[:, :, :h, :wd], w3)
                raise AssertionError(f"{m.name} dyn_conv {h}x{wd}: no error")
            except GroveError as e:
                # The op, the rule and both sizes, located by file name only.
                what, got = ("height", h) if h == 2 else ("width", wd)
                assert (f"'dyn_conv': {m.name}.mlir:" in e.message and
                        f"grove.conv2d: one window needs the input {what} "
                        f"plus padding of at least 3, got {got}" in e.message
                        ), e.message
        checked += 3
    for h, w in ((5, 5), (6, 7), (1, 2), (8, 3), (1, 1)):
        x = r.standard_normal((n, 2, h, w)).astype(np.float32)
        for fname, ref in (
                ("dyn_max", F.max_pool2d(t(x), (3, 2), 2, (1, 0), ceil_mode=True)),
                ("dyn_avg", F.avg_pool2d(t(x), (3, 2), 2, (1, 0), ceil_mode=True,
                                         count_include_pad=False)),
                ("dyn_avg_cip", F.avg_pool2d(t(x), (3, 2), 2, (1, 0),
                                             ceil_mode=True,
                                             count_include_pad=True))):
            (got,) = model.call(fname, x)
            assert_close(got, ref.numpy(), 1e-5, 1e-5, f"{fname} {n}x2x{h}x{w}")
            checked += 1
    x = r.standard_normal((n, 5, 4, 3)).astype(np.float32)
    s, b, m = (r.standard_normal(5).astype(np.float32) for _ in range(3))
    v = r.uniform(0.1, 2.0, 5).astype(np.float32)
    ref = F.batch_norm(t(x), t(m), t(v), t(s), t(b), training=False,
                       eps=1e-5).numpy()
    (got,) = model.call("bn", x, s, b, m, v)
    assert_close(got, ref, 1e-5, 1e-5, f"bn n={n}")
    x = r.standard_normal((n, 6, 5, 7)).astype(np.float32)
    ref = F.adaptive_avg_pool2d(t(x), 1).flatten(1).numpy()
    (got,) = model.call("gap", x)
    assert_close(got, ref, 1e-5, 1e-6, f"gap n={n}")
    checked += 2
print(f"nn: {checked} checks passed on {model.target}")
