# RUN: %python %s
# Module state through the C ABI: an entry that updates running statistics
# held as initialised state (an exponential moving average of batch means
# per feature, as batch-norm training keeps, and a call counter), `forward`
# reading them next to a weight, checked against numpy over several calls;
# saved and reloaded bit-exactly; a weights file that omits the initialised
# state resets it to its initialisers; a save holds weights and state.
# Tolerance: rtol 1e-6, atol 1e-6 (f32; the reference is computed in f32 in
# the same order of operations the model states).
import os
import tempfile

import numpy as np
from grove_testing import GroveError, Model, assert_close, rng

source = """
module @ema {
  grove.param @scale : tensor<4xf32>
  grove.param @mean : tensor<4xf32> = 0.0 : f32
  grove.param @count : tensor<f32> = 0.0 : f32
  grove.param @flags : tensor<2xi32> = 7 : i32
  func.func @update(%x: tensor<?x4xf32> {grove.name = "x"})
      -> (tensor<4xf32> {grove.name = "batch_mean"}) {
    %m = grove.get_param @mean : tensor<4xf32>
    %bm = grove.reduce_mean %x {axes = array<i64: 0>}
        : tensor<?x4xf32> -> tensor<4xf32>
    %a = grove.constant dense<0.9> : tensor<f32>
    %b = grove.constant dense<0.1> : tensor<f32>
    %t1 = grove.mul %m, %a : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %t2 = grove.mul %bm, %b : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %new = grove.add %t1, %t2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    grove.set_param @mean = %new : tensor<4xf32>
    %c = grove.get_param @count : tensor<f32>
    %one = grove.constant dense<1.0> : tensor<f32>
    %c1 = grove.add %c, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
    grove.set_param @count = %c1 : tensor<f32>
    return %bm : tensor<4xf32>
  }
  func.func @forward(%x: tensor<?x4xf32> {grove.name = "x"})
      -> (tensor<?x4xf32> {grove.name = "y"}) {
    %m = grove.get_param @mean : tensor<4xf32>
    %s = grove.get_param @scale : tensor<4xf32>
    %d = grove.sub %x, %m : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    %y = grove.mul %d, %s : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    return %y : tensor<?x4xf32>
  }
  func.func @read_mean() -> (tensor<4xf32> {grove.name = "mean"}) {
    %m = grove.get_param @mean : tensor<4xf32>
    return %m : tensor<4xf32>
  }
}
"""

r = rng()
model = Model(source, name="ema")
work = tempfile.mkdtemp(prefix="grove-state-")
f32 = np.float32

# A weight is needed before any call; initialised state is not.
try:
    model.call("read_mean")
    raise AssertionError("a call before the weight was set succeeded")
except GroveError as e:
    assert "scale" in e.message and "not set" in e.message, e.message
scale = r.standard_normal(4).astype(f32)
model.set_weight("scale", scale)
assert_close(model.get_weight("mean"), np.zeros(4, f32), 0, 0, "initial mean")
assert np.array_equal(model.get_weight("flags"), np.array([7, 7], np.int32))

mean, count = np.zeros(4, f32), f32(0)
for step, n in enumerate((1, 5, 32, 3, 17)):
    x = r.standard_normal((n, 4)).astype(f32) + f32(step)
    batch_mean, = model.call("update", x)
    ref_bm = x.mean(axis=0, dtype=f32)
    assert_close(batch_mean, ref_bm, 1e-6, 1e-6, f"batch mean, call {step}")
    mean = mean * f32(0.9) + ref_bm * f32(0.1)
    count = count + f32(1)
    assert_close(model.get_weight("mean"), mean, 1e-6, 1e-6,
                 f"running mean after call {step}")
    assert model.get_weight("count") == count
    # forward, a different entry, reads the state update wrote.
    xf = r.standard_normal((6, 4)).astype(f32)
    y, = model.call("forward", xf)
    assert_close(y, (xf - model.get_weight("mean")) * scale, 1e-6, 1e-6,
                 f"forward after call {step}")
    got, = model.call("read_mean")
    assert np.array_equal(got, model.get_weight("mean")), "returned state"

# Save and reload bit-exactly into a fresh context.
saved = os.path.join(work, "state.safetensors")
model.save_weights(saved)
before = {k: model.get_weight(k) for k in ("scale", "mean", "count", "flags")}
model.reopen()
model.load_weights(saved)
for k, v in before.items():
    assert model.get_weight(k).tobytes() == v.tobytes(), f"{k} after reload"
x = r.standard_normal((4, 4)).astype(f32)
model.call("update", x)
assert_close(model.get_weight("mean"),
             before["mean"] * f32(0.9) + x.mean(axis=0, dtype=f32) * f32(0.1),
             1e-6, 1e-6, "update after reload")

# A file with the weight alone: the state restarts at its initialisers.
from safetensors.numpy import load_file, save_file
tensors = load_file(saved)
assert set(tensors) == {"scale", "mean", "count", "flags"}, set(tensors)
only = os.path.join(work, "weights.safetensors")
save_file({"scale": tensors["scale"]}, only)
model.load_weights(only)
assert np.array_equal(model.get_weight("mean"), np.zeros(4, f32))
assert model.get_weight("count") == 0
assert np.array_equal(model.get_weight("scale"), tensors["scale"])
# ... but one without the weight is refused, and leaves the context as it was.
save_file({"mean": tensors["mean"]}, only)
model.call("update", x)
kept = model.get_weight("mean")
try:
    model.load_weights(only)
    raise AssertionError("a file without the weight loaded")
except GroveError as e:
    assert "missing param 'scale'" in e.message, e.message
assert np.array_equal(model.get_weight("mean"), kept)
print("state: update/forward over 5 calls, save/reload, partial loads: OK")
