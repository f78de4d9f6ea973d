# RUN: %python %s
# The shipped MLP compiled by grovec vs the same network in PyTorch, with the
# shipped weights and with fresh random weights, on random batches of several
# sizes (the batch dimension is dynamic). Tolerance: rtol 1e-4, atol 1e-5.
import os
import numpy as np
import torch
from safetensors.numpy import load_file
from grove_testing import Model, assert_close, rng

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "models", "mlp")
model = Model(os.path.join(SRC, "mlp.mlir"), name="mlp")

def torch_mlp(w, x):
    t = {k: torch.from_numpy(v) for k, v in w.items()}
    h = torch.relu(torch.from_numpy(x) @ t["fc1.weight"].T + t["fc1.bias"])
    return (h @ t["fc2.weight"].T + t["fc2.bias"]).numpy()

r = rng()
shipped = load_file(os.path.join(SRC, "mlp.safetensors"))
model.load_weights(os.path.join(SRC, "mlp.safetensors"))
worst = 0.0
for n in (1, 2, 64, 257):
    x = r.random((n, 64), dtype=np.float32)
    (got,) = model.call("forward", x)
    worst = max(worst, assert_close(got, torch_mlp(shipped, x), 1e-4, 1e-5,
                                    f"shipped weights, batch {n}"))

random_w = {
    "fc1.weight": r.standard_normal((128, 64)).astype(np.float32) * 0.1,
    "fc1.bias": r.standard_normal(128).astype(np.float32),
    "fc2.weight": r.standard_normal((10, 128)).astype(np.float32) * 0.1,
    "fc2.bias": r.standard_normal(10).astype(np.float32),
}
for k, v in random_w.items():
    model.set_weight(k, v)
for n in (3, 100):
    x = r.standard_normal((n, 64)).astype(np.float32)
    (got,) = model.call("forward", x)
    worst = max(worst, assert_close(got, torch_mlp(random_w, x), 1e-4, 1e-5,
                                    f"random weights, batch {n}"))
print(f"mlp: logits match PyTorch, max abs error {worst:.2e}")
