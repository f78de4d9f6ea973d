# RUN: %python %s
# Transcendental functions in vectorized loops (host, --cpu=native). Where
# the CPU has AVX2, HostCodegen maps exp/log/sin/cos... to glibc's vector
# math library (libmvec, linked with -lm), so the library must reference
# _ZGV* entry points, and tanh and erf are upstream's polynomial
# approximations (grove-approximate-math: libmvec's tanhf and erff have no
# LLVM mapping); the
# results must still match numpy in float64 on fresh random inputs.
# Tolerance: rtol 4e-6, atol 1e-6 (libmvec's float variants are within 4
# ulp, the tanh and erf approximations too here); softmax and sigmoid
# 1e-5 on top. The library has no erff or tanhf call left.
import math
import os
import subprocess

import numpy as np
from grove_testing import Model, assert_close, rng

T = "tensor<?x1000xf32>"
UNARY = {"exp": np.exp, "log": np.log, "tanh": np.tanh,
         "erf": np.vectorize(math.erf),
         "sigmoid": lambda x: 1 / (1 + np.exp(-x))}
funcs = [f"""
  func.func @{op}(%x: {T}) -> {T} {{
    %0 = grove.{op} %x : {T}
    return %0 : {T}
  }}""" for op in UNARY]
funcs.append(f"""
  func.func @softmax(%x: {T}) -> {T} {{
    %0 = grove.softmax %x {{axis = 1 : i64}} : {T}
    return %0 : {T}
  }}""")
model = Model("module {" + "".join(funcs) + "\n}", name="vmath",
              grovec_flags=["--cpu=native"], target="host")

with open("/proc/cpuinfo") as f:
    avx2 = " avx2" in f.read()
symbols = subprocess.run(["nm", "-D", "--undefined-only",
                          os.path.join(model.workdir, "libvmath.so")],
                         capture_output=True, text=True, check=True).stdout
uses_libmvec = "_ZGV" in symbols
if avx2:
    assert uses_libmvec, "AVX2 CPU but no libmvec call in the library:\n" + symbols
for scalar in ("erff", "tanhf"):
    assert scalar not in symbols.split(), f"{scalar} is still called:\n" + symbols
print(f"vector_math: AVX2 {avx2}, libmvec calls {uses_libmvec}")

r = rng()
checked = 0
for n in (1, 5):
    x = r.standard_normal((n, 1000)).astype(np.float32) * 4
    pos = np.abs(x) + np.float32(1e-3)
    for op, ref in UNARY.items():
        arg = pos if op == "log" else x
        (got,) = model.call(op, arg)
        assert_close(got, ref(arg.astype(np.float64)), 4e-6, 1e-6,
                     f"{op} n={n}")
        checked += 1
    (got,) = model.call("softmax", x)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    assert_close(got, e / e.sum(axis=1, keepdims=True), 1e-5, 1e-7,
                 f"softmax n={n}")
    checked += 1
print(f"vector_math: {checked} checks passed")
