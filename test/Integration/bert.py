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
# bounds. Dropout (train_step only): bert_pre has BERT's four (hidden 0.1,
# attention probabilities 0.2), bert_tiny the hidden three (0.1, its
# train_step keeps grove.attention); bert_post and bert_dyn none. Grove
# draws the masks with Philox from @dropout.seed (set at random here),
# @dropout.offset and each place's stream (generate.dropout_streams); the
# test recomputes them with test/Integration/dropout.py's numpy Philox and
# gives them to the reference, so the train_steps above are checked exactly
# with dropout too (bert_pre in f64 to the same bounds, bert_tiny in f32
# against float64). Also, with dropout:
#  * mlm_logits and mlm_loss are eval mode (no dropout, as checked above)
#    and leave @dropout.offset alone; train_step's loss differs from
#    mlm_loss's on the same weights and batch; each step advances the
#    offset by one, and bert_tiny's first step taken at offset 1 instead
#    of 0 gives another loss (the reference's at offset 1);
#  * determinism: bert_tiny's 3 steps taken again from the same weights and
#    seed in two fresh contexts, one on 1 thread and one on 2, give the
#    same losses and params, bit for bit;
#  * the generator refuses probabilities outside [0, 1), and with none 0
#    writes no dropout outside train_step (a dynamic batch: none at all).
# Also: an id outside the vocabulary fails every entry
# (GROVE_ERROR_INVALID_ARGUMENT) and changes no state. Prints compile and
# call timings.
import concurrent.futures
import ctypes
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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dropout as philox  # noqa: E402  (its checks run in its main())

# The 2-thread run below takes both threads even on a busy machine (the
# runtime would otherwise fall back to one when starved).
os.environ["GROVE_HOST_ADAPTIVE_THREADS"] = "0"

GROVE_ERROR_INVALID_ARGUMENT = 1
STEPS = 3
NOISE_ONLY = (".attention.self.key.bias",)
SMALL = dict(layers=2, hidden=32, seq=16, vocab=64, max_positions=20, batch=3,
             dtype="f64", lr=0.05, warmup=1, total_steps=4)
CONFIGS = {
    "bert_post": generate.Config(heads=2, pre_ln=False, act="gelu",
                                 max_grad_norm=0.05, name="bert_post",
                                 **SMALL),
    # Attention in primitive ops (every other model uses grove.attention);
    # BERT's four dropouts in train_step.
    "bert_pre": generate.Config(heads=4, intermediate=48, pre_ln=True,
                                act="gelu_tanh", max_grad_norm=100.0,
                                decomposed_attention=True, dropout=0.1,
                                attention_dropout=0.2,
                                name="bert_pre", **SMALL),
    "bert_dyn": generate.Config(layers=1, hidden=16, heads=2, seq=8, vocab=40,
                                max_positions=8, batch="?", dtype="f64",
                                name="bert_dyn"),
    "bert_tiny": generate.Config(layers=2, hidden=128, heads=2, seq=128,
                                 vocab=512, batch=2, dtype="f32", lr=1e-3,
                                 warmup=1, total_steps=10, dropout=0.1,
                                 name="bert_tiny"),
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


def grove_dropout(cfg, seed, offset):
    """The reference's `dropout` that applies train_step's masks: at each
    place, grove.dropout's Philox draw (dropout.reference) from the seed,
    the offset the step starts with and the place's stream, kept elements
    scaled by 1 / (1 - rate). None where the model has no dropout."""
    streams = generate.dropout_streams(cfg)
    if not streams:
        return None

    def apply(x, where, layer):
        if (where, layer) not in streams:
            return x
        stream, _ = streams[(where, layer)]
        # The rate from the config, not from the generator's table.
        rate = cfg.attention_dropout if where == "attention probabilities" \
            else cfg.dropout
        _, keep = philox.reference(np.zeros(tuple(x.shape)), seed, offset,
                                   stream, rate)
        return x * torch.tensor(keep, dtype=x.dtype) * (1.0 / (1.0 - rate))
    return apply


def set_dropout_seed(model, cfg):
    """A random @dropout.seed (the state grovec declares), or None where
    the model has no dropout."""
    if not generate.dropout_streams(cfg):
        return None
    seed = int(r.integers(2**63))
    model.set_weight("dropout.seed", np.array(seed, np.int64))
    assert model.get_weight("dropout.offset") == 0
    return seed


def offset_of(model):
    return int(model.get_weight("dropout.offset"))


def fresh_context(model, path, seed):
    """Another instance of `model` from the weights in `path`, at
    @dropout.seed `seed` and offset 0."""
    other = model.another_context()
    other.load_weights(path)
    other.set_weight("dropout.seed", np.array(seed, np.int64))
    assert offset_of(other) == 0 and other.get_weight("lans.step") == 0
    return other


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
    seed = set_dropout_seed(model, cfg)
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
    if seed is not None:
        assert offset_of(model) == 0, "mlm_loss or a refused step drew"

    # Training.
    order = [ref[n] for n, _ in specs]
    opt = ref_opt.LANS(order, lr=cfg.lr, beta1=cfg.beta1, beta2=cfg.beta2,
                       eps=cfg.epsilon,
                       weight_decays=generate.weight_decays(cfg),
                       trust_mask=[True] * len(specs))
    clipped, t_step, apart = 0, [], []
    for step in range(STEPS):
        ids, pos, labels = batch_of(cfg, cfg.batch, pad_tail=2 + step)
        drop = None
        if seed is not None:
            # Dropout is train_step's only: mlm_loss (eval) on the same
            # weights and batch differs, and draws nothing.
            (eval_loss,) = model.call("mlm_loss", ids, pos, labels)
            assert offset_of(model) == step, "an offset other than the step"
            drop = grove_dropout(cfg, seed, step)
        t0 = time.perf_counter()
        (loss,) = model.call("train_step", ids, pos, labels)
        t_step.append(time.perf_counter() - t0)
        if seed is not None:
            apart.append(abs(float(loss) / float(eval_loss) - 1))
            assert apart[-1] > 1e-6, f"{name}: dropout left the loss alone"
        opt.zero_grad()
        want = reference.mlm_loss(ref, cfg, ids, pos, labels, drop)
        want.backward()
        norm = torch.nn.utils.clip_grad_norm_(order, cfg.max_grad_norm)
        clipped += float(norm) > cfg.max_grad_norm
        # Grove's schedule reads the steps taken before this one.
        opt.hyper["lr"] = reference.polynomial_lr(
            step, cfg.lr, cfg.warmup, cfg.total_steps)
        opt.step()
        assert_close(loss, want.item(), 1e-10, 0, f"{name} loss at step {step}")
    assert model.get_weight("lans.step") == STEPS
    if seed is not None:
        assert offset_of(model) == STEPS
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
          f"steps clipped; worst error {worst:.2g} of a tensor's scale" +
          (f"; with dropout: the Philox masks, the loss {min(apart):.2g}-"
           f"{max(apart):.2g} off mlm_loss's" if apart else "") +
          f"); mlm_logits {t_logits * 1e3:.2f} ms, train_step "
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
    seed = set_dropout_seed(model, cfg)
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
    assert offset_of(model) == 0, "mlm_loss or mlm_logits drew"

    # The first step at offset 1 instead of 0 (another context, the same
    # weights and seed): other masks, the reference's at offset 1.
    other = fresh_context(model, path, seed)
    other.set_weight("dropout.offset", np.array(1, np.int64))
    (at_one,) = other.call("train_step", ids, pos, labels)
    with torch.no_grad():
        want = reference.mlm_loss(p64, cfg, ids, pos, labels,
                                  grove_dropout(cfg, seed, 1)).item()
    assert_close(at_one, want, 1e-5, 0, "bert_tiny's first step at offset 1")
    del other

    order = [p64[n] for n, _ in specs]
    opt = ref_opt.LANS(order, lr=cfg.lr, beta1=cfg.beta1, beta2=cfg.beta2,
                       eps=cfg.epsilon,
                       weight_decays=generate.weight_decays(cfg),
                       trust_mask=[True] * len(specs))
    t_step, worst, batches, losses = [], 0.0, [], []
    for step in range(STEPS):
        if step:
            ids, pos, labels = batch_of(cfg, cfg.batch)
        batches.append((ids, pos, labels))
        t0 = time.perf_counter()
        (loss,) = model.call("train_step", ids, pos, labels)
        t_step.append(time.perf_counter() - t0)
        losses.append(loss)
        assert offset_of(model) == step + 1
        opt.zero_grad()
        want = reference.mlm_loss(p64, cfg, ids, pos, labels,
                                  grove_dropout(cfg, seed, step))
        want.backward()
        torch.nn.utils.clip_grad_norm_(order, cfg.max_grad_norm)
        opt.hyper["lr"] = reference.polynomial_lr(step, cfg.lr, cfg.warmup,
                                                  cfg.total_steps)
        opt.step()
        assert_close(loss, want.item(), 1e-5, 0, f"bert_tiny loss at step {step}")
        worst = max(worst, abs(float(loss) / want.item() - 1))
    # The first step's loss (dropout) against mlm_loss's (none) on the same
    # weights and batch, and against the same step at offset 1.
    assert abs(float(losses[0]) / first - 1) > 1e-5, \
        "no dropout in train_step"
    assert float(at_one) != float(losses[0]), "offset 1 drew offset 0's masks"

    # The same steps from the same weights and seed in two fresh contexts,
    # on 1 thread and on 2: the same losses and params, bit for bit.
    gomp = ctypes.CDLL("libgomp.so.1")  # the OpenMP team of grove's runtime
    threads = gomp.omp_get_max_threads()
    for n in (1, 2):
        gomp.omp_set_num_threads(n)
        try:
            again = fresh_context(model, path, seed)
            for (ids, pos, labels), loss in zip(batches, losses):
                (got,) = again.call("train_step", ids, pos, labels)
                assert got.tobytes() == loss.tobytes(), \
                    f"bert_tiny on {n} thread(s): loss {got} != {loss}"
        finally:
            gomp.omp_set_num_threads(threads)
        for name, _ in specs:
            assert again.get_weight(name).tobytes() == \
                model.get_weight(name).tobytes(), \
                f"bert_tiny on {n} thread(s): {name} differs"
        del again
    print(f"bert_tiny (f32, dropout {cfg.dropout}): mlm_loss off torch f32 by "
          f"{abs(first - l32):.2g}, f64 by {abs(first - l64):.2g} (loss "
          f"{l64:.4f}); logits within {err:.2g} of f64; {STEPS} train_steps' "
          f"losses (the Philox masks in the reference) within {worst:.2g} "
          f"relative; the first {float(losses[0]):.4f} with dropout, "
          f"{float(at_one):.4f} at offset 1; again in two fresh contexts on "
          f"1 and 2 threads: the same bit for bit; mlm_loss "
          f"{t_loss * 1e3:.1f} ms, train_step {min(t_step) * 1e3:.1f} ms (best "
          f"of {len(t_step)})")


def check_generator():
    """Probabilities outside [0, 1) are refused; dropout is train_step's
    only: with a dynamic batch (no train_step) the module is the same as
    without, and the eval entries call the functions without dropout."""
    for bad in (dict(dropout=1.0), dict(attention_dropout=-0.1)):
        try:
            generate.Config(**bad)
            raise AssertionError(f"{bad} accepted")
        except ValueError as e:
            assert "dropout" in str(e), e
    dyn = dict(CONFIGS["bert_dyn"].__dict__, intermediate=0)
    assert generate.generate(generate.Config(**dyn)) == generate.generate(
        generate.Config(**dict(dyn, dropout=0.1, attention_dropout=0.1)))
    cfg = CONFIGS["bert_pre"]
    text = generate.generate(cfg)
    for fn in text.split("func.func ")[1:]:
        name = fn.split("(")[0].split("@")[1]
        if not (name.endswith("_train") or name == "train_step"):
            assert "grove.dropout" not in fn and "_train(" not in fn, name
    # The embeddings', then per layer the probabilities' (one op, shared by
    # the layers) and two more.
    assert text.count("grove.dropout") == 2 + 2 * cfg.layers


def main():
    check_generator()
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
