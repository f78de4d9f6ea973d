#!/usr/bin/env python3
"""Writes cnn_train.mlir: a small CNN for the 8x8 digits, with its train step.

    python3 models/cnn_train/generate.py > models/cnn_train/cnn_train.mlir

Two blocks of 3x3 conv (with bias), batch norm, ReLU and 2x2 max pool (16
and 32 channels), then a linear layer. `forward` normalises by the running
statistics; `train_step` calls the private @logits_train, the same network
built in training form (batch statistics, the running ones updated as
state), and takes an Adam step over every weight.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import grove_path  # noqa: E402,F401  (grove: installed, else the tree's)
from grove import ir, nn  # noqa: E402

HEADER = """\
A small CNN for the 8x8 digits: two blocks of 3x3 conv, batch norm, ReLU
and 2x2 max-pool (16 and 32 channels), then a linear layer. `train_step`
normalises by batch statistics (the running ones updated as state) and
takes an Adam step over every weight, in one call; `forward` is the
inference form over the running statistics. examples/train_digits
trains it from scratch with --model cnn (docs/training.md).
Written by models/cnn_train/generate.py (grove.nn); do not edit."""


class CNN(nn.Block):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(16, 3, padding=1, use_bias=True)
        self.bn1 = nn.BatchNorm()
        self.conv2 = nn.Conv2D(32, 3, padding=1, use_bias=True)
        self.bn2 = nn.BatchNorm()
        self.fc = nn.Dense(10)

    def forward(self, b, x):
        x = b.reshape(x, (x.shape[0], 1, 8, 8), name="img")
        for conv, bn in ((self.conv1, self.bn1), (self.conv2, self.bn2)):
            x = b.relu(bn(b, conv(b, x)))
            x = b.pool2d("max", x, (2, 2), (2, 2))
        return self.fc(b, b.flatten(x))


def generate():
    m = ir.Module("cnn_train", header=HEADER)
    net = CNN()
    image = [("x", (None, 64))]
    f = m.function("forward", image, [("logits", (None, 10))])
    f.builder.ret(net(f.builder, f.args[0]))
    t = m.function("logits_train", image, [(None, 10)], private=True,
                   training=True)
    t.builder.ret(net(t.builder, t.args[0]))
    nn.train_step(m, t, "adam", lr=2e-3)
    return m.text()


if __name__ == "__main__":
    sys.stdout.write(generate())
