# RUN: %python %s
# f16 and bf16 models: an elementwise chain, softmax, a reduction, a
# global average pool over 56x56 (accumulated in f32: a bf16 running sum of
# 3136 terms stalls far below the true value) and matmuls (plain, transposed
# rhs, batched, and one of 6 MFLOP that the host GEMM threads) against numpy
# in f32 on the same low-precision inputs, fresh random inputs, dynamic batch
# sizes. Run on the GPU too by test/Integration/CUDA (GROVE_TEST_TARGET=cuda).
# Tolerances, with eps = 2^-10 (f16) or 2^-7 (bf16), one rounding per
# stored result: elementwise/softmax/reduction rtol 4 eps, atol eps; matmul
# (K = 512 or 256) rtol eps plus atol eps/8: both targets add exact products
# in f32 and round once (cuBLAS natively; on the host bf16 matmuls are calls
# to the runtime's bf16 GEMM, oneDNN's with f32 accumulation, checked below,
# and f16 ones loops whose sum grove-widen-loop-accumulators carries in f32,
# arith-emulate-unsupported-floats marking the product's narrowing
# `contract`, so extf(truncf(p)) folds to p), which leaves that rounding (at
# most eps/2 of the value; 0.62 eps measured near zero) and the f32
# summation order. A running sum rounded at every step, as the host did
# before, is off by more than 10 eps sqrt(K).
import os

import ml_dtypes
import numpy as np
from grove_testing import Model, assert_close, rng

TYPES = {"f16": (np.float16, 2.0**-10), "bf16": (ml_dtypes.bfloat16, 2.0**-7)}
K = 512

funcs = []
for t in TYPES:
    funcs.append(f"""
  func.func @chain_{t}(%x: tensor<?x16x{t}>, %b: tensor<16x{t}>) -> tensor<?x16x{t}> {{
    %0 = grove.add %x, %b : (tensor<?x16x{t}>, tensor<16x{t}>) -> tensor<?x16x{t}>
    %1 = grove.tanh %0 : tensor<?x16x{t}>
    %2 = grove.mul %1, %x : (tensor<?x16x{t}>, tensor<?x16x{t}>) -> tensor<?x16x{t}>
    %3 = grove.relu %2 : tensor<?x16x{t}>
    return %3 : tensor<?x16x{t}>
  }}
  func.func @softmax_{t}(%x: tensor<?x16x{t}>) -> tensor<?x16x{t}> {{
    %0 = grove.softmax %x {{axis = 1 : i64}} : tensor<?x16x{t}>
    return %0 : tensor<?x16x{t}>
  }}
  func.func @sum_{t}(%x: tensor<?x16x{t}>) -> tensor<?x{t}> {{
    %0 = grove.reduce_sum %x {{axes = array<i64: 1>}} : tensor<?x16x{t}> -> tensor<?x{t}>
    return %0 : tensor<?x{t}>
  }}
  func.func @gap_{t}(%x: tensor<?x3x56x56x{t}>) -> tensor<?x3x1x1x{t}> {{
    %0 = grove.global_avg_pool %x : (tensor<?x3x56x56x{t}>) -> tensor<?x3x1x1x{t}>
    return %0 : tensor<?x3x1x1x{t}>
  }}
  func.func @mm_{t}(%x: tensor<?x{K}x{t}>, %w: tensor<{K}x8x{t}>) -> tensor<?x8x{t}> {{
    %0 = grove.matmul %x, %w : (tensor<?x{K}x{t}>, tensor<{K}x8x{t}>) -> tensor<?x8x{t}>
    return %0 : tensor<?x8x{t}>
  }}
  func.func @mmt_{t}(%x: tensor<?x{K}x{t}>, %w: tensor<8x{K}x{t}>) -> tensor<?x8x{t}> {{
    %0 = grove.matmul %x, %w {{transpose_rhs}} : (tensor<?x{K}x{t}>, tensor<8x{K}x{t}>) -> tensor<?x8x{t}>
    return %0 : tensor<?x8x{t}>
  }}
  func.func @bmm_{t}(%x: tensor<?x5x{K}x{t}>, %w: tensor<?x{K}x3x{t}>) -> tensor<?x5x3x{t}> {{
    %0 = grove.matmul %x, %w : (tensor<?x5x{K}x{t}>, tensor<?x{K}x3x{t}>) -> tensor<?x5x3x{t}>
    return %0 : tensor<?x5x3x{t}>
  }}
  func.func @mmbig_{t}(%x: tensor<?x256x{t}>, %w: tensor<96x256x{t}>) -> tensor<?x96x{t}> {{
    %0 = grove.matmul %x, %w {{transpose_rhs}} : (tensor<?x256x{t}>, tensor<96x256x{t}>) -> tensor<?x96x{t}>
    return %0 : tensor<?x96x{t}>
  }}""")
model = Model("module {" + "".join(funcs) + "\n}", name="lowp")

if model.target == "host":
    # The host's bf16 matmuls are runtime calls (f16 has no host GEMM).
    with open(os.path.join(model.workdir, "liblowp.so"), "rb") as f:
        code = f.read()
    for service in (b"grove_rt_matmul_bf16", b"grove_rt_batch_matmul_bf16"):
        assert service in code, f"no call to {service.decode()}"

r = rng()
checked = 0
for t, (dtype, eps) in TYPES.items():
    def arr(*shape):
        return r.standard_normal(shape).astype(np.float32).astype(dtype)

    def f32(a):
        return np.asarray(a).astype(np.float32)

    mm_tol = dict(rtol=eps, atol=eps / 8)
    for n in (1, 7, 40):
        x, b = arr(n, 16), arr(16)
        (got,) = model.call(f"chain_{t}", x, b)
        ref = np.maximum(np.tanh(f32(x) + f32(b)) * f32(x), 0)
        assert_close(f32(got), ref, 4 * eps, eps, f"chain_{t} n={n}")
        (got,) = model.call(f"softmax_{t}", x)
        e = np.exp(f32(x) - f32(x).max(axis=1, keepdims=True))
        assert_close(f32(got), e / e.sum(axis=1, keepdims=True), 4 * eps,
                     eps, f"softmax_{t} n={n}")
        (got,) = model.call(f"sum_{t}", x)
        assert_close(f32(got), f32(x).sum(axis=1), 4 * eps, 4 * eps * 4,
                     f"sum_{t} n={n}")
        # Mean 1 so that a stalled sum shows; one rounding of the result.
        img = (1 + arr(n, 3, 56, 56)).astype(dtype)
        (got,) = model.call(f"gap_{t}", img)
        assert_close(f32(got), f32(img).mean(axis=(2, 3), keepdims=True),
                     2 * eps, eps, f"gap_{t} n={n}")
        xk, w, wt = arr(n, K), arr(K, 8), arr(8, K)
        (got,) = model.call(f"mm_{t}", xk, w)
        assert_close(f32(got), f32(xk) @ f32(w), what=f"mm_{t} n={n}",
                     **mm_tol)
        (got,) = model.call(f"mmt_{t}", xk, wt)
        assert_close(f32(got), f32(xk) @ f32(wt).T, what=f"mmt_{t} n={n}",
                     **mm_tol)
        bx, bw = arr(n, 5, K), arr(n, K, 3)
        (got,) = model.call(f"bmm_{t}", bx, bw)
        assert_close(f32(got), f32(bx) @ f32(bw), what=f"bmm_{t} n={n}",
                     **mm_tol)
        # 2 * 130 * 96 * 256 = 6.4 MFLOP: threaded (over 4 MFLOP).
        xb, wb = arr(3 * n + 10, 256), arr(96, 256)
        (got,) = model.call(f"mmbig_{t}", xb, wb)
        assert_close(f32(got), f32(xb) @ f32(wb).T, what=f"mmbig_{t} n={n}",
                     **mm_tol)
        checked += 8
print(f"low_precision: {checked} checks passed on {model.target}")
