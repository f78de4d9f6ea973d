# RUN: %python %s
# BERT-tiny (2 layers, hidden 128, 2 heads; models/bert/generate.py) trained
# by masked-LM on the corpus (build/data/bert, docs/bert.md) for 300 steps of
# 8 sequences of 64 tokens, LANS with warm-up and decay, twice from the same
# weights on the same batches: in f32 and under `--autocast bf16` (the
# module's #grove.autocast: matmuls and attention in bf16, f32 params and
# optimizer). The bf16 curve tracks the f32 one: the mean loss of every 30
# steps within 1% of f32's, the last 30 steps within 0.5%; both learn (the
# last 30 steps at least 1.0 below the first 30). A bf16 step differs from
# an f32 one (the policy ran). The first step's loss against PyTorch's
# reference model (models/bert/reference.py) on the same weights and batch,
# in float64 (f32: rtol 1e-5; bf16: rtol 2e-2) and, on a GPU, under
# torch.autocast to bf16 on it (bf16: rtol 2e-2; torch 1.13's CPU autocast
# cannot run the model: its layer_norm refuses bf16 input with f32
# weights). Takes about a
# minute on the host; the GPU check runs it on the GPU (the corpus from
# GROVE_BERT_DATA).
import os
import subprocess
import sys
import time

import numpy as np
import torch
from grove_testing import Model
from grove_testing import rng as fresh_rng

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models", "bert"))
import corpus  # noqa: E402
import generate  # noqa: E402
import reference  # noqa: E402

SEQ, BATCH, STEPS, WINDOW = 64, 8, 300, 30


def batches(c, rng):
    specials = (c.pad_id, c.unk_id, c.cls_id, c.sep_id, c.mask_id)
    rows = corpus.sequences(c.train, SEQ, c.cls_id, c.sep_id)
    out = []
    for _ in range(STEPS):
        x = rows[rng.choice(len(rows), BATCH, replace=False)]
        out.append(reference.masking(x, rng, len(c.vocab), mask_id=c.mask_id,
                                     special_ids=specials))
    return out


def train(m, weights, data):
    for k, v in weights.items():
        m.set_weight(k, v)
    t0 = time.perf_counter()
    losses = np.array([float(m.call("train_step", *b)[0]) for b in data])
    return losses, (time.perf_counter() - t0) / len(data)


def torch_loss(cfg, weights, b, autocast):
    device = "cuda" if autocast else "cpu"
    dtype = torch.float32 if autocast else torch.float64
    p = {k: torch.tensor(v, dtype=dtype, device=device)
         for k, v in weights.items()}
    ids, pos, labels = (torch.tensor(a, dtype=torch.int64, device=device)
                        for a in b)
    with torch.autocast(device, dtype=torch.bfloat16, enabled=autocast):
        z = reference.mlm_logits(p, cfg, ids, pos)
        return float(torch.nn.functional.cross_entropy(z.float(), labels))


def main():
    c = corpus.load(os.environ.get("GROVE_BERT_DATA", corpus.DEFAULT_DIR))
    rng = fresh_rng()
    base = dict(layers=2, hidden=128, heads=2, seq=SEQ, vocab=len(c.vocab),
                batch=BATCH, pad_id=c.pad_id, lr=2e-3, warmup=30,
                total_steps=STEPS)
    f32 = generate.Config(**base)
    bf16 = generate.Config(**base, autocast="bf16")
    # Both models first: a compile-only run ends at the first call.
    m32, m16 = (Model(generate.generate(cfg), name="bert")
                for cfg in (f32, bf16))
    weights = generate.init(f32, int(rng.integers(1 << 30)))
    data = batches(c, rng)
    l32, t32 = train(m32, weights, data)
    l16, t16 = train(m16, weights, data)
    ref64 = torch_loss(f32, weights, data[0], autocast=False)
    assert abs(l32[0] - ref64) <= 1e-5 * ref64, (l32[0], ref64)
    assert abs(l16[0] - ref64) <= 2e-2 * ref64, (l16[0], ref64)
    ref16 = float("nan")
    if torch.cuda.is_available():
        ref16 = torch_loss(f32, weights, data[0], autocast=True)
        assert abs(l16[0] - ref16) <= 2e-2 * ref16, (l16[0], ref16)
    assert np.all(np.isfinite(l16)) and np.all(np.isfinite(l32))
    assert l16[0] != l32[0], "bf16 and f32 first losses are equal"
    if os.environ.get("GROVE_TEST_TARGET", "host") == "host":
        # The bf16 model's GEMMs are the runtime's bf16 services.
        for m, want in ((m16, True), (m32, False)):
            so = os.path.join(m.workdir, "libbert.so")
            syms = subprocess.run(["nm", "-D", "--undefined-only", so],
                                  capture_output=True, text=True,
                                  check=True).stdout
            assert ("grove_rt_matmul_bf16" in syms) == want, syms
    worst = 0.0
    for k in range(0, STEPS, WINDOW):
        a, b = l32[k:k + WINDOW].mean(), l16[k:k + WINDOW].mean()
        rel = abs(b - a) / a
        worst = max(worst, rel)
        assert rel <= 0.01, f"steps {k}-{k + WINDOW}: f32 {a:.4f}, bf16 {b:.4f}"
    first, last = l32[:WINDOW].mean(), l32[-WINDOW:].mean()
    last16 = l16[-WINDOW:].mean()
    assert abs(last16 - last) <= 0.005 * last, (last16, last)
    assert last <= first - 1.0 and last16 <= l16[:WINDOW].mean() - 1.0, (
        first, last, last16)
    print(f"BERT-tiny MLM, {STEPS} steps of {BATCH}x{SEQ}: f32 {first:.3f} -> "
          f"{last:.3f}, bf16 -> {last16:.3f}; 30-step means within "
          f"{worst:.2%}; {t32 * 1e3:.0f} ms (f32) and {t16 * 1e3:.0f} ms "
          f"(bf16) a step; first loss {l32[0]:.5f} (torch f64 {ref64:.5f}), "
          f"bf16 {l16[0]:.5f} (torch autocast on the GPU {ref16:.5f})")


if __name__ == "__main__":
    main()
