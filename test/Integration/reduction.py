# RUN: %python %s
# reduce_sum/mean/max (axes, negative axes, keepdims), softmax and
# log_softmax against numpy / PyTorch on random inputs with dynamic dims.
# Tolerance: rtol 1e-5, atol 1e-5 (f32 summation order).
import numpy as np
import torch
from grove_testing import Model, assert_close, rng

funcs = """
  func.func @sum_1(%x: tensor<?x8x6xf32>) -> tensor<?x6xf32> {
    %0 = grove.reduce_sum %x {axes = array<i64: 1>} : tensor<?x8x6xf32> -> tensor<?x6xf32>
    return %0 : tensor<?x6xf32>
  }
  func.func @mean_keep(%x: tensor<?x8x6xf32>) -> tensor<?x1x1xf32> {
    %0 = grove.reduce_mean %x {axes = array<i64: -1, 1>, keepdims} : tensor<?x8x6xf32> -> tensor<?x1x1xf32>
    return %0 : tensor<?x1x1xf32>
  }
  func.func @mean_dyn(%x: tensor<4x?xf32>) -> tensor<4xf32> {
    %0 = grove.reduce_mean %x {axes = array<i64: 1>} : tensor<4x?xf32> -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func @max_all(%x: tensor<?x8xf32>) -> tensor<f32> {
    %0 = grove.reduce_max %x {axes = array<i64: 0, 1>} : tensor<?x8xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @max_keep0(%x: tensor<?x8xf32>) -> tensor<1x8xf32> {
    %0 = grove.reduce_max %x {axes = array<i64: 0>, keepdims} : tensor<?x8xf32> -> tensor<1x8xf32>
    return %0 : tensor<1x8xf32>
  }
  func.func @softmax_last(%x: tensor<?x10xf32>) -> tensor<?x10xf32> {
    %0 = grove.softmax %x {axis = -1 : i64} : tensor<?x10xf32>
    return %0 : tensor<?x10xf32>
  }
  func.func @softmax_0(%x: tensor<?x3x5xf32>) -> tensor<?x3x5xf32> {
    %0 = grove.softmax %x {axis = 0 : i64} : tensor<?x3x5xf32>
    return %0 : tensor<?x3x5xf32>
  }
  func.func @log_softmax_1(%x: tensor<?x3x5xf32>) -> tensor<?x3x5xf32> {
    %0 = grove.log_softmax %x {axis = 1 : i64} : tensor<?x3x5xf32>
    return %0 : tensor<?x3x5xf32>
  }
"""
model = Model("module {" + funcs + "}", name="red")
r = rng()
T = torch.from_numpy
checked = 0
for n in (1, 3, 40):
    x = r.standard_normal((n, 8, 6)).astype(np.float32)
    for name, ref in (("sum_1", x.sum(1)),
                      ("mean_keep", x.mean(axis=(1, 2), keepdims=True))):
        (got,) = model.call(name, x)
        assert_close(got, ref, 1e-5, 1e-5, f"{name} n={n}")
    y = r.standard_normal((4, n)).astype(np.float32)
    (got,) = model.call("mean_dyn", y)
    assert_close(got, y.mean(1), 1e-5, 1e-5, "mean_dyn")
    z = r.standard_normal((n, 8)).astype(np.float32)
    (got,) = model.call("max_all", z)
    assert_close(got, np.array(z.max(), np.float32), 0, 0, "max_all")
    (got,) = model.call("max_keep0", z)
    assert_close(got, z.max(0, keepdims=True), 0, 0, "max_keep0")
    s = (r.standard_normal((n, 10)) * 20).astype(np.float32)  # large logits
    (got,) = model.call("softmax_last", s)
    assert_close(got, torch.softmax(T(s), -1).numpy(), 1e-5, 1e-6, "softmax")
    u = r.standard_normal((n, 3, 5)).astype(np.float32)
    (got,) = model.call("softmax_0", u)
    assert_close(got, torch.softmax(T(u), 0).numpy(), 1e-5, 1e-6, "softmax_0")
    (got,) = model.call("log_softmax_1", u)
    assert_close(got, torch.log_softmax(T(u), 1).numpy(), 1e-5, 1e-5,
                 "log_softmax_1")
    checked += 8
print(f"reduction: {checked} comparisons passed")
