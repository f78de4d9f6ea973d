# RUN: %python %s
# A call that fails writes no state, whatever fails (docs/abi.md, "State").
# One model per kind of failure the generated code reports itself, after
# the runtime's checks of the inputs have passed: two dynamic sizes the
# signature cannot relate that differ (grove.agree_dims), a size below its
# least (a convolution's window), and the case, a Tree-LSTM train
# step given a label per tree too many. After each failure every param
# (weights, optimizer state, counters) is bit-identical to before, and the
# same entry on good inputs then changes the state (so the comparison can
# fail) as numpy says it should.
import json
import os
import re
import struct

import numpy as np
import torch
from grove_testing import GroveError, Model, assert_close, rng

GROVE_INVALID_ARGUMENT = 1


def snapshot(model, names):
    return {n: model.get_weight(n) for n in names}


def assert_unchanged(model, before, what):
    for name, value in before.items():
        now = model.get_weight(name)
        assert now.tobytes() == value.tobytes(), \
            f"{what}: param '{name}' changed by a failed call"


def expect_failure(model, entry, args, fragment, what):
    try:
        model.call(entry, *args)
    except GroveError as e:
        assert e.status == GROVE_INVALID_ARGUMENT, (what, e.status, e.message)
        assert fragment in e.message, (what, e.message)
        return
    raise AssertionError(f"{what}: the call succeeded")


r = rng()
f32 = np.float32

# 1. Sizes only the code relates: rows of concat(x, x) against y's.
source = """
module @fail {
  grove.param @acc : tensor<4xf32> = 0.0 : f32
  grove.param @count : tensor<f32> = 0.0 : f32
  grove.param @w : tensor<3x2x3x3xf32>
  func.func @pairs(%x: tensor<?x4xf32> {grove.name = "x"},
                   %y: tensor<?x4xf32> {grove.name = "y"})
      -> (tensor<?x4xf32> {grove.name = "s"}) {
    %xx = grove.concat %x, %x {axis = 0 : i64}
        : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %s = grove.add %xx, %y
        : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %col = grove.reduce_sum %s {axes = array<i64: 0>}
        : tensor<?x4xf32> -> tensor<4xf32>
    %a = grove.get_param @acc : tensor<4xf32>
    %a1 = grove.add %a, %col : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    grove.set_param @acc = %a1 : tensor<4xf32>
    %c = grove.get_param @count : tensor<f32>
    %one = grove.constant dense<1.0> : tensor<f32>
    %c1 = grove.add %c, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
    grove.set_param @count = %c1 : tensor<f32>
    return %s : tensor<?x4xf32>
  }
  func.func @window(%x: tensor<?x2x?x?xf32> {grove.name = "x"})
      -> (tensor<f32> {grove.name = "total"}) {
    %w = grove.get_param @w : tensor<3x2x3x3xf32>
    %y = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>,
        padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
        : (tensor<?x2x?x?xf32>, tensor<3x2x3x3xf32>) -> tensor<?x3x?x?xf32>
    %t = grove.reduce_sum %y {axes = array<i64: 0, 1, 2, 3>}
        : tensor<?x3x?x?xf32> -> tensor<f32>
    %c = grove.get_param @count : tensor<f32>
    %c1 = grove.add %c, %t : (tensor<f32>, tensor<f32>) -> tensor<f32>
    grove.set_param @count = %c1 : tensor<f32>
    return %t : tensor<f32>
  }
}
"""
# Both models are built before either runs (so that a compile-only run
# builds both).
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
path = os.path.join(root, "models", "treelstm", "treelstm.mlir")
model = Model(source, name="fail")
trees = Model(path, name="treelstm_fail")
w = r.standard_normal((3, 2, 3, 3)).astype(f32)
model.set_weight("w", w)
names = ["acc", "count", "w"]
acc, count = np.zeros(4, f32), f32(0)
for n, m in ((3, 6), (1, 2)):
    x = r.standard_normal((n, 4)).astype(f32)
    y = r.standard_normal((m, 4)).astype(f32)
    # One good call first, so that the state is not its initialiser.
    s, = model.call("pairs", x, y)
    acc = acc + (np.concatenate([x, x]) + y).sum(axis=0, dtype=f32)
    count += f32(1)
    assert_close(model.get_weight("acc"), acc, 1e-5, 1e-5, "acc after a call")
    before = snapshot(model, names)
    expect_failure(model, "pairs", (x, y[:m - 1]),
                   "dynamic sizes must agree", f"pairs n={n} m={m - 1}")
    assert_unchanged(model, before, f"pairs n={n} m={m - 1}")

# 2. A window larger than the (dynamic) image.
x = r.standard_normal((2, 2, 5, 4)).astype(f32)
total, = model.call("window", x)
ref = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w))
assert_close(total, ref.sum().numpy(), 1e-4, 1e-3, "window total")
count = count + total
before = snapshot(model, names)
expect_failure(model, "window", (x[:, :, :2, :],), "of at least 3, got 2",
               "window height 2")
assert_unchanged(model, before, "window height 2")
assert model.get_weight("count") == count

# 3. The Tree-LSTM train step with 4 trees and 5 labels: the labels are
# tied to the forest's roots only inside the code.
text = open(path).read()
params = []
for name, dims in re.findall(
        r"grove\.param @([\w.]+) : tensor<([0-9x]+)xf32>\s*$", text, re.M):
    shape = tuple(int(d) for d in dims.split("x"))
    trees.set_weight(name, (0.1 * r.standard_normal(shape)).astype(f32))
    params.append(name)
# Four chains of two nodes: node 2i is the parent of 2i + 1.
offsets = np.array([0, 1, 1, 2, 2, 3, 3, 4, 4], np.int32)
children = np.array([1, 3, 5, 7], np.int32)
roots = np.array([0, 2, 4, 6], np.int32)
tokens = r.integers(0, 512, 8).astype(np.int32)
labels = r.integers(0, 10, 4).astype(np.int32)
trees.call("train_step", offsets, children, roots, tokens, labels)
after_one = snapshot(trees, params)
# The optimizer's state (moments, step) is declared by the compiler: its
# names come from a save.
work = os.path.join(trees.workdir, "ck.safetensors")
trees.save_weights(work)
with open(work, "rb") as f:
    header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
state = sorted(k for k in header if k != "__metadata__")
assert len(state) > len(params), state  # the optimizer's moments and step
before = snapshot(trees, state)
expect_failure(trees, "train_step",
               (offsets, children, roots, tokens,
                np.append(labels, np.int32(1))),
               "dynamic sizes must agree", "treelstm 4 trees, 5 labels")
assert_unchanged(trees, before, "treelstm 4 trees, 5 labels")
trees.call("train_step", offsets, children, roots, tokens, labels)
moved = [n for n in params
         if trees.get_weight(n).tobytes() != after_one[n].tobytes()]
assert moved, "a good train step after the failure moved no weight"
print(f"failed_calls: state unchanged after each failure; "
      f"{len(state)} treelstm params and state checked")
