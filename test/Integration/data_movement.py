# RUN: %python %s
# constant, reshape, transpose, concat, slice and broadcast_to against numpy
# (exact: these ops move data without arithmetic), including results that
# alias an input (the runtime must hand back an owned copy).
import numpy as np
from grove_testing import Model, assert_close, rng

funcs = """
  func.func @reshape(%x: tensor<?x64xf32>) -> tensor<?x8x8xf32> {
    %0 = grove.reshape %x : tensor<?x64xf32> -> tensor<?x8x8xf32>
    return %0 : tensor<?x8x8xf32>
  }
  func.func @flatten(%x: tensor<?x3x4xf32>) -> tensor<?xf32> {
    %0 = grove.reshape %x : tensor<?x3x4xf32> -> tensor<?xf32>
    return %0 : tensor<?xf32>
  }
  func.func @regroup(%x: tensor<6x4xf32>) -> tensor<3x8xf32> {
    %0 = grove.reshape %x : tensor<6x4xf32> -> tensor<3x8xf32>
    return %0 : tensor<3x8xf32>
  }
  func.func @transpose(%x: tensor<?x3x4xf32>) -> tensor<4x?x3xf32> {
    %0 = grove.transpose %x [2, 0, 1] : tensor<?x3x4xf32> -> tensor<4x?x3xf32>
    return %0 : tensor<4x?x3xf32>
  }
  func.func @concat(%a: tensor<?x3xf32>, %b: tensor<?x5xf32>, %c: tensor<?x1xf32>) -> tensor<?x9xf32> {
    %0 = grove.concat %a, %b, %c {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x5xf32>, tensor<?x1xf32>) -> tensor<?x9xf32>
    return %0 : tensor<?x9xf32>
  }
  func.func @concat0(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
    %0 = grove.concat %a, %b {axis = 0 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
    return %0 : tensor<?x3xf32>
  }
  func.func @slice(%x: tensor<?x8xf32>) -> tensor<?x2xf32> {
    %0 = grove.slice %x [1, 2] [-1, 6] [1, 2] : tensor<?x8xf32> -> tensor<?x2xf32>
    return %0 : tensor<?x2xf32>
  }
  func.func @slice_strided(%x: tensor<?x8xf32>) -> tensor<?x3xf32> {
    %0 = grove.slice %x [0, 1] [-1, 8] [2, 3] : tensor<?x8xf32> -> tensor<?x3xf32>
    return %0 : tensor<?x3xf32>
  }
  func.func @bcast(%x: tensor<1x10xf32>, %like: tensor<?x10xf32>) -> tensor<?x10xf32> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %like, %c0 : tensor<?x10xf32>
    %0 = grove.broadcast_to %x (%n) : tensor<1x10xf32> -> tensor<?x10xf32>
    return %0 : tensor<?x10xf32>
  }
  func.func @bcast_rank(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
    %0 = grove.broadcast_to %x : tensor<3x1xf32> -> tensor<2x3x4xf32>
    return %0 : tensor<2x3x4xf32>
  }
  func.func @identity(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    return %x : tensor<?x4xf32>
  }
  func.func @rows4(%x: tensor<?xf32>) -> tensor<?x4xf32> {
    %0 = grove.reshape %x : tensor<?xf32> -> tensor<?x4xf32>
    return %0 : tensor<?x4xf32>
  }
  func.func @bcast_dyn(%x: tensor<?xf32>, %like: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = tensor.dim %like, %c0 : tensor<?x?xf32>
    %m = tensor.dim %like, %c1 : tensor<?x?xf32>
    %0 = grove.broadcast_to %x (%n, %m) : tensor<?xf32> -> tensor<?x?xf32>
    return %0 : tensor<?x?xf32>
  }
  func.func @static_rows(%x: tensor<12xf32>) -> tensor<?x4xf32> {
    %0 = grove.reshape %x : tensor<12xf32> -> tensor<?x4xf32>
    return %0 : tensor<?x4xf32>
  }
  func.func @empty_slice(%y: tensor<10xf32>) -> tensor<0xf32> {
    %0 = grove.slice %y [10] [10] [1] : tensor<10xf32> -> tensor<0xf32>
    return %0 : tensor<0xf32>
  }
  func.func @concat_empty(%x: tensor<?x3xf32>, %y: tensor<?x0xf32>) -> tensor<?x3xf32> {
    %0 = grove.concat %x, %y {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x0xf32>) -> tensor<?x3xf32>
    return %0 : tensor<?x3xf32>
  }
  func.func @const() -> tensor<2x3xf32> {
    %0 = grove.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
  func.func @two(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<4x?xf32>) {
    %0 = grove.relu %x : tensor<?x4xf32>
    %1 = grove.transpose %x [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
    return %0, %1 : tensor<?x4xf32>, tensor<4x?xf32>
  }
"""
model = Model("module {" + funcs + "}", name="dm")
r = rng()
checked = 0
def check(name, ref, *args, outputs=1):
    global checked
    got = model.call(name, *args, num_outputs=outputs)
    refs = ref if isinstance(ref, tuple) else (ref,)
    for g, e in zip(got, refs):
        assert_close(g, e, 0, 0, name)
    checked += 1

for n in (1, 2, 7):
    x = r.standard_normal((n, 64)).astype(np.float32)
    check("reshape", x.reshape(n, 8, 8), x)
    y = r.standard_normal((n, 3, 4)).astype(np.float32)
    check("flatten", y.reshape(-1), y)
    check("transpose", y.transpose(2, 0, 1), y)
    a, b, c = (r.standard_normal((n, k)).astype(np.float32) for k in (3, 5, 1))
    check("concat", np.concatenate([a, b, c], 1), a, b, c)
    a2 = r.standard_normal((n + 2, 3)).astype(np.float32)
    check("concat0", np.concatenate([a, a2], 0), a, a2)
    s = r.standard_normal((n + 3, 8)).astype(np.float32)
    check("slice", s[1:, 2:6:2], s)
    check("slice_strided", s[0::2, 1:8:3], s)
    row = r.standard_normal((1, 10)).astype(np.float32)
    like = np.zeros((n, 10), np.float32)
    check("bcast", np.broadcast_to(row, (n, 10)), row, like)
    z = r.standard_normal((n, 4)).astype(np.float32)
    check("identity", z, z)
    check("two", (np.maximum(z, 0), z.T), z, outputs=2)
g = r.standard_normal((6, 4)).astype(np.float32)
check("regroup", g.reshape(3, 8), g)
col = r.standard_normal((3, 1)).astype(np.float32)
check("bcast_rank", np.broadcast_to(col, (2, 3, 4)), col)
check("const", np.array([[1, 2, 3], [4, 5, 6]], np.float32))
# Two calls of a constant-returning function must not share a buffer.
(c1,) = model.call("const")
(c2,) = model.call("const")
assert (c1 == c2).all()
print(f"data movement: {checked} comparisons passed")

from grove_testing import GroveError
try:
    model.call("concat", np.ones((2, 3), np.float32), np.ones((3, 5), np.float32),
               np.ones((2, 1), np.float32))
    raise AssertionError("concat of mismatched inputs accepted")
except GroveError as e:
    assert e.status == 1 and ("input 1 'arg1': dimension 0 is 3 but must "
                              "equal dimension 0 of input 0 'arg0' (2)"
                              in e.message), e.message
    print("mismatch:", e.message)

v = r.standard_normal(12).astype(np.float32)
check("rows4", v.reshape(3, 4), v)
check("bcast_dyn", np.broadcast_to(v, (2, 12)), v, np.zeros((2, 12), np.float32))
for name, args, what in (
        ("rows4", (np.ones(6, np.float32),), "grove.reshape"),
        ("bcast_dyn", (np.ones(5, np.float32), np.zeros((2, 7), np.float32)),
         "grove.broadcast_to")):
    try:
        model.call(name, *args)
        raise AssertionError(f"{name}: bad sizes accepted")
    except GroveError as e:
        assert e.status == 1 and what in e.message, e.message
        print("mismatch:", e.message)

# Zero-size and static-count edge cases.
check("static_rows", v.reshape(3, 4), v)
check("empty_slice", np.zeros(0, np.float32), np.arange(10, dtype=np.float32))
e = r.standard_normal((4, 3)).astype(np.float32)
check("concat_empty", e, e, np.zeros((4, 0), np.float32))
print(f"data movement edge cases passed")
