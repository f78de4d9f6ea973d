# RUN: %python %s
# grove-autodiff end to end: for each differentiable op (positive,
# broadcast and dynamic-shape cases), an entry takes the gradient of
# sum(op(params, inputs) * r) with respect to the params through
# grove.value_and_grad, compiled with grovec and called through the C ABI.
# Checked on fresh random inputs
#  * in f32 against PyTorch autograd in float64: rtol 1e-4, atol 1e-5;
#  * in f64 against central finite differences of the same compiled
#    forward (step 1e-6): rtol 1e-6, atol 1e-7.
# The loss value returned alongside is checked against PyTorch too.
import numpy as np
import torch
from grove_testing import Model, assert_close, rng

D = None  # a dynamic dimension


def ty(shape, e):
    dims = "x".join("?" if d is None else str(d) for d in shape)
    return f"tensor<{dims + 'x' if dims else ''}{e}>"


def axes(rank):
    """An `axes` attribute over every dimension of a rank-`rank` tensor."""
    listed = ", ".join(str(i) for i in range(rank))
    return f"array<i64: {listed}>" if rank else "array<i64>"


def sa_params(radix, channels, card, inter, **extra):
    """split_attention's operands (besides U) for C = `channels`."""
    return {**extra, "w1": (inter, channels // card, 1, 1), "b1": (inter,),
            "s": (inter,), "beta": (inter,), "m": (inter,), "var": (inter,),
            "w2": (channels * radix, inter // card, 1, 1),
            "b2": (channels * radix,)}


def sa_body(u, radix, card, utype=None):
    """split_attention of %`u`, whose type is that of `utype` (else u's)."""
    utype = utype or u
    return f"""
      %y = grove.split_attention %{u}, %w1, %b1, %s, %beta, %m, %var, %w2, %b2
          {{{{radix = {radix} : i64, cardinality = {card} : i64,
            epsilon = 1.0e-05 : f64}}}}
          : ({{{utype}}}, {{w1}}, {{b1}}, {{s}}, {{beta}}, {{m}}, {{var}}, {{w2}},
             {{b2}}) -> {{y}}"""


def sa_torch(t, u, radix, card):
    """SplAtConv2d's attention, written out (models/resnest/reference.py's
    structure, the inference BN explicit so its statistics differentiate)."""
    f = torch.nn.functional
    channels = u.shape[1] // radix
    splits = torch.split(u, channels, dim=1)
    gap = sum(splits).mean((2, 3), keepdim=True)
    z = f.conv2d(gap, t["w1"], t["b1"], groups=card)
    col = [t[k][None, :, None, None] for k in ("m", "var", "s", "beta")]
    hidden = torch.relu((z - col[0]) / torch.sqrt(col[1] + 1e-5) * col[2]
                        + col[3])
    att = f.conv2d(hidden, t["w2"], t["b2"], groups=card)
    if radix == 1:
        return torch.sigmoid(att) * u
    b = u.shape[0]
    att = torch.softmax(att.view(b, card, radix, -1).transpose(1, 2), dim=1)
    att = att.reshape(b, -1, 1, 1)
    return sum(a * x for a, x in zip(torch.split(att, channels, dim=1),
                                     splits))


def attention_torch(q, k, v, mask=None, causal=False, scale=None):
    """softmax(scale q kᵀ + mask) v, written out (torch 1.13 has no SDPA)."""
    scale = scale if scale is not None else q.shape[-1] ** -0.5
    s = q @ k.transpose(-1, -2) * scale
    if mask is not None:
        s = s + mask
    if causal:
        allowed = torch.ones(s.shape[-2], s.shape[-1]).tril().bool()
        s = s.masked_fill(~allowed, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


# name: (params {name: shape}, inputs {name: (mlir shape, run shape)},
#        body building %y, y's mlir shape, torch function of the tensors)
CASES = {
    "add_bcast": ({"a": (3, 4), "b": (4,)}, {}, """
      %y = grove.add %a, %b : ({a}, {b}) -> {y}""", (3, 4),
                  lambda t: t["a"] + t["b"]),
    "sub_bcast": ({"a": (2, 3, 4), "b": (3, 1)}, {}, """
      %y = grove.sub %a, %b : ({a}, {b}) -> {y}""", (2, 3, 4),
                  lambda t: t["a"] - t["b"]),
    "mul_dynamic": ({"w": (4,)}, {"x": ((D, 4), (5, 4))}, """
      %y = grove.mul %x, %w : ({x}, {w}) -> {y}""", (D, 4),
                    lambda t: t["x"] * t["w"]),
    "div": ({"a": (2, 3), "b": (2, 3)}, {}, """
      %y = grove.div %a, %b : ({a}, {b}) -> {y}""", (2, 3),
            lambda t: t["a"] / t["b"]),
    "max": ({"a": (2, 3), "b": (3,)}, {}, """
      %y = grove.max %a, %b : ({a}, {b}) -> {y}""", (2, 3),
            lambda t: torch.maximum(t["a"], t["b"])),
    "min": ({"a": (2, 3), "b": (2, 3)}, {}, """
      %y = grove.min %a, %b : ({a}, {b}) -> {y}""", (2, 3),
            lambda t: torch.minimum(t["a"], t["b"])),
    "select": ({"a": (2, 3), "b": (2, 3)}, {"m": ((2, 3), (2, 3))}, """
      %y = grove.select %m, %a, %b : ({m}, {a}, {b}) -> {y}""", (2, 3),
               lambda t: torch.where(t["m"] > 0, t["a"], t["b"])),
    "relu": ({"a": (3, 5)}, {}, """
      %y = grove.relu %a : {y}""", (3, 5), lambda t: torch.relu(t["a"])),
    "sigmoid": ({"a": (3, 5)}, {}, """
      %y = grove.sigmoid %a : {y}""", (3, 5), lambda t: torch.sigmoid(t["a"])),
    "tanh": ({"a": (3, 5)}, {}, """
      %y = grove.tanh %a : {y}""", (3, 5), lambda t: torch.tanh(t["a"])),
    "exp": ({"a": (3, 5)}, {}, """
      %y = grove.exp %a : {y}""", (3, 5), lambda t: torch.exp(t["a"])),
    "log": ({"pos": (3, 5)}, {}, """
      %y = grove.log %pos : {y}""", (3, 5), lambda t: torch.log(t["pos"])),
    "sqrt": ({"pos": (3, 5)}, {}, """
      %y = grove.sqrt %pos : {y}""", (3, 5), lambda t: torch.sqrt(t["pos"])),
    "gelu": ({"a": (3, 5)}, {}, """
      %y = grove.gelu %a : {y}""", (3, 5),
             lambda t: torch.nn.functional.gelu(t["a"])),
    "gelu_tanh": ({"a": (3, 5)}, {}, """
      %y = grove.gelu_tanh %a : {y}""", (3, 5),
                  lambda t: torch.nn.functional.gelu(t["a"], approximate="tanh")),
    "erf": ({"a": (3, 5)}, {}, """
      %y = grove.erf %a : {y}""", (3, 5), lambda t: torch.erf(t["a"])),
    "sin": ({"a": (3, 5)}, {}, """
      %y = grove.sin %a : {y}""", (3, 5), lambda t: torch.sin(t["a"])),
    "cos": ({"a": (3, 5)}, {}, """
      %y = grove.cos %a : {y}""", (3, 5), lambda t: torch.cos(t["a"])),
    # Piecewise constant: a zero gradient (random points are off the jumps).
    "floor_times": ({"a": (3, 5)}, {}, """
      %f = grove.floor %a : {a}
      %y = grove.mul %f, %a : ({a}, {a}) -> {y}""", (3, 5),
                    lambda t: torch.floor(t["a"]) * t["a"]),
    "matmul_nn": ({"a": (3, 4), "b": (4, 5)}, {}, """
      %y = grove.matmul %a, %b : ({a}, {b}) -> {y}""", (3, 5),
                  lambda t: t["a"] @ t["b"]),
    "matmul_nt_dynamic": ({"w": (5, 4)}, {"x": ((D, 4), (6, 4))}, """
      %y = grove.matmul %x, %w {{transpose_rhs}} : ({x}, {w}) -> {y}""",
                          (D, 5), lambda t: t["x"] @ t["w"].T),
    "matmul_tn": ({"a": (4, 3), "b": (4, 5)}, {}, """
      %y = grove.matmul %a, %b {{transpose_lhs}} : ({a}, {b}) -> {y}""",
                  (3, 5), lambda t: t["a"].T @ t["b"]),
    "matmul_tt": ({"a": (4, 3), "b": (5, 4)}, {}, """
      %y = grove.matmul %a, %b {{transpose_lhs, transpose_rhs}}
          : ({a}, {b}) -> {y}""", (3, 5), lambda t: t["a"].T @ t["b"].T),
    "matmul_batch": ({"a": (2, 3, 4), "b": (2, 4, 5)}, {}, """
      %y = grove.matmul %a, %b : ({a}, {b}) -> {y}""", (2, 3, 5),
                     lambda t: t["a"] @ t["b"]),
    "matmul_shared": ({"a": (2, 3, 4), "b": (5, 4)}, {}, """
      %y = grove.matmul %a, %b {{transpose_rhs}} : ({a}, {b}) -> {y}""",
                      (2, 3, 5), lambda t: t["a"] @ t["b"].T),
    "matmul_shared_tl": ({"a": (2, 4, 3), "b": (4, 5)}, {}, """
      %y = grove.matmul %a, %b {{transpose_lhs}} : ({a}, {b}) -> {y}""",
                         (2, 3, 5), lambda t: t["a"].transpose(1, 2) @ t["b"]),
    "softmax": ({"a": (3, 6)}, {}, """
      %y = grove.softmax %a {{axis = 1 : i64}} : {y}""", (3, 6),
                lambda t: torch.softmax(t["a"], 1)),
    "log_softmax": ({"a": (2, 3, 4)}, {}, """
      %y = grove.log_softmax %a {{axis = -1 : i64}} : {y}""", (2, 3, 4),
                    lambda t: torch.log_softmax(t["a"], -1)),
    "reduce_sum_keep": ({"a": (3, 4)}, {}, """
      %y = grove.reduce_sum %a {{axes = array<i64: 0>, keepdims}}
          : {a} -> {y}""", (1, 4), lambda t: t["a"].sum(0, keepdim=True)),
    "reduce_mean": ({"a": (2, 3, 4)}, {}, """
      %y = grove.reduce_mean %a {{axes = array<i64: 1, 2>}} : {a} -> {y}""",
                    (2,), lambda t: t["a"].mean((1, 2))),
    "reduce_mean_dynamic": ({"w": (3,)}, {"x": ((D, D, 3), (4, 2, 3))}, """
      %p = grove.mul %x, %w : ({x}, {w}) -> {x}
      %y = grove.reduce_mean %p {{axes = array<i64: 0, 1>}} : {x} -> {y}""",
                            (3,), lambda t: (t["x"] * t["w"]).mean((0, 1))),
    "reduce_max": ({"a": (3, 5)}, {}, """
      %y = grove.reduce_max %a {{axes = array<i64: 1>}} : {a} -> {y}""",
                   (3,), lambda t: t["a"].amax(1)),
    "reshape": ({"a": (2, 6)}, {}, """
      %y = grove.reshape %a : {a} -> {y}""", (3, 4),
                lambda t: t["a"].reshape(3, 4)),
    "transpose": ({"a": (2, 3, 4)}, {}, """
      %y = grove.transpose %a [2, 0, 1] : {a} -> {y}""", (4, 2, 3),
                  lambda t: t["a"].permute(2, 0, 1)),
    "concat": ({"a": (2, 3), "b": (2, 2)}, {}, """
      %y = grove.concat %a, %b {{axis = 1 : i64}} : ({a}, {b}) -> {y}""",
               (2, 5), lambda t: torch.cat([t["a"], t["b"]], 1)),
    "concat_dynamic": ({"a": (2, 3), "w": (3,)}, {"xin": ((D, 3), (4, 3))},
                       """
      %p = grove.mul %xin, %w : ({xin}, {w}) -> {xin}
      %y = grove.concat %a, %p {{axis = 0 : i64}} : ({a}, {xin}) -> {y}""",
                       (D, 3), lambda t: torch.cat([t["a"], t["xin"] * t["w"]])),
    # Four equal maxima share the cotangent evenly (torch.amax).
    "reduce_max_ties": ({"a": (3, 1)}, {}, """
      %b = grove.broadcast_to %a : {a} -> tensor<3x4x{e}>
      %y = grove.reduce_max %b {{axes = array<i64: 1>}}
          : tensor<3x4x{e}> -> {y}""", (3,),
                        lambda t: t["a"].expand(3, 4).amax(1)),
    "slice": ({"a": (4, 7)}, {}, """
      %y = grove.slice %a [1, 1] [4, 7] [2, 3] : {a} -> {y}""", (2, 2),
              lambda t: t["a"][1:4:2, 1:7:3]),
    "broadcast_to": ({"a": (3, 1)}, {}, """
      %y = grove.broadcast_to %a : {a} -> {y}""", (2, 3, 4),
                     lambda t: t["a"].expand(2, 3, 4)),
    "flatten_dynamic": ({"w": (3, 2, 2)}, {"x": ((D, 3, 2, 2), (2, 3, 2, 2))},
                        """
      %p = grove.mul %x, %w : ({x}, {w}) -> {x}
      %y = grove.flatten %p {{axis = 1 : i64}} : ({x}) -> {y}""", (D, 12),
                        lambda t: (t["x"] * t["w"]).flatten(1)),
    "conv": ({"x": (2, 3, 6, 6), "w": (4, 3, 3, 3), "b": (4,)}, {}, """
      %y = grove.conv2d %x, %w, %b {{groups = 1 : i64,
          padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>,
          dilations = array<i64: 1, 1>}} : ({x}, {w}, {b}) -> {y}""",
             (2, 4, 6, 6), lambda t: torch.nn.functional.conv2d(
                 t["x"], t["w"], t["b"], padding=1)),
    # Asymmetric padding [top, left, bottom, right], groups, stride 2 over
    # 10 padded rows: the last row is read by no window.
    "conv_strided_grouped": ({"x": (2, 4, 8, 8), "w": (6, 2, 3, 3)}, {}, """
      %y = grove.conv2d %x, %w {{groups = 2 : i64,
          padding = array<i64: 1, 0, 1, 1>, strides = array<i64: 2, 2>,
          dilations = array<i64: 1, 1>}} : ({x}, {w}) -> {y}""",
                             (2, 6, 4, 4),
                             lambda t: torch.nn.functional.conv2d(
                                 torch.nn.functional.pad(t["x"], (0, 1, 1, 1)),
                                 t["w"], stride=2, groups=2)),
    "conv_dilated": ({"x": (1, 2, 9, 9), "w": (3, 2, 3, 3)}, {}, """
      %y = grove.conv2d %x, %w {{groups = 1 : i64,
          padding = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 2>,
          dilations = array<i64: 2, 2>}} : ({x}, {w}) -> {y}""", (1, 3, 9, 5),
                     lambda t: torch.nn.functional.conv2d(
                         t["x"], t["w"], stride=(1, 2), padding=2,
                         dilation=2)),
    "conv_dynamic_batch": ({"w": (4, 3, 1, 1), "b": (4,)},
                           {"xin": ((D, 3, 5, 5), (3, 3, 5, 5))}, """
      %y = grove.conv2d %xin, %w, %b {{groups = 1 : i64,
          padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>,
          dilations = array<i64: 1, 1>}} : ({xin}, {w}, {b}) -> {y}""",
                           (D, 4, 5, 5), lambda t: torch.nn.functional.conv2d(
                               t["xin"], t["w"], t["b"])),
    "max_pool": ({"a": (2, 3, 7, 7)}, {}, """
      %y = grove.max_pool2d %a {{kernel = array<i64: 3, 3>,
          strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}}
          : ({a}) -> {y}""", (2, 3, 4, 4),
                 lambda t: torch.nn.functional.max_pool2d(t["a"], 3, 2, 1)),
    # After a relu many windows tie at 0: the first element wins, as in
    # PyTorch. ceil_mode: the last window overhangs.
    "max_pool_ties_ceil": ({"a": (2, 2, 5, 5)}, {}, """
      %ra = grove.relu %a : {a}
      %y = grove.max_pool2d %ra {{kernel = array<i64: 2, 2>,
          strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>,
          ceil_mode}} : ({a}) -> {y}""", (2, 2, 3, 3),
                           lambda t: torch.nn.functional.max_pool2d(
                               torch.relu(t["a"]), 2, 2, ceil_mode=True)),
    "max_pool_dynamic": ({"w": (2, 1, 1)}, {"xin": ((D, 2, 6, 6), (3, 2, 6, 6))},
                         """
      %p = grove.mul %xin, %w : ({xin}, {w}) -> {xin}
      %y = grove.max_pool2d %p {{kernel = array<i64: 2, 2>,
          strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>}}
          : ({xin}) -> {y}""", (D, 2, 3, 3),
                         lambda t: torch.nn.functional.max_pool2d(
                             t["xin"] * t["w"], 2, 2)),
    "avg_pool": ({"a": (2, 3, 6, 6)}, {}, """
      %y = grove.avg_pool2d %a {{kernel = array<i64: 3, 3>,
          strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}}
          : ({a}) -> {y}""", (2, 3, 3, 3),
                 lambda t: torch.nn.functional.avg_pool2d(
                     t["a"], 3, 2, 1, count_include_pad=False)),
    "avg_pool_ceil_include_pad": ({"a": (1, 2, 5, 5)}, {}, """
      %y = grove.avg_pool2d %a {{kernel = array<i64: 2, 2>,
          strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>,
          ceil_mode, count_include_pad}} : ({a}) -> {y}""", (1, 2, 3, 3),
                                  lambda t: torch.nn.functional.avg_pool2d(
                                      t["a"], 2, 2, 1, ceil_mode=True,
                                      count_include_pad=True)),
    # Overlapping windows (the host's stride phases): ceil mode, stride 1,
    # and an avg pool that excludes the padding.
    "max_pool_overlap_ceil": ({"a": (2, 2, 6, 6)}, {}, """
      %y = grove.max_pool2d %a {{kernel = array<i64: 3, 3>,
          strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>,
          ceil_mode}} : ({a}) -> {y}""", (2, 2, 3, 3),
                              lambda t: torch.nn.functional.max_pool2d(
                                  t["a"], 3, 2, 0, ceil_mode=True)),
    "max_pool_stride1": ({"a": (2, 2, 5, 5)}, {}, """
      %y = grove.max_pool2d %a {{kernel = array<i64: 3, 3>,
          strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>}}
          : ({a}) -> {y}""", (2, 2, 5, 5),
                         lambda t: torch.nn.functional.max_pool2d(
                             t["a"], 3, 1, 1)),
    "avg_pool_overlap_ceil": ({"a": (1, 2, 6, 6)}, {}, """
      %y = grove.avg_pool2d %a {{kernel = array<i64: 3, 3>,
          strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>,
          ceil_mode}} : ({a}) -> {y}""", (1, 2, 4, 4),
                              lambda t: torch.nn.functional.avg_pool2d(
                                  t["a"], 3, 2, 1, ceil_mode=True,
                                  count_include_pad=False)),
    "global_avg_pool": ({"a": (2, 3, 4, 5)}, {}, """
      %y = grove.global_avg_pool %a : ({a}) -> {y}""", (2, 3, 1, 1),
                        lambda t: t["a"].mean((2, 3), keepdim=True)),
    "batch_norm": ({"a": (2, 3, 4, 4), "s": (3,), "b": (3,), "m": (3,),
                    "var": (3,)}, {}, """
      %y = grove.batch_norm %a, %s, %b, %m, %var {{epsilon = 1.0e-05 : f64}}
          : ({a}, {s}, {b}, {m}, {var}) -> {y}""", (2, 3, 4, 4),
                   # Inference form, written out: torch's batch_norm does not
                   # differentiate its running statistics.
                   lambda t: (t["a"] - t["m"][:, None, None])
                   / torch.sqrt(t["var"][:, None, None] + 1e-5)
                   * t["s"][:, None, None] + t["b"][:, None, None]),
    # The fused op's backward (grove.split_attention_grad), gradients of U
    # and of every operand, the inner BN's statistics included.
    "split_attention_r2": (sa_params(2, 4, 1, 4, u=(2, 8, 3, 3)), {},
                           sa_body("u", 2, 1), (2, 4, 3, 3),
                           lambda t: sa_torch(t, t["u"], 2, 1)),
    "split_attention_r1_k2": (sa_params(1, 4, 2, 4, u=(2, 4, 2, 2)), {},
                              sa_body("u", 1, 2), (2, 4, 2, 2),
                              lambda t: sa_torch(t, t["u"], 1, 2)),
    "split_attention_r4_k2_dynamic": (
        sa_params(4, 4, 2, 4, us=(16, 1, 1)), {"x": ((D, 16, 2, 3),
                                                     (3, 16, 2, 3))}, """
      %u = grove.mul %x, %us : ({x}, {us}) -> {x}""" + sa_body("u", 4, 2, "x"),
        (D, 4, 2, 3), lambda t: sa_torch(t, t["x"] * t["us"], 4, 2)),
    # The fused backward (grove.layer_norm_grad): input, scale and bias.
    "layer_norm": ({"a": (2, 3, 6), "g": (6,), "b": (6,)}, {}, """
      %y = grove.layer_norm %a, %g, %b {{epsilon = 1.0e-05 : f64}}
          : ({a}, {g}, {b}) -> {y}""", (2, 3, 6),
                   lambda t: torch.nn.functional.layer_norm(
                       t["a"], (6,), t["g"], t["b"], 1e-5)),
    "layer_norm_2d_dynamic": ({"g": (3, 4), "b": (3, 4), "w": (3, 4)},
                              {"x": ((D, 3, 4), (5, 3, 4))}, """
      %xw = grove.mul %x, %w : ({x}, {w}) -> {x}
      %y = grove.layer_norm %xw, %g, %b {{epsilon = 1.0e-03 : f64}}
          : ({x}, {g}, {b}) -> {y}""", (D, 3, 4),
                              lambda t: torch.nn.functional.layer_norm(
                                  t["x"] * t["w"], (3, 4), t["g"], t["b"],
                                  1e-3)),
    # Rows summed per id (group_by_index, gather, segment_sum); the ids
    # repeat (10 ids over 7 rows).
    "embedding": ({"t": (7, 4)}, {"ids": ((2, 5), (2, 5))}, """
      %y = grove.embedding %t, %ids : ({t}, {ids}) -> {y}""", (2, 5, 4),
                  lambda t: torch.nn.functional.embedding(t["ids"], t["t"])),
    "embedding_dynamic": ({"t": (7, 4)}, {"ids": ((D, 3), (4, 3))}, """
      %y = grove.embedding %t, %ids : ({t}, {ids}) -> {y}""", (D, 3, 4),
                          lambda t: torch.nn.functional.embedding(
                              t["ids"], t["t"])),
    # Rows picked by index (masked positions): the cotangent's rows summed
    # per index into the input's 7 rows.
    "gather": ({"a": (7, 3)}, {"ids": ((9,), (9,))}, """
      %y = grove.gather %a, %ids : ({a}, {ids}) -> {y}""", (9, 3),
               lambda t: t["a"][t["ids"]]),
    # Attention over key tiles of 3 (7 keys: a partial last tile): the fused
    # backward (grove.attention_grad) for query, key and value.
    "attention": ({"q": (2, 2, 5, 4), "k": (2, 2, 7, 4), "v": (2, 2, 7, 3)},
                  {}, """
      %y = grove.attention %q, %k, %v {{key_tile = 3 : i64}}
          : ({q}, {k}, {v}) -> {y}""", (2, 2, 5, 3),
                  lambda t: attention_torch(t["q"], t["k"], t["v"])),
    "attention_mask_causal": (
        {"q": (1, 2, 5, 4), "k": (1, 2, 7, 4), "v": (1, 2, 7, 4)},
        {"x": ((1, 1, 1, 7), (1, 1, 1, 7))}, """
      %y = grove.attention %q, %k, %v mask(%x : {x})
          {{key_tile = 2 : i64, causal, scale = 0.3 : f64}}
          : ({q}, {k}, {v}) -> {y}""", (1, 2, 5, 4),
        lambda t: attention_torch(t["q"], t["k"], t["v"], t["x"], True, 0.3)),
    "cross_entropy": ({"a": (4, 5)}, {"labels": ((4,), (4,))}, """
      %y = grove.softmax_cross_entropy %a, %labels {{label_smoothing = 0.1}}
          : ({a}, {labels}) -> {y}""", (),
                      lambda t: torch.nn.functional.cross_entropy(
                          t["a"], t["labels"], label_smoothing=0.1)),
    "mse": ({"a": (3, 4)}, {"x": ((3, 4), (3, 4))}, """
      %y = grove.mse_loss %a, %x : ({a}, {x}) -> {y}""", (),
            lambda t: torch.nn.functional.mse_loss(t["a"], t["x"])),
}


INDICES = ("labels", "ids")


def module(e):
    """One module holding every case's gradient (g_) and loss (f_) entry."""
    lines = [f"module @ad_{e} {{"]
    for name, (params, inputs, body, yshape, _) in CASES.items():
        for p, shape in params.items():
            lines.append(f"  grove.param @{name}.{p} : {ty(shape, e)}")
    for name, (params, inputs, body, yshape, _) in CASES.items():
        types = {p: ty(s, e) for p, s in params.items()}
        for i, (mshape, _) in inputs.items():
            types[i] = ty(mshape, "i32" if i in INDICES else e)
        types["y"] = ty(yshape, e)
        args = [f"%r: {types['y']} {{grove.name = \"r\"}}"] + [
            f"%{i}: {types[i]} {{grove.name = \"{i}\"}}" for i in inputs]
        reads = "".join(f"\n      %{p} = grove.get_param @{name}.{p} : "
                        f"{types[p]}" for p in params)
        loss = f"""{reads}{body.format(e=e, **types)}
      %yr_ = grove.mul %y, %r : ({types['y']}, {types['y']}) -> {types['y']}
      %sum_ = grove.reduce_sum %yr_ {{axes = {axes(len(yshape))}}}
          : {types['y']} -> tensor<{e}>"""
        wrt = ", ".join(f"@{name}.{p}" for p in params)
        grads = ", ".join(types[p] for p in params)
        n = len(params)
        results = ", ".join(f"{types[p]} {{grove.name = \"d{p}\"}}"
                            for p in params)
        g = "%g" if n == 1 else f"%g:{n}"
        rets = ", ".join("%g" if n == 1 else f"%g#{k}" for k in range(n))
        lines.append(f"""  func.func @g_{name}({", ".join(args)})
      -> (tensor<{e}> {{grove.name = "loss"}}, {results}) {{
    %l, {g} = grove.value_and_grad [{wrt}] {{{loss}
      grove.yield %sum_ : tensor<{e}>
    }} : tensor<{e}>, {grads}
    return %l, {rets} : tensor<{e}>, {grads}
  }}
  func.func @f_{name}({", ".join(args)})
      -> (tensor<{e}> {{grove.name = "loss"}}) {{{loss}
    return %sum_ : tensor<{e}>
  }}""")
    lines.append("}")
    return "\n".join(lines)


r = rng()


def draw(name, shape, dtype):
    if name == "pos" or name == "var":
        return r.uniform(0.5, 2.0, shape).astype(dtype)
    if name == "labels":
        return r.integers(0, 5, shape).astype(np.int32)
    if name == "ids":
        return r.integers(0, 7, shape).astype(np.int32)
    return np.asarray(r.standard_normal(shape), dtype=dtype)


checked = 0
PRECISIONS = (("f32", np.float32), ("f64", np.float64))
# Every model is compiled before any runs (on a machine without a GPU the
# CUDA suite only compiles them).
models = {e: Model(module(e), name=f"ad_{e}") for e, _ in PRECISIONS}
for e, dtype in PRECISIONS:
    model = models[e]
    # Every weight is set before the first call (the runtime's rule).
    weights = {name: {p: draw(p, s, dtype) for p, s in case[0].items()}
               for name, case in CASES.items()}
    for name, values in weights.items():
        for p, v in values.items():
            model.set_weight(f"{name}.{p}", v)
    for name, (params, inputs, body, yshape, fn) in CASES.items():
        values = weights[name]
        feeds = {i: draw(i, run, dtype) for i, (_, run) in inputs.items()}
        yrun = tuple(feeds[next(iter(inputs))].shape[0] if d is None else d
                     for d in yshape) if yshape else ()
        if name == "reduce_mean_dynamic":
            yrun = (3,)
        if name == "flatten_dynamic":
            yrun = (feeds["x"].shape[0], 12)
        if name == "concat_dynamic":
            yrun = (2 + feeds["xin"].shape[0], 3)
        if name == "max_pool_dynamic":
            yrun = (feeds["xin"].shape[0], 2, 3, 3)
        if name == "conv_dynamic_batch":
            yrun = (feeds["xin"].shape[0], 4, 5, 5)
        cot = draw("r", yrun, dtype)
        args = [cot] + [feeds[i] for i in inputs]
        out = model.call(f"g_{name}", *args, num_outputs=1 + len(params))
        loss, grads = out[0], out[1:]
        if e == "f32":
            t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
                 for k, v in values.items()}
            for i, v in feeds.items():
                t[i] = torch.tensor(v, dtype=torch.int64 if i in INDICES
                                    else torch.float64)
            ref = (fn(t) * torch.tensor(cot, dtype=torch.float64)).sum()
            expected = torch.autograd.grad(ref, [t[p] for p in params])
            assert_close(loss, ref.detach().numpy(), 1e-4, 1e-5, f"{name} loss")
            for p, got, want in zip(params, grads, expected):
                assert_close(got, want.numpy(), 1e-4, 1e-5,
                             f"{name} d{p} vs PyTorch")
        else:
            h = 1e-6
            for (p, v), got in zip(values.items(), grads):
                fd = np.zeros_like(v)
                for idx in np.ndindex(v.shape):
                    for sign in (1, -1):
                        w = v.copy()
                        w[idx] += sign * h
                        model.set_weight(f"{name}.{p}", w)
                        fd[idx] += sign * model.call(f"f_{name}", *args)[0]
                    fd[idx] /= 2 * h
                model.set_weight(f"{name}.{p}", v)
                assert_close(got, fd, 1e-6, 1e-7,
                             f"{name} d{p} vs finite differences")
        checked += 1

# The host's f32 weight gradients are the runtime's weight-gradient service
# (grovec's conv-weight-grad-library; oneDNN, or loops without it): each
# conv case's gradient entry calls it once, with the case's groups. Without
# the service the checks above would pass on im2col + GEMM.
import json
import os
import tempfile

f32 = models["f32"]
with tempfile.TemporaryDirectory() as tmp:
    for name, groups in (("conv", 1), ("conv_strided_grouped", 2),
                         ("conv_dilated", 1), ("conv_dynamic_batch", 1)):
        params, inputs = CASES[name][0], CASES[name][1]
        feeds = [draw(i, run, np.float32) for i, (_, run) in inputs.items()]
        x = feeds[0] if feeds else None
        batch = x.shape[0] if x is not None else 2
        yrun = {"conv": (2, 4, 6, 6), "conv_strided_grouped": (2, 6, 4, 4),
                "conv_dilated": (1, 3, 9, 5),
                "conv_dynamic_batch": (batch, 4, 5, 5)}[name]
        path = os.path.join(tmp, f"{name}.json")
        f32._check(f32.lib.grove_trace_start(path.encode()))
        try:
            f32.call(f"g_{name}", draw("r", yrun, np.float32), *feeds,
                     num_outputs=1 + len(params))
        finally:
            f32._check(f32.lib.grove_trace_stop())
        with open(path) as f:
            spans = [e["args"] for e in json.load(f)["traceEvents"]
                     if e.get("ph") == "X"
                     and e["name"] == "grove_rt_conv2d_weight_grad_f32"]
        assert len(spans) == 1 and spans[0]["g"] == groups, (name, spans)
print(f"autodiff: {len(CASES)} cases x (f32 vs PyTorch, f64 vs finite "
      f"differences): {checked} checks passed; the f32 convolutions' weight "
      f"gradients ran the runtime's service")
