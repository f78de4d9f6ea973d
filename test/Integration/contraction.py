# RUN: %python %s
# grove.matmul in every supported form (2x2, 3x3 batched, 3x2 shared rhs,
# each with transposes) against numpy in float64, on random sizes.
# Tolerance: rtol 1e-4, atol 1e-4 * sqrt(K) (f32 accumulation order differs
# from the float64 reference).
import itertools
import numpy as np
from grove_testing import Model, assert_close, rng

def mm(name, lhs, rhs, out, tl, tr):
    attrs = [a for a, on in (("transpose_lhs", tl), ("transpose_rhs", tr)) if on]
    attr = " {" + ", ".join(attrs) + "}" if attrs else ""
    return f"""
  func.func @{name}(%a: {lhs}, %b: {rhs}) -> {out} {{
    %0 = grove.matmul %a, %b{attr} : ({lhs}, {rhs}) -> {out}
    return %0 : {out}
  }}"""

funcs, cases = [], []
for tl, tr in itertools.product((False, True), repeat=2):
    sfx = f"{int(tl)}{int(tr)}"
    funcs.append(mm("mm" + sfx, "tensor<?x?xf32>", "tensor<?x?xf32>",
                    "tensor<?x?xf32>", tl, tr))
    funcs.append(mm("bmm" + sfx, "tensor<?x?x?xf32>", "tensor<?x?x?xf32>",
                    "tensor<?x?x?xf32>", tl, tr))
    funcs.append(mm("seq" + sfx, "tensor<?x?x?xf32>", "tensor<?x?xf32>",
                    "tensor<?x?x?xf32>", tl, tr))
    cases.append((tl, tr, sfx))
# Static shapes too (the MLP's layer).
funcs.append(mm("dense", "tensor<?x64xf32>", "tensor<128x64xf32>",
                "tensor<?x128xf32>", False, True))
model = Model("module {" + "".join(funcs) + "\n}", name="mm")

r = rng()
def t(x, on):
    return np.swapaxes(x, -1, -2) if on else x

checked = 0
for (tl, tr, sfx), (m, k, n, b) in itertools.product(
        cases, [(1, 1, 1, 1), (5, 7, 3, 2), (33, 64, 17, 3), (0, 4, 5, 2)]):
    a = r.standard_normal((m, k)).astype(np.float32)
    w = r.standard_normal((k, n)).astype(np.float32)
    tol = 1e-4 * np.sqrt(k)
    (got,) = model.call("mm" + sfx, np.ascontiguousarray(t(a, tl)),
                        np.ascontiguousarray(t(w, tr)))
    assert_close(got, a.astype(np.float64) @ w, 1e-4, tol, f"mm{sfx} {m}x{k}x{n}")
    A = r.standard_normal((b, m, k)).astype(np.float32)
    B = r.standard_normal((b, k, n)).astype(np.float32)
    (got,) = model.call("bmm" + sfx, np.ascontiguousarray(t(A, tl)),
                        np.ascontiguousarray(t(B, tr)))
    assert_close(got, A.astype(np.float64) @ B, 1e-4, tol, f"bmm{sfx}")
    (got,) = model.call("seq" + sfx, np.ascontiguousarray(t(A, tl)),
                        np.ascontiguousarray(t(w, tr)))
    assert_close(got, A.astype(np.float64) @ w, 1e-4, tol, f"seq{sfx}")
    checked += 3

x = r.standard_normal((50, 64)).astype(np.float32)
w = r.standard_normal((128, 64)).astype(np.float32)
(got,) = model.call("dense", x, w)
assert_close(got, x.astype(np.float64) @ w.T, 1e-4, 1e-3, "dense")
print(f"contraction: {checked + 1} comparisons passed")

# Mismatched dynamic contracting sizes: an error, not a wrong answer.
from grove_testing import GroveError
for name, a, b in (("mm00", np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)),
                   ("bmm00", np.ones((2, 2, 3), np.float32), np.ones((3, 3, 2), np.float32))):
    try:
        model.call(name, a, b)
        raise AssertionError(f"{name}: mismatched sizes accepted")
    except GroveError as e:
        # Contracting sizes of two inputs: rejected before the code runs.
        assert e.status == 1 and "must equal dimension" in e.message, e.message
        print("mismatch:", e.message)
