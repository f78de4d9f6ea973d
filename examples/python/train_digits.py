#!/usr/bin/env python3
"""Defines the digits MLP in Python (grove.nn), compiles its forward and its
train_step (forward, backward and Adam in one call) and trains it on
scikit-learn's digits.

    .venv/bin/python examples/python/train_digits.py [--epochs 30]
        [--logdir runs/digits] [--expect-accuracy A]

Per epoch: a tqdm bar over the batches (on a terminal only; a log gets one
line an epoch), the mean training loss and the held-out accuracy, written
to <logdir>/metrics.csv and as TensorBoard scalars; the last state goes to
<logdir>/digits.safetensors (the C API's checkpoint format).
"""
import argparse
import os
import sys

import numpy as np
from tqdm import tqdm

import grove
from common import Loader, Metrics
from grove import ir, nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models", "mlp"))
from train import load_split  # noqa: E402  (models/mlp's split)

BATCH = 32


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--logdir", default="runs/digits")
    ap.add_argument("--expect-accuracy", type=float, default=0.0)
    a = ap.parse_args()

    x_tr, x_te, y_tr, y_te = load_split()
    x_tr, x_te = x_tr.astype(np.float32), x_te.astype(np.float32)
    y_tr, y_te = y_tr.astype(np.int32), y_te.astype(np.int32)
    # 64 -> 128 -> 10 with a ReLU (models/mlp_train is the same network).
    m = ir.Module("digits")
    net = nn.Sequential(nn.Dense(128, activation="relu"), nn.Dense(10))
    f = m.function("forward", [("x", (None, 64))], [("logits", (None, 10))])
    f.builder.ret(net(f.builder, f.args[0]))
    nn.train_step(m, f, "adam", lr=1e-3)
    model = grove.load(grove.compile(m.text()))
    model.load_state_dict(m.init_weights(seed=0))  # PyTorch's Linear init
    loader = Loader(len(x_tr), BATCH, lambda i: (x_tr[i], y_tr[i]))
    metrics = Metrics(a.logdir, ["loss", "accuracy"])
    print(f"digits MLP: {len(x_tr)} training and {len(x_te)} held-out "
          f"digits, batch {BATCH}")
    for epoch in range(1, a.epochs + 1):
        losses = [float(model.train_step(x, y)) for x, y in tqdm(
            loader, desc=f"epoch {epoch}", leave=False, disable=None)]
        accuracy = float((model.forward(x_te).argmax(1) == y_te).mean())
        loss = float(np.mean(losses))
        print(f"epoch {epoch:2d}: loss {loss:.6f}, held-out accuracy "
              f"{accuracy:.4f}", flush=True)
        metrics.log(epoch, {"loss": loss, "accuracy": accuracy})
    metrics.close()
    model.save(os.path.join(a.logdir, "digits.safetensors"))
    if accuracy < a.expect_accuracy:
        sys.exit(f"held-out accuracy {accuracy:.4f} is below "
                 f"{a.expect_accuracy}")


if __name__ == "__main__":
    main()
