"""ResNeSt-50 for the GPU benchmark: what the two halves of
scripts/gpu-check.sh share.

ResNeSt-50 (2s1x64d) at 224x224, the frontend's unfused form of
models/resnest/generate.py, in f32 (models/resnest/resnest50.unfused.mlir)
and bf16 (`generate.py --dtype bf16`): one CUDA library each, its batch
dynamic. The weights (27.5 M values, 110 MB in f32) are not shipped: both
machines generate them from SEED with models/resnest/reference.py's
random_params, and the image batch from SEED + 1; FINGERPRINT of the
weights and image says whether the two machines generated the same ones
(numpy promises no stream stability across versions).

  resnest50.py record-host OUT.npz    (gpu-check.sh prepare, here)
      compiles the f32 model for the host (grovec through
      test/lib/grove_testing.py: GROVE_BIN, GROVE_LIB) and writes its logits
      for the first image, with the fingerprint, to OUT.npz; bench/gpu/run.py
      compares the GPU's logits with them. No bf16 host result is recorded:
      the host computes bf16 GEMMs as loops accumulating in bf16
      (docs/limits.md), so a GPU-vs-host difference would measure the
      host's rounding, not the GPU's; bf16 on the GPU is checked against
      PyTorch f32 instead.
"""
import hashlib
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models", "resnest"))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
import generate  # noqa: E402

SEED = 20261130
IMAGE = 224
DEPTH = "50"
# dtype -> (library/module name in the bundle, MLIR source: a shipped file or
# None = generate.py's output)
MODELS = {"f32": ("resnest50", os.path.join(ROOT, "models", "resnest",
                                            "resnest50.unfused.mlir")),
          "bf16": ("resnest50_bf16", None)}
HOST_RESULT = "resnest50_host.npz"  # in the bundle's data/


def source(dtype):
    """(MLIR text, [(param name, shape)]) of the model in `dtype`."""
    return generate.generate(DEPTH, IMAGE, "unfused", dtype)


def weights(seed=SEED):
    """The benchmark's random weights, f32 numpy arrays by param name."""
    from reference import random_params
    return random_params(source("f32")[1], np.random.default_rng(seed))


def images(batch, seed=SEED + 1):
    """batch x 3 x 224 x 224 f32; the first image is the same for every
    batch size (one generator, filled in order)."""
    return np.random.default_rng(seed).standard_normal(
        (batch, 3, IMAGE, IMAGE)).astype(np.float32)


def fingerprint(w, image):
    h = hashlib.sha256()
    for name in sorted(w):
        h.update(name.encode())
        h.update(np.ascontiguousarray(w[name], dtype=np.float32).tobytes())
    h.update(np.ascontiguousarray(image, dtype=np.float32).tobytes())
    return h.hexdigest()[:32]


def save_weights(w, dtype, path):
    """w in `dtype` (f32, or bf16 rounded to nearest even) as safetensors
    (through torch: safetensors.numpy has no bf16)."""
    import torch
    from safetensors.torch import save_file
    tdtype = {"f32": torch.float32, "bf16": torch.bfloat16}[dtype]
    save_file({k: torch.from_numpy(v).to(tdtype) for k, v in w.items()}, path)


def record_host(out):
    from grove_testing import Model
    work = tempfile.mkdtemp(prefix="grove-resnest50-host-")
    w = weights()
    x = images(1)
    path = os.path.join(work, "weights.safetensors")
    save_weights(w, "f32", path)
    name, mlir = MODELS["f32"]
    model = Model(mlir, name=name, workdir=work, target="host")
    model.load_weights(path)
    (logits,) = model.call("forward", x)
    np.savez(out, logits_f32=logits, fingerprint=np.array(fingerprint(w, x)),
             seed=np.array(SEED))
    print(f"resnest50 on the host: logits {logits.shape}, max |logit| "
          f"{np.abs(logits).max():.4g}, fingerprint {fingerprint(w, x)} -> {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "record-host":
        sys.exit(f"usage: {sys.argv[0]} record-host OUT.npz")
    record_host(sys.argv[2])
