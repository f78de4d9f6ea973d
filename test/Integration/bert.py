# RUN: %python %s
# The BERT-style masked LM of models/bert/generate.py, compiled and called
# through the C ABI, against the PyTorch model of models/bert/reference.py
# on fresh random weights and batches (BERT's 15% masking, 80/10/10, from
# reference.masking; one row ends in [PAD]s, which the attention masks):
#  * f64, 2 layers, hidden 32, sequence 16, vocabulary 64, batch 3, in two
#    configurations: post-LN, 2 heads, erf GELU, max_grad_norm 0.05 (every
#    step clipped); pre-LN, 4 heads, intermediate 48, tanh GELU,
#    max_grad_norm 100 (none clipped). Params random around BERT's init
#    (biases and LayerNorm params not at 0 and 1, so a miswired one shows):
#    mlm_logits and mlm_loss against torch float64, rtol 1e-10; then 3
#    train_steps (one grove.lans over every param, BERT's decay groups,
#    global norm clip, polynomial schedule with 1 warm-up step over 4
#    steps, so the rates are 0, lr, 2/3 lr) against torch's gradients,
#    torch.nn.utils.clip_grad_norm_ and the float64 LANS of
#    test/lib/reference_optimizers.py: the loss of each step (rtol 1e-10),
#    and after the third every param and every LANS moment (.lans.m,
#    .lans.v) within 1e-9 of its tensor's largest magnitude, and
#    lans.step = 3. The attention's key biases are the exception: their
#    gradient is zero but for rounding, which LANS's normalisation and
#    trust ratio turn into steps of lr·|p| in directions set by that
#    rounding, in Grove and the reference alike; they are checked by
#    bounds (noise_only);
#  * f64, dynamic batch (no train_step): mlm_logits at batch 1 and 4,
#    rtol 1e-10;
#  * f32, BERT-tiny's shape (2 layers, hidden 128, 2 heads, sequence 128,
#    batch 2, vocabulary 512) from generate.init's weights (a safetensors
#    file loaded by the runtime): mlm_loss against torch float32 and
#    float64, rtol 5e-6; mlm_logits against float64, atol 2e-5; three
#    train_steps, each loss against float64 LANS, rtol 1e-5.
# Attention is one grove.attention (tiled over the keys) in every model but
# bert_pre, which writes it in primitive ops: both forms meet the same
# bounds. Also: an id outside the vocabulary fails every entry
# (GROVE_ERROR_INVALID_ARGUMENT) and changes no state, and a dropout
# probability other than 0 is refused by the generator (its hook is not
# wired yet). Prints compile and call timings.
import concurrent.futures
import os
import sys
import tempfile
import time

import numpy as np
import reference_optimizers as ref_opt
import torch
from grove_testing import GroveError, Model, assert_close, rng

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "models", "bert"))
import generate  # noqa: E402
import reference  # noqa: E402

GROVE_ERROR_INVALID_ARGUMENT = 1
STEPS = 3
NOISE_ONLY = (".attention.self.key.bias",)
SMALL = dict(layers=2, hidden=32, seq=16, vocab=64, max_positions=20, batch=3,
             dtype="f64", lr=0.05, warmup=1, total_steps=4)
CONFIGS = {
    "bert_post": generate.Config(heads=2, pre_ln=False, act="gelu",
                                 max_grad_norm=0.05, name="bert_post",
                                 **SMALL),
    # Attention in primitive ops (every other model uses grove.attention).
    "bert_pre": generate.Config(heads=4, intermediate=48, pre_ln=True,
                                act="gelu_tanh", max_grad_norm=100.0,
                                decomposed_attention=True,
                                name="bert_pre", **SMALL),
    "bert_dyn": generate.Config(layers=1, hidden=16, heads=2, seq=8, vocab=40,
                                max_positions=8, batch="?", dtype="f64",
                                name="bert_dyn"),
    "bert_tiny": generate.Config(layers=2, hidden=128, heads=2, seq=128,
                                 vocab=512, batch=2, dtype="f32", lr=1e-3,
                                 warmup=1, total_steps=10, name="bert_tiny"),
}
r = rng()
work = tempfile.mkdtemp(prefix="grove-bert-")


def tokens(cfg, batch, pad_tail=0):
    """Rows [CLS] t... [SEP] of ordinary tokens; the last row's final
    `pad_tail` places hold [PAD] (after its [SEP])."""
    t = r.integers(5, cfg.vocab, (batch, cfg.seq))
    t[:, 0], t[:, -1] = 2, 3
    if pad_tail:
        t[-1, -pad_tail:] = 0
        t[-1, -pad_tail - 1] = 3
    return t


def batch_of(cfg, batch, pad_tail=0):
    return reference.masking(tokens(cfg, batch, pad_tail), r, cfg.vocab)


def random_params(cfg):
    """Around BERT's init, with every bias and LayerNorm param moved off
    0 and 1 so that a miswired one changes the outputs."""
    p = generate.init(cfg, seed=int(r.integers(2**31)))
    for name, a in p.items():
        if generate.is_bias(name) or generate.is_layer_norm(name):
            a += r.normal(0.0, 0.1, a.shape)
        else:
            a *= 10.0  # std 0.2: attention far from uniform
    return p


def compile_all():
    """Every model at once (grovec runs in its own process)."""
    def build(item):
        name, cfg = item
        path = os.path.join(work, name + ".mlir")
        with open(path, "w") as f:
            f.write(generate.generate(cfg))
        t0 = time.perf_counter()
        m = Model(path, name=name, workdir=os.path.join(work, name))
        return name, m, time.perf_counter() - t0

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        out = {}
        for name, m, secs in pool.map(build, CONFIGS.items()):
            out[name] = m
            print(f"{name}: compiled and linked in {secs:.1f} s")
        return out


def best_time(run, repeat=5):
    """The fastest of `repeat` calls (the first also warms the allocator)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return best


def scale_close(got, want, tol, what):
    """|got - want| <= tol * max|want| over the tensor."""
    want = np.asarray(want, dtype=np.float64)
    bound = tol * max(float(np.abs(want).max()), 1e-300)
    err = assert_close(got, want, 0.0, bound, what)
    return err / bound * tol


def noise_only(model, n, ref_state, before, cfg):
    """A key bias: q·(k + b) adds q·b to every score of a query, which the
    softmax ignores, so its gradient is 0 but for rounding (|g| ~ 1e-16
    here). LANS divides g by its norm and the trust ratio scales the step
    to lr·|p| whatever |u| is: Grove and the reference both move it by
    about that much, in directions set by rounding noise, so it is checked
    by bounds: moments at noise level in both, and a move of at most
    lr_t·|p| per step (its weight decay is 0)."""
    for slot, bound in (("m", 1e-8), ("v", 1e-16)):
        got = np.abs(model.get_weight(f"{n}.lans.{slot}")).max()
        want = np.abs(ref_state[slot]).max()
        assert got < bound and want < bound, \
            f"{n}.lans.{slot}: {got:.3g} (reference {want:.3g}) not noise"
    after = model.get_weight(n)
    moved = np.linalg.norm(after - before)
    size, allowed = np.linalg.norm(before), 0.0
    for t in range(STEPS):
        step = reference.polynomial_lr(t, cfg.lr, cfg.warmup, cfg.total_steps)
        allowed += step * size
        size *= 1 + step
    assert moved <= allowed * (1 + 1e-9), f"{n} moved {moved} > {allowed}"


def check_small(name, model):
    cfg = CONFIGS[name]
    specs = generate.param_specs(cfg)
    params = random_params(cfg)
    path = os.path.join(work, name + ".safetensors")
    from safetensors.numpy import save_file
    save_file(params, path)
    model.load_weights(path)
    ref = reference.load(path, torch.float64, requires_grad=True)
    assert set(ref) == {n for n, _ in specs}

    # Inference.
    ids, pos, labels = batch_of(cfg, cfg.batch, pad_tail=5)
    (logits,) = model.call("mlm_logits", ids, pos)
    t_logits = best_time(model.bind("mlm_logits", ids, pos))
    with torch.no_grad():
        want = reference.mlm_logits(ref, cfg, ids, pos).numpy()
    assert_close(logits, want, 1e-10, 1e-12, f"{name} mlm_logits")
    (loss,) = model.call("mlm_loss", ids, pos, labels)
    with torch.no_grad():
        want = reference.mlm_loss(ref, cfg, ids, pos, labels).item()
    assert_close(loss, want, 1e-10, 0, f"{name} mlm_loss")
    assert model.get_weight("lans.step") == 0, "mlm_loss wrote state"

    # An id outside the vocabulary fails every entry before it runs (and
    # writes nothing).
    bad = ids.copy()
    bad[1, 3] = cfg.vocab
    for entry, args in (("train_step", (bad, pos, labels)),
                        ("mlm_loss", (bad, pos, labels)),
                        ("mlm_logits", (bad, pos))):
        try:
            model.call(entry, *args)
            raise AssertionError(f"{entry} accepted an id outside the "
                                 "vocabulary")
        except GroveError as e:
            assert e.status == GROVE_ERROR_INVALID_ARGUMENT, e
            assert "input_ids" in e.message, e.message
    assert model.get_weight("lans.step") == 0, "a refused step wrote state"

    # Training.
    order = [ref[n] for n, _ in specs]
    opt = ref_opt.LANS(order, lr=cfg.lr, beta1=cfg.beta1, beta2=cfg.beta2,
                       eps=cfg.epsilon,
                       weight_decays=generate.weight_decays(cfg),
                       trust_mask=[True] * len(specs))
    clipped, t_step = 0, []
    for step in range(STEPS):
        ids, pos, labels = batch_of(cfg, cfg.batch, pad_tail=2 + step)
        t0 = time.perf_counter()
        (loss,) = model.call("train_step", ids, pos, labels)
        t_step.append(time.perf_counter() - t0)
        opt.zero_grad()
        want = reference.mlm_loss(ref, cfg, ids, pos, labels)
        want.backward()
        norm = torch.nn.utils.clip_grad_norm_(order, cfg.max_grad_norm)
        clipped += float(norm) > cfg.max_grad_norm
        # Grove's schedule reads the steps taken before this one.
        opt.hyper["lr"] = reference.polynomial_lr(
            step, cfg.lr, cfg.warmup, cfg.total_steps)
        opt.step()
        assert_close(loss, want.item(), 1e-10, 0, f"{name} loss at step {step}")
    assert model.get_weight("lans.step") == STEPS
    worst = 0.0
    for n, _ in specs:
        if n.endswith(NOISE_ONLY):
            noise_only(model, n, opt.state[ref[n]], params[n], cfg)
            continue
        worst = max(worst, scale_close(model.get_weight(n),
                                       ref[n].detach().numpy(), 1e-9,
                                       f"{name} {n} after {STEPS} steps"))
        st = opt.state[ref[n]]
        for slot in ("m", "v"):
            worst = max(worst, scale_close(
                model.get_weight(f"{n}.lans.{slot}"), st[slot], 1e-9,
                f"{name} {n}.lans.{slot} after {STEPS} steps"))
    print(f"{name}: logits, loss and {STEPS} LANS steps match "
          f"({len(specs)} params and their moments, the key biases within "
          f"bounds; {clipped} of {STEPS} "
          f"steps clipped; worst error {worst:.2g} of a tensor's scale); "
          f"mlm_logits {t_logits * 1e3:.2f} ms, train_step "
          f"{min(t_step) * 1e3:.2f} ms (best of {STEPS})")
    return clipped


def check_dynamic(model):
    cfg = CONFIGS["bert_dyn"]
    params = random_params(cfg)
    for n, a in params.items():
        model.set_weight(n, a)
    ref = reference.from_numpy(params)
    for batch in (1, 4):
        ids, pos, labels = batch_of(cfg, batch, pad_tail=2)
        (logits,) = model.call("mlm_logits", ids, pos)
        with torch.no_grad():
            want = reference.mlm_logits(ref, cfg, ids, pos).numpy()
        assert_close(logits, want, 1e-10, 1e-12, f"bert_dyn logits batch {batch}")
    print("bert_dyn: mlm_logits at batch 1 and 4 match")


def check_tiny(model):
    cfg = CONFIGS["bert_tiny"]
    specs = generate.param_specs(cfg)
    path = os.path.join(work, "bert_tiny.safetensors")
    generate.init(cfg, seed=int(r.integers(2**31)), path=path)
    model.load_weights(path)
    p32 = reference.load(path, torch.float32)
    p64 = reference.load(path, torch.float64, requires_grad=True)
    ids, pos, labels = batch_of(cfg, cfg.batch, pad_tail=7)
    (loss,) = model.call("mlm_loss", ids, pos, labels)
    t_loss = best_time(model.bind("mlm_loss", ids, pos, labels))
    with torch.no_grad():
        l32 = reference.mlm_loss(p32, cfg, ids, pos, labels).item()
        l64 = reference.mlm_loss(p64, cfg, ids, pos, labels).item()
        want = reference.mlm_logits(p64, cfg, ids, pos).numpy()
    first = float(loss)
    assert_close(loss, l32, 5e-6, 0, "bert_tiny mlm_loss vs torch f32")
    assert_close(loss, l64, 5e-6, 0, "bert_tiny mlm_loss vs torch f64")
    (logits,) = model.call("mlm_logits", ids, pos)
    err = assert_close(logits, want, 0, 2e-5, "bert_tiny mlm_logits vs f64")
    order = [p64[n] for n, _ in specs]
    opt = ref_opt.LANS(order, lr=cfg.lr, beta1=cfg.beta1, beta2=cfg.beta2,
                       eps=cfg.epsilon,
                       weight_decays=generate.weight_decays(cfg),
                       trust_mask=[True] * len(specs))
    t_step, worst = [], 0.0
    for step in range(STEPS):
        if step:
            ids, pos, labels = batch_of(cfg, cfg.batch)
        t0 = time.perf_counter()
        (loss,) = model.call("train_step", ids, pos, labels)
        t_step.append(time.perf_counter() - t0)
        opt.zero_grad()
        want = reference.mlm_loss(p64, cfg, ids, pos, labels)
        want.backward()
        torch.nn.utils.clip_grad_norm_(order, cfg.max_grad_norm)
        opt.hyper["lr"] = reference.polynomial_lr(step, cfg.lr, cfg.warmup,
                                                  cfg.total_steps)
        opt.step()
        assert_close(loss, want.item(), 1e-5, 0, f"bert_tiny loss at step {step}")
        worst = max(worst, abs(float(loss) / want.item() - 1))
    print(f"bert_tiny (f32): mlm_loss off torch f32 by {abs(first - l32):.2g}, "
          f"f64 by {abs(first - l64):.2g} (loss {l64:.4f}); logits within "
          f"{err:.2g} of f64; {STEPS} train_steps' losses within {worst:.2g} "
          f"relative; mlm_loss "
          f"{t_loss * 1e3:.1f} ms, train_step {min(t_step) * 1e3:.1f} ms (best of "
          f"{len(t_step)})")


def main():
    try:
        generate.Config(dropout=0.1)
        raise AssertionError("dropout 0.1 accepted")
    except ValueError as e:
        assert "dropout" in str(e), e
    models = compile_all()
    clipped = check_small("bert_post", models["bert_post"])
    assert clipped == STEPS, f"bert_post: {clipped} of {STEPS} steps clipped"
    clipped = check_small("bert_pre", models["bert_pre"])
    assert clipped == 0, f"bert_pre: {clipped} steps clipped"
    check_dynamic(models["bert_dyn"])
    check_tiny(models["bert_tiny"])
    print("bert: all checks passed")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"bert: {time.perf_counter() - t0:.1f} s in all")
