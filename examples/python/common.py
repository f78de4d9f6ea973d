"""What the Python training examples share: a data loader, the initial
weights, and the metrics log (CSV and TensorBoard event files)."""
import csv
import os

import numpy as np


class Loader:
    """Mini-batches of a dataset in a new shuffled order every epoch, from a
    seeded generator (the same run every time). `collate` turns a list of
    sample indices into the entry's arguments."""

    def __init__(self, size, batch, collate, seed=0):
        self.size, self.batch, self.collate = size, batch, collate
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return (self.size + self.batch - 1) // self.batch

    def __iter__(self):
        order = self.rng.permutation(self.size)
        for start in range(0, self.size, self.batch):
            yield self.collate(order[start:start + self.batch])


def init_weights(model, rng, bounds):
    """Every weight of `model` from U(-b, b), b = bounds(name, shape) (0:
    zeros), as PyTorch initialises nn.Linear."""
    for p in model.params:
        if p.kind == "weight":
            b = bounds(p.name, p.shape)
            model[p.name] = (b * (2 * rng.random(p.shape) - 1)).astype(
                np.float32)


class Metrics:
    """One row an epoch in <logdir>/metrics.csv and the same scalars in a
    TensorBoard event file (tensorboardX's writer) in <logdir>."""

    def __init__(self, logdir, fields):
        from tensorboardX import SummaryWriter
        os.makedirs(logdir, exist_ok=True)
        self.fields = fields
        self.file = open(os.path.join(logdir, "metrics.csv"), "w", newline="")
        self.csv = csv.writer(self.file)
        self.csv.writerow(["epoch"] + fields)
        self.tb = SummaryWriter(logdir)

    def log(self, epoch, values):
        self.csv.writerow([epoch] + [f"{values[f]:.6f}" for f in self.fields])
        self.file.flush()
        for f in self.fields:
            self.tb.add_scalar(f, values[f], epoch)

    def close(self):
        self.file.close()
        self.tb.close()
