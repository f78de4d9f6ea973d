"""bench/dynet_treelstm.py, the DyNet peer of bench/treelstm.py: its logits
and loss on three small random trees against the child-sum Tree-LSTM's
equations in numpy (float64), without batching and with both autobatch
strategies the bench times."""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("dynet") is None,
    reason="dynet is not installed (dynet38, requirements-bench.txt: "
           "GROVE_BENCH=1 scripts/setup.sh); the DyNet peer is untested")

WORKER = os.path.join(ROOT, "bench", "dynet_treelstm.py")
V, D, H, C = 7, 4, 5, 3


def forest(rng, sizes):
    """make_batch's CSR forest of random trees; in each a node's parent
    has a smaller id, so reversed ids visit children before parents, and
    nodes 1-3 are the root's children (sums over three or more)."""
    parents = []
    for n in sizes:
        base = len(parents)
        parents += [-1] + [base + (0 if j <= 3 else int(rng.integers(0, j)))
                           for j in range(1, n)]
    parents = np.array(parents)
    kids = [np.flatnonzero(parents == v) for v in range(len(parents))]
    offsets = np.concatenate([[0], np.cumsum([len(k) for k in kids])])
    roots = np.flatnonzero(parents < 0)
    tokens = rng.integers(0, V, len(parents))
    labels = rng.integers(0, C, len(roots))
    return tuple(a.astype(np.int32) for a in (
        offsets, np.concatenate(kids), roots, tokens, labels))


def reference(w, b):
    """(logits, mean cross-entropy) from the equations, float64."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    off, ch, roots, tokens, labels = b
    sig = lambda z: 1 / (1 + np.exp(-z))
    h, c = {}, {}
    for v in reversed(range(len(tokens))):
        x, kids = w["embed"][tokens[v]], ch[off[v]:off[v + 1]]
        hsum = sum((h[k] for k in kids), np.zeros(H))
        iou = x @ w["iou.W"] + hsum @ w["iou.U"] + w["iou.b"]
        i, o, u = sig(iou[:H]), sig(iou[H:2 * H]), np.tanh(iou[2 * H:])
        c[v] = i * u + sum((sig(x @ w["f.W"] + h[k] @ w["f.U"] + w["f.b"])
                            * c[k] for k in kids), np.zeros(H))
        h[v] = o * np.tanh(c[v])
    z = np.stack([h[r] for r in roots]) @ w["out.weight"].T + w["out.bias"]
    zmax = z.max(1)
    lse = zmax + np.log(np.exp(z - zmax[:, None]).sum(1))
    return z, float(np.mean(lse - z[np.arange(len(roots)), labels]))


@pytest.fixture(scope="module")
def case(rng, tmp_path_factory):
    shapes = {"embed": (V, D), "iou.W": (D, 3 * H), "iou.U": (H, 3 * H),
              "iou.b": (3 * H,), "f.W": (D, H), "f.U": (H, H), "f.b": (H,),
              "out.weight": (C, H), "out.bias": (C,)}
    w = {k: (0.5 * rng.standard_normal(s)).astype(np.float32)
         for k, s in shapes.items()}
    # A lone leaf and two trees with inner nodes.
    b = forest(rng, (1, 7, 12))
    path = tmp_path_factory.mktemp("dynet") / "batch.npz"
    # The worker's own npz writer (its module imports dynet in main only).
    sys.path.insert(0, os.path.dirname(WORKER))
    import dynet_treelstm
    dynet_treelstm.save(path, w, [b])
    return path, reference(w, b)


@pytest.mark.parametrize("strategy", ["none", "agenda", "depth"])
def test_logits_and_loss(case, strategy, tmp_path):
    path, (z, loss) = case
    out = tmp_path / "logits.npy"
    # Training, so the (autobatched) backward and Adam step run too.
    r = subprocess.run([sys.executable, WORKER, "--strategy", strategy,
                        "--mode", "train", "--data", str(path), "--seconds",
                        "0", "--logits", str(out)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(np.load(out), z, rtol=0, atol=1e-5)
    assert abs(result["loss0"] - loss) < 1e-5
    assert result["trees_per_s"] > 0
