# RUN: %python %s
# Mixed precision compiled and run through the C ABI (docs/training.md,
# "Mixed precision"), on fresh random inputs:
#  * --autocast=bf16 on an MLP (matmul, bias, ReLU, matmul, bias,
#    cross-entropy): the logits, the loss and every f32 gradient against
#    PyTorch's CPU autocast to bf16 of the same model (the same ops on the
#    same lists: matmuls in bf16, the bias additions promoted to f32, the
#    loss in f32), within 2e-2 of each tensor's largest magnitude; the
#    logits differ from the f32 model's (the policy is not a no-op);
#  * --autocast=f16 with dynamic loss scaling on the MLP's Adam step,
#    starting at 2^40 so that the first steps overflow f16: every call is
#    either skipped (params, moments and adam.step unchanged, adam.skipped
#    + 1, the scale halved, good_steps 0) or taken (adam.step + 1,
#    good_steps + 1, the scale doubled and good_steps 0 after 4 taken steps
#    in a row); both happen; the first taken step's loss and update agree
#    with a model without loss scaling (--loss-scale=0) from the same
#    weights, rtol 1e-2 (unscaled); the scale and count are saved with the
#    weights and load back;
#  * Adam with master_weights on bf16 params: over 3 steps the f32 master
#    copy against torch.optim.Adam in float32 on the widened params (rtol
#    1e-6), the param equal to the copy rounded to bf16 (to 1 bf16 ulp).
import os
import tempfile

import numpy as np
import torch
from ml_dtypes import bfloat16
from grove_testing import Model, assert_close
from grove_testing import rng as fresh_rng

MLP = """
module @mp {
  grove.param @w1 : tensor<32x16xf32>
  grove.param @b1 : tensor<32xf32>
  grove.param @w2 : tensor<5x32xf32>
  grove.param @b2 : tensor<5xf32>

  func.func private @logits(%x: tensor<?x16xf32>) -> tensor<?x5xf32> {
    %w1 = grove.get_param @w1 : tensor<32x16xf32>
    %b1 = grove.get_param @b1 : tensor<32xf32>
    %w2 = grove.get_param @w2 : tensor<5x32xf32>
    %b2 = grove.get_param @b2 : tensor<5xf32>
    %h = grove.matmul %x, %w1 {transpose_rhs}
        : (tensor<?x16xf32>, tensor<32x16xf32>) -> tensor<?x32xf32>
    %hb = grove.add %h, %b1 : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
    %a = grove.relu %hb : tensor<?x32xf32>
    %o = grove.matmul %a, %w2 {transpose_rhs}
        : (tensor<?x32xf32>, tensor<5x32xf32>) -> tensor<?x5xf32>
    %ob = grove.add %o, %b2 : (tensor<?x5xf32>, tensor<5xf32>) -> tensor<?x5xf32>
    return %ob : tensor<?x5xf32>
  }

  func.func @forward(%x: tensor<?x16xf32>) -> tensor<?x5xf32> {
    %z = func.call @logits(%x) : (tensor<?x16xf32>) -> tensor<?x5xf32>
    return %z : tensor<?x5xf32>
  }

  func.func @grads(%x: tensor<?x16xf32>, %y: tensor<?xi32>)
      -> (tensor<f32>, tensor<32x16xf32>, tensor<32xf32>, tensor<5x32xf32>,
          tensor<5xf32>) {
VALUE_AND_GRAD
    return %l, %g#0, %g#1, %g#2, %g#3 : tensor<f32>, tensor<32x16xf32>,
        tensor<32xf32>, tensor<5x32xf32>, tensor<5xf32>
  }

  func.func @train_step(%x: tensor<?x16xf32>, %y: tensor<?xi32>) -> tensor<f32> {
VALUE_AND_GRAD
    grove.adam [@w1, @b1, @w2, @b2] (%g#0, %g#1, %g#2, %g#3) {lr = 1.0e-02 : f64}
        : tensor<32x16xf32>, tensor<32xf32>, tensor<5x32xf32>, tensor<5xf32>
    return %l : tensor<f32>
  }
}
"""
MLP = MLP.replace("VALUE_AND_GRAD", """\
    %l, %g:4 = grove.value_and_grad [@w1, @b1, @w2, @b2] {
      %z = func.call @logits(%x) : (tensor<?x16xf32>) -> tensor<?x5xf32>
      %c = grove.softmax_cross_entropy %z, %y
          : (tensor<?x5xf32>, tensor<?xi32>) -> tensor<f32>
      grove.yield %c : tensor<f32>
    } : tensor<f32>, tensor<32x16xf32>, tensor<32xf32>, tensor<5x32xf32>,
        tensor<5xf32>""")
PARAMS = ("w1", "b1", "w2", "b2")
rng = fresh_rng()


def random_weights():
    return {"w1": rng.normal(0, 0.3, (32, 16)).astype(np.float32),
            "b1": rng.normal(0, 0.3, 32).astype(np.float32),
            "w2": rng.normal(0, 0.3, (5, 32)).astype(np.float32),
            "b2": rng.normal(0, 0.3, 5).astype(np.float32)}


def batch(n=24):
    return (rng.normal(0, 1.0, (n, 16)).astype(np.float32),
            rng.integers(0, 5, n).astype(np.int32))


def load(model, weights):
    for k, v in weights.items():
        model.set_weight(k, v)
    return model


def scale_close(got, want, tol, what):
    want = np.asarray(want, np.float64)
    err = np.max(np.abs(np.asarray(got, np.float64) - want))
    bound = tol * max(np.max(np.abs(want)), 1e-30)
    assert err <= bound, f"{what}: max error {err:.3g} > {bound:.3g}"
    return err / max(np.max(np.abs(want)), 1e-30)


def torch_autocast(weights, x, y):
    p = {k: torch.tensor(v, requires_grad=True) for k, v in weights.items()}
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = torch.matmul(torch.tensor(x), p["w1"].t())
        a = torch.relu(h + p["b1"])
        z = torch.matmul(a, p["w2"].t()) + p["b2"]
        loss = torch.nn.functional.cross_entropy(z.float(), torch.tensor(
            y, dtype=torch.int64))
    loss.backward()
    return z.float().detach().numpy(), loss.item(), [
        p[k].grad.numpy() for k in PARAMS]


SCALED = ("--autocast=f16", f"--loss-scale={2**40}",
          "--loss-scale-growth-interval=4")
UNSCALED = ("--autocast=f16", "--loss-scale=0")


def check_bf16_policy(bf16, f32):
    w = random_weights()
    load(bf16, w)
    load(f32, w)
    x, y = batch()
    z_ref, loss_ref, grads_ref = torch_autocast(w, x, y)
    (z,) = bf16.call("forward", x)
    assert z.dtype == np.float32
    scale_close(z, z_ref, 2e-2, "bf16 logits vs torch autocast")
    (z32,) = f32.call("forward", x)
    assert np.max(np.abs(z - z32)) > 1e-5 * np.max(np.abs(z32)), \
        "autocast logits equal the f32 model's: nothing ran in bf16"
    out = bf16.call("grads", x, y, num_outputs=5)
    assert abs(float(out[0]) - loss_ref) <= 2e-2 * abs(loss_ref), \
        (float(out[0]), loss_ref)
    worst = max(scale_close(g, r, 2e-2, f"bf16 gradient of {k}")
                for k, g, r in zip(PARAMS, out[1:], grads_ref))
    print(f"bf16 autocast: logits, loss and gradients within {worst:.2g} of "
          "torch's CPU autocast")


def state(model):
    """The step's counters; the module has two value_and_grads, so the
    scale is train_step's own (grads' has its own)."""
    names = {"loss_scale.scale": "train_step.loss_scale.scale",
             "loss_scale.good_steps": "train_step.loss_scale.good_steps",
             "adam.step": "adam.step", "adam.skipped": "adam.skipped"}
    return {n: model.get_weight(s).item() for n, s in names.items()}


def check_loss_scaling(m, plain):
    load(m, random_weights())
    assert state(m)["loss_scale.scale"] == 2.0**40
    skipped = taken = grown = 0
    first_taken = True
    for step in range(40):
        x, y = batch()
        before = state(m)
        params = {k: m.get_weight(k) for k in PARAMS}
        if first_taken:
            load(plain, params)
            for k in ("adam.step",):
                plain.set_weight(k, np.array(before[k], np.int64))
        (loss,) = m.call("train_step", x, y)
        after = state(m)
        changed = any(not np.array_equal(params[k], m.get_weight(k))
                      for k in PARAMS)
        if after["adam.step"] == before["adam.step"]:
            skipped += 1
            assert not changed, f"step {step}: a skipped step changed params"
            assert after["adam.skipped"] == before["adam.skipped"] + 1
            assert after["loss_scale.scale"] == before["loss_scale.scale"] / 2
            assert after["loss_scale.good_steps"] == 0
            continue
        taken += 1
        assert after["adam.step"] == before["adam.step"] + 1
        assert after["adam.skipped"] == before["adam.skipped"]
        assert changed and np.isfinite(loss)
        good = before["loss_scale.good_steps"] + 1
        if good == 4:
            grown += 1
            assert after["loss_scale.scale"] == 2 * before["loss_scale.scale"]
            assert after["loss_scale.good_steps"] == 0
        else:
            assert after["loss_scale.scale"] == before["loss_scale.scale"]
            assert after["loss_scale.good_steps"] == good
        if first_taken:
            first_taken = False
            (ref_loss,) = plain.call("train_step", x, y)
            assert abs(float(loss) - float(ref_loss)) <= 1e-2 * abs(
                float(ref_loss)), (float(loss), float(ref_loss))
            for k in PARAMS:
                scale_close(m.get_weight(k) - params[k],
                            plain.get_weight(k) - params[k], 1e-2,
                            f"first taken update of {k} vs unscaled")
    assert skipped >= 10 and taken >= 8 and grown >= 1, (skipped, taken, grown)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "ckpt.safetensors")
        m.save_weights(path)
        saved = state(m)
        m.reopen()
        m.load_weights(path)
        assert state(m) == saved, (state(m), saved)
    print(f"f16 loss scaling: {skipped} steps skipped from 2^40, {taken} "
          f"taken, the scale grew {grown} times; final scale "
          f"{saved['loss_scale.scale']:g}; the first taken step matches "
          "the unscaled model; the scale is checkpointed")


MASTER = """
module @mw {
  grove.param @p : tensor<7x5xbf16>
  grove.param @q : tensor<3xbf16>
  func.func @step(%gp: tensor<7x5xbf16>, %gq: tensor<3xbf16>) {
    grove.adam [@p, @q] (%gp, %gq) {lr = 3.0e-02 : f64, master_weights}
        : tensor<7x5xbf16>, tensor<3xbf16>
    return
  }
}
"""


def check_master_weights(m):
    p0 = {"p": rng.normal(0, 1, (7, 5)).astype(bfloat16),
          "q": rng.normal(0, 1, 3).astype(bfloat16)}
    for k, v in p0.items():
        m.set_weight(k, v)
    ref = {k: torch.tensor(v.astype(np.float32), requires_grad=True)
           for k, v in p0.items()}
    opt = torch.optim.Adam(list(ref.values()), lr=3e-2)
    for step in range(3):
        grads = {k: rng.normal(0, 1, v.shape).astype(bfloat16)
                 for k, v in p0.items()}
        m.call("step", *grads.values(), num_outputs=0)
        for k, g in grads.items():
            ref[k].grad = torch.tensor(g.astype(np.float32))
        opt.step()
    for k in p0:
        master = m.get_weight(f"{k}.adam.master")
        want = ref[k].detach().numpy()
        assert_close(master, want, rtol=1e-6, atol=1e-7,
                     what=f"master copy of {k}")
        got = m.get_weight(k).astype(np.float32)
        rounded = want.astype(bfloat16).astype(np.float32)
        ulp = np.abs(rounded) * 2.0**-7 + 1e-30
        assert np.all(np.abs(got - rounded) <= ulp), f"{k} is not its copy"
        # The copy keeps what the bf16 param cannot hold.
        assert not np.array_equal(master, got)
    assert m.get_weight("adam.step").item() == 3
    print("master weights: bf16 params through f32 copies match "
          "torch.optim.Adam over 3 steps")


def main():
    # Every model first: a compile-only run (the GPU check's prepare) ends
    # at the first call.
    models = [Model(MLP, name="mp", grovec_flags=flags)
              for flags in (("--autocast=bf16",), (), SCALED, UNSCALED)]
    master = Model(MASTER, name="mw")
    check_bf16_policy(*models[:2])
    check_loss_scaling(*models[2:])
    check_master_weights(master)


if __name__ == "__main__":
    main()
