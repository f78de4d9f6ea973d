#!/usr/bin/env python3
"""Train Grove's reference MLP (64 -> 128 -> 10, ReLU) on scikit-learn's 8x8 digits.

Run with the project venv (Debian torch 1.13 + safetensors):

    .venv/bin/python models/mlp/train.py            # writes the files below
    .venv/bin/python models/mlp/train.py --check    # retrains, compares with the committed files

Outputs, next to this file (format in README.md):
  mlp.safetensors          fc1.weight [128,64], fc1.bias [128], fc2.weight [10,128], fc2.bias [10], f32
  digits_test.bin          held-out set: 16-byte header, inputs f32 [N,64], labels i32 [N]
  reference_accuracy.txt   torch's accuracy on the held-out set

Data: sklearn.datasets.load_digits (shipped inside scikit-learn, no download), inputs
scaled by 1/16, last 25% held out with train_test_split(test_size=0.25, random_state=0,
stratify=y). Training is deterministic: fixed seeds, one thread, deterministic algorithms.
"""
import argparse
import hashlib
import os
import struct
import sys

import numpy as np
import torch
from safetensors.numpy import load_file, save_file
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 0
EPOCHS = 60
BATCH = 32
LR = 1e-3

MAGIC = b"GRVD"  # Grove digits
VERSION = 1


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def load_split():
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int32)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)
    return x_tr, x_te, y_tr, y_te


def train(x_tr, y_tr):
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    model = MLP()
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    xt = torch.from_numpy(x_tr)
    yt = torch.from_numpy(y_tr.astype(np.int64))
    gen = torch.Generator().manual_seed(SEED)
    for _ in range(EPOCHS):
        perm = torch.randperm(len(xt), generator=gen)
        for i in range(0, len(xt), BATCH):
            idx = perm[i:i + BATCH]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
    return model


def accuracy(model, x, y):
    with torch.no_grad():
        pred = model(torch.from_numpy(x)).argmax(1).numpy()
    return float((pred == y).mean()), int((pred == y).sum())


def tensors_of(model):
    sd = model.state_dict()
    return {k: sd[k].detach().numpy().astype(np.float32).copy() for k in
            ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")}


def test_bin(x_te, y_te):
    n, d = x_te.shape
    return (struct.pack("<4sIII", MAGIC, VERSION, n, d)
            + np.ascontiguousarray(x_te, dtype="<f4").tobytes()
            + np.ascontiguousarray(y_te, dtype="<i4").tobytes())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=HERE, help="output directory (default: next to this script)")
    ap.add_argument("--check", action="store_true",
                    help="retrain and compare with the files in --out instead of writing them")
    args = ap.parse_args()

    x_tr, x_te, y_tr, y_te = load_split()
    model = train(x_tr, y_tr)
    acc, correct = accuracy(model, x_te, y_te)
    weights = tensors_of(model)
    blob = test_bin(x_te, y_te)
    acc_line = f"{acc:.6f}\n"
    meta = {"model": "mlp 64-128-10 relu", "dataset": "sklearn digits 8x8 /16, held-out 25% rs=0",
            "torch": torch.__version__}

    st_path = os.path.join(args.out, "mlp.safetensors")
    bin_path = os.path.join(args.out, "digits_test.bin")
    acc_path = os.path.join(args.out, "reference_accuracy.txt")

    if args.check:
        ok = True
        old = load_file(st_path)
        for k, v in weights.items():
            diff = float(np.abs(old[k] - v).max())
            print(f"{k}: max |diff| {diff:.3g}")
            ok &= diff < 1e-5
        ok &= open(bin_path, "rb").read() == blob
        ok &= open(acc_path).read() == acc_line
        print(f"accuracy {acc:.6f}; files {'match' if ok else 'DIFFER'}")
        return 0 if ok else 1

    os.makedirs(args.out, exist_ok=True)
    save_file(weights, st_path, metadata=meta)
    with open(bin_path, "wb") as f:
        f.write(blob)
    with open(acc_path, "w") as f:
        f.write(acc_line)
    print(f"train {len(x_tr)} / held-out {len(x_te)} samples; torch {torch.__version__}")
    print(f"reference accuracy (torch, held-out): {acc:.6f} ({correct}/{len(y_te)})")
    for p in (st_path, bin_path, acc_path):
        h = hashlib.sha256(open(p, "rb").read()).hexdigest()[:16]
        print(f"wrote {os.path.relpath(p)} ({os.path.getsize(p)} bytes, sha256 {h}…)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
