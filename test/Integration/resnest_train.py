# RUN: %python %s
# The tiny ResNeSt's compiled train_step (models/resnest/generate.py
# --train: softmax cross-entropy, batch-statistics BN outside the split
# attentions, SGD with momentum and weight decay) against PyTorch, from the
# same random weights on fresh random images and labels: the frontend's
# unfused form, which grovec fuses into grove.split_attention before
# differentiating it, so both attentions take the fused backward
# (grove.split_attention_grad; checked in the IR below). After each of 3
# steps the loss, and after the third every updated weight, every momentum
# buffer and every running statistic, against the functional PyTorch model
# (models/resnest/reference.py, training=True) under torch.optim.SGD:
# max |grove - torch| <= 1e-4 * max(|torch|, 1) per tensor (f32).
# Each step's images are drawn so that no ReLU input of the float64
# reference lies within 1e-5 of its tensor's RMS of zero: at such a kink
# f32 rounding (Grove's or PyTorch's) may flip the ReLU's derivative, and
# the two gradients then legitimately differ (one seed in a few did so).
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from grove_testing import Model, assert_close, rng

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "models", "resnest"))
import generate  # noqa: E402
from reference import random_params, resnest  # noqa: E402

IMAGE, BATCH, STEPS = 16, 8, 3

text, params = generate.generate("tiny", IMAGE, "unfused", train=True)
work = tempfile.mkdtemp(prefix="grove-resnest-train-")
path = os.path.join(work, "resnesttiny_train.mlir")
with open(path, "w") as f:
    f.write(text)
if not os.environ.get("GROVE_TEST_BUNDLE"):
    ir = subprocess.run(
        [os.path.join(os.environ.get("GROVE_BIN", ""), "grove-opt"), path,
         "--grove-common", "-mlir-print-ir-after=grove-autodiff",
         "-o", os.devnull], capture_output=True, text=True, check=True).stderr
    fused = ir.count("grove.split_attention_grad ")
    assert fused == 2, f"{fused} fused attention backwards, expected 2"
model = Model(path, name="resnesttiny_train", workdir=work)

g = rng()
p = random_params(params, g)
trained = [n for n, _ in generate.trainable(params)]
for name, v in p.items():
    model.set_weight(name, v)
t = {k: torch.tensor(v, requires_grad=k in trained) for k, v in p.items()}
opt = torch.optim.SGD([t[n] for n in trained], **generate.SGD)



def kink_free(x, margin=1e-5):
    """Whether every ReLU input of the float64 reference on `x` (current
    weights) is at least margin * its tensor's RMS away from zero."""
    inputs, relu = [], F.relu

    def record(v, *args, **kwargs):
        inputs.append(v)
        return relu(v, *args, **kwargs)

    F.relu = record
    try:
        with torch.no_grad():
            resnest({k: v.detach().double() for k, v in t.items()},
                    torch.from_numpy(x).double(), "tiny", training=True)
    finally:
        F.relu = relu
    return all(bool((v.abs() > margin * v.square().mean().sqrt()).all())
               for v in inputs)


redrawn = 0
for step in range(STEPS):
    for _ in range(50):
        x = g.standard_normal((BATCH, 3, IMAGE, IMAGE)).astype(np.float32)
        if kink_free(x):
            break
        redrawn += 1
    else:
        raise AssertionError("50 draws of images all had a ReLU input at 0")
    labels = g.integers(0, 10, BATCH).astype(np.int32)
    (loss,) = model.call("train_step", x, labels)
    opt.zero_grad()
    ref = torch.nn.functional.cross_entropy(
        resnest(t, torch.from_numpy(x), "tiny", training=True),
        torch.from_numpy(labels).long())
    ref.backward()
    opt.step()
    assert_close(loss, ref.detach().numpy(), 1e-4, 1e-5, f"step {step} loss")


def check(name, got, want):
    scale = max(np.abs(want).max(), 1.0)
    err = np.abs(got - want).max()
    assert err <= 1e-4 * scale, f"{name}: max error {err} > 1e-4 * {scale}"


checked = 0
for name, v in t.items():
    check(name, model.get_weight(name), v.detach().numpy())
    checked += 1
for name in trained:
    buf = opt.state[t[name]]["momentum_buffer"].numpy()
    check(f"{name} momentum", model.get_weight(f"{name}.sgd.momentum"), buf)
    checked += 1
print(f"resnest_train: {STEPS} steps, {checked} tensors match PyTorch "
      f"({redrawn} draws of images redrawn off ReLU kinks)")
