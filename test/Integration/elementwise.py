# RUN: %python %s
# Elementwise grove ops (binary with numpy broadcasting, unary activations)
# against numpy / PyTorch on fresh random inputs with dynamic dimensions.
# Tolerance: rtol 1e-5, atol 1e-6 (f32; exp/log/tanh/erf via libm or LLVM
# intrinsics, within a few ulp of the references).
import numpy as np
import torch
from grove_testing import Model, assert_close, rng

BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
          "div": np.divide, "max": np.maximum, "min": np.minimum}
UNARY = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: torch.sigmoid(torch.from_numpy(x)).numpy(),
    "tanh": np.tanh, "exp": np.exp,
    "log": np.log, "sqrt": np.sqrt,
    "gelu": lambda x: torch.nn.functional.gelu(torch.from_numpy(x)).numpy(),
}

funcs = []
for op in BINARY:
    funcs.append(f"""
  func.func @{op}(%a: tensor<?x1x5xf32>, %b: tensor<3x1xf32>) -> tensor<?x3x5xf32> {{
    %0 = grove.{op} %a, %b : (tensor<?x1x5xf32>, tensor<3x1xf32>) -> tensor<?x3x5xf32>
    return %0 : tensor<?x3x5xf32>
  }}
  func.func @{op}_same(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {{
    %0 = grove.{op} %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    return %0 : tensor<?x?xf32>
  }}""")
for op in UNARY:
    funcs.append(f"""
  func.func @{op}(%a: tensor<?x7xf32>) -> tensor<?x7xf32> {{
    %0 = grove.{op} %a : tensor<?x7xf32>
    return %0 : tensor<?x7xf32>
  }}""")
# The two sizes of one square input: checked by the generated code.
funcs.append("""
  func.func @add_transposed(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %t = grove.transpose %a [1, 0] : tensor<?x?xf32> -> tensor<?x?xf32>
    %0 = grove.add %a, %t : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    return %0 : tensor<?x?xf32>
  }""")
# A fused chain: bias add, gelu, scale - one loop nest after fusion.
funcs.append("""
  func.func @chain(%x: tensor<?x16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
    %c = grove.constant dense<0.5> : tensor<16xf32>
    %0 = grove.add %x, %b : (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %1 = grove.gelu %0 : tensor<?x16xf32>
    %2 = grove.mul %1, %c : (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    return %2 : tensor<?x16xf32>
  }""")
model = Model("module {" + "".join(funcs) + "\n}", name="elt")

r = rng()
checked = 0
for n in (1, 4, 33):
    a = r.standard_normal((n, 1, 5)).astype(np.float32)
    b = r.standard_normal((3, 1)).astype(np.float32)
    for op, ref in BINARY.items():
        if op == "div":
            b_ = np.where(np.abs(b) < 0.1, 0.5, b).astype(np.float32)
        else:
            b_ = b
        (got,) = model.call(op, a, b_)
        assert_close(got, ref(a, b_), 1e-5, 1e-6, f"{op} n={n}")
        x = r.standard_normal((n, 6)).astype(np.float32)
        y = r.standard_normal((n, 6)).astype(np.float32) + 3.0
        (got,) = model.call(op + "_same", x, y)
        assert_close(got, ref(x, y), 1e-5, 1e-6, f"{op}_same n={n}")
        checked += 2
    x = r.standard_normal((n, 7)).astype(np.float32) * 3
    for op, ref in UNARY.items():
        inp = np.abs(x) + 1e-3 if op in ("log", "sqrt") else x
        (got,) = model.call(op, inp)
        assert_close(got, ref(inp), 1e-5, 1e-6, f"{op} n={n}")
        checked += 1
    x = r.standard_normal((n, 16)).astype(np.float32)
    bias = r.standard_normal(16).astype(np.float32)
    (got,) = model.call("chain", x, bias)
    ref = torch.nn.functional.gelu(torch.from_numpy(x + bias)).numpy() * 0.5
    assert_close(got, ref, 1e-5, 1e-6, f"chain n={n}")
    checked += 1

# NaN propagates through relu and max, as in PyTorch.
(got,) = model.call("relu", np.array([[np.nan] * 7], np.float32))
assert np.isnan(got).all(), got
print(f"elementwise: {checked} comparisons passed")

# Dynamic sizes the types cannot relate are checked at run time: a mismatch
# is an INVALID_ARGUMENT error, never an out-of-bounds read. Sizes of two
# inputs are the entry's precondition, checked by the runtime before the
# code runs (naming both inputs); others by the code (naming the op).
from grove_testing import GroveError
try:
    model.call("add_same", np.ones((3, 6), np.float32),
               np.ones((4, 6), np.float32))
    raise AssertionError("mismatched dynamic sizes were accepted")
except GroveError as e:
    assert e.status == 1, e
    assert ("input 1 'arg1': dimension 0 is 4 but must equal dimension 0 of "
            "input 0 'arg0' (3)") in e.message, e.message
    print("mismatch:", e.message)
try:
    model.call("add_transposed", np.ones((3, 4), np.float32))
    raise AssertionError("a non-square input was accepted")
except GroveError as e:
    assert e.status == 1, e
    assert "dynamic sizes must agree" in e.message and "grove.add" in e.message, e.message
    print("mismatch:", e.message)
(got,) = model.call("add_transposed", np.arange(4, dtype=np.float32).reshape(2, 2))
assert (got == np.array([[0, 3], [3, 6]], np.float32)).all(), got
# The context stays usable after the failed call.
(got,) = model.call("add_same", np.ones((2, 2), np.float32),
                    np.ones((2, 2), np.float32))
assert (got == 2).all()
