# RUN: %python %s
# ResNeSt end to end against an independent PyTorch implementation written
# from the paper's description (models/resnest/reference.py, following the
# structure of the authors' splat.py / resnet.py), with random weights exported
# to safetensors and loaded by the runtime: the tiny variant at 32x32 and at
# 4x4 (its avg-down pools' ceil-mode windows then overhang the 1x1 and 2x2
# images, as PyTorch allows) and ResNeSt-50 at 64x64, each from the frontend's unfused form
# (models/resnest/generate.py), which grovec fuses (16 split attentions in
# ResNeSt-50).
# Tolerance: max |grove - torch| <= 1e-4 * max |torch logits| (f32).
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from safetensors.numpy import save_file
from grove_testing import Model, rng

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "models", "resnest"))
import generate  # noqa: E402
from reference import random_params, resnest  # noqa: E402


g = rng()
# Build every model first: on a GPU machine without grovec the libraries come
# prepared (scripts/gpu-check.sh), and there grove-opt is not available.
models = []
for depth, image, batch in (("tiny", 32, 3), ("tiny", 4, 2), ("50", 64, 2)):
    text, params = generate.generate(depth, image, "unfused")
    work = tempfile.mkdtemp(prefix="grove-resnest-")
    path = os.path.join(work, f"resnest{depth}_{image}.mlir")
    with open(path, "w") as f:
        f.write(text)
    layers = generate.CONFIGS[depth][0]
    if not os.environ.get("GROVE_TEST_BUNDLE"):
        fused = subprocess.run(
            [os.path.join(os.environ.get("GROVE_BIN", ""), "grove-opt"), path,
             "--grove-fuse-split-attention"], capture_output=True, text=True,
            check=True).stdout.count("grove.split_attention ")
        assert fused == sum(layers), f"fused {fused} of {sum(layers)} blocks"
    model = Model(path, name=f"resnest{depth}_{image}", workdir=work)
    models.append((depth, image, batch, params, work, model))

for depth, image, batch, params, work, model in models:
    p = random_params(params, g)
    weights = os.path.join(work, "weights.safetensors")
    save_file(p, weights)
    model.load_weights(weights)
    x = g.standard_normal((batch, 3, image, image)).astype(np.float32)
    with torch.no_grad():
        ref = resnest({k: torch.from_numpy(v) for k, v in p.items()},
                      torch.from_numpy(x), depth).numpy()
    (got,) = model.call("forward", x)
    scale = np.abs(ref).max()
    err = np.abs(got - ref).max()
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert err <= 1e-4 * scale, f"resnest{depth}: max error {err} > 1e-4 * {scale}"
    print(f"resnest{depth} at {image}x{image} on {model.target}: max |err| "
          f"{err:.3g} = {err / scale:.2g} of max |logit| {scale:.3g}")
