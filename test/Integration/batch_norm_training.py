# RUN: %python %s
# grove.batch_norm_training, compiled: the train entry normalises by batch
# statistics and updates the running statistics in place; `evaluate`
# reads them through the inference form. On fresh random inputs:
#  * loss and gradients (input, scale, bias) in f32 against PyTorch
#    autograd in float64 (F.batch_norm, training=True): rtol 1e-4, atol
#    1e-5; in f64 against central finite differences (step 1e-6) of the
#    compiled loss: rtol 1e-6, atol 1e-7;
#  * running mean and (unbiased) variance after 3 calls, and the eval
#    output, against torch.nn.BatchNorm2d (momentum 0.3): rtol 1e-5 (f32),
#    1e-12 (f64);
#  * a dynamic batch (the element count of a channel known only at run
#    time) against the same;
#  * a train step (SGD with skip_nonfinite) whose batch holds a NaN or an
#    infinity changes no state at all: weights and running statistics stay
#    bit-identical and the skip is counted; a batch of one value per
#    channel and an empty batch fail with GROVE_ERROR_INVALID_ARGUMENT
#    (PyTorch raises on the first) and change no state either.
import numpy as np
import torch
from grove_testing import GroveError, Model, assert_close, rng

GROVE_ERROR_INVALID_ARGUMENT = 1

C, MOMENTUM, EPS = 3, 0.3, 1e-5


def source(name, e, batch):
    n = "?" if batch is None else str(batch)
    x = f"tensor<{n}x{C}x4x5x{e}>"
    v = f"tensor<{C}x{e}>"
    return f"""
module @{name} {{
  grove.param @scale : {v}
  grove.param @bias : {v}
  grove.param @bn.running_mean : {v} = 0.0 : {e}
  grove.param @bn.running_var : {v} = 1.0 : {e}
  func.func @train(%x: {x} {{grove.name = "x"}}, %r: {x} {{grove.name = "r"}})
      -> (tensor<{e}> {{grove.name = "loss"}}, {v} {{grove.name = "dscale"}},
          {v} {{grove.name = "dbias"}}) {{
    %l, %g:2 = grove.value_and_grad [@scale, @bias] {{
      %s = grove.get_param @scale : {v}
      %b = grove.get_param @bias : {v}
      %y = grove.batch_norm_training %x, %s, %b {{epsilon = {EPS:.1e} : f64,
          momentum = {MOMENTUM} : f64, running_mean = @bn.running_mean,
          running_var = @bn.running_var}} : ({x}, {v}, {v}) -> {x}
      %yr = grove.mul %y, %r : ({x}, {x}) -> {x}
      %t = grove.tanh %yr : {x}
      %l = grove.reduce_sum %t {{axes = array<i64: 0, 1, 2, 3>}} : {x} -> tensor<{e}>
      grove.yield %l : tensor<{e}>
    }} : tensor<{e}>, {v}, {v}
    return %l, %g#0, %g#1 : tensor<{e}>, {v}, {v}
  }}
  func.func @evaluate(%x: {x} {{grove.name = "x"}}) -> ({x} {{grove.name = "y"}}) {{
    %s = grove.get_param @scale : {v}
    %b = grove.get_param @bias : {v}
    %m = grove.get_param @bn.running_mean : {v}
    %var = grove.get_param @bn.running_var : {v}
    %y = grove.batch_norm %x, %s, %b, %m, %var {{epsilon = {EPS:.1e} : f64}}
        : ({x}, {v}, {v}, {v}, {v}) -> {x}
    return %y : {x}
  }}
}}
"""


def torch_loss(x, r, s, b):
    y = torch.nn.functional.batch_norm(x, None, None, s, b, training=True,
                                       eps=EPS)
    return torch.tanh(y * r).sum()


def check(model, name, dtype, batch, rtol, atol, r):
    n = batch or 6
    s0 = (r.standard_normal(C) + 1.5).astype(dtype)
    b0 = r.standard_normal(C).astype(dtype)
    model.set_weight("scale", s0)
    model.set_weight("bias", b0)
    bn = torch.nn.BatchNorm2d(C, eps=EPS, momentum=MOMENTUM).double()
    with torch.no_grad():
        bn.weight.copy_(torch.tensor(s0, dtype=torch.float64))
        bn.bias.copy_(torch.tensor(b0, dtype=torch.float64))
    for step in range(3):
        x = (r.standard_normal((n, C, 4, 5)) * 2 + 1).astype(dtype)
        rr = r.standard_normal((n, C, 4, 5)).astype(dtype)
        loss, ds, db = model.call("train", x, rr, num_outputs=3)
        tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        ts = torch.tensor(s0, dtype=torch.float64, requires_grad=True)
        tb = torch.tensor(b0, dtype=torch.float64, requires_grad=True)
        want = torch_loss(tx, torch.tensor(rr, dtype=torch.float64), ts, tb)
        want.backward()
        assert_close(loss, want.item(), rtol, atol, f"{name} loss {step}")
        assert_close(ds, ts.grad.numpy(), rtol, atol, f"{name} dscale {step}")
        assert_close(db, tb.grad.numpy(), rtol, atol, f"{name} dbias {step}")
        bn.train()
        bn(torch.tensor(x, dtype=torch.float64))
    stat_rtol = 1e-12 if dtype == np.float64 else 1e-5
    assert_close(model.get_weight("bn.running_mean"),
                 bn.running_mean.numpy(), stat_rtol, stat_rtol,
                 f"{name} running_mean")
    assert_close(model.get_weight("bn.running_var"), bn.running_var.numpy(),
                 stat_rtol, stat_rtol, f"{name} running_var")
    bn.eval()
    x = r.standard_normal((n, C, 4, 5)).astype(dtype)
    y, = model.call("evaluate", x)
    with torch.no_grad():
        assert_close(y, bn(torch.tensor(x, dtype=torch.float64)).numpy(),
                     stat_rtol * 10, stat_rtol * 10, f"{name} eval")
    return model


def input_gradient_source():
    """x is a param here, so its gradient takes the batch statistics' path."""
    v, x = f"tensor<{C}xf64>", f"tensor<4x{C}x4x5xf64>"
    return f"""
module @bn_dx {{
  grove.param @x : {x}
  grove.param @scale : {v}
  grove.param @bias : {v}
  grove.param @bn.running_mean : {v} = 0.0 : f64
  grove.param @bn.running_var : {v} = 1.0 : f64
  func.func @grad(%r: {x} {{grove.name = "r"}})
      -> (tensor<f64> {{grove.name = "loss"}}, {x} {{grove.name = "dx"}}) {{
    %l, %g = grove.value_and_grad [@x] {{
      %xv = grove.get_param @x : {x}
      %s = grove.get_param @scale : {v}
      %b = grove.get_param @bias : {v}
      %y = grove.batch_norm_training %xv, %s, %b {{running_mean = @bn.running_mean,
          running_var = @bn.running_var}} : ({x}, {v}, {v}) -> {x}
      %yr = grove.mul %y, %r : ({x}, {x}) -> {x}
      %t = grove.tanh %yr : {x}
      %l = grove.reduce_sum %t {{axes = array<i64: 0, 1, 2, 3>}} : {x} -> tensor<f64>
      grove.yield %l : tensor<f64>
    }} : tensor<f64>, {x}
    return %l, %g : tensor<f64>, {x}
  }}
}}
"""


def input_gradient_fd(model, r):
    """d loss / d x against central differences of the compiled loss (f64)."""
    x0 = r.standard_normal((4, C, 4, 5)) + 0.5
    rr = r.standard_normal((4, C, 4, 5))
    model.set_weight("scale", r.standard_normal(C) + 1.5)
    model.set_weight("bias", r.standard_normal(C))
    model.set_weight("x", x0)
    _, dx = model.call("grad", rr, num_outputs=2)
    fd = np.zeros_like(x0)
    h = 1e-6
    for i in np.ndindex(x0.shape):
        for sign in (1, -1):
            xp = x0.copy()
            xp[i] += sign * h
            model.set_weight("x", xp)
            fd[i] += sign * model.call("grad", rr, num_outputs=2)[0] / (2 * h)
    assert_close(dx, fd, 1e-6, 1e-7, "bn dx vs finite differences")


def skip_source():
    """A train step of BatchNorm1d + linear + MSE with a skipping SGD."""
    v = f"tensor<{C}xf32>"
    return f"""
module @bn_skip {{
  grove.param @scale : {v}
  grove.param @bias : {v}
  grove.param @w : tensor<{C}x1xf32>
  grove.param @bn.running_mean : {v} = 0.0 : f32
  grove.param @bn.running_var : {v} = 1.0 : f32
  func.func @train_step(%x: tensor<?x{C}xf32> {{grove.name = "x"}},
                        %t: tensor<?x1xf32> {{grove.name = "target"}})
      -> (tensor<f32> {{grove.name = "loss"}}) {{
    %l, %g:3 = grove.value_and_grad [@scale, @bias, @w] {{
      %s = grove.get_param @scale : {v}
      %b = grove.get_param @bias : {v}
      %w = grove.get_param @w : tensor<{C}x1xf32>
      %y = grove.batch_norm_training %x, %s, %b {{running_mean = @bn.running_mean,
          running_var = @bn.running_var}} : (tensor<?x{C}xf32>, {v}, {v}) -> tensor<?x{C}xf32>
      %p = grove.matmul %y, %w : (tensor<?x{C}xf32>, tensor<{C}x1xf32>) -> tensor<?x1xf32>
      %l = grove.mse_loss %p, %t : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<f32>
      grove.yield %l : tensor<f32>
    }} : tensor<f32>, {v}, {v}, tensor<{C}x1xf32>
    grove.sgd [@scale, @bias, @w] (%g#0, %g#1, %g#2) {{lr = 0.1 : f64,
        momentum = 0.9 : f64, skip_nonfinite}} : {v}, {v}, tensor<{C}x1xf32>
    return %l : tensor<f32>
  }}
}}
"""


SKIP_STATE = ["scale", "bias", "w", "bn.running_mean", "bn.running_var",
              "scale.sgd.momentum", "bias.sgd.momentum", "w.sgd.momentum",
              "sgd.step"]


def skipped_steps_change_nothing(model, r):
    model.set_weight("scale", r.standard_normal(C).astype(np.float32) + 1.5)
    model.set_weight("bias", r.standard_normal(C).astype(np.float32))
    model.set_weight("w", r.standard_normal((C, 1)).astype(np.float32))
    x = r.standard_normal((8, C)).astype(np.float32)
    t = r.standard_normal((8, 1)).astype(np.float32)
    model.call("train_step", x, t)  # state away from its initial values

    def state():
        return {n: model.get_weight(n).copy() for n in SKIP_STATE}

    before = state()
    for poison in (np.nan, np.inf):
        bad = x.copy()
        bad[3, 1] = poison
        (loss,) = model.call("train_step", bad, t)
        assert not np.isfinite(loss), loss
        after = state()
        for n in SKIP_STATE:
            assert np.array_equal(before[n], after[n]), \
                f"a skipped step changed {n}: {before[n]} -> {after[n]}"
    assert model.get_weight("sgd.skipped") == 2, model.get_weight("sgd.skipped")
    for rows, what in ((1, "batch of one"), (0, "empty batch")):
        try:
            model.call("train_step", x[:rows], t[:rows])
            raise AssertionError(f"{what} accepted")
        except GroveError as e:
            assert e.status == GROVE_ERROR_INVALID_ARGUMENT, e
            assert "batch_norm_training" in e.message, e.message
        after = state()
        for n in SKIP_STATE:
            assert np.array_equal(before[n], after[n]), f"{what} changed {n}"
    # The next good step is taken.
    model.call("train_step", x, t)
    assert model.get_weight("sgd.step") == before["sgd.step"] + 1


def main():
    r = rng()
    cases = (("bn_f32", "f32", np.float32, 6, 1e-4, 1e-5),
             ("bn_f64", "f64", np.float64, 6, 1e-10, 1e-10),
             ("bn_dyn", "f32", np.float32, None, 1e-4, 1e-5))
    # Every model is compiled before any runs (the CUDA suite only compiles
    # them where there is no GPU).
    models = {c[0]: Model(source(c[0], c[1], c[3]), name=c[0]) for c in cases}
    dx_model = Model(input_gradient_source(), name="bn_dx")
    skip_model = Model(skip_source(), name="bn_skip")
    for name, e, dtype, batch, rtol, atol in cases:
        check(models[name], name, dtype, batch, rtol, atol, r)
    input_gradient_fd(dx_model, r)
    skipped_steps_change_nothing(skip_model, r)
    print("batch_norm_training: gradients, running statistics and eval match")


if __name__ == "__main__":
    main()
