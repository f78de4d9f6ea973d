# REQUIRES: mpi
# RUN: %python %s
# bench/dist_bert.py's peers are one algorithm (docs/distributed.md, "CSER
# on BERT"): a small BERT masked LM (models/bert/generate.py, AdamW with
# the global clip at 0.05, so that every step clips) trained 6 steps on 2
# ranks under mpirun by bench/dist/bert_rank.py, once with Grove's dense
# data-parallel train_step and once with PyTorch DDP on gloo (its fp32
# all-reduce hook behind the rank's clipping hook): the held-out losses
# rank 0 reports after 0, 3 and 6 steps agree within 1e-4. Were DDP to
# clip the averaged gradient instead of each rank's, they would not. CSER
# (bench/dist_train.py's flags) runs too: its ranks step apart, so its
# losses differ from dense's, and stay finite.
import json
import math
import os
import socket
import sys
import tempfile

import numpy as np
from grove_dist import launch
from grove_testing import Model

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "models", "bert"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import generate  # noqa: E402
from dist_bert import save_data  # noqa: E402
from dist_train import CSER_FLAGS  # noqa: E402

RANK = os.path.join(ROOT, "bench", "dist", "bert_rank.py")
RANKS, STEPS, EVERY, K, MASK_ID = 2, 6, 3, 3, 4


def masked(rng, rows, cfg):
    """Rows of ordinary tokens with K of each masked: (ids, positions flat
    within the rows, labels)."""
    tokens = rng.integers(5, cfg.vocab, (rows, cfg.seq)).astype(np.int32)
    pos = np.sort(np.stack([rng.choice(cfg.seq, K, replace=False)
                            for _ in range(rows)]), 1)
    flat = (pos + (np.arange(rows) * cfg.seq)[:, None]).reshape(-1)
    ids = tokens.copy().reshape(-1)
    ids[flat] = MASK_ID
    return (ids.reshape(rows, cfg.seq), flat.astype(np.int32),
            tokens.reshape(-1)[flat])


def run(argv, data, port):
    env = {"GROVE_GLOO_IFNAME": "lo",
           "GROVE_GLOO_INIT": f"tcp://127.0.0.1:{port}"}
    code, out, _ = launch(RANK, argv + [f"{STEPS},{EVERY},0.01,{data}"],
                          RANKS, 300, env)
    lines = [l for l in out.splitlines() if l.startswith("{")]
    assert code == 0 and lines, out
    return [loss for _, loss in json.loads(lines[-1])["curve"]]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    work = tempfile.mkdtemp(prefix="grove-dist-bert-")
    cfg = generate.Config(layers=1, hidden=16, heads=2, seq=12, vocab=50,
                          batch=2, optimizer="adamw", lr=0.01, warmup=1,
                          total_steps=STEPS, max_grad_norm=0.05,
                          name="bert_dp")
    rng = np.random.default_rng(0)
    ids, pos, lab = masked(rng, STEPS * RANKS * cfg.batch, cfg)
    # Each rank's batch: its rows' positions rebased to the batch.
    rebased = pos.reshape(-1, K) % cfg.seq + \
        (np.arange(len(ids)) % cfg.batch * cfg.seq)[:, None]
    train = (ids.reshape(STEPS, RANKS, cfg.batch, cfg.seq),
             rebased.reshape(STEPS, RANKS, -1).astype(np.int32),
             lab.reshape(STEPS, RANKS, -1))
    save_data(work, cfg, generate.init(cfg, 0), train,
              masked(rng, 4 * cfg.batch, cfg))
    curves = {}
    for name, flags in (("bert_dp", []), ("bert_cser", CSER_FLAGS)):
        where = os.path.join(work, name)
        os.makedirs(where)
        cfg.name = name
        Model(generate.generate(cfg), name=name, workdir=where,
              grovec_flags=["--data-parallel", *flags])
        curves[name] = run(["grove", os.path.join(where, f"lib{name}.so")],
                           work, free_port())
    curves["torch"] = run(["torch", "none"], work, free_port())
    dense, torch, cser = curves["bert_dp"], curves["torch"], \
        curves["bert_cser"]
    assert len(dense) == len(torch) == len(cser) == STEPS // EVERY + 1
    worst = max(abs(a - b) / abs(a) for a, b in zip(dense, torch))
    assert worst < 1e-4, (dense, torch)
    assert dense[-1] < dense[0], dense
    assert all(math.isfinite(x) for x in cser) and cser[1:] != dense[1:], \
        (cser, dense)
    print(f"Grove dense and DDP agree over {STEPS} clipped steps on "
          f"{RANKS} ranks: held-out losses {', '.join(f'{x:.5f}' for x in dense)}"
          f" (worst {worst:.1e} relative); CSER "
          f"{', '.join(f'{x:.5f}' for x in cser)}")


if __name__ == "__main__":
    main()
