#!/usr/bin/env python3
"""Writes mlp_train.mlir: the digits MLP of models/mlp with its train step.

    python3 models/mlp_train/generate.py > models/mlp_train/mlp_train.mlir

64 -> 128 -> 10 with a ReLU, PyTorch's Linear names (fc1, fc2); `forward`
gives the logits, `train_step(x, labels) -> loss` takes the cross-entropy
of a batch and one Adam step over every weight, in one call.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import grove_path  # noqa: E402,F401  (grove: installed, else the tree's)
from grove import ir, nn  # noqa: E402

HEADER = """\
The digits MLP of models/mlp (64 -> 128 -> 10, ReLU) with its training
step: cross-entropy on a batch, Adam over every weight, in one call.
examples/train_digits trains it from scratch (docs/training.md).
Written by models/mlp_train/generate.py (grove.nn); do not edit."""


class MLP(nn.Block):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(128, activation="relu")
        self.fc2 = nn.Dense(10)

    def forward(self, b, x):
        return self.fc2(b, self.fc1(b, x))


def generate():
    m = ir.Module("mlp_train", header=HEADER)
    f = m.function("forward", [("x", (None, 64))], [("logits", (None, 10))])
    f.builder.ret(MLP()(f.builder, f.args[0]))
    nn.train_step(m, f, "adam", lr=1e-3)
    return m.text()


if __name__ == "__main__":
    sys.stdout.write(generate())
