# RUN: %python %s
# grove.tree_fold end to end (docs/trees.md): models/treelstm's child-sum and
# binary Tree-LSTMs compiled batched by levels, by levels and arity, and
# node by node, against an
# independent PyTorch per-node implementation (float64, autograd) on fresh
# random forests whose node ids are shuffled: single nodes, a chain deeper
# than 1,000, a node with 120 children, mixed arities, an empty batch and
# duplicated subtrees. Checked: the logits, a loss reaching every node's
# state and the roots', every weight's gradient (the embedding's is the
# inputs' cotangent), levels against nodes, and finite differences of a
# float64 build. Tolerances: f32 against f64 1e-4 relative (gradients
# 1e-3 relative to the largest element); f64 against finite differences
# 1e-6.
import numpy as np
import torch
from grove_testing import GroveError, Model, assert_close, rng
from tree_reference import (TorchTreeLSTM, forest, generate, random_parents,
                            random_weights)

V, D, H, C = 7, 5, 6, 3
r = rng()


def build(form, mode, dtype="f32"):
    name = f"tree_{form}_{mode}_{dtype}".replace("-", "_")
    text = generate.module(form, V, D, H, C, dtype, grads=True, name=name)
    return Model(text, name=name, grovec_flags=[f"--tree-batching={mode}"])


# Every model is built before any runs: with GROVE_TEST_COMPILE_ONLY=1 the
# script ends at the first call, and the GPU check's bundle must hold them
# all.
MODES = ("levels", "nodes", "levels-by-arity")
MODELS = {(form, mode, "f32"): build(form, mode)
          for form in ("child-sum", "binary") for mode in MODES}
for form in ("child-sum", "binary"):
    MODELS[form, "levels", "f64"] = build(form, "levels", "f64")


def cases(form):
    binary = form == "binary"
    chain = list(range(-1, 1099))
    out = {
        "random": random_parents(r, 6, 14, 2 if binary else None),
        "single nodes": [-1] * 5,
        "deep chain": chain,
        "mixed arities": random_parents(r, 3, 40, 2 if binary else 6),
        "empty": [],
    }
    if not binary:
        out["wide"] = [-1] + [0] * 120
    return out


def call_grads(m, f, tokens, q, rr, names):
    outs = m.call("loss_and_grads", *f, tokens, q, rr,
                  num_outputs=1 + len(names))
    return outs[0], dict(zip(names, outs[1:]))


def reference(form, weights, f, tokens, q, rr):
    ref = TorchTreeLSTM(form, weights)
    logits, hall = ref.run(*f, tokens)
    loss = (hall * torch.as_tensor(q, dtype=torch.float64)).sum() + (
        logits * torch.as_tensor(rr, dtype=torch.float64)).sum()
    loss.backward()
    grads = {n: (w.grad.numpy() if w.grad is not None else np.zeros(w.shape))
             for n, w in ref.w.items()}
    return logits.detach().numpy(), float(loss), grads


def check_form(form):
    names = [n for n, _ in generate.params(form, V, D, H, C, "f32")]
    weights = random_weights(r, form, V, D, H, C)
    levels, nodes, by_arity = (MODELS[form, mode, "f32"] for mode in MODES)
    for m in (levels, nodes, by_arity):
        for n, w in weights.items():
            m.set_weight(n, w.astype(np.float32))
    for what, parents in cases(form).items():
        off, ch, roots, _ = forest(parents, shuffle=r)
        n, b = len(off) - 1, len(roots)
        tokens = r.integers(0, V, n).astype(np.int32)
        q = r.standard_normal((n, H)).astype(np.float32)
        rr = r.standard_normal((b, C)).astype(np.float32)
        f = (off, ch, roots)
        want_logits, want_loss, want_grads = reference(form, weights, f,
                                                       tokens, q, rr)
        for m, mode in ((levels, "levels"), (nodes, "nodes"),
                        (by_arity, "levels-by-arity")):
            tag = f"{form} {mode} {what}"
            (logits,) = m.call("forward", *f, tokens)
            assert_close(logits, want_logits, 1e-4, 1e-5, tag + " logits")
            loss, grads = call_grads(m, f, tokens, q, rr, names)
            scale = 1.0 + abs(want_loss)
            assert_close(loss, np.float32(want_loss), 1e-4, 1e-4 * scale,
                         tag + " loss")
            for name in names:
                g = want_grads[name]
                atol = 1e-3 * (1.0 + np.abs(g).max()) if g.size else 0
                assert_close(grads[name], g, 1e-3, atol, f"{tag} d{name}")
        print(f"ok: {form} {what}: {n} nodes, {b} trees")

    # The same subtree twice in a batch gives the same root twice.
    one = random_parents(r, 1, 12, 2 if form == "binary" else None)
    off, ch, roots, _ = forest(one + [p + len(one) if p >= 0 else -1
                                      for p in one])
    tokens = r.integers(0, V, len(one)).astype(np.int32)
    (logits,) = levels.call("forward", off, ch, roots,
                            np.concatenate([tokens, tokens]))
    assert_close(logits[1], logits[0], 0, 0, f"{form} duplicated subtree")
    print(f"ok: {form} duplicated subtrees")


def check_finite_differences(form):
    """The f64 build's gradient against central differences of its loss."""
    m = MODELS[form, "levels", "f64"]
    names = [n for n, _ in generate.params(form, V, D, H, C, "f64")]
    weights = random_weights(r, form, V, D, H, C)
    for n, w in weights.items():
        m.set_weight(n, w)
    off, ch, roots, _ = forest(
        random_parents(r, 3, 9, 2 if form == "binary" else 4), shuffle=r)
    f = (off, ch, roots)
    n, b = len(off) - 1, len(roots)
    tokens = r.integers(0, V, n).astype(np.int32)
    q, rr = r.standard_normal((n, H)), r.standard_normal((b, C))
    _, grads = call_grads(m, f, tokens, q, rr, names)
    eps = 1e-6
    for name in names:
        v = r.standard_normal(weights[name].shape)
        m.set_weight(name, weights[name] + eps * v)
        plus, _ = call_grads(m, f, tokens, q, rr, names)
        m.set_weight(name, weights[name] - eps * v)
        minus, _ = call_grads(m, f, tokens, q, rr, names)
        m.set_weight(name, weights[name])
        fd = (float(plus) - float(minus)) / (2 * eps)
        exact = float((grads[name] * v).sum())
        assert abs(fd - exact) <= 1e-6 * (1 + abs(exact)), \
            f"{form} d{name}: finite differences {fd}, gradient {exact}"
    print(f"ok: {form} f64 gradients match finite differences")


def check_malformed():
    """Malformed forests fail the call before any code runs, naming the
    node; a train step they reach writes nothing."""
    m = MODELS["child-sum", "levels", "f32"]
    weights = random_weights(r, "child-sum", V, D, H, C)
    for n, w in weights.items():
        m.set_weight(n, w.astype(np.float32))
    off, ch, roots, _ = forest([-1, 0, 0, 1])
    tokens = np.zeros(4, np.int32)
    bad = {
        "node 2 has two parents: nodes 0 and 1":
            (off, np.array([1, 2, 2], np.int32), roots),
        "node 1: child 0 is 9, not a node":
            (off, np.array([1, 2, 9], np.int32), roots),
        "roots[0] is node 1, which is a child of node 0":
            (off, ch, np.array([1], np.int32)),
        "node 0 has no parent but is not in roots":
            (off, ch, np.zeros(0, np.int32)),
        "is below child_offsets[1]":
            (np.array([0, 2, 1, 3, 3], np.int32), ch, roots),
        "is its own ancestor":
            (np.array([0, 0, 1, 2, 3], np.int32),
             np.array([2, 3, 1], np.int32), np.array([0], np.int32)),
    }
    labels = np.zeros(1, np.int32)
    before = {n: m.get_weight(n) for n in weights}
    for needle, f in bad.items():
        for entry, extra in (("forward", ()), ("train_step", (labels,))):
            try:
                m.call(entry, *f, tokens, *extra)
            except GroveError as e:
                assert e.status == 1 and needle in str(e), (needle, str(e))
            else:
                raise AssertionError(f"{entry} accepted: {needle}")
    for n, w in before.items():
        assert np.array_equal(m.get_weight(n), w), f"{n} written"
    try:
        m.call("forward", off, ch, roots, np.zeros(3, np.int32))
    except GroveError as e:
        assert "dimension 0 is 3 but the forest of input 0 " \
               "'child_offsets' has 4 nodes" in str(e), str(e)
    else:
        raise AssertionError("3 tokens for 4 nodes accepted")
    print("ok: malformed forests refused before the call")


check_form("child-sum")
check_form("binary")
check_finite_differences("child-sum")
check_finite_differences("binary")
check_malformed()
