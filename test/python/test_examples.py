"""examples/python: digits and the Tree-LSTM trained from Python. Piped
(not a terminal) they print one line an epoch and no progress bars; the
CSV and the TensorBoard event file hold the same per-epoch scalars; the
models learn (held-out accuracy above a floor well over chance)."""
import csv
import glob
import os
import struct
import subprocess
import sys

import pytest

from conftest import ROOT

EXAMPLES = os.path.join(ROOT, "examples", "python")


def run_example(args, tmp_path):
    proc = subprocess.run([sys.executable] + args, cwd=tmp_path,
                          capture_output=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert b"\r" not in proc.stdout + proc.stderr
    return proc.stdout.decode()


def tensorboard_scalars(logdir):
    """{tag: [(step, value)]} from the event file, read frame by frame
    (TFRecord: length, its CRC, the Event proto, its CRC)."""
    from tensorboardX.proto import event_pb2
    [path] = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    data = open(path, "rb").read()
    at, scalars = 0, {}
    while at < len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        event = event_pb2.Event.FromString(data[at + 12:at + 12 + length])
        at += 12 + length + 4
        for v in event.summary.value:
            scalars.setdefault(v.tag, []).append((event.step, v.simple_value))
    return scalars


def check_metrics(logdir, epochs):
    rows = list(csv.DictReader(open(os.path.join(logdir, "metrics.csv"))))
    assert [int(r["epoch"]) for r in rows] == list(range(1, epochs + 1))
    tb = tensorboard_scalars(logdir)
    for field in ("loss", "accuracy"):
        assert [s for s, _ in tb[field]] == list(range(1, epochs + 1))
        for (_, v), r in zip(tb[field], rows):
            assert v == pytest.approx(float(r[field]), abs=1e-6)
    return rows


def test_train_digits(tmp_path):
    out = run_example([os.path.join(EXAMPLES, "train_digits.py"),
                       "--epochs", "12", "--logdir", "run",
                       "--expect-accuracy", "0.93"], tmp_path)
    assert out.count("epoch ") == 12, out
    rows = check_metrics(tmp_path / "run", 12)
    assert float(rows[-1]["loss"]) < float(rows[0]["loss"]) / 4
    assert (tmp_path / "run" / "digits.safetensors").stat().st_size > 0


def test_train_trees(tmp_path):
    data = tmp_path / "trees.bin"
    subprocess.run([sys.executable, os.path.join(
        ROOT, "examples", "train_trees", "make_data.py"), str(data)],
        check=True, capture_output=True)
    out = run_example([os.path.join(EXAMPLES, "train_trees.py"), str(data),
                       "--epochs", "3", "--logdir", "run",
                       "--expect-accuracy", "0.5"], tmp_path)
    assert out.count("epoch ") == 3, out
    check_metrics(tmp_path / "run", 3)
