# REQUIRES: cuda-gpu
# RUN: %python %s
# The CUDA target against the host target: the same modules compiled both
# ways, the same fresh random inputs, outputs compared per dtype. Tolerances
# (max |gpu - host| <= atol + rtol |host|): f32 elementwise, reductions and
# data movement rtol 1e-5 atol 1e-6 (libdevice vs libm, a few ulp); f32
# matmul atol 1e-4 sqrt(K) (cuBLAS and oneDNN sum in different orders);
# f16 rtol/atol 4 * 2^-10 and bf16 4 * 2^-7 (one rounding of the stored
# result each way), matmuls 8 eps sqrt(K) (the host accumulates in the
# element type, cuBLAS in f32).
# GROVE_VS_TARGET=host compares the host with itself (a self-test of this
# script on machines without a GPU).
import os
import ml_dtypes
import numpy as np
from grove_testing import Model, assert_close, rng

TARGET = os.environ.get("GROVE_VS_TARGET", "cuda")
K = 48
EPS = {"f32": 0.0, "f16": 2.0**-10, "bf16": 2.0**-7}
NP = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


def module(t):
    return f"""
  func.func @chain_{t}(%x: tensor<?x?x{t}>, %b: tensor<?x{t}>) -> tensor<?x?x{t}> {{
    %0 = grove.add %x, %b : (tensor<?x?x{t}>, tensor<?x{t}>) -> tensor<?x?x{t}>
    %1 = grove.gelu %0 : tensor<?x?x{t}>
    %2 = grove.sigmoid %1 : tensor<?x?x{t}>
    %3 = grove.mul %2, %x : (tensor<?x?x{t}>, tensor<?x?x{t}>) -> tensor<?x?x{t}>
    return %3 : tensor<?x?x{t}>
  }}
  func.func @softmax_{t}(%x: tensor<?x?x{t}>) -> tensor<?x?x{t}> {{
    %0 = grove.softmax %x {{axis = 1 : i64}} : tensor<?x?x{t}>
    return %0 : tensor<?x?x{t}>
  }}
  func.func @reduce_{t}(%x: tensor<?x?x{t}>) -> (tensor<?x{t}>, tensor<?x{t}>, tensor<{t}>) {{
    %0 = grove.reduce_max %x {{axes = array<i64: 1>}} : tensor<?x?x{t}> -> tensor<?x{t}>
    %1 = grove.reduce_mean %x {{axes = array<i64: 0>}} : tensor<?x?x{t}> -> tensor<?x{t}>
    %2 = grove.reduce_sum %x {{axes = array<i64: 0, 1>}} : tensor<?x?x{t}> -> tensor<{t}>
    return %0, %1, %2 : tensor<?x{t}>, tensor<?x{t}>, tensor<{t}>
  }}
  func.func @move_{t}(%x: tensor<?x?x{t}>) -> (tensor<?x?x{t}>, tensor<?x?x{t}>) {{
    %0 = grove.transpose %x [1, 0] : tensor<?x?x{t}> -> tensor<?x?x{t}>
    %1 = grove.concat %x, %x {{axis = 1 : i64}} : (tensor<?x?x{t}>, tensor<?x?x{t}>) -> tensor<?x?x{t}>
    return %0, %1 : tensor<?x?x{t}>, tensor<?x?x{t}>
  }}
  func.func @mm_{t}(%x: tensor<?x{K}x{t}>, %w: tensor<24x{K}x{t}>) -> tensor<?x24x{t}> {{
    %0 = grove.matmul %x, %w {{transpose_rhs}} : (tensor<?x{K}x{t}>, tensor<24x{K}x{t}>) -> tensor<?x24x{t}>
    return %0 : tensor<?x24x{t}>
  }}
  func.func @bmm_{t}(%x: tensor<?x7x{K}x{t}>, %w: tensor<{K}x5x{t}>) -> tensor<?x7x5x{t}> {{
    %0 = grove.matmul %x, %w : (tensor<?x7x{K}x{t}>, tensor<{K}x5x{t}>) -> tensor<?x7x5x{t}>
    return %0 : tensor<?x7x5x{t}>
  }}"""


source = "module {" + "".join(module(t) for t in NP) + "\n}"

# The cases: (entry, inputs, number of outputs, is a matmul).
r = rng()
cases = []
for t, dtype in NP.items():
    def arr(*shape):
        return r.standard_normal(shape).astype(np.float32).astype(dtype)
    for n in (1, 3, 129):
        x, b = arr(n, 37), arr(37)
        cases += [(f"chain_{t}", [x, b], 1, False),
                  (f"softmax_{t}", [x], 1, False),
                  (f"reduce_{t}", [x], 3, False),
                  (f"move_{t}", [x], 2, False),
                  (f"mm_{t}", [arr(n, K), arr(24, K)], 1, True),
                  (f"bmm_{t}", [arr(n, 7, K), arr(K, 5)], 1, True)]

# Host results: computed here, or - on a GPU machine without grovec
# (scripts/gpu-check.sh) - by the preparing machine on the same inputs.
bundle = os.environ.get("GROVE_TEST_BUNDLE")
recorded = bundle and os.path.join(bundle, "data", "vs_host.npz")


def storable(a):
    """npz holds no bf16: keep its bits (numpy versions differ there)."""
    return a.view(np.uint16) if a.dtype == NP["bf16"] else a


def restored(a, dtype):
    return a.view(dtype) if dtype == NP["bf16"] else a


if bundle and os.environ.get("GROVE_TEST_COMPILE_ONLY") != "1":
    with np.load(recorded) as f:
        for c, (entry, inputs, outputs, matmul) in enumerate(cases):
            dtype = NP[entry.rsplit("_", 1)[1]]
            cases[c] = (entry, [restored(f[f"in{c}_{i}"], dtype)
                                for i in range(len(inputs))], outputs, matmul)
        want = [[restored(f[f"out{c}_{k}"], NP[e.rsplit("_", 1)[1]])
                 for k in range(n)] for c, (e, _, n, _) in enumerate(cases)]
    print("vs_host: inputs and host results recorded by the preparing machine")
else:
    host = Model(source, name="vsh", target="host")
    want = [host.call(e, *ins, num_outputs=k) for e, ins, k, _ in cases]
    if bundle:
        os.makedirs(os.path.dirname(recorded), exist_ok=True)
        arrays = {}
        for c, ((_, inputs, _, _), outs) in enumerate(zip(cases, want)):
            arrays.update({f"in{c}_{i}": storable(a)
                           for i, a in enumerate(inputs)})
            arrays.update({f"out{c}_{k}": storable(a)
                           for k, a in enumerate(outs)})
        np.savez(recorded, **arrays)
dev = Model(source, name="vsd", target=TARGET)

compared = 0
for (entry, inputs, outputs, matmul), expected in zip(cases, want):
    eps = EPS[entry.rsplit("_", 1)[1]]
    got = dev.call(entry, *inputs, num_outputs=outputs)
    for k, (g, w) in enumerate(zip(got, expected)):
        assert g.dtype == w.dtype, f"{entry}: dtype {g.dtype} != {w.dtype}"
        if matmul:
            rtol = 4 * eps
            atol = (8 * eps if eps else 1e-4) * np.sqrt(K)
        else:
            rtol, atol = (4 * eps, 4 * eps) if eps else (1e-5, 1e-6)
        err = assert_close(g.astype(np.float32), w.astype(np.float32), rtol,
                           atol, f"{entry} output {k} on {TARGET}")
        compared += 1
        print(f"{entry:12s} output {k} shape {g.shape}: max |diff| {err:.3g}")
print(f"vs_host: {compared} outputs of {TARGET} equal to the host's within "
      "tolerance")
