"""Writes the digits training split for examples/train_digits.

    .venv/bin/python examples/train_digits/make_data.py OUT/digits_train.bin

The 1,347 training samples of models/mlp/train.py's split (scikit-learn's
load_digits, shipped inside the package: nothing is downloaded), in the
format of models/mlp/digits_test.bin (models/mlp/README.md), which holds
the 450 held-out ones. Deterministic: the same bytes every run.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "models", "mlp"))
from train import load_split, test_bin  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    x_tr, _, y_tr, _ = load_split()
    with open(sys.argv[1], "wb") as f:
        f.write(test_bin(x_tr, y_tr))


if __name__ == "__main__":
    main()
