# RUN: %python %s
# Optimizer details where an f32 model used to part from torch:
#  * Adam's bias corrections are computed in f64 from an integer step
#    count, as torch computes them: at β2 = 0.9999 the first f32 update is
#    within 1e-6 (relative, worst element) of the exact f64 update, as
#    torch's own f32 Adam is (it was 8e-5 with the corrections in f32),
#    measured from w = 0 so that the update is not lost in w's rounding;
#  * the step counter is an i64 and counts past 2^24 (where an f32 counter
#    stops): a step from 2^24 makes it 2^24 + 1 and updates as torch's Adam
#    at that step (within 1e-6 of the update's norm: element-wise, a new
#    moment that nearly cancels makes any f32 Adam's relative error large);
#  * an empty batch fails the call with GROVE_ERROR_INVALID_ARGUMENT (a
#    loss over no rows has no mean) and changes no param or state.
import numpy as np
import torch
from grove_testing import GroveError, Model, rng

GROVE_ERROR_INVALID_ARGUMENT = 1
N = 64
LR, B1, B2, EPS = 1e-3, 0.9, 0.9999, 1e-8

SOURCE = f"""
module @fidelity {{
  grove.param @w : tensor<{N}xf32>
  func.func @train_step(%x: tensor<{N}xf32> {{grove.name = "x"}})
      -> (tensor<f32> {{grove.name = "loss"}}) {{
    %l, %g = grove.value_and_grad [@w] {{
      %w = grove.get_param @w : tensor<{N}xf32>
      %p = grove.mul %w, %x : (tensor<{N}xf32>, tensor<{N}xf32>) -> tensor<{N}xf32>
      %s = grove.reduce_sum %p {{axes = array<i64: 0>}} : tensor<{N}xf32> -> tensor<f32>
      grove.yield %s : tensor<f32>
    }} : tensor<f32>, tensor<{N}xf32>
    grove.adam [@w] (%g) {{lr = {LR} : f64, beta2 = {B2} : f64}} : tensor<{N}xf32>
    return %l : tensor<f32>
  }}
  func.func @mean_step(%x: tensor<?x4xf32> {{grove.name = "x"}},
                       %t: tensor<?x4xf32> {{grove.name = "t"}})
      -> (tensor<f32> {{grove.name = "loss"}}) {{
    %l, %g = grove.value_and_grad [@w] {{
      %w = grove.get_param @w : tensor<{N}xf32>
      %w4 = grove.slice %w [0] [4] [1] : tensor<{N}xf32> -> tensor<4xf32>
      %p = grove.mul %x, %w4 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
      %m = grove.mse_loss %p, %t : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<f32>
      grove.yield %m : tensor<f32>
    }} : tensor<f32>, tensor<{N}xf32>
    grove.sgd [@w] (%g) {{lr = 0.1 : f64, name = "sgd"}} : tensor<{N}xf32>
    return %l : tensor<f32>
  }}
}}
"""


def exact_adam(w, g, t, m=None, v=None):
    """Adam's update at step t from moments m, v, in float64."""
    m = np.zeros_like(w) if m is None else m
    v = np.zeros_like(w) if v is None else v
    m = B1 * m + (1 - B1) * g
    v = B2 * v + (1 - B2) * g * g
    step = LR / (1 - B1**t)
    return w - step * m / (np.sqrt(v) / np.sqrt(1 - B2**t) + EPS)


def torch_f32_adam(w, g):
    p = torch.tensor(w, dtype=torch.float32, requires_grad=True)
    opt = torch.optim.Adam([p], lr=LR, betas=(B1, B2), eps=EPS)
    p.grad = torch.tensor(g, dtype=torch.float32)
    opt.step()
    return p.detach().numpy()


def relative_update_error(got, w, want):
    return float(np.max(np.abs((got - w) - (want - w)) / np.abs(want - w)))


r = rng()
m = Model(SOURCE, name="fidelity")
# From w = 0 the new w is the update itself, so f32 rounds it only once
# (from w ~ 1, w's own rounding would be 6e-5 of a 1e-3 update).
w = np.zeros(N, np.float32)
x = r.standard_normal(N).astype(np.float32)
m.set_weight("w", w)
m.call("train_step", x)
exact = exact_adam(w.astype(np.float64), x.astype(np.float64), 1)
grove_err = relative_update_error(m.get_weight("w").astype(np.float64), w, exact)
torch_err = relative_update_error(torch_f32_adam(w, x).astype(np.float64), w,
                                  exact)
print(f"first Adam update at beta2={B2}: grove {grove_err:.2e}, "
      f"torch f32 {torch_err:.2e} (relative to f64)")
assert grove_err <= 1e-6, grove_err
assert m.get_weight("adam.step") == 1

# Past 2^24 steps: the counter keeps counting and the corrections follow.
T = 2**24
mom = (r.standard_normal(N) * 0.1).astype(np.float32)
var = (r.uniform(0.5, 1.5, N) * 1e-2).astype(np.float32)
m.set_weight("w", w)
m.set_weight("w.adam.m", mom)
m.set_weight("w.adam.v", var)
m.set_weight("adam.step", np.array(T, np.int64))
m.call("train_step", x)
assert m.get_weight("adam.step") == T + 1, m.get_weight("adam.step")
want = exact_adam(w.astype(np.float64), x.astype(np.float64), T + 1,
                  mom.astype(np.float64), var.astype(np.float64))
# Norm-wise: an element whose new moment nearly cancels (beta1 m against
# (1 - beta1) g) has an ill-conditioned relative error in any f32 Adam.
got = m.get_weight("w").astype(np.float64)
err = float(np.linalg.norm(got - want) / np.linalg.norm(want - w))
print(f"update at step 2^24 + 1: {err:.2e} of its norm")
assert err <= 1e-6, f"update at step 2^24 + 1: {err}"

# An empty batch is an error that changes nothing.
names = ["w", "sgd.step"]
xs = r.standard_normal((5, 4)).astype(np.float32)
m.call("mean_step", xs, xs)
before = {n: m.get_weight(n).copy() for n in names}
try:
    m.call("mean_step", xs[:0], xs[:0])
    raise AssertionError("an empty batch was accepted")
except GroveError as e:
    assert e.status == GROVE_ERROR_INVALID_ARGUMENT, e
    assert "grove.mse_loss" in e.message and "at least 1, got 0" in \
        e.message, e.message
for n in names:
    assert np.array_equal(before[n], m.get_weight(n)), f"{n} changed"
print("optimizer fidelity: corrections in f64, counts past 2^24, "
      "empty batches refused")
