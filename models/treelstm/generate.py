#!/usr/bin/env python3
"""Writes the Tree-LSTM models in the grove dialect, as a frontend would.

Two cells of Tai et al. 2015 over a batch of trees given
as CSR child lists (docs/trees.md):

* child-sum (`--form child-sum`): h~ = sum_k h_k; i, o, u = sigma, sigma,
  tanh(W x + U h~ + b); f_k = sigma(W_f x + U_f h_k + b_f) per child (the
  fold's edge cell); c = i*u + sum_k f_k*c_k; h = o*tanh(c).
* binary N-ary (`--form binary`): per-position weights, i, f_0, f_1, o, u =
  sigma, sigma, sigma, sigma, tanh(W x + U_0 h_0 + U_1 h_1 + b); c = i*u +
  f_0*c_0 + f_1*c_1; h = o*tanh(c) (a missing child has zero states).

Node inputs are token embeddings (one_hot(tokens) @ embed, which
differentiates without a scatter). A linear head classifies each tree from
its root's h. Entries: `forward` (logits), `train_step` (cross-entropy,
Adam, one call) and, with --grads, `loss_and_grads` (the loss of a weighted
sum of the states and every gradient: what the tests check).

    python3 models/treelstm/generate.py --form child-sum --vocab 100 \\
        --embed 64 --hidden 150 --classes 10 -o treelstm.mlir
"""
import argparse
import sys


def t(shape, dtype):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dtype + ">"


def params(form, V, D, H, C, dtype):
    """(name, shape) of every weight, in declaration order."""
    p = [("embed", (V, D))]
    if form == "child-sum":
        p += [("iou.W", (D, 3 * H)), ("iou.U", (H, 3 * H)), ("iou.b", (3 * H,)),
              ("f.W", (D, H)), ("f.U", (H, H)), ("f.b", (H,))]
    else:
        p += [("gates.W", (D, 5 * H)), ("gates.U0", (H, 5 * H)),
              ("gates.U1", (H, 5 * H)), ("gates.b", (5 * H,))]
    p += [("out.weight", (C, H)), ("out.bias", (C,))]
    return p


class Writer:
    def __init__(self, dtype):
        self.dtype = dtype
        self.lines = []
        self.n = 0

    def fresh(self):
        self.n += 1
        return f"%v{self.n}"

    def op(self, text, indent=4):
        v = self.fresh()
        self.lines.append(" " * indent + f"{v} = {text}")
        return v

    def raw(self, text, indent=4):
        self.lines.append(" " * indent + text)


def gates(w, x, H, n, indent):
    """Columns k*H .. (k+1)*H of `x` ([?, n*H]) for each k < n."""
    out = []
    for k in range(n):
        out.append(w.op(
            f"grove.slice {x} [0, {k * H}] [-1, {(k + 1) * H}] [1, 1] : "
            f"{t(('?', n * H), w.dtype)} -> {t(('?', H), w.dtype)}", indent))
    return out


def fold(w, form, D, H, x, forest, weights, indent=4):
    """The tree_fold; returns (every node's h, the roots' h)."""
    dt = w.dtype
    row_d, row_h = t(("?", D), dt), t(("?", H), dt)
    names = [n for n, _ in weights]
    types = [t(s, dt) for _, s in weights]
    caps = ", ".join(f"%{n.replace('.', '_')}" for n in names)
    i2 = " " * (indent + 2)
    off, ch, roots = forest
    arity = 0 if form == "child-sum" else 2
    nodes = w.fresh()
    w.raw(f"{nodes}:4 = grove.tree_fold {off}, {ch}, {roots} "
          f"inputs({x} : {row_d}) captures({caps} : {', '.join(types)}) "
          f"{{arity = {arity} : i64}} : (tensor<?xi32>, tensor<?xi32>, "
          f"tensor<?xi32>) -> ({row_h}, {row_h}, {row_h}, {row_h})", indent)
    cap_args = ", ".join(f"%c_{n.replace('.', '_')}: {ty}"
                         for n, ty in zip(names, types))
    ind = indent + 4

    def mm(a, b, bshape):
        return w.op(f"grove.matmul {a}, {b} : ({t(('?', bshape[0]), dt)}, "
                    f"{t(bshape, dt)}) -> {t(('?', bshape[1]), dt)}", ind)

    def add(a, b, ta, tb, tr):
        return w.op(f"grove.add {a}, {b} : ({ta}, {tb}) -> {tr}", ind)

    def mul(a, b):
        return w.op(f"grove.mul {a}, {b} : ({row_h}, {row_h}) -> {row_h}", ind)

    def unary(name, a):
        return w.op(f"grove.{name} {a} : {row_h}", ind)

    if form == "child-sum":
        # Edge cell: each child's messages h_k and f_k * c_k.
        w.raw("edge {", indent + 2)
        w.raw(f"^bb0(%xp: {row_d}, %hk: {row_h}, %ck: {row_h}, {cap_args}):",
              indent + 2)
        a = mm("%xp", "%c_f_W", (D, H))
        b = mm("%hk", "%c_f_U", (H, H))
        s = add(a, b, row_h, row_h, row_h)
        s = add(s, "%c_f_b", row_h, t((H,), dt), row_h)
        f = unary("sigmoid", s)
        fc = mul(f, "%ck")
        w.raw(f"grove.yield %hk, {fc} : {row_h}, {row_h}", ind)
        w.raw("} node {", indent + 2)
        w.raw(f"^bb0(%x: {row_d}, %hs: {row_h}, %fcs: {row_h}, {cap_args}):",
              indent + 2)
        a = mm("%x", "%c_iou_W", (D, 3 * H))
        b = mm("%hs", "%c_iou_U", (H, 3 * H))
        row3 = t(("?", 3 * H), dt)
        s = add(a, b, row3, row3, row3)
        s = add(s, "%c_iou_b", row3, t((3 * H,), dt), row3)
        gi, go, gu = gates(w, s, H, 3, ind)
        i, o, u = unary("sigmoid", gi), unary("sigmoid", go), unary("tanh", gu)
        c = add(mul(i, u), "%fcs", row_h, row_h, row_h)
        h = mul(o, unary("tanh", c))
        w.raw(f"grove.yield {h}, {c} : {row_h}, {row_h}", ind)
        w.raw("}", indent + 2)
    else:
        w.raw("node {", indent + 2)
        w.raw(f"^bb0(%x: {row_d}, %h0: {row_h}, %c0: {row_h}, %h1: {row_h}, "
              f"%c1: {row_h}, {cap_args}):", indent + 2)
        row5 = t(("?", 5 * H), dt)
        a = mm("%x", "%c_gates_W", (D, 5 * H))
        b0 = mm("%h0", "%c_gates_U0", (H, 5 * H))
        b1 = mm("%h1", "%c_gates_U1", (H, 5 * H))
        s = add(add(a, b0, row5, row5, row5), b1, row5, row5, row5)
        s = add(s, "%c_gates_b", row5, t((5 * H,), dt), row5)
        gi, gf0, gf1, go, gu = gates(w, s, H, 5, ind)
        i, f0, f1 = (unary("sigmoid", g) for g in (gi, gf0, gf1))
        o, u = unary("sigmoid", go), unary("tanh", gu)
        c = add(mul(i, u), mul(f0, "%c0"), row_h, row_h, row_h)
        c = add(c, mul(f1, "%c1"), row_h, row_h, row_h)
        h = mul(o, unary("tanh", c))
        w.raw(f"grove.yield {h}, {c} : {row_h}, {row_h}", ind)
        w.raw("}", indent + 2)
    return f"{nodes}#0", f"{nodes}#2"


def encode(w, form, V, D, H, C, dtype, forest, tokens, indent=4):
    """Logits [B, C], every node's h [N, H] and the roots' h [B, H]."""
    ps = params(form, V, D, H, C, dtype)
    for n, s in ps:
        w.raw(f"%{n.replace('.', '_')} = grove.get_param @{n} : {t(s, dtype)}",
              indent)
    oh = w.op(f"grove.one_hot {tokens} : tensor<?xi32> -> {t(('?', V), dtype)}",
              indent)
    x = w.op(f"grove.matmul {oh}, %embed : ({t(('?', V), dtype)}, "
             f"{t((V, D), dtype)}) -> {t(('?', D), dtype)}", indent)
    cell = [(n, s) for n, s in ps if n not in ("embed", "out.weight",
                                                 "out.bias")]
    h_all, h_root = fold(w, form, D, H, x, forest, cell, indent)
    z = w.op(f"grove.matmul {h_root}, %out_weight {{transpose_rhs}} : "
             f"({t(('?', H), dtype)}, {t((C, H), dtype)}) -> "
             f"{t(('?', C), dtype)}", indent)
    logits = w.op(f"grove.add {z}, %out_bias : ({t(('?', C), dtype)}, "
                  f"{t((C,), dtype)}) -> {t(('?', C), dtype)}", indent)
    return logits, h_all, h_root


FOREST_ARGS = ("%offsets: tensor<?xi32> {grove.name = \"child_offsets\"}, "
               "%children: tensor<?xi32> {grove.name = \"children\"}, "
               "%roots: tensor<?xi32> {grove.name = \"roots\"}, "
               "%tokens: tensor<?xi32> {grove.name = \"tokens\", "
               "grove.below = VOCAB : i64}")


def module(form, V, D, H, C, dtype="f32", lr=0.01, grads=False,
           name="treelstm"):
    w = Writer(dtype)
    ps = params(form, V, D, H, C, dtype)
    forest = ("%offsets", "%children", "%roots")
    args = FOREST_ARGS.replace("VOCAB", str(V))
    w.raw(f"// Generated by models/treelstm/generate.py --form {form} "
          f"--vocab {V} --embed {D} --hidden {H} --classes {C}", 0)
    w.raw(f"module @{name} {{", 0)
    for n, s in ps:
        w.raw(f"grove.param @{n} : {t(s, dtype)}", 2)
    w.raw("", 0)
    w.raw(f"func.func @forward({args}) -> ({t(('?', C), dtype)} "
          "{grove.name = \"logits\"}) {", 2)
    logits, _, _ = encode(w, form, V, D, H, C, dtype, forest, "%tokens")
    w.raw(f"return {logits} : {t(('?', C), dtype)}", 4)
    w.raw("}", 2)

    names = ", ".join(f"@{n}" for n, _ in ps)
    types = ", ".join(t(s, dtype) for _, s in ps)
    gs = ", ".join(f"%g#{i}" for i in range(len(ps)))
    w.raw("", 0)
    w.raw(f"func.func @train_step({args}, %labels: tensor<?xi32> "
          "{grove.name = \"labels\"}) -> (tensor<" + dtype
          + "> {grove.name = \"loss\"}) {", 2)
    scalar = f"tensor<{dtype}>"
    w.raw(f"%loss, %g:{len(ps)} = grove.value_and_grad [{names}] {{", 4)
    logits, _, _ = encode(w, form, V, D, H, C, dtype, forest, "%tokens", 6)
    l = w.op(f"grove.softmax_cross_entropy {logits}, %labels : "
             f"({t(('?', C), dtype)}, tensor<?xi32>) -> {scalar}", 6)
    w.raw(f"grove.yield {l} : {scalar}", 6)
    w.raw(f"}} : {scalar}, {types}", 4)
    w.raw(f"grove.adam [{names}] ({gs}) {{lr = {lr:e} : f64}} : {types}", 4)
    w.raw(f"return %loss : {scalar}", 4)
    w.raw("}", 2)

    if grads:
        # A loss reaching every node's state and the roots': sum(h_all * q)
        # + sum(logits * r), so both cotangent paths are exercised.
        row_h, row_c = t(("?", H), dtype), t(("?", C), dtype)
        outs = ", ".join([scalar] + [t(s, dtype) for _, s in ps])
        w.raw("", 0)
        w.raw(f"func.func @loss_and_grads({args}, %q: {row_h}, %r: {row_c})"
              f" -> ({outs}) {{", 2)
        w.raw(f"%loss, %g:{len(ps)} = grove.value_and_grad [{names}] {{", 4)
        logits, h_all, _ = encode(w, form, V, D, H, C, dtype, forest,
                                  "%tokens", 6)
        a = w.op(f"grove.mul {h_all}, %q : ({row_h}, {row_h}) -> {row_h}", 6)
        b = w.op(f"grove.mul {logits}, %r : ({row_c}, {row_c}) -> {row_c}", 6)
        sa = w.op(f"grove.reduce_sum {a} {{axes = array<i64: 0, 1>}} : "
                  f"{row_h} -> {scalar}", 6)
        sb = w.op(f"grove.reduce_sum {b} {{axes = array<i64: 0, 1>}} : "
                  f"{row_c} -> {scalar}", 6)
        s = w.op(f"grove.add {sa}, {sb} : ({scalar}, {scalar}) -> {scalar}", 6)
        w.raw(f"grove.yield {s} : {scalar}", 6)
        w.raw(f"}} : {scalar}, {types}", 4)
        rets = ", ".join(["%loss"] + [f"%g#{i}" for i in range(len(ps))])
        w.raw(f"return {rets} : {outs}", 4)
        w.raw("}", 2)
    w.raw("}", 0)
    return "\n".join(w.lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--form", choices=("child-sum", "binary"),
                   default="child-sum")
    p.add_argument("--vocab", type=int, required=True)
    p.add_argument("--embed", type=int, default=64)
    p.add_argument("--hidden", type=int, default=150)
    p.add_argument("--classes", type=int, required=True)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--dtype", default="f32", choices=("f32", "f64"))
    p.add_argument("--grads", action="store_true")
    p.add_argument("--name", default="treelstm")
    p.add_argument("-o", "--output", default="-")
    a = p.parse_args()
    text = module(a.form, a.vocab, a.embed, a.hidden, a.classes, a.dtype,
                  a.lr, a.grads, a.name)
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
